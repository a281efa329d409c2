// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// The batch axis is one more window dimension of size 1, left where it is.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[XS:.*]]: tensor<6x5x3xf32>) -> tensor<4x5x2xf32>
// CHECK:         %[[Y:.*]] = "jaxpr.reduce_window_max"(%[[XS]]) {base_dilation = array<i64: 1, 1, 1>, padding = [array<i64: 0, 0>, array<i64: 0, 0>, array<i64: 0, 0>], window_dilation = array<i64: 1, 1, 1>, window_dimensions = array<i64: 3, 1, 2>, window_strides = array<i64: 1, 1, 1>}
// CHECK:         return %[[Y]]
func.func private @f(%x: tensor<6x3xf32>) -> tensor<4x2xf32> {
  %0 = "jaxpr.reduce_window_max"(%x) {base_dilation = array<i64: 1, 1>, padding = [array<i64: 0, 0>, array<i64: 0, 0>], window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 3, 2>, window_strides = array<i64: 1, 1>} : (tensor<6x3xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
func.func @reduce_window_max_batched(%xs: tensor<6x5x3xf32>) -> tensor<5x4x2xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 1>, out_axes = array<i64: 0>, axis_size = 5 : i64} : (tensor<6x5x3xf32>) -> tensor<5x4x2xf32>
  return %0 : tensor<5x4x2xf32>
}
