// RUN: mjax-opt %s --split-input-file | filecheck %s

// CHECK-LABEL: func.func @conv_general_dilated_nhwc_groups
// CHECK:         "jaxpr.conv_general_dilated"(%{{.*}}, %{{.*}}) {batch_group_count = 1 : i64, dimension_numbers = {lhs_spec = array<i64: 0, 3, 1, 2>, out_spec = array<i64: 0, 3, 1, 2>, rhs_spec = array<i64: 3, 2, 0, 1>}, feature_group_count = 2 : i64, lhs_dilation = array<i64: 1, 1>, padding = [array<i64: 1, 1>, array<i64: 0, 1>], precision = ["HIGHEST", "DEFAULT"], rhs_dilation = array<i64: 1, 1>, window_strides = array<i64: 1, 1>}
func.func @conv_general_dilated_nhwc_groups(%x: tensor<2x7x6x4xf32>, %w: tensor<3x2x2x6xf32>) -> tensor<2x7x6x6xf32> {
  %0 = "jaxpr.conv_general_dilated"(%x, %w) {batch_group_count = 1 : i64, dimension_numbers = {lhs_spec = array<i64: 0, 3, 1, 2>, out_spec = array<i64: 0, 3, 1, 2>, rhs_spec = array<i64: 3, 2, 0, 1>}, feature_group_count = 2 : i64, lhs_dilation = array<i64: 1, 1>, padding = [array<i64: 1, 1>, array<i64: 0, 1>], precision = ["HIGHEST", "DEFAULT"], rhs_dilation = array<i64: 1, 1>, window_strides = array<i64: 1, 1>} : (tensor<2x7x6x4xf32>, tensor<3x2x2x6xf32>) -> tensor<2x7x6x6xf32>
  return %0 : tensor<2x7x6x6xf32>
}

// -----

// CHECK-LABEL: func.func @conv_general_dilated_1d_dilated
// CHECK:         "jaxpr.conv_general_dilated"(%{{.*}}, %{{.*}}) {{.*}}lhs_dilation = array<i64: 2>{{.*}}rhs_dilation = array<i64: 3>, window_strides = array<i64: 2>}
func.func @conv_general_dilated_1d_dilated(%x: tensor<1x2x5xf32>, %w: tensor<3x2x2xf32>) -> tensor<1x3x3xf32> {
  %0 = "jaxpr.conv_general_dilated"(%x, %w) {dimension_numbers = {lhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>}, lhs_dilation = array<i64: 2>, padding = [array<i64: 0, 0>], rhs_dilation = array<i64: 3>, window_strides = array<i64: 2>} : (tensor<1x2x5xf32>, tensor<3x2x2xf32>) -> tensor<1x3x3xf32>
  return %0 : tensor<1x3x3xf32>
}
