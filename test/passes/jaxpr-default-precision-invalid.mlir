// RUN: mjax-opt %s --jaxpr-jvp --split-input-file --verify-diagnostics

// A default precision recorded on an op (passes/default_precision.py) must be what a
// dot's precision may be: read when the op's rule runs, a located error otherwise.
func.func private @h(%a: tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>) {
  // expected-error @+1 {{'jaxpr.qr' op mjax.default_precision precision must be absent, a pair of DEFAULT/HIGH/HIGHEST or a dot algorithm, got ('HIGHEST',)}}
  %0:2 = "jaxpr.qr"(%a) {full_matrices = false, mjax.default_precision = ["HIGHEST"]} : (tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>)
  return %0#0, %0#1 : tensor<5x3xf32>, tensor<3x3xf32>
}
func.func @jvp_qr(%a: tensor<5x3xf32>, %t: tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>) {
  %0:4 = "jaxpr.jvp"(%a, %t) {callee = @h} : (tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>, tensor<5x3xf32>, tensor<3x3xf32>)
  return %0#2, %0#3 : tensor<5x3xf32>, tensor<3x3xf32>
}
