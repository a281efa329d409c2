// RUN: mjax-opt %s --split-input-file --verify-diagnostics

func.func @reduce_sum_c1_duplicate_axes(%a0: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{duplicate value in 'axes' of reduction: (0, 0)}}
  %0 = "jaxpr.reduce_sum"(%a0) {axes = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @reduce_sum_c2_axis_out_of_range(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{reduction axes (2,) contains out-of-bounds indices for operand of shape (2, 3)}}
  %0 = "jaxpr.reduce_sum"(%a0) {axes = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @reduce_sum_bool(%a0: tensor<2xi1>) -> tensor<i1> {
  // expected-error @+1 {{reduce_sum does not accept dtype bool}}
  %0 = "jaxpr.reduce_sum"(%a0) {axes = array<i64: 0>} : (tensor<2xi1>) -> tensor<i1>
  return %0 : tensor<i1>
}

// -----

func.func @reduce_prod_bool(%a0: tensor<2xi1>) -> tensor<i1> {
  // expected-error @+1 {{reduce_prod does not accept dtype bool}}
  %0 = "jaxpr.reduce_prod"(%a0) {axes = array<i64: 0>} : (tensor<2xi1>) -> tensor<i1>
  return %0 : tensor<i1>
}

// -----

func.func @reduce_and_float(%a0: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{reduce_and does not accept dtype f32 (operand must be bool or integer)}}
  %0 = "jaxpr.reduce_and"(%a0) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @reduce_or_float(%a0: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{reduce_or does not accept dtype f32}}
  %0 = "jaxpr.reduce_or"(%a0) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @reduce_max_result_type(%a0: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result 0 has type tensor<3xf32>, but the operands give tensor<2xf32>}}
  %0 = "jaxpr.reduce_max"(%a0) {axes = array<i64: 1>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @reduce_min_missing_axes(%a0: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{requires attribute 'axes'}}
  %0 = "jaxpr.reduce_min"(%a0) : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @reduce_min_axes_kind(%a0: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{attribute 'axes' must be a sequence of integers, got 1}}
  %0 = "jaxpr.reduce_min"(%a0) {axes = 1 : i64} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @reduce_sum_two_operands(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{expects 1 operand, got 2}}
  %0 = "jaxpr.reduce_sum"(%a0, %a1) {axes = array<i64: 0>} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @argmax_c1_one_axis(%a0: tensor<2x3xf32>) -> tensor<i32> {
  // expected-error @+1 {{argmax requires exactly one axis in 'axes', got (0, 1)}}
  %0 = "jaxpr.argmax"(%a0) {axes = array<i64: 0, 1>, index_dtype = i32} : (tensor<2x3xf32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

func.func @argmax_c2_axis_out_of_range(%a0: tensor<2x3xf32>) -> tensor<2x3xi32> {
  // expected-error @+1 {{argmax: invalid axis 2 for operand shape (2, 3)}}
  %0 = "jaxpr.argmax"(%a0) {axes = array<i64: 2>, index_dtype = i32} : (tensor<2x3xf32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

func.func @argmin_c3_empty_axis(%a0: tensor<2x0xf32>) -> tensor<2xi32> {
  // expected-error @+1 {{argmin requires a non-empty reduced dimension, got operand shape (2, 0) and axis 1}}
  %0 = "jaxpr.argmin"(%a0) {axes = array<i64: 1>, index_dtype = i32} : (tensor<2x0xf32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @argmin_index_dtype_float(%a0: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{argmin index_dtype must be an integer type, but got f32}}
  %0 = "jaxpr.argmin"(%a0) {axes = array<i64: 1>, index_dtype = f32} : (tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @argmax_complex(%a0: tensor<3xcomplex<f32>>) -> tensor<i32> {
  // expected-error @+1 {{argmax does not accept dtype c64}}
  %0 = "jaxpr.argmax"(%a0) {axes = array<i64: 0>, index_dtype = i32} : (tensor<3xcomplex<f32>>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

func.func @argmax_result_dtype(%a0: tensor<2x3xf32>) -> tensor<2xi64> {
  // expected-error @+1 {{result 0 has type tensor<2xi64>, but the operands give tensor<2xi32>}}
  %0 = "jaxpr.argmax"(%a0) {axes = array<i64: 1>, index_dtype = i32} : (tensor<2x3xf32>) -> tensor<2xi64>
  return %0 : tensor<2xi64>
}

// -----

func.func @cumsum_c1_axis_out_of_range(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{cumsum: axis 2 is out of bounds for array of shape (2, 3)}}
  %0 = "jaxpr.cumsum"(%a0) {axis = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @cumprod_negative_axis(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{cumprod: axis must be nonnegative}}
  %0 = "jaxpr.cumprod"(%a0) {axis = -1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @cummax_bool(%a0: tensor<3xi1>) -> tensor<3xi1> {
  // expected-error @+1 {{cummax does not accept dtype bool (operand must be numeric)}}
  %0 = "jaxpr.cummax"(%a0) {axis = 0 : i64} : (tensor<3xi1>) -> tensor<3xi1>
  return %0 : tensor<3xi1>
}

// -----

func.func @cumlogsumexp_int(%a0: tensor<3xi32>) -> tensor<3xi32> {
  // expected-error @+1 {{cumlogsumexp does not accept dtype i32 (operand must be floating-point)}}
  %0 = "jaxpr.cumlogsumexp"(%a0) {axis = 0 : i64} : (tensor<3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @cummin_reverse_kind(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{attribute 'reverse' must be a boolean, got 1}}
  %0 = "jaxpr.cummin"(%a0) {axis = 0 : i64, reverse = 1 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @sort_c1_equal_shapes(%a0: tensor<3xf32>, %a1: tensor<4xi32>) -> (tensor<3xf32>, tensor<4xi32>) {
  // expected-error @+1 {{sort requires operands of equal shapes, got (3,), (4,)}}
  %0:2 = "jaxpr.sort"(%a0, %a1) {dimension = 0 : i64} : (tensor<3xf32>, tensor<4xi32>) -> (tensor<3xf32>, tensor<4xi32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<4xi32>
}

// -----

func.func @sort_c2_dimension_out_of_range(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{sort: dimension 2 is out of range for operands of shape (2, 3) (rank 2)}}
  %0 = "jaxpr.sort"(%a0) {dimension = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @sort_c3_num_keys_zero(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{sort: num_keys must be in [1, 1] (the number of operands), got 0}}
  %0 = "jaxpr.sort"(%a0) {dimension = 0 : i64, num_keys = 0 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @sort_c3_num_keys_too_many(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  // expected-error @+1 {{sort: num_keys must be in [1, 2] (the number of operands), got 3}}
  %0:2 = "jaxpr.sort"(%a0, %a1) {dimension = 0 : i64, num_keys = 3 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

func.func @sort_rank0(%a0: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{sort requires operands of rank >= 1, got shape ()}}
  %0 = "jaxpr.sort"(%a0) {dimension = 0 : i64} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @sort_result_types(%a0: tensor<3xf32>, %a1: tensor<3xi32>) -> (tensor<3xf32>, tensor<3xf32>) {
  // expected-error @+1 {{result 1 has type tensor<3xf32>, but the operands give tensor<3xi32>}}
  %0:2 = "jaxpr.sort"(%a0, %a1) {dimension = 0 : i64} : (tensor<3xf32>, tensor<3xi32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}
