// RUN: mjax-opt %s --jaxpr-to-stablehlo="platform=cpu" --split-input-file | filecheck %s

// Lowered for XLA on a CPU, cholesky is LAPACK's potrf (as JAX's CPU lowering): the
// matrix in column-major order, factored in place; a batch potrf cannot factor is NaN, and
// the upper triangle is zeroed.
// CHECK-LABEL: func.func @cholesky
// CHECK:         %[[F:.*]]:2 = stablehlo.custom_call @lapack_spotrf_ffi(%{{.*}}) {{.*}}mhlo.backend_config = {uplo = 76 : ui8}
// CHECK-SAME:      operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>]
// CHECK:         stablehlo.compare EQ, %[[F]]#1
// CHECK:         %[[OK:.*]] = stablehlo.select %{{.*}}, %[[F]]#0, %{{.*}}
// CHECK:         stablehlo.select %{{.*}}, %[[OK]], %{{.*}}
// CHECK-NOT:     stablehlo.cholesky
func.func @cholesky(%a: tensor<2x3x3xf32>) -> tensor<2x3x3xf32> {
  %0 = "jaxpr.cholesky"(%a) : (tensor<2x3x3xf32>) -> tensor<2x3x3xf32>
  return %0 : tensor<2x3x3xf32>
}

// -----

// triangular_solve is BLAS's trsm, b solved in place; a conjugate transpose is trans 'C'.
// CHECK-LABEL: func.func @triangular_solve_adjoint
// CHECK:         stablehlo.custom_call @lapack_ctrsm_ffi(%{{.*}}, %{{.*}}) {{.*}}mhlo.backend_config = {diag = 78 : ui8, side = 76 : ui8, trans_x = 67 : ui8, uplo = 76 : ui8}
// CHECK-NOT:     stablehlo.triangular_solve
func.func @triangular_solve_adjoint(%a: tensor<2x3x3xcomplex<f32>>, %b: tensor<2x3x4xcomplex<f32>>) -> tensor<2x3x4xcomplex<f32>> {
  %0 = "jaxpr.triangular_solve"(%a, %b) {left_side = true, lower = true, transpose_a = true, conjugate_a = true} : (tensor<2x3x3xcomplex<f32>>, tensor<2x3x4xcomplex<f32>>) -> tensor<2x3x4xcomplex<f32>>
  return %0 : tensor<2x3x4xcomplex<f32>>
}
