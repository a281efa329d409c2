// RUN: mjax-opt %s --split-input-file | filecheck %s

// CHECK-LABEL: func.func @reduce_window_sum_padded
// CHECK:         "jaxpr.reduce_window_sum"(%{{.*}}) {base_dilation = array<i64: 1, 2>, padding = [array<i64: 0, 1>, array<i64: 1, 1>], window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 1>} : (tensor<4x6xf32>) -> tensor<2x11xf32>
func.func @reduce_window_sum_padded(%x: tensor<4x6xf32>) -> tensor<2x11xf32> {
  %0 = "jaxpr.reduce_window_sum"(%x) {base_dilation = array<i64: 1, 2>, padding = [array<i64: 0, 1>, array<i64: 1, 1>], window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 1>} : (tensor<4x6xf32>) -> tensor<2x11xf32>
  return %0 : tensor<2x11xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_window_max_min
// CHECK:         "jaxpr.reduce_window_max"(%{{.*}}) {{.*}}window_dilation = array<i64: 2>, window_dimensions = array<i64: 2>
// CHECK:         "jaxpr.reduce_window_min"(%{{.*}}) {{.*}}window_dimensions = array<i64: 3>, window_strides = array<i64: 3>
func.func @reduce_window_max_min(%x: tensor<7xi32>) -> (tensor<5xi32>, tensor<2xi32>) {
  %0 = "jaxpr.reduce_window_max"(%x) {base_dilation = array<i64: 1>, padding = [array<i64: 0, 0>], window_dilation = array<i64: 2>, window_dimensions = array<i64: 2>, window_strides = array<i64: 1>} : (tensor<7xi32>) -> tensor<5xi32>
  %1 = "jaxpr.reduce_window_min"(%x) {base_dilation = array<i64: 1>, padding = [array<i64: 0, 0>], window_dilation = array<i64: 1>, window_dimensions = array<i64: 3>, window_strides = array<i64: 3>} : (tensor<7xi32>) -> tensor<2xi32>
  return %0, %1 : tensor<5xi32>, tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @select_and_gather_add_then_scatter
// CHECK:         %[[G:.*]] = "jaxpr.select_and_gather_add"(%{{.*}}, %{{.*}}) {{.*}}select_prim = "ge"
// CHECK:         "jaxpr.select_and_scatter_add"(%[[G]], %{{.*}}) {padding = [array<i64: 0, 1>, array<i64: 1, 1>], select_prim = "le", window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 2>}
func.func @select_and_gather_add_then_scatter(%t: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = "jaxpr.select_and_gather_add"(%t, %x) {select_prim = "ge", base_dilation = array<i64: 1, 1>, padding = [array<i64: 0, 1>, array<i64: 1, 1>], window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 2>} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<2x3xf32>
  %1 = "jaxpr.select_and_scatter_add"(%0, %x) {select_prim = "le", padding = [array<i64: 0, 1>, array<i64: 1, 1>], window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 2>} : (tensor<2x3xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %1 : tensor<4x6xf32>
}
