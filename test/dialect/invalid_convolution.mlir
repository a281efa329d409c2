// RUN: mjax-opt %s --split-input-file --verify-diagnostics

func.func @conv_general_dilated_c1_rank(%x: tensor<1x2x5xf32>, %w: tensor<3x2xf32>) -> tensor<1x3x4xf32> {
  // expected-error @+1 {{conv_general_dilated lhs and rhs must have the same number of dimensions, but got (1, 2, 5) and (3, 2)}}
  %0 = "jaxpr.conv_general_dilated"(%x, %w) {dimension_numbers = {lhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>}, lhs_dilation = array<i64: 1>, padding = [array<i64: 0, 0>], rhs_dilation = array<i64: 1>, window_strides = array<i64: 1>} : (tensor<1x2x5xf32>, tensor<3x2xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

func.func @conv_general_dilated_c2_features(%x: tensor<1x4x5xf32>, %w: tensor<3x3x2xf32>) -> tensor<1x3x4xf32> {
  // expected-error @+1 {{conv_general_dilated lhs feature dimension size divided by feature_group_count must equal the rhs input feature dimension size, but 4 // 1 != 3}}
  %0 = "jaxpr.conv_general_dilated"(%x, %w) {dimension_numbers = {lhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>}, lhs_dilation = array<i64: 1>, padding = [array<i64: 0, 0>], rhs_dilation = array<i64: 1>, window_strides = array<i64: 1>} : (tensor<1x4x5xf32>, tensor<3x3x2xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

func.func @conv_general_dilated_c3_spec(%x: tensor<1x2x5xf32>, %w: tensor<3x2x2xf32>) -> tensor<1x3x4xf32> {
  // expected-error @+1 {{conv_general_dilated dimension_numbers lhs_spec must be a permutation of range(3), got (0, 1, 1)}}
  %0 = "jaxpr.conv_general_dilated"(%x, %w) {dimension_numbers = {lhs_spec = array<i64: 0, 1, 1>, out_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>}, lhs_dilation = array<i64: 1>, padding = [array<i64: 0, 0>], rhs_dilation = array<i64: 1>, window_strides = array<i64: 1>} : (tensor<1x2x5xf32>, tensor<3x2x2xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

func.func @conv_general_dilated_c4_groups(%x: tensor<2x2x5xf32>, %w: tensor<4x1x2xf32>) -> tensor<1x4x4xf32> {
  // expected-error @+1 {{At most one of batch_group_count and feature_group_count may be > 1, got batch_group_count=2 and feature_group_count=2}}
  %0 = "jaxpr.conv_general_dilated"(%x, %w) {batch_group_count = 2 : i64, feature_group_count = 2 : i64, dimension_numbers = {lhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>}, lhs_dilation = array<i64: 1>, padding = [array<i64: 0, 0>], rhs_dilation = array<i64: 1>, window_strides = array<i64: 1>} : (tensor<2x2x5xf32>, tensor<4x1x2xf32>) -> tensor<1x4x4xf32>
  return %0 : tensor<1x4x4xf32>
}

// -----

func.func @conv_general_dilated_c5_strides(%x: tensor<1x2x5xf32>, %w: tensor<3x2x2xf32>) -> tensor<1x3x4xf32> {
  // expected-error @+1 {{conv_general_dilated window_strides must be positive, got (0,)}}
  %0 = "jaxpr.conv_general_dilated"(%x, %w) {dimension_numbers = {lhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>}, lhs_dilation = array<i64: 1>, padding = [array<i64: 0, 0>], rhs_dilation = array<i64: 1>, window_strides = array<i64: 0>} : (tensor<1x2x5xf32>, tensor<3x2x2xf32>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

func.func @conv_general_dilated_c6_dtype(%x: tensor<1x2x5xf32>, %w: tensor<3x2x2xf16>) -> tensor<1x3x4xf32> {
  // expected-error @+1 {{conv_general_dilated requires arguments to have the same dtypes, got f32, f16}}
  %0 = "jaxpr.conv_general_dilated"(%x, %w) {dimension_numbers = {lhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>}, lhs_dilation = array<i64: 1>, padding = [array<i64: 0, 0>], rhs_dilation = array<i64: 1>, window_strides = array<i64: 1>} : (tensor<1x2x5xf32>, tensor<3x2x2xf16>) -> tensor<1x3x4xf32>
  return %0 : tensor<1x3x4xf32>
}

// -----

func.func @conv_general_dilated_c7_result(%x: tensor<1x2x5xf32>, %w: tensor<3x2x2xf32>) -> tensor<1x3x5xf32> {
  // expected-error @+1 {{result 0 has type tensor<1x3x5xf32>, but the operands give tensor<1x3x4xf32>}}
  %0 = "jaxpr.conv_general_dilated"(%x, %w) {dimension_numbers = {lhs_spec = array<i64: 0, 1, 2>, out_spec = array<i64: 0, 1, 2>, rhs_spec = array<i64: 0, 1, 2>}, lhs_dilation = array<i64: 1>, padding = [array<i64: 0, 0>], rhs_dilation = array<i64: 1>, window_strides = array<i64: 1>} : (tensor<1x2x5xf32>, tensor<3x2x2xf32>) -> tensor<1x3x5xf32>
  return %0 : tensor<1x3x5xf32>
}
