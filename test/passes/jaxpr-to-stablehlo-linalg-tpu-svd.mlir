// RUN: mjax-opt %s --jaxpr-to-stablehlo="platform=tpu" | filecheck %s

// Lowered for a TPU, jaxpr.svd expands into JAX's TPU SVD (its lowering is
// mlir.lower_fun of the algorithm, as in JAX): a QR of the tall matrix, the QDWH polar
// decomposition (QR-form Halley steps, then Cholesky-form ones and Halley's method in
// while loops), XLA's Jacobi Eigh of the Hermitian factor (unsorted), a stable descending
// sort, then the rank-deficiency and non-finite loops. The op keeps its own JVP and
// batching rules up to here; no LAPACK call.

// CHECK-LABEL: func.func @svd
// CHECK-NOT: jaxpr.
// CHECK-NOT: lapack
// CHECK: custom_call @Qr(%arg0)
// CHECK: custom_call @ProductOfElementaryHouseholderReflectors
// CHECK: stablehlo.while
// CHECK: custom_call @Qr
// CHECK: stablehlo.while
// CHECK: stablehlo.cholesky
// CHECK: stablehlo.triangular_solve
// CHECK: stablehlo.while
// CHECK: stablehlo.cholesky
// CHECK: custom_call @Eigh({{.*}}) {backend_config = "1,0,100,1e-6"} : (tensor<2x2xf32>)
// CHECK: stablehlo.sort
// CHECK: stablehlo.while
// CHECK: custom_call @Qr
// CHECK: stablehlo.while
// CHECK: return {{.*}} : tensor<2xf32>, tensor<3x2xf32>, tensor<2x2xf32>
func.func @svd(%a: tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>, tensor<2x2xf32>) {
  %0:3 = "jaxpr.svd"(%a) {full_matrices = false, compute_uv = true} : (tensor<3x2xf32>) -> (tensor<2xf32>, tensor<3x2xf32>, tensor<2x2xf32>)
  return %0#0, %0#1, %0#2 : tensor<2xf32>, tensor<3x2xf32>, tensor<2x2xf32>
}
