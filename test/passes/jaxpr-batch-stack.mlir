// --jaxpr-batch on jaxpr.stack and jaxpr.unstack, as JAX's batching rules: operands
// batched at one axis keep it (the stacking axis shifts past it or it past the new axis);
// otherwise every operand gets its batch axis in front (unbatched ones broadcast).
// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// One batch axis for both, after the new axis: the stack is unchanged, the result's
// batch axis is one further.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<3x8xf32>, %[[Y:.*]]: tensor<3x8xf32>) -> tensor<2x3x8xf32>
// CHECK-SAME:    mjax.batch_out_dims = array<i64: 2>
// CHECK-NEXT:    %[[R:.*]] = "jaxpr.stack"(%[[X]], %[[Y]]) {axis = 0 : i64} : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK-LABEL: func.func @stack_same_axis
func.func private @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.stack"(%x, %y) {axis = 0 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @stack_same_axis(%xs: tensor<3x8xf32>, %ys: tensor<3x8xf32>) -> tensor<8x2x3xf32> {
  %0 = "jaxpr.vmap"(%xs, %ys) {callee = @f, in_axes = array<i64: 1, 1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<3x8xf32>, tensor<3x8xf32>) -> tensor<8x2x3xf32>
  return %0 : tensor<8x2x3xf32>
}

// -----

// One batch axis for both, before the new axis: the stacking axis moves one on.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    mjax.batch_out_dims = array<i64: 0>
// CHECK-NEXT:    "jaxpr.stack"(%{{.*}}, %{{.*}}) {axis = 2 : i64} : (tensor<8x3xi32>, tensor<8x3xi32>) -> tensor<8x3x2xi32>
// CHECK-LABEL: func.func @stack_axis_after_batch
func.func private @f(%x: tensor<3xi32>, %y: tensor<3xi32>) -> tensor<3x2xi32> {
  %0 = "jaxpr.stack"(%x, %y) {axis = 1 : i64} : (tensor<3xi32>, tensor<3xi32>) -> tensor<3x2xi32>
  return %0 : tensor<3x2xi32>
}
func.func @stack_axis_after_batch(%xs: tensor<8x3xi32>, %ys: tensor<8x3xi32>) -> tensor<8x3x2xi32> {
  %0 = "jaxpr.vmap"(%xs, %ys) {callee = @f, in_axes = array<i64: 0, 0>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<8x3xi32>, tensor<8x3xi32>) -> tensor<8x3x2xi32>
  return %0 : tensor<8x3x2xi32>
}

// -----

// A batched and an unbatched operand: batch axes to the front, the unbatched one
// broadcast there, the stacking axis one on.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<3x8xf32>, %[[Y:.*]]: tensor<3xf32>) -> tensor<8x3x2xf32>
// CHECK-SAME:    mjax.batch_out_dims = array<i64: 0>
// CHECK-NEXT:    %[[T:.*]] = "jaxpr.transpose"(%[[X]]) {permutation = array<i64: 1, 0>} : (tensor<3x8xf32>) -> tensor<8x3xf32>
// CHECK-NEXT:    %[[B:.*]] = "jaxpr.broadcast_in_dim"(%[[Y]]) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 8, 3>} : (tensor<3xf32>) -> tensor<8x3xf32>
// CHECK-NEXT:    %[[R:.*]] = "jaxpr.stack"(%[[T]], %[[B]]) {axis = 2 : i64} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x3x2xf32>
// CHECK-NEXT:    return %[[R]]
// CHECK-LABEL: func.func @stack_unbatched_operand
func.func private @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3x2xf32> {
  %0 = "jaxpr.stack"(%x, %y) {axis = 1 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func @stack_unbatched_operand(%xs: tensor<3x8xf32>, %y: tensor<3xf32>) -> tensor<8x3x2xf32> {
  %0 = "jaxpr.vmap"(%xs, %y) {callee = @f, in_axes = array<i64: 1, -1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<3x8xf32>, tensor<3xf32>) -> tensor<8x3x2xf32>
  return %0 : tensor<8x3x2xf32>
}

// -----

// Batch axes at different places: both to the front.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<8x3xf32>, %[[Y:.*]]: tensor<3x8xf32>)
// CHECK-NEXT:    %[[T:.*]] = "jaxpr.transpose"(%[[Y]]) {permutation = array<i64: 1, 0>}
// CHECK-NEXT:    "jaxpr.stack"(%[[X]], %[[T]]) {axis = 1 : i64} : (tensor<8x3xf32>, tensor<8x3xf32>) -> tensor<8x2x3xf32>
// CHECK-LABEL: func.func @stack_different_axes
func.func private @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.stack"(%x, %y) {axis = 0 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @stack_different_axes(%xs: tensor<8x3xf32>, %ys: tensor<3x8xf32>) -> tensor<8x2x3xf32> {
  %0 = "jaxpr.vmap"(%xs, %ys) {callee = @f, in_axes = array<i64: 0, 1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<8x3xf32>, tensor<3x8xf32>) -> tensor<8x2x3xf32>
  return %0 : tensor<8x2x3xf32>
}

// -----

// Unstacking along an axis at or past the batch axis: it moves one on; the results keep
// the batch axis where it was.
// CHECK-LABEL: func.func private @g_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<2x8x3xf32>)
// CHECK-SAME:    mjax.batch_out_dims = array<i64: 1, 1, 1>
// CHECK-NEXT:    %[[R:.*]]:3 = "jaxpr.unstack"(%[[X]]) {axis = 2 : i64} : (tensor<2x8x3xf32>) -> (tensor<2x8xf32>, tensor<2x8xf32>, tensor<2x8xf32>)
// CHECK-NEXT:    return %[[R]]#0, %[[R]]#1, %[[R]]#2
// CHECK-LABEL: func.func @unstack_after_batch
func.func private @g(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %0:3 = "jaxpr.unstack"(%x) {axis = 1 : i64} : (tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1, %0#2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
func.func @unstack_after_batch(%xs: tensor<2x8x3xf32>) -> (tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>) {
  %0:3 = "jaxpr.vmap"(%xs) {callee = @g, in_axes = array<i64: 1>, out_axes = array<i64: 0, 0, 0>, axis_size = 8 : i64} : (tensor<2x8x3xf32>) -> (tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>)
  return %0#0, %0#1, %0#2 : tensor<8x2xf32>, tensor<8x2xf32>, tensor<8x2xf32>
}

// -----

// Unstacking along an axis before the batch axis: the axis stays, the results' batch
// axis is one nearer.
// CHECK-LABEL: func.func private @g_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<2x8x3xf32>)
// CHECK-SAME:    mjax.batch_out_dims = array<i64: 0, 0>
// CHECK-NEXT:    %[[R:.*]]:2 = "jaxpr.unstack"(%[[X]]) {axis = 0 : i64} : (tensor<2x8x3xf32>) -> (tensor<8x3xf32>, tensor<8x3xf32>)
// CHECK-LABEL: func.func @unstack_before_batch
func.func private @g(%x: tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = "jaxpr.unstack"(%x) {axis = 0 : i64} : (tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}
func.func @unstack_before_batch(%xs: tensor<2x8x3xf32>) -> (tensor<8x3xf32>, tensor<8x3xf32>) {
  %0:2 = "jaxpr.vmap"(%xs) {callee = @g, in_axes = array<i64: 1>, out_axes = array<i64: 0, 0>, axis_size = 8 : i64} : (tensor<2x8x3xf32>) -> (tensor<8x3xf32>, tensor<8x3xf32>)
  return %0#0, %0#1 : tensor<8x3xf32>, tensor<8x3xf32>
}
