// RUN: mjax-opt %s --jaxpr-verify --split-input-file --verify-diagnostics

func.func @user_result_type(%x: tensor<3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{result 0 has type tensor<2xf32>, but the operands give tensor<3xf32>}}
  %0 = "jaxpr.custom_primitive"(%x) {name = "p", result_shapes = [array<i64: 3>], result_dtypes = [f32]} : (tensor<3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @user_shapes_dtypes_mismatch(%x: tensor<f32>) -> tensor<3xf32> {
  // expected-error @+1 {{has 1 result_shapes but 2 result_dtypes}}
  %0 = "jaxpr.custom_primitive"(%x) {name = "p", result_shapes = [array<i64: 3>], result_dtypes = [f32, f32]} : (tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

