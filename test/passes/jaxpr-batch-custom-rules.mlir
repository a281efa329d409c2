// RUN: mjax-opt %s --jaxpr-batch | filecheck %s
// vmap of custom calls whose rules are not traced yet (named by a rule handle): nothing is
// traced; the batched call names a derived handle, the rules batched once traced (every
// argument at 0). A fwd already traced is batched now, its bwd left to the handle.

// CHECK-LABEL: func.func private @body_batched
// CHECK:         "jaxpr.custom_jvp_call"(%{{.*}}) {callee = @h_batched, rule = "h_jvp#7|vmap(0,)x4@None"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK:         "jaxpr.custom_vjp_call"(%{{.*}}) {callee = @h_batched, fwd = @hfwd_batched, rule = "h_vjp#8|vmap(0,)x4@None"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-LABEL: func.func @vmapped
// CHECK:         "jaxpr.call"(%{{.*}}) {callee = @body_batched}
func.func private @h(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @hfwd(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.cos"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}
func.func private @body(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = "jaxpr.custom_jvp_call"(%x) {callee = @h, rule = "h_jvp#7"} : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.custom_vjp_call"(%x) {callee = @h, fwd = @hfwd, rule = "h_vjp#8"} : (tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}
func.func @vmapped(%xs: tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>) {
  %0:2 = "jaxpr.vmap"(%xs) {callee = @body, in_axes = array<i64: 0>, out_axes = array<i64: 0, 0>, axis_size = 4} : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>)
  return %0#0, %0#1 : tensor<4x3xf32>, tensor<4x3xf32>
}
