// RUN: mjax-opt %s --jaxpr-verify --split-input-file --verify-diagnostics
// Custom calls name every rule, by symbol or by a rule handle; a handle's types come from
// the callee.

func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @custom_jvp_without_rule(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'jaxpr.custom_jvp_call' op needs jvp (a function of the module) or a `rule` handle}}
  %0 = "jaxpr.custom_jvp_call"(%x) {callee = @f} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @custom_vjp_without_bwd(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'jaxpr.custom_vjp_call' op needs bwd (a function of the module) or a `rule` handle}}
  %0 = "jaxpr.custom_vjp_call"(%x) {callee = @f, fwd = @f} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @custom_vjp_bwd_without_fwd(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{names bwd @f without fwd}}
  %0 = "jaxpr.custom_vjp_call"(%x) {callee = @f, bwd = @f, rule = "f#0"} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func private @f(%x: tensor<f32>, %n: tensor<i32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @custom_vjp_bwd_cotangent_types(%r: tensor<i32>, %ct: tensor<f64>) -> tensor<f32> {
  // expected-error @+1 {{'jaxpr.custom_vjp_bwd' op cotangent operand types (f64[]) do not match the expected (f32[])}}
  %0 = "jaxpr.custom_vjp_bwd"(%r, %ct) {callee = @f, rule = "f#0", num_residuals = 1} : (tensor<i32>, tensor<f64>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @custom_vjp_tangent_without_bwd(%r: tensor<f32>, %t: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{'jaxpr.custom_vjp_tangent' op needs bwd, or a `rule` handle and the callee}}
  %0 = "jaxpr.custom_vjp_tangent"(%r, %t) {rule = "f#0", num_residuals = 1} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
