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

// dots_saveable: only the dot_general's output (and @inner's inputs) is saved; the sin
// ops are recomputed in the backward pass (as JAX's partial evaluation stages them
// again): cos(x) and sin(x) from x, cos(dot) from the dot, each residual read by a
// recomputation going through an optimization barrier (prevent_cse). The forward pass
// keeps no cos it does not need.
// CHECK-LABEL: func.func private @outer_fwd
// CHECK-SAME:    (%[[X:.*]]: tensor<2x2xf32>, %[[W:.*]]: tensor<2x2xf32>)
// CHECK-NEXT:    %[[A:.*]] = "jaxpr.sin"(%[[X]])
// CHECK-NEXT:    %[[D:.*]] = "jaxpr.dot_general"(%[[A]], %[[W]])
// CHECK-NEXT:    %[[Y:.*]] = "jaxpr.sin"(%[[D]])
// CHECK-NEXT:    return %[[Y]], %[[X]], %[[W]], %[[D]] :
// CHECK-LABEL: func.func private @outer_bwd
// CHECK-SAME:    (%[[RX:.*]]: tensor<2x2xf32>, %[[RW:.*]]: tensor<2x2xf32>, %[[RD:.*]]: tensor<2x2xf32>, %[[CT:.*]]: tensor<2x2xf32>)
// CHECK-DAG:     %[[BX:.*]] = "jaxpr.optimization_barrier"(%[[RX]])
// CHECK-DAG:     "jaxpr.cos"(%[[BX]])
// CHECK-DAG:     "jaxpr.sin"(%[[BX]])
// CHECK-DAG:     %[[BD:.*]] = "jaxpr.optimization_barrier"(%[[RD]])
// CHECK-DAG:     "jaxpr.cos"(%[[BD]])
// CHECK:         return
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

// save_only_these_names: the value named "h" is saved; the sin ops around it are
// recomputed in the backward pass (cos(x) from x, cos(h) from h).
// CHECK-LABEL: func.func private @outer_fwd
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>)
// CHECK-NEXT:    %[[A:.*]] = "jaxpr.sin"(%[[X]])
// CHECK-NEXT:    %[[H:.*]] = "jaxpr.checkpoint_name"(%[[A]]) {name = "h"}
// CHECK-NEXT:    %[[Y:.*]] = "jaxpr.sin"(%[[H]])
// CHECK-NEXT:    return %[[Y]], %[[X]], %[[H]] :
// CHECK-LABEL: func.func private @outer_bwd
// CHECK-SAME:    (%[[RX:.*]]: tensor<f32>, %[[RH:.*]]: tensor<f32>, %{{.*}}: tensor<f32>)
// CHECK-DAG:     %[[BX:.*]] = "jaxpr.optimization_barrier"(%[[RX]])
// CHECK-DAG:     "jaxpr.cos"(%[[BX]])
// CHECK-DAG:     %[[BH:.*]] = "jaxpr.optimization_barrier"(%[[RH]])
// CHECK-DAG:     "jaxpr.cos"(%[[BH]])
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

// -----

// save_any_names_but_these("h"): "h" is not saved, "g" is; a dot_general with batch
// dimensions is not saved by dots_with_no_batch_dims_saveable either (next case).
// CHECK-LABEL: func.func private @outer_fwd
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>)
// CHECK:         %[[H:.*]] = "jaxpr.checkpoint_name"({{.*}}) {name = "h"}
// CHECK:         %[[G:.*]] = "jaxpr.checkpoint_name"({{.*}}) {name = "g"}
// CHECK:         return %{{.*}}, %[[X]], %[[G]] :
func.func private @inner(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.checkpoint_name"(%0) {name = "h"} : (tensor<f32>) -> tensor<f32>
  %2 = "jaxpr.sin"(%1) : (tensor<f32>) -> tensor<f32>
  %3 = "jaxpr.checkpoint_name"(%2) {name = "g"} : (tensor<f32>) -> tensor<f32>
  %4 = "jaxpr.sin"(%3) : (tensor<f32>) -> tensor<f32>
  return %4 : tensor<f32>
}
func.func private @outer(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.checkpoint"(%x) {callee = @inner, policy = "save_any_names_but_these", names = ["h"]} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @vjp_any_names_but(%x: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @outer} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// dots_with_no_batch_dims_saveable: the batched dot_general is recomputed (from the
// saved inputs), the unbatched one saved.
// CHECK-LABEL: func.func private @outer_fwd
// CHECK-SAME:    (%[[X:.*]]: tensor<2x2x2xf32>, %[[W:.*]]: tensor<2x2xf32>)
// CHECK:         %[[B:.*]] = "jaxpr.dot_general"(%[[X]], %[[X]])
// CHECK:         %[[S:.*]] = "jaxpr.sin"(%[[B]])
// CHECK:         %[[D:.*]] = "jaxpr.dot_general"(%[[S]], %[[W]])
// CHECK:         return %{{.*}}, %[[X]], %[[W]], %[[D]] :
// CHECK-LABEL: func.func private @outer_bwd
// CHECK-SAME:    (%[[RX:.*]]: tensor<2x2x2xf32>, %{{.*}}: tensor<2x2xf32>,
// CHECK:         %[[BX:.*]] = "jaxpr.optimization_barrier"(%[[RX]])
// CHECK-NEXT:    "jaxpr.dot_general"(%[[BX]], %[[BX]])
func.func private @inner(%x: tensor<2x2x2xf32>, %w: tensor<2x2xf32>) -> tensor<2x2x2xf32> {
  %0 = "jaxpr.dot_general"(%x, %x) {dimension_numbers = [[[2], [1]], [[0], [0]]]} : (tensor<2x2x2xf32>, tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %1 = "jaxpr.sin"(%0) : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  %2 = "jaxpr.dot_general"(%1, %w) {dimension_numbers = [[[2], [0]], [[], []]]} : (tensor<2x2x2xf32>, tensor<2x2xf32>) -> tensor<2x2x2xf32>
  %3 = "jaxpr.sin"(%2) : (tensor<2x2x2xf32>) -> tensor<2x2x2xf32>
  return %3 : tensor<2x2x2xf32>
}
func.func private @outer(%x: tensor<2x2x2xf32>, %w: tensor<2x2xf32>) -> tensor<2x2x2xf32> {
  %0 = "jaxpr.checkpoint"(%x, %w) {callee = @inner, policy = "dots_with_no_batch_dims_saveable"} : (tensor<2x2x2xf32>, tensor<2x2xf32>) -> tensor<2x2x2xf32>
  return %0 : tensor<2x2x2xf32>
}
func.func @vjp_no_batch_dims(%x: tensor<2x2x2xf32>, %w: tensor<2x2xf32>, %ct: tensor<2x2x2xf32>) -> (tensor<2x2x2xf32>, tensor<2x2xf32>) {
  %0:2 = "jaxpr.vjp"(%x, %w, %ct) {callee = @outer, diff_args = array<i64: 0, 1>} : (tensor<2x2x2xf32>, tensor<2x2xf32>, tensor<2x2x2xf32>) -> (tensor<2x2x2xf32>, tensor<2x2xf32>)
  return %0#0, %0#1 : tensor<2x2x2xf32>, tensor<2x2xf32>
}
