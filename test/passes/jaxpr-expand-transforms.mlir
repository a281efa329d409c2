// RUN: mjax-opt %s --jaxpr-expand-transforms --split-input-file | filecheck %s

// grad(grad(f)): the inner vjp is expanded first; the outer vjp differentiates @g1,
// whose body by then calls @f_fwd/@f_bwd. No transformation op is left.
// CHECK-LABEL: func.func private @f_fwd
// CHECK-LABEL: func.func private @f_bwd
// CHECK-LABEL: func.func private @g1(
// CHECK:         "jaxpr.call"({{.*}}) {callee = @f_fwd}
// CHECK:         "jaxpr.call"({{.*}}) {callee = @f_bwd}
// CHECK-LABEL: func.func private @g1_fwd
// CHECK-LABEL: func.func private @g1_bwd
// CHECK-LABEL: func.func @grad_grad
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>, %[[CT:.*]]: tensor<f32>)
// CHECK:         %[[F:.*]]:{{[0-9]+}} = "jaxpr.call"(%[[X]]) {callee = @g1_fwd}
// CHECK:         "jaxpr.call"({{.*}}%[[CT]]) {callee = @g1_bwd}
// CHECK-NOT:     jaxpr.vjp
// CHECK-NOT:     jaxpr.jvp
func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.mul"(%0, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @g1(%x: tensor<f32>) -> tensor<f32> {
  %one = "jaxpr.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  %0 = "jaxpr.vjp"(%x, %one) {callee = @f} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @grad_grad(%x: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @g1} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// jvp of a custom_jvp_call uses the rule @rule; a custom_jvp_call outside
// differentiation becomes a plain call.
// CHECK-LABEL: func.func private @hc_jvp
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>, %[[T:.*]]: tensor<f32>)
// CHECK:         %[[R:.*]]:2 = "jaxpr.call"(%[[X]], %[[T]]) {callee = @rule}
// CHECK:         return %[[R]]#0, %[[R]]#1
// CHECK-LABEL: func.func @custom_jvp
// CHECK:         "jaxpr.call"({{.*}}) {callee = @hc_jvp}
// CHECK:         "jaxpr.call"({{.*}}) {callee = @h}
// CHECK-NOT:     jaxpr.custom_jvp_call
func.func private @h(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.exp"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @rule(%x: tensor<f32>, %t: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = "jaxpr.exp"(%x) : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.mul"(%t, %0) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}
func.func private @hc(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.custom_jvp_call"(%x) {callee = @h, jvp = @rule} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @custom_jvp(%x: tensor<f32>, %t: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0:2 = "jaxpr.jvp"(%x, %t) {callee = @hc} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  %1 = "jaxpr.custom_jvp_call"(%x) {callee = @h, jvp = @rule} : (tensor<f32>) -> tensor<f32>
  return %0#1, %1 : tensor<f32>, tensor<f32>
}

// -----

// vjp of a custom_vjp_call: the forward calls @fwd (outputs + residuals), the backward
// calls @bwd on the residuals.
// CHECK-LABEL: func.func private @k_fwd
// CHECK:         %[[A:.*]]:2 = "jaxpr.call"({{.*}}) {callee = @kfwd}
// CHECK:         return %[[A]]#0, %[[A]]#1
// CHECK-LABEL: func.func private @k_bwd
// CHECK-SAME:    (%[[R:.*]]: tensor<f32>, %[[CT:.*]]: tensor<f32>)
// CHECK:         %[[G:.*]] = "jaxpr.call"(%[[R]], %[[CT]]) {callee = @kbwd}
// CHECK:         return %[[G]]
func.func private @kprimal(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @kfwd(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.cos"(%x) : (tensor<f32>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}
func.func private @kbwd(%r: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.mul"(%ct, %r) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @k(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.custom_vjp_call"(%x) {callee = @kprimal, fwd = @kfwd, bwd = @kbwd} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @custom_vjp(%x: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @k} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A jaxpr.vmap inside a function under jaxpr.jvp / jaxpr.vjp is batched first (inner-
// first), then the batched function is differentiated: never inlined as if it were @f.
// CHECK-LABEL: func.func private @f_batched(
// CHECK-SAME:    tensor<2x3xf32>
// CHECK:         "jaxpr.sin"({{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-LABEL: func.func private @f_batched_jvp(
// CHECK:         "jaxpr.cos"({{.*}}) : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK-LABEL: func.func private @g(
// CHECK-NEXT:    "jaxpr.call"({{.*}}) {callee = @f_batched}
// CHECK-LABEL: func.func private @g_bwd(
// CHECK:         "jaxpr.mul"
// CHECK-LABEL: func.func private @g_jvp(
// CHECK:         "jaxpr.call"({{.*}}) {callee = @f_batched_jvp}
// CHECK-LABEL: func.func @vmap_under_jvp_and_vjp
// CHECK-NOT:     jaxpr.vmap
// CHECK-NOT:     "jaxpr.jvp"
// CHECK-NOT:     "jaxpr.vjp"
func.func private @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @g(%xs: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @vmap_under_jvp_and_vjp(%xs: tensor<2x3xf32>, %t: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0:2 = "jaxpr.jvp"(%xs, %t) {callee = @g} : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  %1 = "jaxpr.vjp"(%xs, %t) {callee = @g} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0#1, %1 : tensor<2x3xf32>, tensor<2x3xf32>
}


// -----

// jaxpr.jvp and jaxpr.vjp inside a function under jaxpr.vmap are differentiated first,
// then the batcher batches the derivative functions they became.
// CHECK-LABEL: func.func private @f_fwd(
// CHECK-LABEL: func.func private @f_fwd_batched(
// CHECK-SAME:    tensor<4x3xf32>
// CHECK:         "jaxpr.cos"({{.*}}) : (tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK-LABEL: func.func private @f_bwd_batched(
// CHECK-LABEL: func.func private @f_jvp_batched(
// CHECK-LABEL: func.func private @df_batched(
// CHECK:         "jaxpr.call"({{.*}}) {callee = @f_jvp_batched}
// CHECK:         "jaxpr.call"({{.*}}) {callee = @f_fwd_batched}
// CHECK:         "jaxpr.call"({{.*}}) {callee = @f_bwd_batched}
// CHECK-LABEL: func.func @jvp_and_vjp_under_vmap
// CHECK:         "jaxpr.call"({{.*}}) {callee = @df_batched}
// CHECK-NOT:     jaxpr.vmap
func.func private @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @df(%x: tensor<3xf32>, %t: tensor<3xf32>) -> tensor<3xf32> {
  %0:2 = "jaxpr.jvp"(%x, %t) {callee = @f} : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  %1 = "jaxpr.vjp"(%x, %t) {callee = @f} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = "jaxpr.add"(%0#1, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %2 : tensor<3xf32>
}
func.func @jvp_and_vjp_under_vmap(%xs: tensor<4x3xf32>, %t: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.vmap"(%xs, %t) {callee = @df, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 4 : i64} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
