// RUN: mjax-opt %s --jaxpr-jvp --split-input-file | filecheck %s

// The JVP of cholesky solves with L from both sides (JAX: _cholesky_jvp_rule).
// CHECK-LABEL: func.func private @h_jvp
// CHECK:         %[[L:.*]] = "jaxpr.cholesky"
// CHECK:         "jaxpr.triangular_solve"(%[[L]], %{{.*}}) {conjugate_a = true, left_side = false, lower = true, transpose_a = true, unit_diagonal = false}
// CHECK:         "jaxpr.triangular_solve"(%[[L]], %{{.*}}) {conjugate_a = false, left_side = true, lower = true, transpose_a = false, unit_diagonal = false}
// CHECK:         "jaxpr.dot_general"(%[[L]], %{{.*}})
// CHECK-LABEL: func.func @jvp_cholesky
func.func private @h(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = "jaxpr.cholesky"(%a) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}
func.func @jvp_cholesky(%a: tensor<3x3xf32>, %t: tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>) {
  %0:2 = "jaxpr.jvp"(%a, %t) {callee = @h} : (tensor<3x3xf32>, tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3x3xf32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<3x3xf32>
}
