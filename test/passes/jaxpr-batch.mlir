// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// An unbatched operand is broadcast only where an elementwise op needs equal shapes;
// sin of the batched operand keeps its batch axis where it is. As JAX's broadcast_batcher:
// the unbatched operand gains a leading axis of size 1, which lax's implicit broadcast
// (marked) stretches to the batch.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[XS:.*]]: tensor<8x3xf32>, %[[W:.*]]: tensor<3xf32>)
// CHECK:         %[[S:.*]] = "jaxpr.sin"(%[[XS]]) : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK:         %[[W1:.*]] = "jaxpr.broadcast_in_dim"(%[[W]]) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 1, 3>}
// CHECK:         %[[WB:.*]] = "jaxpr.broadcast_in_dim"(%[[W1]]) {broadcast_dimensions = array<i64: 0, 1>, mjax.implicit_broadcast, shape = array<i64: 8, 3>}
// CHECK:         "jaxpr.mul"(%[[S]], %[[WB]])
// CHECK-LABEL: func.func @mul_unbatched_weight
// CHECK-NOT:     jaxpr.vmap
// CHECK:         %[[Y:.*]] = "jaxpr.call"(%{{.*}}, %{{.*}}) {callee = @f_batched}
// CHECK:         return %[[Y]]
func.func private @f(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.mul"(%0, %w) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
func.func @mul_unbatched_weight(%xs: tensor<8x3xf32>, %w: tensor<3xf32>) -> tensor<8x3xf32> {
  %0 = "jaxpr.vmap"(%xs, %w) {callee = @f, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<8x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

// Operands batched on different axes all get their batch axis at the front (JAX's
// broadcast_batcher), so the result is batched at 0, as out_axes = 0 asks.
// CHECK-LABEL: func.func private @g_batched
// CHECK-SAME:    (%[[A:.*]]: tensor<3x4xf32>, %[[B:.*]]: tensor<4x3xf32>) -> tensor<4x3xf32>
// CHECK:         %[[AT:.*]] = "jaxpr.transpose"(%[[A]]) {permutation = array<i64: 1, 0>}
// CHECK:         %[[S:.*]] = "jaxpr.add"(%[[AT]], %[[B]])
// CHECK-NEXT:    return %[[S]]
// CHECK-LABEL: func.func @align_axes
// CHECK:         %[[C:.*]] = "jaxpr.call"
// CHECK-NEXT:    return %[[C]]
func.func private @g(%a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.add"(%a, %b) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @align_axes(%a: tensor<3x4xf32>, %b: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.vmap"(%a, %b) {callee = @g, in_axes = array<i64: 1, 0>, out_axes = array<i64: 0>, axis_size = 4 : i64} : (tensor<3x4xf32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// Nested vmap: the inner one is expanded first (inner-first), the outer batches the
// call of the inner batched function.
// CHECK-LABEL: func.func private @h_batched(
// CHECK-SAME:    tensor<5x3xf32>
// CHECK-LABEL: func.func private @h_batched_batched(
// CHECK-SAME:    tensor<2x5x3xf32>
// CHECK:         "jaxpr.exp"{{.*}} -> tensor<2x5x3xf32>
// CHECK-LABEL: func.func private @inner(
// CHECK:         "jaxpr.call"{{.*}}callee = @h_batched}
// CHECK-LABEL: func.func private @inner_batched(
// CHECK:         "jaxpr.call"{{.*}}callee = @h_batched_batched}
// CHECK-LABEL: func.func @nested
// CHECK-NOT:     jaxpr.vmap
// CHECK:         "jaxpr.call"{{.*}}callee = @inner_batched}
func.func private @h(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @inner(%x: tensor<5x3xf32>) -> tensor<5x3xf32> {
  %0 = "jaxpr.vmap"(%x) {callee = @h, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 5 : i64} : (tensor<5x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}
func.func @nested(%x: tensor<2x5x3xf32>) -> tensor<2x5x3xf32> {
  %0 = "jaxpr.vmap"(%x) {callee = @inner, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 2 : i64} : (tensor<2x5x3xf32>) -> tensor<2x5x3xf32>
  return %0 : tensor<2x5x3xf32>
}

// -----

// A result that does not depend on the batch is broadcast at the call site.
// CHECK-LABEL: func.func private @k_batched
// CHECK-SAME:    -> tensor<3xf32>
// CHECK-LABEL: func.func @unbatched_result
// CHECK:         %[[C:.*]] = "jaxpr.call"
// CHECK:         "jaxpr.broadcast_in_dim"(%[[C]]) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 3, 4>}
func.func private @k(%x: tensor<f32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.neg"(%w) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @unbatched_result(%x: tensor<4xf32>, %w: tensor<3xf32>) -> tensor<3x4xf32> {
  %0 = "jaxpr.vmap"(%x, %w) {callee = @k, in_axes = array<i64: 0, -1>, out_axes = array<i64: 1>, axis_size = 4 : i64} : (tensor<4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}
