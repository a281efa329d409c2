// RUN: mjax-opt %s --jaxpr-batch | filecheck %s
// vmap of a custom_vjp call with an unbatched input (w): as in JAX, f and fwd take w
// unbatched, fwd's residual w stays unbatched for bwd, and bwd gives w's cotangent
// summed over the batch, like w.

// CHECK-LABEL: func.func private @hfwd_batched
// CHECK-SAME:    (%{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<3xf32>) -> (tensor<4x3xf32>, tensor<4x3xf32>, tensor<3xf32>)
// CHECK-LABEL: func.func private @hbwd_batched
// CHECK-SAME:    (%{{.*}}: tensor<4x3xf32>, %{{.*}}: tensor<3xf32>, %{{.*}}: tensor<4x3xf32>)
// CHECK-LABEL: func.func private @hbwd_batched_summed
// CHECK-SAME:    -> (tensor<4x3xf32>, tensor<3xf32>)
// CHECK:         %[[CT:.*]]:2 = "jaxpr.call"(%{{.*}}) {callee = @hbwd_batched}
// CHECK:         %[[W:.*]] = "jaxpr.reduce_sum"(%[[CT]]#1) {axes = array<i64: 0>} : (tensor<4x3xf32>) -> tensor<3xf32>
// CHECK:         return %[[CT]]#0, %[[W]]
// CHECK-LABEL: func.func private @body_batched
// CHECK:         "jaxpr.custom_vjp_call"(%{{.*}}) {bwd = @hbwd_batched_summed, callee = @h_batched, fwd = @hfwd_batched} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
func.func private @h(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.mul"(%x, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @hfwd(%x: tensor<3xf32>, %w: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0 = "jaxpr.mul"(%x, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %x, %w : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
func.func private @hbwd(%x: tensor<3xf32>, %w: tensor<3xf32>, %ct: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = "jaxpr.mul"(%ct, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.mul"(%ct, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}
func.func private @body(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.custom_vjp_call"(%x, %w) {callee = @h, fwd = @hfwd, bwd = @hbwd} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @vmapped(%xs: tensor<4x3xf32>, %w: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.vmap"(%xs, %w) {callee = @body, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 4} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
