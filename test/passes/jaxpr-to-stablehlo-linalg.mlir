// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// cholesky is stablehlo.cholesky with the upper triangle zeroed.
// CHECK-LABEL: func.func @cholesky
// CHECK-SAME:    (%[[A:.*]]: tensor<3x3xf32>)
// CHECK:         %[[L:.*]] = stablehlo.cholesky %[[A]], lower = true
// CHECK:         %[[Y:.*]] = stablehlo.select %{{.*}}, %[[L]], %{{.*}}
// CHECK:         return %[[Y]]
// CHECK-NOT:     jaxpr.
func.func @cholesky(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = "jaxpr.cholesky"(%a) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// CHECK-LABEL: func.func @triangular_solve_adjoint
// CHECK:         "stablehlo.triangular_solve"(%{{.*}}, %{{.*}}) <{left_side = true, lower = true, transpose_a = #stablehlo<transpose ADJOINT>, unit_diagonal = false}>
// CHECK-NOT:     jaxpr.
func.func @triangular_solve_adjoint(%a: tensor<2x3x3xcomplex<f32>>, %b: tensor<2x3x4xcomplex<f32>>) -> tensor<2x3x4xcomplex<f32>> {
  %0 = "jaxpr.triangular_solve"(%a, %b) {left_side = true, lower = true, transpose_a = true, conjugate_a = true} : (tensor<2x3x3xcomplex<f32>>, tensor<2x3x4xcomplex<f32>>) -> tensor<2x3x4xcomplex<f32>>
  return %0 : tensor<2x3x4xcomplex<f32>>
}

// -----

// lu: LAPACK getrf on column-major batched matrices, 1-based pivots shifted to 0-based,
// and a while loop applying the row swaps to build the permutation.
// CHECK-LABEL: func.func @lu_batched
// CHECK:         %[[F:.*]]:3 = stablehlo.custom_call @lapack_sgetrf_ffi(
// CHECK-SAME:      mhlo.frontend_attributes = {num_batch_dims = "1"}
// CHECK-SAME:      operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>]
// CHECK-SAME:      -> (tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2xi32>)
// CHECK:         %[[P:.*]] = stablehlo.subtract %[[F]]#1, %{{.*}} : tensor<2x3xi32>
// CHECK:         stablehlo.while
// CHECK-NOT:     jaxpr.
func.func @lu_batched(%a: tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2x4xi32>) {
  %0:3 = "jaxpr.lu"(%a) : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2x4xi32>)
  return %0#0, %0#1, %0#2 : tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2x4xi32>
}

// -----

// A complete QR of a tall matrix pads the reflectors to m x m before orgqr.
// CHECK-LABEL: func.func @qr_complete
// CHECK:         %[[F:.*]]:2 = stablehlo.custom_call @lapack_dgeqrf_ffi(
// CHECK:         %[[PAD:.*]] = stablehlo.pad %[[F]]#0, %{{.*}}, low = [0, 0], high = [0, 1]
// CHECK:         %[[Q:.*]] = stablehlo.custom_call @lapack_dorgqr_ffi(%[[PAD]], %[[F]]#1)
// CHECK:         return %[[Q]], %{{.*}} : tensor<4x4xf64>, tensor<4x3xf64>
// CHECK-NOT:     jaxpr.
func.func @qr_complete(%a: tensor<4x3xf64>) -> (tensor<4x4xf64>, tensor<4x3xf64>) {
  %0:2 = "jaxpr.qr"(%a) {full_matrices = true} : (tensor<4x3xf64>) -> (tensor<4x4xf64>, tensor<4x3xf64>)
  return %0#0, %0#1 : tensor<4x4xf64>, tensor<4x3xf64>
}

// -----

// CHECK-LABEL: func.func @geqrf_complex
// CHECK:         stablehlo.custom_call @lapack_cgeqrf_ffi
// CHECK-NOT:     jaxpr.
func.func @geqrf_complex(%a: tensor<3x3xcomplex<f32>>) -> tensor<3xcomplex<f32>> {
  %0:2 = "jaxpr.geqrf"(%a) : (tensor<3x3xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3xcomplex<f32>>)
  return %0#1 : tensor<3xcomplex<f32>>
}

// -----

// eigh of the upper triangle: heevd with mode 'V' (86) and uplo 'U' (85); failed
// batches become NaN.
// CHECK-LABEL: func.func @eigh_upper
// CHECK:         %[[E:.*]]:3 = stablehlo.custom_call @lapack_cheevd_ffi(%{{.*}}) {{{.*}}mhlo.backend_config = {mode = 86 : ui8, uplo = 85 : ui8}
// CHECK:         %[[OK:.*]] = stablehlo.compare EQ, %[[E]]#2
// CHECK:         stablehlo.select %{{.*}}, %[[E]]#1, %{{.*}} : tensor<3xi1>, tensor<3xf32>
// CHECK-NOT:     jaxpr.
func.func @eigh_upper(%a: tensor<3x3xcomplex<f32>>) -> tensor<3xf32> {
  %0:2 = "jaxpr.eigh"(%a) {lower = false} : (tensor<3x3xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3xf32>)
  return %0#1 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @svd_values_only
// CHECK:         stablehlo.custom_call @lapack_sgesdd_ffi(%{{.*}}) {{{.*}}mhlo.backend_config = {mode = 78 : ui8}
// CHECK-NOT:     jaxpr.
func.func @svd_values_only(%a: tensor<4x3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.svd"(%a) {compute_uv = false} : (tensor<4x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Real geev returns real and imaginary parts of the eigenvalues; they are combined.
// CHECK-LABEL: func.func @eig_real
// CHECK:         %[[E:.*]]:5 = stablehlo.custom_call @lapack_dgeev_ffi(%{{.*}}) {{{.*}}mhlo.backend_config = {compute_left = 78 : ui8, compute_right = 86 : ui8}
// CHECK:         stablehlo.complex %[[E]]#0, %[[E]]#1 : tensor<3xcomplex<f64>>
// CHECK-NOT:     jaxpr.
func.func @eig_real(%a: tensor<3x3xf64>) -> (tensor<3xcomplex<f64>>, tensor<3x3xcomplex<f64>>) {
  %0:2 = "jaxpr.eig"(%a) {compute_left_eigenvectors = false} : (tensor<3x3xf64>) -> (tensor<3xcomplex<f64>>, tensor<3x3xcomplex<f64>>)
  return %0#0, %0#1 : tensor<3xcomplex<f64>>, tensor<3x3xcomplex<f64>>
}

// -----

// CHECK-LABEL: func.func @fft_ifft2
// CHECK-SAME:    (%[[X:.*]]: tensor<2x8xcomplex<f32>>)
// CHECK:         %[[Y:.*]] = stablehlo.fft %[[X]], type = IFFT, length = [2, 8]
// CHECK:         return %[[Y]]
// CHECK-NOT:     jaxpr.
func.func @fft_ifft2(%x: tensor<2x8xcomplex<f32>>) -> tensor<2x8xcomplex<f32>> {
  %0 = "jaxpr.fft"(%x) {fft_type = "IFFT", fft_lengths = array<i64: 2, 8>} : (tensor<2x8xcomplex<f32>>) -> tensor<2x8xcomplex<f32>>
  return %0 : tensor<2x8xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @fft_irfft
// CHECK:         stablehlo.fft %{{.*}}, type = IRFFT, length = [8] : (tensor<3x5xcomplex<f32>>) -> tensor<3x8xf32>
// CHECK-NOT:     jaxpr.
func.func @fft_irfft(%x: tensor<3x5xcomplex<f32>>) -> tensor<3x8xf32> {
  %0 = "jaxpr.fft"(%x) {fft_type = "IRFFT", fft_lengths = array<i64: 8>} : (tensor<3x5xcomplex<f32>>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

// CHECK-LABEL: func.func @householder_product_complex
// CHECK-SAME:    (%[[A:.*]]: tensor<4x3xcomplex<f64>>, %[[T:.*]]: tensor<3xcomplex<f64>>)
// CHECK:         %[[Q:.*]] = stablehlo.custom_call @lapack_zungqr_ffi(%[[A]], %[[T]])
// CHECK:         return %[[Q]]
// CHECK-NOT:     jaxpr.
func.func @householder_product_complex(%a: tensor<4x3xcomplex<f64>>, %taus: tensor<3xcomplex<f64>>) -> tensor<4x3xcomplex<f64>> {
  %0 = "jaxpr.householder_product"(%a, %taus) : (tensor<4x3xcomplex<f64>>, tensor<3xcomplex<f64>>) -> tensor<4x3xcomplex<f64>>
  return %0 : tensor<4x3xcomplex<f64>>
}
