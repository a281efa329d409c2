// RUN: mjax-opt %s --split-input-file --verify-diagnostics

func.func @reduce_window_c1_rank(%x: tensor<4x6xf32>) -> tensor<3x6xf32> {
  // expected-error @+1 {{reduce_window_sum got the wrong number of window_dimensions for operand of rank 2: got window_dimensions (2,)}}
  %0 = "jaxpr.reduce_window_sum"(%x) {base_dilation = array<i64: 1, 1>, padding = [array<i64: 0, 0>, array<i64: 0, 0>], window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 2>, window_strides = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

func.func @reduce_window_c2_positive_strides(%x: tensor<4x6xf32>) -> tensor<3x6xf32> {
  // expected-error @+1 {{reduce_window_max: window_strides must be positive, got (0, 1)}}
  %0 = "jaxpr.reduce_window_max"(%x) {base_dilation = array<i64: 1, 1>, padding = [array<i64: 0, 0>, array<i64: 0, 0>], window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 0, 1>} : (tensor<4x6xf32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

func.func @reduce_window_c3_result(%x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{result 0 has type tensor<4x6xf32>, but the operands give tensor<3x6xf32>}}
  %0 = "jaxpr.reduce_window_min"(%x) {base_dilation = array<i64: 1, 1>, padding = [array<i64: 0, 0>, array<i64: 0, 0>], window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 1, 1>} : (tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}

// -----

func.func @reduce_window_sum_c4_dtype(%x: tensor<4xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{reduce_window_sum does not accept dtype bool (operand must be numeric)}}
  %0 = "jaxpr.reduce_window_sum"(%x) {base_dilation = array<i64: 1>, padding = [array<i64: 0, 0>], window_dilation = array<i64: 1>, window_dimensions = array<i64: 2>, window_strides = array<i64: 1>} : (tensor<4xi1>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

func.func @select_and_gather_add_c1_shapes(%t: tensor<4x5xf32>, %x: tensor<4x6xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{select_and_gather_add tangents and operand shapes must match, got (4, 5) and (4, 6)}}
  %0 = "jaxpr.select_and_gather_add"(%t, %x) {select_prim = "ge", base_dilation = array<i64: 1, 1>, padding = [array<i64: 0, 0>, array<i64: 0, 0>], window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>} : (tensor<4x5xf32>, tensor<4x6xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @select_and_gather_add_c2_select_prim(%t: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'jaxpr.select_and_gather_add' op attribute 'select_prim' must be one of 'ge', 'le', got 'gt'}}
  %0 = "jaxpr.select_and_gather_add"(%t, %x) {select_prim = "gt", base_dilation = array<i64: 1, 1>, padding = [array<i64: 0, 0>, array<i64: 0, 0>], window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 2, 2>} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @select_and_scatter_add_c1_source(%s: tensor<2x11xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  // expected-error @+1 {{select_and_scatter_add source shape must be the windowed shape (2, 3) of operand shape (4, 6), got (2, 11)}}
  %0 = "jaxpr.select_and_scatter_add"(%s, %x) {select_prim = "ge", padding = [array<i64: 0, 1>, array<i64: 1, 1>], window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 2>} : (tensor<2x11xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}
