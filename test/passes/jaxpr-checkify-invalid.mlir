// RUN: mjax-opt %s --jaxpr-checkify --split-input-file --verify-diagnostics

// error_payloads must be what the callee's checks need.
func.func private @f(%x: tensor<f32>, %ok: tensor<i1>) -> tensor<f32> {
  "jaxpr.check"(%ok, %x) {msg = "{}"} : (tensor<i1>, tensor<f32>) -> ()
  return %x : tensor<f32>
}
func.func @checkify_payload_mismatch(%x: tensor<f32>, %ok: tensor<i1>) -> tensor<f32> {
  // expected-error @+1 {{error_payloads [[]] do not match the checks of @f, which need [['tensor<f32>']]}}
  %p, %c, %y = "jaxpr.checkify"(%x, %ok) {callee = @f, errors = ["user"], error_payloads = [[]]} : (tensor<f32>, tensor<i1>) -> (tensor<i1>, tensor<i32>, tensor<f32>)
  return %y : tensor<f32>
}
