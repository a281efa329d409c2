// RUN: mjax-opt %s --split-input-file --verify-diagnostics
// One verifier error per chunk: jaxpr.split's constraints (JAX's messages for
// lax.split_p), its result count and types.

func.func @split_sizes_sum(%a: tensor<6xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  // expected-error @+1 {{Sum of sizes 4 must be equal to dimension 6 of the operand shape (6,)}}
  %0:2 = "jaxpr.split"(%a) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<6xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}

// -----

func.func @split_negative_size(%a: tensor<2xf32>) -> (tensor<3xf32>, tensor<2xf32>) {
  // expected-error @+1 {{Sizes passed to split must be nonnegative, got [3, -1]}}
  %0:2 = "jaxpr.split"(%a) {axis = 0 : i64, sizes = array<i64: 3, -1>} : (tensor<2xf32>) -> (tensor<3xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<2xf32>
}

// -----

func.func @split_axis(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{axis 2 is out of bounds for array of dimension 2}}
  %0 = "jaxpr.split"(%a) {axis = 2 : i64, sizes = array<i64: 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @split_result_count(%a: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'jaxpr.split' op expects 2 results, got 1}}
  %0 = "jaxpr.split"(%a) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @split_result_type(%a: tensor<4xf32>) -> (tensor<1xf32>, tensor<3xf32>) {
  // expected-error @+1 {{'jaxpr.split' op result 0 has type tensor<1xf32>, but the operands give tensor<2xf32>}}
  %0:2 = "jaxpr.split"(%a) {axis = 0 : i64, sizes = array<i64: 2, 2>} : (tensor<4xf32>) -> (tensor<1xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<1xf32>, tensor<3xf32>
}
