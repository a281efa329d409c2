// RUN: mjax-opt %s --split-input-file | filecheck %s

// CHECK-LABEL: func.func @tridiagonal_solve
// CHECK:         "jaxpr.tridiagonal_solve"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {perturb_singular = false} : (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
func.func @tridiagonal_solve(%dl: tensor<2x5xf32>, %d: tensor<2x5xf32>, %du: tensor<2x5xf32>, %b: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %0 = "jaxpr.tridiagonal_solve"(%dl, %d, %du, %b) {perturb_singular = false} : (tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5xf32>, tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  return %0 : tensor<2x5x3xf32>
}

// -----

// CHECK-LABEL: func.func @tridiagonal
// CHECK:         "jaxpr.tridiagonal"(%{{.*}}) {lower = false} : (tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<4xf32>, tensor<3xf32>, tensor<3xcomplex<f32>>)
func.func @tridiagonal(%a: tensor<4x4xcomplex<f32>>) -> tensor<4xf32> {
  %0:4 = "jaxpr.tridiagonal"(%a) {lower = false} : (tensor<4x4xcomplex<f32>>) -> (tensor<4x4xcomplex<f32>>, tensor<4xf32>, tensor<3xf32>, tensor<3xcomplex<f32>>)
  return %0#1 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @hessenberg
// CHECK:         "jaxpr.hessenberg"(%{{.*}}) : (tensor<2x4x4xf64>) -> (tensor<2x4x4xf64>, tensor<2x3xf64>)
func.func @hessenberg(%a: tensor<2x4x4xf64>) -> tensor<2x3xf64> {
  %0:2 = "jaxpr.hessenberg"(%a) : (tensor<2x4x4xf64>) -> (tensor<2x4x4xf64>, tensor<2x3xf64>)
  return %0#1 : tensor<2x3xf64>
}

// -----

// CHECK-LABEL: func.func @schur
// CHECK:         "jaxpr.schur"(%{{.*}}) {compute_schur_vectors = false, sort_eig_vals = false} : (tensor<3x3xf32>) -> tensor<3x3xf32>
func.func @schur(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = "jaxpr.schur"(%a) {compute_schur_vectors = false, sort_eig_vals = false} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

// CHECK-LABEL: func.func @ormqr
// CHECK:         "jaxpr.ormqr"(%{{.*}}, %{{.*}}, %{{.*}}) {left = false, transpose = true} : (tensor<5x3xf32>, tensor<3xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
func.func @ormqr(%a: tensor<5x3xf32>, %t: tensor<3xf32>, %c: tensor<2x5xf32>) -> tensor<2x5xf32> {
  %0 = "jaxpr.ormqr"(%a, %t, %c) {left = false, transpose = true} : (tensor<5x3xf32>, tensor<3xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>
  return %0 : tensor<2x5xf32>
}
