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

// -----

// A rule handle read from text names no Python rule in this process: differentiating
// the call fails at it (outside differentiation it is a plain call).
func.func private @h(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @uses_handle(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'jaxpr.custom_jvp_call' op has no jvp rule: its rule handle 'h_jvp#999' names no Python rule in this process}}
  %0 = "jaxpr.custom_jvp_call"(%x) {callee = @h, rule = "h_jvp#999"} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @jvp_of_unknown_handle(%x: tensor<f32>, %t: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0:2 = "jaxpr.jvp"(%x, %t) {callee = @uses_handle} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#0, %0#1 : tensor<f32>, tensor<f32>
}

// -----

// The same for the bwd of a pullback (what transposing a custom_vjp_tangent with an
// untraced bwd leaves), once the function holding it is compiled.
func.func private @k(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @untraced_bwd_of_unknown_handle(%r: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'jaxpr.custom_vjp_bwd' op has no bwd rule: its rule handle 'k_fwd#999' names no Python rule in this process}}
  %0 = "jaxpr.custom_vjp_bwd"(%r, %ct) {callee = @k, rule = "k_fwd#999", num_residuals = 1} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// linear_transpose of an op that is not linear in the transposed argument: it has no
// transpose rule, and the error names it at its location.
func.func private @g(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'jaxpr.sin' op cannot transpose for reverse-mode autodiff: not linear in its operands}}
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @not_linear(%ct: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.linear_transpose"(%ct) {callee = @g, num_linear = 1} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
