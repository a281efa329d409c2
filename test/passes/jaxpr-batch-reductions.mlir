// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// Reduced axes are renumbered around the batch axis, which stays put: the per-example
// axes (0, 2) are (0, 3) once the batch axis sits at 1, and the result is batched at 1 - 1.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<2x8x3x4xf32>) -> tensor<8x3xf32>
// CHECK-NEXT:    "jaxpr.reduce_sum"(%[[X]]) {axes = array<i64: 0, 3>} : (tensor<2x8x3x4xf32>) -> tensor<8x3xf32>
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @reduce_sum_axes_around_batch
// CHECK-NOT:     jaxpr.transpose
func.func private @f(%x: tensor<2x3x4xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.reduce_sum"(%x) {axes = array<i64: 0, 2>} : (tensor<2x3x4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @reduce_sum_axes_around_batch(%xs: tensor<2x8x3x4xf32>) -> tensor<8x3xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<2x8x3x4xf32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

// A batch axis after the reduced ones keeps their numbers; it ends up where out_axes = 1
// wants it, so no transpose anywhere.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x8xi32>) -> tensor<3x8xi32>
// CHECK-NEXT:    "jaxpr.reduce_xor"(%[[X]]) {axes = array<i64: 0>}
// CHECK-LABEL: func.func @reduce_xor_batch_last
// CHECK-NOT:     jaxpr.transpose
func.func private @f(%x: tensor<2x3xi32>) -> tensor<3xi32> {
  %0 = "jaxpr.reduce_xor"(%x) {axes = array<i64: 0>} : (tensor<2x3xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}
func.func @reduce_xor_batch_last(%xs: tensor<2x3x8xi32>) -> tensor<3x8xi32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 2>, out_axes = array<i64: 1>, axis_size = 8 : i64} : (tensor<2x3x8xi32>) -> tensor<3x8xi32>
  return %0 : tensor<3x8xi32>
}

// -----

// argmax reduces its one axis in place, like the reductions.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<2x8x3xf32>) -> tensor<8x3xi32>
// CHECK-NEXT:    "jaxpr.argmax"(%[[X]]) {axes = array<i64: 0>, index_dtype = i32} : (tensor<2x8x3xf32>) -> tensor<8x3xi32>
// CHECK-LABEL: func.func @argmax_shifted_axis
func.func private @f(%x: tensor<2x3xf32>) -> tensor<3xi32> {
  %0 = "jaxpr.argmax"(%x) {axes = array<i64: 0>, index_dtype = i32} : (tensor<2x3xf32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}
func.func @argmax_shifted_axis(%xs: tensor<2x8x3xf32>) -> tensor<8x3xi32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<2x8x3xf32>) -> tensor<8x3xi32>
  return %0 : tensor<8x3xi32>
}

// -----

// Cumulative reductions shift their axis past the batch axis and keep `reverse`.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<2x8x3xf32>) -> tensor<2x8x3xf32>
// CHECK-NEXT:    %[[C:.*]] = "jaxpr.cumsum"(%[[X]]) {axis = 2 : i64, reverse = true}
// CHECK-NEXT:    "jaxpr.cumlogsumexp"(%[[C]]) {axis = 0 : i64, reverse = false}
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @cumulative_keep_batch_axis
// CHECK-NOT:     jaxpr.transpose
func.func private @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.cumsum"(%x) {axis = 1 : i64, reverse = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "jaxpr.cumlogsumexp"(%0) {axis = 0 : i64, reverse = false} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}
func.func @cumulative_keep_batch_axis(%xs: tensor<2x8x3xf32>) -> tensor<2x8x3xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 1>, out_axes = array<i64: 1>, axis_size = 8 : i64} : (tensor<2x8x3xf32>) -> tensor<2x8x3xf32>
  return %0 : tensor<2x8x3xf32>
}

// -----

// sort needs operands of one shape: the unbatched values are broadcast at the keys' batch
// axis; the sorted dimension is renumbered.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[K:.*]]: tensor<5x8xf32>, %[[V:.*]]: tensor<5xi32>) -> (tensor<5x8xf32>, tensor<5x8xi32>)
// CHECK-NEXT:    %[[VB:.*]] = "jaxpr.broadcast_in_dim"(%[[V]]) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 5, 8>}
// CHECK-NEXT:    "jaxpr.sort"(%[[K]], %[[VB]]) {dimension = 0 : i64, is_stable = true, num_keys = 1 : i64}
// CHECK-LABEL: func.func @sort_unbatched_values
func.func private @f(%k: tensor<5xf32>, %v: tensor<5xi32>) -> (tensor<5xf32>, tensor<5xi32>) {
  %0:2 = "jaxpr.sort"(%k, %v) {dimension = 0 : i64, is_stable = true, num_keys = 1 : i64} : (tensor<5xf32>, tensor<5xi32>) -> (tensor<5xf32>, tensor<5xi32>)
  return %0#0, %0#1 : tensor<5xf32>, tensor<5xi32>
}
func.func @sort_unbatched_values(%ks: tensor<5x8xf32>, %v: tensor<5xi32>) -> (tensor<8x5xf32>, tensor<8x5xi32>) {
  %0:2 = "jaxpr.vmap"(%ks, %v) {callee = @f, in_axes = array<i64: 1, -1>, out_axes = array<i64: 0, 0>, axis_size = 8 : i64} : (tensor<5x8xf32>, tensor<5xi32>) -> (tensor<8x5xf32>, tensor<8x5xi32>)
  return %0#0, %0#1 : tensor<8x5xf32>, tensor<8x5xi32>
}

// -----

// A matrix-vector product over a batch of matrices (batched at their minor axis) and a
// shared vector, then a max: the vector is never broadcast, nothing is transposed.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<3x4x8xf32>, %[[W:.*]]: tensor<4xf32>) -> tensor<8xf32>
// CHECK-NOT:     jaxpr.broadcast_in_dim
// CHECK-NOT:     jaxpr.transpose
// CHECK:         %[[D:.*]] = "jaxpr.dot_general"(%[[X]], %[[W]]) {dimension_numbers = {{\[}}[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<3x4x8xf32>, tensor<4xf32>) -> tensor<3x8xf32>
// CHECK-NEXT:    "jaxpr.reduce_max"(%[[D]]) {axes = array<i64: 0>} : (tensor<3x8xf32>) -> tensor<8xf32>
// CHECK-LABEL: func.func @matvec_then_max
func.func private @f(%x: tensor<3x4xf32>, %w: tensor<4xf32>) -> tensor<f32> {
  %0 = "jaxpr.dot_general"(%x, %w) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3xf32>
  %1 = "jaxpr.reduce_max"(%0) {axes = array<i64: 0>} : (tensor<3xf32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func @matvec_then_max(%xs: tensor<3x4x8xf32>, %w: tensor<4xf32>) -> tensor<8xf32> {
  %0 = "jaxpr.vmap"(%xs, %w) {callee = @f, in_axes = array<i64: 2, -1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<3x4x8xf32>, tensor<4xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
