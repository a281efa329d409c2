// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// CHECK-LABEL: func.func @conv_general_dilated_nhwc
// CHECK-SAME:    (%[[X:.*]]: tensor<2x7x6x4xf32>, %[[W:.*]]: tensor<3x2x2x6xf32>)
// CHECK:         %[[Y:.*]] = stablehlo.convolution(%[[X]], %[[W]]) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = {{\[\[}}1, 1], [0, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 2], reverse = [false, false]}
// CHECK-SAME:    batch_group_count = 1 : i64, feature_group_count = 2 : i64, precision_config = [#stablehlo<precision HIGHEST>, #stablehlo<precision DEFAULT>]
// CHECK:         return %[[Y]]
// CHECK-NOT:     jaxpr.
func.func @conv_general_dilated_nhwc(%x: tensor<2x7x6x4xf32>, %w: tensor<3x2x2x6xf32>) -> tensor<2x4x5x6xf32> {
  %0 = "jaxpr.conv_general_dilated"(%x, %w) {batch_group_count = 1 : i64, dimension_numbers = {lhs_spec = array<i64: 0, 3, 1, 2>, out_spec = array<i64: 0, 3, 1, 2>, rhs_spec = array<i64: 3, 2, 0, 1>}, feature_group_count = 2 : i64, lhs_dilation = array<i64: 1, 1>, padding = [array<i64: 1, 1>, array<i64: 0, 1>], precision = ["HIGHEST", "DEFAULT"], rhs_dilation = array<i64: 1, 2>, window_strides = array<i64: 2, 1>} : (tensor<2x7x6x4xf32>, tensor<3x2x2x6xf32>) -> tensor<2x4x5x6xf32>
  return %0 : tensor<2x4x5x6xf32>
}

// -----

// preferred_element_type is the convolution's result type; no precision_config by default.
// CHECK-LABEL: func.func @conv_general_dilated_int_to_float
// CHECK:         %[[Y:.*]] = stablehlo.convolution(%{{.*}}, %{{.*}}) dim_numbers = [b, f, 0]x[o, i, 0]->[b, f, 0], window = {stride = [1], pad = {{\[\[}}0, 0]], lhs_dilate = [2], rhs_dilate = [1], reverse = [false]}
// CHECK-SAME:    {batch_group_count = 1 : i64, feature_group_count = 1 : i64, precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]} : (tensor<1x2x5xi32>, tensor<3x2x2xi32>) -> tensor<1x3x8xf32>
// CHECK-NOT:     jaxpr.
func.func @conv_general_dilated_int_to_float(%x: tensor<1x2x5xi32>, %w: tensor<3x2x2xi32>) -> tensor<1x3x8xf32> {
  %0 = "jaxpr.conv_general_dilated"(%x, %w) {dimension_numbers = {lhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>}, lhs_dilation = array<i64: 2>, padding = [array<i64: 0, 0>], preferred_element_type = f32, rhs_dilation = array<i64: 1>, window_strides = array<i64: 1>} : (tensor<1x2x5xi32>, tensor<3x2x2xi32>) -> tensor<1x3x8xf32>
  return %0 : tensor<1x3x8xf32>
}
