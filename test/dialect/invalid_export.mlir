// RUN: mjax-opt %s --jaxpr-verify --split-input-file --verify-diagnostics

func.func @call_exported_operand_type(%x: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{operand 0 of 'f' has type f32[4], but @main expects f32[3]}}
  %0 = "jaxpr.call_exported"(%x) {fun_name = "f", module = "module { func.func @main(%arg0: tensor<3xf32>) -> tensor<3xf32> { return %arg0 : tensor<3xf32> } }", result_shapes = [array<i64: 3>], result_dtypes = [f32]} : (tensor<4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @call_exported_results(%x: tensor<3xf32>) -> tensor<3xi32> {
  // expected-error @+1 {{declared results ['i32[3]'] of 'f' differ from @main's ['f32[3]']}}
  %0 = "jaxpr.call_exported"(%x) {fun_name = "f", module = "module { func.func @main(%arg0: tensor<3xf32>) -> tensor<3xf32> { return %arg0 : tensor<3xf32> } }", result_shapes = [array<i64: 3>], result_dtypes = [i32]} : (tensor<3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

func.func @call_exported_arity(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'f' takes 2 arguments, got 1}}
  %0 = "jaxpr.call_exported"(%x) {fun_name = "f", module = "module { func.func @main(%arg0: tensor<3xf32>, %arg1: tensor<3xf32>) -> tensor<3xf32> { return %arg0 : tensor<3xf32> } }", result_shapes = [array<i64: 3>], result_dtypes = [f32]} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @call_exported_no_main(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{the exported module has no @main function}}
  %0 = "jaxpr.call_exported"(%x) {fun_name = "f", module = "module { func.func @other(%arg0: tensor<3xf32>) -> tensor<3xf32> { return %arg0 : tensor<3xf32> } }", result_shapes = [array<i64: 3>], result_dtypes = [f32]} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
