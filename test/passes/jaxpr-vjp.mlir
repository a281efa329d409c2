// RUN: mjax-opt %s --jaxpr-vjp --split-input-file | filecheck %s

// Forward: the primal ops, returning the output and the residual cos(x).
// Backward: only the transposed linear op, ct * cos(x).
// CHECK-LABEL: func.func private @f_fwd
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>)
// CHECK:         %[[Y:.*]] = "jaxpr.sin"(%[[X]])
// CHECK:         %[[C:.*]] = "jaxpr.cos"(%[[X]])
// CHECK:         return %[[Y]], %[[C]]
// CHECK-LABEL: func.func private @f_bwd
// CHECK-SAME:    (%[[R:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[G:.*]] = "jaxpr.mul"(%[[CT]], %[[R]])
// CHECK-NEXT:    return %[[G]]
// CHECK-LABEL: func.func @vjp_sin
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<3xf32>)
// CHECK:         %[[F:.*]]:2 = "jaxpr.call"(%[[X]]) {callee = @f_fwd}
// CHECK:         %[[B:.*]] = "jaxpr.call"(%[[F]]#1, %[[CT]]) {callee = @f_bwd}
// CHECK:         return %[[B]]
func.func private @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @vjp_sin(%x: tensor<3xf32>, %ct: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @f} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// dot_general and broadcast_in_dim transpose: the backward pass contracts the cotangent
// with the saved weight and sums the broadcast bias dimension away.
// CHECK-LABEL: func.func private @dense_bwd
// CHECK-SAME:    (%[[W:.*]]: tensor<3x4xf32>, %[[CT:.*]]: tensor<2x4xf32>)
// CHECK-DAG:     %[[GB:.*]] = "jaxpr.reduce_sum"(%[[CT]]) {axes = array<i64: 0>}
// CHECK-DAG:     %[[GX:.*]] = "jaxpr.dot_general"(%[[CT]], %[[W]])
// CHECK:         return %[[GX]], %[[GB]]
// CHECK-LABEL: func.func @vjp_dense
func.func private @dense(%x: tensor<2x3xf32>, %b: tensor<4xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "jaxpr.dot_general"(%x, %w) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %1 = "jaxpr.broadcast_in_dim"(%b) {shape = array<i64: 2, 4>, broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<2x4xf32>
  %2 = "jaxpr.add"(%0, %1) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}
func.func @vjp_dense(%x: tensor<2x3xf32>, %b: tensor<4xf32>, %w: tensor<3x4xf32>, %ct: tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<4xf32>) {
  %0:2 = "jaxpr.vjp"(%x, %b, %w, %ct) {callee = @dense, diff_args = array<i64: 0, 1>} : (tensor<2x3xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<2x4xf32>) -> (tensor<2x3xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<4xf32>
}

// -----

// dot_general of a matrix and a vector (jnp.dot(W, x) with a vector x, as JAX emits it):
// the transpose contracts the cotangent with W for x, and takes the outer product of
// the cotangent and x (no contracting dims) for W, as JAX's.
// CHECK-LABEL: func.func private @matvec_bwd
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<5x4xf32>, %[[CT:.*]]: tensor<5xf32>)
// CHECK-DAG:     %[[GX:.*]] = "jaxpr.dot_general"(%[[CT]], %[[W]]) {dimension_numbers = {{\[\[}}array<i64: 0>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<5xf32>, tensor<5x4xf32>) -> tensor<4xf32>
// CHECK-DAG:     %[[GW:.*]] = "jaxpr.dot_general"(%[[CT]], %[[X]]) {dimension_numbers = {{\[\[}}array<i64>, array<i64>], [array<i64>, array<i64>]]} : (tensor<5xf32>, tensor<4xf32>) -> tensor<5x4xf32>
// CHECK:         return %[[GW]], %[[GX]]
func.func private @matvec(%w: tensor<5x4xf32>, %x: tensor<4xf32>) -> tensor<5xf32> {
  %0 = "jaxpr.dot_general"(%w, %x) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<5x4xf32>, tensor<4xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func @vjp_matvec(%w: tensor<5x4xf32>, %x: tensor<4xf32>, %ct: tensor<5xf32>) -> (tensor<5x4xf32>, tensor<4xf32>) {
  %0:2 = "jaxpr.vjp"(%w, %x, %ct) {callee = @matvec, diff_args = array<i64: 0, 1>} : (tensor<5x4xf32>, tensor<4xf32>, tensor<5xf32>) -> (tensor<5x4xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<5x4xf32>, tensor<4xf32>
}

// -----

// checkpoint: the forward function calls @inner as a whole and saves only its input;
// the backward function recomputes @inner's forward from that input (rematerialization),
// behind an optimization barrier (prevent_cse, the default) so that CSE cannot merge
// the recomputation with the forward once calls are inlined.
// CHECK-LABEL: func.func private @outer_fwd
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>)
// CHECK:         %[[Y:.*]] = "jaxpr.checkpoint"(%[[X]]) {callee = @inner}
// CHECK-NOT:     jaxpr.sin
// CHECK:         return %{{.*}}, %[[X]], %[[Y]]
// CHECK-LABEL: func.func private @outer_bwd
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>)
// CHECK:         %[[B:.*]] = "jaxpr.optimization_barrier"(%[[X]])
// CHECK:         %[[RE:.*]]:3 = "jaxpr.call"(%[[B]]) {callee = @inner_fwd}
// CHECK:         "jaxpr.call"(%[[RE]]#1, %[[RE]]#2, %{{.*}}) {callee = @inner_bwd}
// CHECK-LABEL: func.func @vjp_checkpoint
func.func private @inner(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.sin"(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @outer(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.checkpoint"(%x) {callee = @inner} : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.mul"(%0, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func @vjp_checkpoint(%x: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @outer} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// checkpoint with prevent_cse = false: the recomputation reads the saved input directly.
// CHECK-LABEL: func.func private @outer_bwd
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>)
// CHECK-NOT:     jaxpr.optimization_barrier
// CHECK:         "jaxpr.call"(%[[X]]) {callee = @inner_fwd}
// CHECK-LABEL: func.func @vjp_checkpoint_no_prevent_cse
func.func private @inner(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.sin"(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func private @outer(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.checkpoint"(%x) {callee = @inner, prevent_cse = false} : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.mul"(%0, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func @vjp_checkpoint_no_prevent_cse(%x: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @outer} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// optimization_barrier is linear in its tangents: linearization puts a barrier on the
// primals (forward) and one on the tangents, whose transpose is a barrier on the
// cotangents (JAX: _opt_barrier_transpose). The i32 operand has no tangent (float0).
// CHECK-LABEL: func.func private @ob_fwd
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>, %[[N:.*]]: tensor<3xi32>)
// CHECK:         %[[P:.*]]:2 = "jaxpr.optimization_barrier"(%[[X]], %[[N]])
// CHECK:         %[[C:.*]] = "jaxpr.cos"(%[[P]]#0)
// CHECK:         return %{{.*}}, %[[C]]
// CHECK-LABEL: func.func private @ob_bwd
// CHECK-SAME:    (%[[C:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<3xf32>)
// CHECK:         %[[M:.*]] = "jaxpr.mul"(%[[CT]], %[[C]])
// CHECK:         %[[B:.*]] = "jaxpr.optimization_barrier"(%[[M]]) : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:         return %[[B]]
// CHECK-LABEL: func.func @vjp_optimization_barrier
func.func private @ob(%x: tensor<3xf32>, %n: tensor<3xi32>) -> tensor<3xf32> {
  %0:2 = "jaxpr.optimization_barrier"(%x, %n) : (tensor<3xf32>, tensor<3xi32>) -> (tensor<3xf32>, tensor<3xi32>)
  %1 = "jaxpr.sin"(%0#0) : (tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
func.func @vjp_optimization_barrier(%x: tensor<3xf32>, %n: tensor<3xi32>, %ct: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.vjp"(%x, %n, %ct) {callee = @ob} : (tensor<3xf32>, tensor<3xi32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
