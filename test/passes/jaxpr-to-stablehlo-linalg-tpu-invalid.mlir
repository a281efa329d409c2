// RUN: not mjax-opt %s --jaxpr-to-stablehlo="platform=tpu" 2>&1 | filecheck %s

// JAX has no TPU rule for eig (nor schur, hessenberg, tridiagonal); lowered for a TPU,
// mjax fails with JAX's error rather than calling LAPACK, which a TPU cannot run.

// CHECK: MLIR translation rule for primitive 'eig' not found for platform tpu
func.func @eig(%a: tensor<3x3xf32>) -> (tensor<3xcomplex<f32>>, tensor<3x3xcomplex<f32>>) {
  %0:2 = "jaxpr.eig"(%a) {compute_left_eigenvectors = false} : (tensor<3x3xf32>) -> (tensor<3xcomplex<f32>>, tensor<3x3xcomplex<f32>>)
  return %0#0, %0#1 : tensor<3xcomplex<f32>>, tensor<3x3xcomplex<f32>>
}
