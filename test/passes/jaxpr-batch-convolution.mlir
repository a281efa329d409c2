// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// Both operands batched: the vmapped axis becomes feature groups (each example convolves
// with its own kernel), and is split out of the output features again.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[XS:.*]]: tensor<8x1x2x5xf32>, %[[WS:.*]]: tensor<8x3x2x2xf32>) -> tensor<1x8x3x4xf32>
// CHECK:         %[[X:.*]] = "jaxpr.reshape"(%[[XS]]) {dimensions = array<i64: 1, 0, 2, 3>, new_sizes = array<i64: 1, 16, 5>}
// CHECK:         %[[W:.*]] = "jaxpr.reshape"(%[[WS]]) {new_sizes = array<i64: 24, 2, 2>}
// CHECK:         %[[Y:.*]] = "jaxpr.conv_general_dilated"(%[[X]], %[[W]]) {{.*}}feature_group_count = 8 : i64
// CHECK:         %[[YS:.*]] = "jaxpr.reshape"(%[[Y]]) {new_sizes = array<i64: 1, 8, 3, 4>}
// CHECK:         return %[[YS]]
// CHECK-LABEL: func.func @conv_general_dilated_both_batched
// CHECK:         "jaxpr.transpose"(%{{.*}}) {permutation = array<i64: 1, 0, 2, 3>}
func.func private @f(%x: tensor<1x2x5xf32>, %w: tensor<3x2x2xf32>) -> tensor<1x3x4xf32> {
  %0 = "jaxpr.conv_general_dilated"(%x, %w) {dimension_numbers = {lhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>}, lhs_dilation = array<i64: 1>, padding = [array<i64: 0, 0>], rhs_dilation = array<i64: 1>, window_strides = array<i64: 1>} : (tensor<1x2x5xf32>, tensor<3x2x2xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}
func.func @conv_general_dilated_both_batched(%xs: tensor<8x1x2x5xf32>, %ws: tensor<8x3x2x2xf32>) -> tensor<8x1x3x4xf32> {
  %0 = "jaxpr.vmap"(%xs, %ws) {callee = @f, in_axes = array<i64: 0, 0>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<8x1x2x5xf32>, tensor<8x3x2x2xf32>) -> tensor<8x1x3x4xf32>
  return %0 : tensor<8x1x3x4xf32>
}

// -----

// Only the input batched: the vmapped axis folds into the batch dimension; the kernel
// stays unbatched.
// CHECK-LABEL: func.func private @g_batched
// CHECK-SAME:    (%[[XS:.*]]: tensor<4x1x2x5xf32>, %[[W:.*]]: tensor<3x2x2xf32>)
// CHECK:         %[[X:.*]] = "jaxpr.reshape"(%[[XS]]) {new_sizes = array<i64: 4, 2, 5>}
// CHECK:         %[[Y:.*]] = "jaxpr.conv_general_dilated"(%[[X]], %[[W]])
// CHECK:         "jaxpr.reshape"(%[[Y]]) {new_sizes = array<i64: 4, 1, 3, 4>}
func.func private @g(%x: tensor<1x2x5xf32>, %w: tensor<3x2x2xf32>) -> tensor<1x3x4xf32> {
  %0 = "jaxpr.conv_general_dilated"(%x, %w) {dimension_numbers = {lhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>}, lhs_dilation = array<i64: 1>, padding = [array<i64: 0, 0>], rhs_dilation = array<i64: 1>, window_strides = array<i64: 1>} : (tensor<1x2x5xf32>, tensor<3x2x2xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}
func.func @conv_general_dilated_lhs_batched(%xs: tensor<4x1x2x5xf32>, %w: tensor<3x2x2xf32>) -> tensor<4x1x3x4xf32> {
  %0 = "jaxpr.vmap"(%xs, %w) {callee = @g, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 4 : i64} : (tensor<4x1x2x5xf32>, tensor<3x2x2xf32>) -> tensor<4x1x3x4xf32>
  return %0 : tensor<4x1x3x4xf32>
}
