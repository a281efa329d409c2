// RUN: mjax-opt %s --jaxpr-expand-transforms --split-input-file --verify-diagnostics
// One --jaxpr-expand-transforms error per chunk, reported at the op at fault.

// A transformation op that the expansion table does not know is an error at its
// location, never a call (here an internal op of --jaxpr-vjp).
func.func private @h(%r: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  return %ct : tensor<f32>
}
func.func @internal_op_outside_vjp(%r: tensor<f32>, %t: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'jaxpr.custom_vjp_tangent' op is internal to --jaxpr-vjp}}
  %0 = "jaxpr.custom_vjp_tangent"(%r, %t) {bwd = @h, num_residuals = 1 : i64} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
