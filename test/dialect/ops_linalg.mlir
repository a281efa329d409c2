// RUN: mjax-opt %s --split-input-file | filecheck %s

// CHECK-LABEL: func.func @cholesky
// CHECK:         "jaxpr.cholesky"(%{{.*}}) : (tensor<3x3xf32>) -> tensor<3x3xf32>
func.func @cholesky(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = "jaxpr.cholesky"(%a) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// CHECK-LABEL: func.func @triangular_solve_batched
// CHECK:         "jaxpr.triangular_solve"(%{{.*}}, %{{.*}}) {conjugate_a = false, left_side = true, lower = true, transpose_a = false, unit_diagonal = false}
func.func @triangular_solve_batched(%a: tensor<2x3x3xf64>, %b: tensor<2x3x4xf64>) -> tensor<2x3x4xf64> {
  %0 = "jaxpr.triangular_solve"(%a, %b) {left_side = true, lower = true, transpose_a = false, conjugate_a = false, unit_diagonal = false} : (tensor<2x3x3xf64>, tensor<2x3x4xf64>) -> tensor<2x3x4xf64>
  return %0 : tensor<2x3x4xf64>
}

// -----

// CHECK-LABEL: func.func @lu
// CHECK:         "jaxpr.lu"(%{{.*}}) : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xi32>, tensor<4xi32>)
func.func @lu(%a: tensor<4x3xf32>) -> tensor<4xi32> {
  %0:3 = "jaxpr.lu"(%a) : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xi32>, tensor<4xi32>)
  return %0#2 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @geqrf
// CHECK:         "jaxpr.geqrf"(%{{.*}}) : (tensor<4x3xcomplex<f32>>) -> (tensor<4x3xcomplex<f32>>, tensor<3xcomplex<f32>>)
func.func @geqrf(%a: tensor<4x3xcomplex<f32>>) -> tensor<3xcomplex<f32>> {
  %0:2 = "jaxpr.geqrf"(%a) : (tensor<4x3xcomplex<f32>>) -> (tensor<4x3xcomplex<f32>>, tensor<3xcomplex<f32>>)
  return %0#1 : tensor<3xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @qr_reduced
// CHECK:         "jaxpr.qr"(%{{.*}}) {full_matrices = false} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3x3xf32>)
func.func @qr_reduced(%a: tensor<4x3xf32>) -> tensor<3x3xf32> {
  %0:2 = "jaxpr.qr"(%a) {full_matrices = false} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3x3xf32>)
  return %0#1 : tensor<3x3xf32>
}

// -----

// CHECK-LABEL: func.func @eigh
// CHECK:         "jaxpr.eigh"(%{{.*}}) {lower = true, sort_eigenvalues = true} : (tensor<2x3x3xcomplex<f64>>) -> (tensor<2x3x3xcomplex<f64>>, tensor<2x3xf64>)
func.func @eigh(%a: tensor<2x3x3xcomplex<f64>>) -> tensor<2x3xf64> {
  %0:2 = "jaxpr.eigh"(%a) {lower = true, sort_eigenvalues = true} : (tensor<2x3x3xcomplex<f64>>) -> (tensor<2x3x3xcomplex<f64>>, tensor<2x3xf64>)
  return %0#1 : tensor<2x3xf64>
}

// -----

// CHECK-LABEL: func.func @svd
// CHECK:         "jaxpr.svd"(%{{.*}}) {compute_uv = true, full_matrices = false} : (tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>, tensor<3x3xf32>)
func.func @svd(%a: tensor<4x3xf32>) -> tensor<3xf32> {
  %0:3 = "jaxpr.svd"(%a) {full_matrices = false, compute_uv = true} : (tensor<4x3xf32>) -> (tensor<3xf32>, tensor<4x3xf32>, tensor<3x3xf32>)
  return %0#0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @eig_values_only
// CHECK:         "jaxpr.eig"(%{{.*}}) {compute_left_eigenvectors = false, compute_right_eigenvectors = false} : (tensor<3x3xf32>) -> tensor<3xcomplex<f32>>
func.func @eig_values_only(%a: tensor<3x3xf32>) -> tensor<3xcomplex<f32>> {
  %0 = "jaxpr.eig"(%a) {compute_left_eigenvectors = false, compute_right_eigenvectors = false} : (tensor<3x3xf32>) -> tensor<3xcomplex<f32>>
  return %0 : tensor<3xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @fft_rfft
// CHECK:         "jaxpr.fft"(%{{.*}}) {fft_lengths = array<i64: 8>, fft_type = "RFFT"} : (tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>>
func.func @fft_rfft(%x: tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>> {
  %0 = "jaxpr.fft"(%x) {fft_type = "RFFT", fft_lengths = array<i64: 8>} : (tensor<2x8xf32>) -> tensor<2x5xcomplex<f32>>
  return %0 : tensor<2x5xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @householder_product
// CHECK:         "jaxpr.householder_product"(%{{.*}}, %{{.*}}) : (tensor<2x4x3xf64>, tensor<2x3xf64>) -> tensor<2x4x3xf64>
func.func @householder_product(%a: tensor<2x4x3xf64>, %taus: tensor<2x3xf64>) -> tensor<2x4x3xf64> {
  %0 = "jaxpr.householder_product"(%a, %taus) : (tensor<2x4x3xf64>, tensor<2x3xf64>) -> tensor<2x4x3xf64>
  return %0 : tensor<2x4x3xf64>
}
