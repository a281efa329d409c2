// RUN: mjax-opt %s --split-input-file --verify-diagnostics

func.func @top_k_c1_k_too_large(%x: tensor<3x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xi32>) {
  // expected-error @+1 {{k argument to top_k must be no larger than size along axis; got k=4 with shape=[3, 5] and axis=0}}
  %0:2 = "jaxpr.top_k"(%x) {axis = 0 : i64, k = 4 : i64} : (tensor<3x5xf32>) -> (tensor<4x5xf32>, tensor<4x5xi32>)
  return %0#0, %0#1 : tensor<4x5xf32>, tensor<4x5xi32>
}

// -----

func.func @top_k_c2_complex(%x: tensor<5xcomplex<f32>>) -> (tensor<2xcomplex<f32>>, tensor<2xi32>) {
  // expected-error @+1 {{top_k does not accept dtype c64 (operand must be bool or integer or floating-point)}}
  %0:2 = "jaxpr.top_k"(%x) {axis = 0 : i64, k = 2 : i64} : (tensor<5xcomplex<f32>>) -> (tensor<2xcomplex<f32>>, tensor<2xi32>)
  return %0#0, %0#1 : tensor<2xcomplex<f32>>, tensor<2xi32>
}

// -----

func.func @top_k_c3_axis(%x: tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi32>) {
  // expected-error @+1 {{axis argument out of range: axis=1 for operand.shape=(5,)}}
  %0:2 = "jaxpr.top_k"(%x) {axis = 1 : i64, k = 2 : i64} : (tensor<5xf32>) -> (tensor<2xf32>, tensor<2xi32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<2xi32>
}
