// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// tridiagonal_solve: LAPACK gtsv writes all four operands in place (the diagonals as
// vectors, b column-major); a batch whose info is not 0 becomes NaN.
// CHECK-LABEL: func.func @tridiagonal_solve
// CHECK:         %[[R:.*]]:5 = stablehlo.custom_call @lapack_sgtsv_ffi(
// CHECK-SAME:      num_batch_dims = "1"
// CHECK-SAME:      operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>]
// CHECK:         stablehlo.select %{{.*}}, %[[R]]#3, %{{.*}}
// CHECK-NOT:     jaxpr.
func.func @tridiagonal_solve(%dl: tensor<2x5xf32>, %d: tensor<2x5xf32>, %du: tensor<2x5xf32>, %b: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %0 = "jaxpr.tridiagonal_solve"(%dl, %d, %du, %b) {perturb_singular = false} : (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  return %0 : tensor<2x5x3xf32>
}

// -----

// CHECK-LABEL: func.func @tridiagonal_solve_perturbed
// CHECK:         stablehlo.custom_call @tridiagonal_solve_perturbed_ffi(
// CHECK-NOT:     jaxpr.
func.func @tridiagonal_solve_perturbed(%dl: tensor<5xf64>, %d: tensor<5xf64>, %du: tensor<5xf64>, %b: tensor<5x1xf64>) -> tensor<5x1xf64> {
  %0 = "jaxpr.tridiagonal_solve"(%dl, %d, %du, %b) {perturb_singular = true} : (tensor<5xf64>, tensor<5xf64>, tensor<5xf64>, tensor<5x1xf64>) -> tensor<5x1xf64>
  return %0 : tensor<5x1xf64>
}

// -----

// CHECK-LABEL: func.func @tridiagonal
// CHECK:         stablehlo.custom_call @lapack_chetrd_ffi(
// CHECK-SAME:      mhlo.backend_config = {uplo = 85 : ui8}
// CHECK-NOT:     jaxpr.
func.func @tridiagonal(%a: tensor<4x4xcomplex<f32>>) -> tensor<4xf32> {
  %0:4 = "jaxpr.tridiagonal"(%a) {lower = false} : (tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<4xf32>, tensor<3xf32>, tensor<3xcomplex<f32>>)
  return %0#1 : tensor<4xf32>
}

// -----

// hessenberg: gehrd over the whole matrix (ilo = 1, ihi = n).
// CHECK-LABEL: func.func @hessenberg
// CHECK:         stablehlo.custom_call @lapack_dgehrd_ffi(
// CHECK-SAME:      mhlo.backend_config = {high = 4 : i32, low = 1 : i32}
// CHECK-SAME:      -> (tensor<2x4x4xf64>, tensor<2x3xf64>, tensor<2xi32>)
// CHECK-NOT:     jaxpr.
func.func @hessenberg(%a: tensor<2x4x4xf64>) -> tensor<2x3xf64> {
  %0:2 = "jaxpr.hessenberg"(%a) : (tensor<2x4x4xf64>) -> (tensor<2x4x4xf64>, tensor<2x3xf64>)
  return %0#1 : tensor<2x3xf64>
}

// -----

// schur of a real matrix: gees gives the Schur form, vectors, the eigenvalues' real and
// imaginary parts, sdim and info.
// CHECK-LABEL: func.func @schur
// CHECK:         stablehlo.custom_call @lapack_sgees_ffi(
// CHECK-SAME:      mhlo.backend_config = {mode = 86 : ui8, sort = 78 : ui8}
// CHECK-SAME:      -> (tensor<3x3xf32>, tensor<3x3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<i32>, tensor<i32>)
// CHECK-NOT:     jaxpr.
func.func @schur(%a: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  %0:2 = "jaxpr.schur"(%a) {compute_schur_vectors = true, sort_eig_vals = false} : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<3x3xf32>
}

// -----

// CHECK-LABEL: func.func @ormqr
// CHECK:         stablehlo.custom_call @lapack_cunmqr_ffi(
// CHECK-SAME:      mhlo.backend_config = {left = false, transpose = true}
// CHECK-NOT:     jaxpr.
func.func @ormqr(%a: tensor<5x3xcomplex<f32>>, %t: tensor<3xcomplex<f32>>, %c: tensor<2x5xcomplex<f32>>) -> tensor<2x5xcomplex<f32>> {
  %0 = "jaxpr.ormqr"(%a, %t, %c) {left = false, transpose = true} : (tensor<5x3xcomplex<f32>>, tensor<3xcomplex<f32>>, tensor<2x5xcomplex<f32>>) -> tensor<2x5xcomplex<f32>>
  return %0 : tensor<2x5xcomplex<f32>>
}
