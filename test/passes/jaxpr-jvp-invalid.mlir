// RUN: mjax-opt %s --jaxpr-jvp --split-input-file --verify-diagnostics
// One --jaxpr-jvp error per chunk, reported at the op that cannot be differentiated.

// A tangent on polygamma's order m is an error, as in JAX (polygamma_gradm).
func.func private @pg_m(%m: tensor<3xf64>, %x: tensor<3xf64>) -> tensor<3xf64> {
  // expected-error @+1 {{polygamma gradient with respect to m is not supported}}
  %0 = "jaxpr.polygamma"(%m, %x) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
func.func @polygamma_jvp_wrt_m(%m: tensor<3xf64>, %x: tensor<3xf64>, %t: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %0:2 = "jaxpr.jvp"(%m, %x, %t) {callee = @pg_m, diff_args = array<i64: 0>} : (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  return %0#0, %0#1 : tensor<3xf64>, tensor<3xf64>
}
