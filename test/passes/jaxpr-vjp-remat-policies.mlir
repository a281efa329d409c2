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

// -----

// dots_saveable: the dot_general is linearized inline, so its output is saved; the
// sin ops before and after it become nested checkpoints (nothing saveable) that the
// backward pass recomputes from their inputs: x and the dot's output.
// CHECK-LABEL: func.func private @outer_fwd
// CHECK-SAME:    (%[[X:.*]]: tensor<2x2xf32>, %[[W:.*]]: tensor<2x2xf32>)
// CHECK:         %[[A:.*]] = "jaxpr.checkpoint"(%[[X]]) {callee = @inner_remat_group, prevent_cse = true}
// CHECK:         %[[D:.*]] = "jaxpr.dot_general"(%[[A]], %[[W]])
// CHECK:         "jaxpr.checkpoint"(%[[D]]) {callee = @inner_remat_group_1, prevent_cse = true}
// CHECK-NOT:     jaxpr.cos
// CHECK:         return %{{.*}}, %[[X]], %[[W]], %[[A]], %[[D]] :
// CHECK-LABEL: func.func private @outer_bwd
// CHECK-COUNT-2: "jaxpr.optimization_barrier"
func.func private @inner(%x: tensor<2x2xf32>, %w: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = "jaxpr.dot_general"(%0, %w) {dimension_numbers = [[[1], [0]], [[], []]]} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %2 = "jaxpr.sin"(%1) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %2 : tensor<2x2xf32>
}
func.func private @outer(%x: tensor<2x2xf32>, %w: tensor<2x2xf32>) -> tensor<2x2xf32> {
  %0 = "jaxpr.checkpoint"(%x, %w) {callee = @inner, policy = "dots_saveable"} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
func.func @vjp_dots_saveable(%x: tensor<2x2xf32>, %w: tensor<2x2xf32>, %ct: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %0:2 = "jaxpr.vjp"(%x, %w, %ct) {callee = @outer, diff_args = array<i64: 0, 1>} : (tensor<2x2xf32>, tensor<2x2xf32>, tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>)
  return %0#0, %0#1 : tensor<2x2xf32>, tensor<2x2xf32>
}

// -----

// save_only_these_names: the value named "h" is saved (linearized inline); the sin
// ops around it are recomputed in nested checkpoints.
// CHECK-LABEL: func.func private @outer_fwd
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>)
// CHECK:         %[[A:.*]] = "jaxpr.checkpoint"(%[[X]]) {callee = @inner_remat_group, prevent_cse = true}
// CHECK:         %[[H:.*]] = "jaxpr.checkpoint_name"(%[[A]]) {name = "h"}
// CHECK:         "jaxpr.checkpoint"(%[[H]]) {callee = @inner_remat_group_1, prevent_cse = true}
// CHECK:         return %{{.*}}, %[[X]], %[[H]] :
func.func private @inner(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.checkpoint_name"(%0) {name = "h"} : (tensor<f32>) -> tensor<f32>
  %2 = "jaxpr.sin"(%1) : (tensor<f32>) -> tensor<f32>
  return %2 : tensor<f32>
}
func.func private @outer(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.checkpoint"(%x) {callee = @inner, policy = "save_only_these_names", names = ["h"]} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @vjp_names(%x: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @outer} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
