// RUN: mjax-opt %s --jaxpr-verify --split-input-file --verify-diagnostics

func.func @tpu_custom_call_alias_type(%x: tensor<4xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{input_output_aliases pair (0, 0): operand 0 is f32[4] but result 0 is f32[8]}}
  %0 = "jaxpr.tpu_custom_call"(%x) {module = "module {}", result_shapes = [array<i64: 8>], result_dtypes = [f32], input_output_aliases = array<i64: 0, 0>} : (tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @tpu_custom_call_alias_range(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{input_output_aliases pair (1, 0) is out of range for 1 operands and 1 results}}
  %0 = "jaxpr.tpu_custom_call"(%x) {module = "module {}", result_shapes = [array<i64: 4>], result_dtypes = [f32], input_output_aliases = array<i64: 1, 0>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @tpu_custom_call_effects(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'has_side_effects' must be one of 'pure', 'dataflow_side_effecting', 'side_effecting'}}
  %0 = "jaxpr.tpu_custom_call"(%x) {module = "module {}", result_shapes = [array<i64: 4>], result_dtypes = [f32], has_side_effects = "sometimes"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @tpu_custom_call_flags(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'flags' must be a sequence of (name, bool | integer | float) pairs}}
  %0 = "jaxpr.tpu_custom_call"(%x) {module = "module {}", result_shapes = [array<i64: 4>], result_dtypes = [f32], flags = [["a", "b"]]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @tpu_custom_call_results(%x: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{has 1 result_shapes but 2 result_dtypes}}
  %0 = "jaxpr.tpu_custom_call"(%x) {module = "module {}", result_shapes = [array<i64: 4>], result_dtypes = [f32, f32]} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
