// RUN: mjax-opt %s --jaxpr-to-stablehlo="platform=cuda" --split-input-file | filecheck %s

// Lowered for a CUDA GPU, linalg calls jaxlib's cuSOLVER kernels (one handler per
// routine for every dtype, typed options), on the layouts LAPACK's take; JAX's GPU
// lowering emits the same calls.

// CHECK-LABEL: func.func @lu_batched
// CHECK:         %[[F:.*]]:3 = stablehlo.custom_call @cusolver_getrf_ffi(
// CHECK-SAME:      mhlo.frontend_attributes = {num_batch_dims = "1"}
// CHECK-SAME:      operand_layouts = [dense<[1, 2, 0]> : tensor<3xindex>]
// CHECK:         stablehlo.subtract %[[F]]#1
// CHECK:         stablehlo.while
// CHECK-NOT:     lapack_
func.func @lu_batched(%a: tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2x4xi32>) {
  %0:3 = "jaxpr.lu"(%a) : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2x4xi32>)
  return %0#0, %0#1, %0#2 : tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2x4xi32>
}

// -----

// CHECK-LABEL: func.func @qr_complete
// CHECK:         %[[F:.*]]:2 = stablehlo.custom_call @cusolver_geqrf_ffi(
// CHECK:         %[[PAD:.*]] = stablehlo.pad %[[F]]#0
// CHECK:         stablehlo.custom_call @cusolver_orgqr_ffi(%[[PAD]], %[[F]]#1)
func.func @qr_complete(%a: tensor<4x3xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4x3xcomplex<f64>>) {
  %0:2 = "jaxpr.qr"(%a) {full_matrices = true} : (tensor<4x3xcomplex<f64>>) -> (tensor<4x4xcomplex<f64>>, tensor<4x3xcomplex<f64>>)
  return %0#0, %0#1 : tensor<4x4xcomplex<f64>>, tensor<4x3xcomplex<f64>>
}

// -----

// CHECK-LABEL: func.func @eigh_upper
// CHECK:         stablehlo.custom_call @cusolver_syevd_ffi(%{{.*}}) {{{.*}}mhlo.backend_config = {algorithm = 0 : ui8, lower = false}
func.func @eigh_upper(%a: tensor<3x3xcomplex<f32>>) -> tensor<3xf32> {
  %0:2 = "jaxpr.eigh"(%a) {lower = false} : (tensor<3x3xcomplex<f32>>) -> (tensor<3x3xcomplex<f32>>, tensor<3xf32>)
  return %0#1 : tensor<3xf32>
}

// -----

// Up to 1024x1024, Jacobi (gesvdj): V comes back, transposed and conjugated into V^H;
// below 33 rows or columns it has no economy mode, so the full factors are sliced.
// CHECK-LABEL: func.func @svd_thin_complex
// CHECK:         %[[F:.*]]:5 = stablehlo.custom_call @cusolver_gesvdj_ffi(%{{.*}}) {{{.*}}mhlo.backend_config = {compute_uv = true, full_matrices = true}
// CHECK-SAME:      -> (tensor<2x4x3xcomplex<f32>>, tensor<2x3xf32>, tensor<2x4x4xcomplex<f32>>, tensor<2x3x3xcomplex<f32>>, tensor<2xi32>)
// CHECK:         stablehlo.transpose %[[F]]#3, dims = [0, 2, 1]
// CHECK:         stablehlo.slice %[[F]]#2 [0:2, 0:4, 0:3]
func.func @svd_thin_complex(%a: tensor<2x4x3xcomplex<f32>>) -> (tensor<2x3xf32>, tensor<2x4x3xcomplex<f32>>, tensor<2x3x3xcomplex<f32>>) {
  %0:3 = "jaxpr.svd"(%a) {full_matrices = false} : (tensor<2x4x3xcomplex<f32>>) -> (tensor<2x3xf32>, tensor<2x4x3xcomplex<f32>>, tensor<2x3x3xcomplex<f32>>)
  return %0#0, %0#1, %0#2 : tensor<2x3xf32>, tensor<2x4x3xcomplex<f32>>, tensor<2x3x3xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @svd_values_only
// CHECK:         stablehlo.custom_call @cusolver_gesvdj_ffi(%{{.*}}) {{{.*}}mhlo.backend_config = {compute_uv = false, full_matrices = true}
func.func @svd_values_only(%a: tensor<4x3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.svd"(%a) {compute_uv = false} : (tensor<4x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Beyond 1024, QR-based gesvd; a wide matrix is factored as its transpose (row-major
// layouts), and V^H and U come back in each other's places.
// CHECK-LABEL: func.func @svd_wide_large
// CHECK:         %[[F:.*]]:5 = stablehlo.custom_call @cusolver_gesvd_ffi(%{{.*}}) {{{.*}}mhlo.backend_config = {compute_uv = true, full_matrices = false, transposed = true}
// CHECK-SAME:      operand_layouts = [dense<[1, 0]> : tensor<2xindex>]
// CHECK-SAME:      -> (tensor<4x1100xf32>, tensor<4xf32>, tensor<4x1100xf32>, tensor<4x4xf32>, tensor<i32>)
func.func @svd_wide_large(%a: tensor<4x1100xf32>) -> (tensor<4xf32>, tensor<4x4xf32>, tensor<4x1100xf32>) {
  %0:3 = "jaxpr.svd"(%a) {full_matrices = false} : (tensor<4x1100xf32>) -> (tensor<4xf32>, tensor<4x4xf32>, tensor<4x1100xf32>)
  return %0#0, %0#1, %0#2 : tensor<4xf32>, tensor<4x4xf32>, tensor<4x1100xf32>
}

// -----

// Right eigenvectors only: cuSOLVER geev. A real matrix's come back packed (a conjugate
// pair shares two columns) and are unpacked into complex vectors in StableHLO.
// CHECK-LABEL: func.func @eig_real
// CHECK:         %[[E:.*]]:5 = stablehlo.custom_call @cusolver_geev_ffi(%{{.*}}) {{{.*}}mhlo.backend_config = {left = false, right = true}
// CHECK-SAME:      -> (tensor<2x3x3xf32>, tensor<2x3xcomplex<f32>>, tensor<2x3x3xf32>, tensor<2x3x3xf32>, tensor<2xi32>)
// CHECK:         stablehlo.imag %[[E]]#1
// CHECK:         stablehlo.complex %{{.*}}, %{{.*}} : tensor<2x3x3xcomplex<f32>>
func.func @eig_real(%a: tensor<2x3x3xf32>) -> (tensor<2x3xcomplex<f32>>, tensor<2x3x3xcomplex<f32>>) {
  %0:2 = "jaxpr.eig"(%a) {compute_left_eigenvectors = false} : (tensor<2x3x3xf32>) -> (tensor<2x3xcomplex<f32>>, tensor<2x3x3xcomplex<f32>>)
  return %0#0, %0#1 : tensor<2x3xcomplex<f32>>, tensor<2x3x3xcomplex<f32>>
}

// -----

// Left eigenvectors too: jaxlib's hybrid kernel (LAPACK on the host, or MAGMA).
// CHECK-LABEL: func.func @eig_left
// CHECK:         %[[E:.*]]:5 = stablehlo.custom_call @cuhybrid_eig_real(%{{.*}}) {{{.*}}mhlo.backend_config = {left = true, magma = "auto", right = true}
// CHECK:         stablehlo.complex %[[E]]#0, %[[E]]#1 : tensor<3xcomplex<f64>>
func.func @eig_left(%a: tensor<3x3xf64>) -> (tensor<3xcomplex<f64>>, tensor<3x3xcomplex<f64>>, tensor<3x3xcomplex<f64>>) {
  %0:3 = "jaxpr.eig"(%a) : (tensor<3x3xf64>) -> (tensor<3xcomplex<f64>>, tensor<3x3xcomplex<f64>>, tensor<3x3xcomplex<f64>>)
  return %0#0, %0#1, %0#2 : tensor<3xcomplex<f64>>, tensor<3x3xcomplex<f64>>, tensor<3x3xcomplex<f64>>
}

// -----

// A tridiagonal solve of 3 rows or more: cuSPARSE's gtsv2, in place on b.
// CHECK-LABEL: func.func @tridiagonal_solve
// CHECK:         stablehlo.custom_call @cusparse_gtsv2_ffi(
// CHECK-SAME:      operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>, dense<[1, 2, 0]> : tensor<3xindex>]
// CHECK-SAME:      output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 3, operand_tuple_indices = []>]
func.func @tridiagonal_solve(%dl: tensor<2x5xf32>, %d: tensor<2x5xf32>, %du: tensor<2x5xf32>, %b: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %0 = "jaxpr.tridiagonal_solve"(%dl, %d, %du, %b) : (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  return %0 : tensor<2x5x3xf32>
}

// -----

// Two rows, which gtsv2 does not take: Cramer's rule in StableHLO, no custom call.
// CHECK-LABEL: func.func @tridiagonal_solve_2x2
// CHECK-NOT:     custom_call
// CHECK:         stablehlo.concatenate
// CHECK-NOT:     custom_call
func.func @tridiagonal_solve_2x2(%dl: tensor<2xf32>, %d: tensor<2xf32>, %du: tensor<2xf32>, %b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.tridiagonal_solve"(%dl, %d, %du, %b) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @tridiagonal
// CHECK:         stablehlo.custom_call @cusolver_sytrd_ffi(%{{.*}}) {{{.*}}mhlo.backend_config = {lower = true}
func.func @tridiagonal(%a: tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0:4 = "jaxpr.tridiagonal"(%a) {lower = true} : (tensor<2x4x4xf32>) -> (tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  return %0#0, %0#1, %0#2, %0#3 : tensor<2x4x4xf32>, tensor<2x4xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @ormqr
// CHECK:         stablehlo.custom_call @cusolver_ormqr_ffi(%{{.*}}, %{{.*}}, %{{.*}}) {{{.*}}mhlo.backend_config = {left = true, transpose = true}
func.func @ormqr(%a: tensor<4x3xf32>, %t: tensor<3xf32>, %c: tensor<4x2xf32>) -> tensor<4x2xf32> {
  %0 = "jaxpr.ormqr"(%a, %t, %c) {left = true, transpose = true} : (tensor<4x3xf32>, tensor<3xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}
