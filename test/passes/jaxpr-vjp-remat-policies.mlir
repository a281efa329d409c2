// RUN: mjax-opt %s --jaxpr-vjp --split-input-file | filecheck %s

// The policy on jaxpr.checkpoint decides what the backward pass gets as residuals.
// nothing_saveable (also the default, no attribute): only @inner's input is saved; the
// backward pass recomputes sin and cos from it.
// CHECK-LABEL: func.func private @outer_fwd
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>)
// CHECK-NEXT:    %[[Y:.*]] = "jaxpr.checkpoint"(%[[X]]) {callee = @inner, policy = "nothing_saveable"}
// CHECK-NEXT:    "jaxpr.sin"(%[[Y]])
// CHECK-NEXT:    "jaxpr.cos"(%[[Y]])
// CHECK-NEXT:    return %{{.*}}, %[[X]], %{{.*}} : tensor<f32>, tensor<f32>, tensor<f32>
// CHECK-LABEL: func.func private @outer_bwd
// CHECK:         "jaxpr.optimization_barrier"
// CHECK:         "jaxpr.call"({{.*}}) {callee = @inner_fwd}
func.func private @inner(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.sin"(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @outer(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.checkpoint"(%x) {callee = @inner, policy = "nothing_saveable"} : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.sin"(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func @vjp_nothing_saveable(%x: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @outer} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// everything_saveable: linearized like a plain call. The forward pass computes both
// cosines and saves them (three residuals: cos(x), cos(sin x), cos(sin sin x)); the
// backward pass recomputes nothing (no sin, no call of @inner's forward).
// CHECK-LABEL: func.func private @outer_fwd
// CHECK-NOT:     jaxpr.checkpoint
// CHECK-COUNT-3: jaxpr.cos
// CHECK:         return %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}} : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
// CHECK-LABEL: func.func private @outer_bwd
// CHECK-SAME:    (%{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>)
// CHECK-NOT:     jaxpr.sin
// CHECK-NOT:     jaxpr.call
// CHECK-NOT:     jaxpr.optimization_barrier
// CHECK-COUNT-3: jaxpr.mul
// CHECK:         return
func.func private @inner(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.sin"(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @outer(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.checkpoint"(%x) {callee = @inner, policy = "everything_saveable"} : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.sin"(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func @vjp_everything_saveable(%x: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @outer} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
