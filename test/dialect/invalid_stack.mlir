// RUN: mjax-opt %s --split-input-file --verify-diagnostics
// One verifier error per chunk: jaxpr.stack and jaxpr.unstack constraints (JAX's
// messages for lax.stack_p and lax.unstack_p), result types and attributes.

func.func @stack_no_operands() -> tensor<1x3xf32> {
  // expected-error @+1 {{'jaxpr.stack' op expects at least 1 operands, got 0}}
  %0 = "jaxpr.stack"() {axis = 0 : i64} : () -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

func.func @stack_shapes(%a: tensor<2xf32>, %b: tensor<3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{All input arrays must have the same shape. Got (2,), (3,).}}
  %0 = "jaxpr.stack"(%a, %b) {axis = 0 : i64} : (tensor<2xf32>, tensor<3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @stack_ranks(%a: tensor<2xf32>, %b: tensor<2x1xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{Cannot stack arrays with different numbers of dimensions: got (2,), (2, 1).}}
  %0 = "jaxpr.stack"(%a, %b) {axis = 0 : i64} : (tensor<2xf32>, tensor<2x1xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @stack_dtypes(%a: tensor<2xf32>, %b: tensor<2xi32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{lax.stack requires arguments to have the same dtypes, got f32, i32}}
  %0 = "jaxpr.stack"(%a, %b) {axis = 0 : i64} : (tensor<2xf32>, tensor<2xi32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @stack_axis(%a: tensor<2xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{axis 2 is out of bounds for array of dimension 2}}
  %0 = "jaxpr.stack"(%a) {axis = 2 : i64} : (tensor<2xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @stack_negative_axis(%a: tensor<2xf32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{axis -1 is out of bounds for array of dimension 2}}
  %0 = "jaxpr.stack"(%a) {axis = -1 : i64} : (tensor<2xf32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @stack_missing_axis(%a: tensor<2xf32>) -> tensor<1x2xf32> {
  // expected-error @+1 {{'jaxpr.stack' op requires attribute 'axis'}}
  %0 = "jaxpr.stack"(%a) : (tensor<2xf32>) -> tensor<1x2xf32>
  return %0 : tensor<1x2xf32>
}

// -----

func.func @stack_result_type(%a: tensor<2xf32>, %b: tensor<2xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{'jaxpr.stack' op result 0 has type tensor<2x3xf32>, but the operands give tensor<2x2xf32>}}
  %0 = "jaxpr.stack"(%a, %b) {axis = 0 : i64} : (tensor<2xf32>, tensor<2xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @unstack_scalar(%a: tensor<f32>) -> () {
  // expected-error @+1 {{unstack requires arrays with rank > 0, however a scalar array of shape () was passed.}}
  "jaxpr.unstack"(%a) {axis = 0 : i64} : (tensor<f32>) -> ()
  return
}

// -----

func.func @unstack_axis(%a: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>) {
  // expected-error @+1 {{axis 2 is out of bounds for array of dimension 2}}
  %0:2 = "jaxpr.unstack"(%a) {axis = 2 : i64} : (tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xf32>
}

// -----

func.func @unstack_result_count(%a: tensor<2x3xf32>) -> (tensor<3xf32>) {
  // expected-error @+1 {{'jaxpr.unstack' op expects 2 results, got 1}}
  %0 = "jaxpr.unstack"(%a) {axis = 0 : i64} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @unstack_two_operands(%a: tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  // expected-error @+1 {{'jaxpr.unstack' op expects 1 operand, got 2}}
  %0:2 = "jaxpr.unstack"(%a, %a) {axis = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}
