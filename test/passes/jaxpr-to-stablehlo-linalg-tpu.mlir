// RUN: mjax-opt %s --jaxpr-to-stablehlo="platform=tpu" --split-input-file | filecheck %s

// Lowered for a TPU, linalg calls the custom calls XLA's TPU compiler implements, as
// JAX's TPU lowering does (LuDecomposition, Qr, ProductOfElementaryHouseholderReflectors,
// Eigh with "lower,sort,max_iter,tol"), batch axes in front, never LAPACK.

// CHECK-LABEL: func.func @lu_batched
// CHECK:         %[[F:.*]]:3 = stablehlo.custom_call @LuDecomposition(%{{.*}}) {api_version = 2 : i32, backend_config = ""} : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2x4xi32>)
// CHECK:         return %[[F]]#0, %[[F]]#1, %[[F]]#2
// CHECK-NOT:     lapack_
func.func @lu_batched(%a: tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2x4xi32>) {
  %0:3 = "jaxpr.lu"(%a) : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2x4xi32>)
  return %0#0, %0#1, %0#2 : tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2x4xi32>
}

// -----

// CHECK-LABEL: func.func @qr_complete
// CHECK:         %[[F:.*]]:2 = stablehlo.custom_call @Qr(%{{.*}}) {backend_config = ""} : (tensor<4x3xcomplex<f32>>) -> (tensor<4x3xcomplex<f32>>, tensor<3xcomplex<f32>>)
// CHECK:         %[[PAD:.*]] = stablehlo.pad %[[F]]#0
// CHECK:         stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%[[PAD]], %[[F]]#1) {backend_config = ""} : (tensor<4x4xcomplex<f32>>, tensor<3xcomplex<f32>>) -> tensor<4x4xcomplex<f32>>
func.func @qr_complete(%a: tensor<4x3xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<4x3xcomplex<f32>>) {
  %0:2 = "jaxpr.qr"(%a) {full_matrices = true} : (tensor<4x3xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<4x3xcomplex<f32>>)
  return %0#0, %0#1 : tensor<4x4xcomplex<f32>>, tensor<4x3xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @qr_wide
// CHECK:         %[[F:.*]]:2 = stablehlo.custom_call @Qr(
// CHECK:         %[[S:.*]] = stablehlo.slice %[[F]]#0 [0:3, 0:3]
// CHECK:         stablehlo.custom_call @ProductOfElementaryHouseholderReflectors(%[[S]], %[[F]]#1)
func.func @qr_wide(%a: tensor<3x5xf32>) -> (tensor<3x3xf32>, tensor<3x5xf32>) {
  %0:2 = "jaxpr.qr"(%a) {full_matrices = false} : (tensor<3x5xf32>) -> (tensor<3x3xf32>, tensor<3x5xf32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<3x5xf32>
}

// -----

// CHECK-LABEL: func.func @eigh_upper_unsorted
// CHECK:         %[[E:.*]]:2 = stablehlo.custom_call @Eigh(%{{.*}}) {backend_config = "0,0,100,1e-6"} : (tensor<3x3xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3xf32>)
// CHECK:         return %[[E]]#0, %[[E]]#1
func.func @eigh_upper_unsorted(%a: tensor<3x3xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3xf32>) {
  %0:2 = "jaxpr.eigh"(%a) {lower = false, sort_eigenvalues = false} : (tensor<3x3xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3x3xcomplex<f32>>, tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @cholesky
// CHECK:         stablehlo.cholesky %{{.*}}, lower = true
// CHECK-NOT:     custom_call
func.func @cholesky(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = "jaxpr.cholesky"(%a) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}
