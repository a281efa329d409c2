// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// Operand batched, indices not: the batch axis is one more full-size window (offset) dim;
// the indices are used as they are.
// CHECK-LABEL: func.func private @g_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<8x5x3xf32>, %[[I:.*]]: tensor<4x1xi32>)
// CHECK-NOT:     jaxpr.broadcast_in_dim
// CHECK:         "jaxpr.gather"(%[[X]], %[[I]])
// CHECK-SAME:      collapsed_slice_dims = array<i64: 1>, offset_dims = array<i64: 0, 2>, operand_batching_dims = array<i64>, start_index_map = array<i64: 1>
// CHECK-SAME:      slice_sizes = array<i64: 8, 1, 3>
// CHECK-SAME:      -> tensor<8x4x3xf32>
// CHECK-LABEL: func.func @gather_operand_batched
func.func private @g(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.gather"(%x, %i) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, mode = "clip", slice_sizes = array<i64: 1, 3>} : (tensor<5x3xf32>, tensor<4x1xi32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func @gather_operand_batched(%xs: tensor<8x5x3xf32>, %i: tensor<4x1xi32>) -> tensor<8x4x3xf32> {
  %0 = "jaxpr.vmap"(%xs, %i) {callee = @g, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<8x5x3xf32>, tensor<4x1xi32>) -> tensor<8x4x3xf32>
  return %0 : tensor<8x4x3xf32>
}

// -----

// Indices batched, operand not: one more indices batch dim; the operand is not broadcast.
// CHECK-LABEL: func.func private @g_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<8x4x1xi32>)
// CHECK-NOT:     jaxpr.broadcast_in_dim
// CHECK:         "jaxpr.gather"(%[[X]], %[[I]])
// CHECK-SAME:      offset_dims = array<i64: 2>
// CHECK-SAME:      start_indices_batching_dims = array<i64>
// CHECK-SAME:      slice_sizes = array<i64: 1, 3>
// CHECK-SAME:      -> tensor<8x4x3xf32>
// CHECK-LABEL: func.func @gather_indices_batched
func.func private @g(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.gather"(%x, %i) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, mode = "clip", slice_sizes = array<i64: 1, 3>} : (tensor<5x3xf32>, tensor<4x1xi32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func @gather_indices_batched(%x: tensor<5x3xf32>, %is: tensor<8x4x1xi32>) -> tensor<8x4x3xf32> {
  %0 = "jaxpr.vmap"(%x, %is) {callee = @g, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<5x3xf32>, tensor<8x4x1xi32>) -> tensor<8x4x3xf32>
  return %0 : tensor<8x4x3xf32>
}

// -----

// Both batched: operand dim 0 and indices dim 0 become a pair of batching dims, so each
// example reads its own operand slice (no iota, no broadcast).
// CHECK-LABEL: func.func private @g_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<8x5x3xf32>, %[[I:.*]]: tensor<8x4x1xi32>)
// CHECK:         "jaxpr.gather"(%[[X]], %[[I]])
// CHECK-SAME:      operand_batching_dims = array<i64: 0>
// CHECK-SAME:      start_indices_batching_dims = array<i64: 0>
// CHECK-SAME:      slice_sizes = array<i64: 1, 1, 3>
// CHECK-LABEL: func.func @gather_both_batched
func.func private @g(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.gather"(%x, %i) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, mode = "clip", slice_sizes = array<i64: 1, 3>} : (tensor<5x3xf32>, tensor<4x1xi32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func @gather_both_batched(%xs: tensor<8x5x3xf32>, %is: tensor<8x4x1xi32>) -> tensor<8x4x3xf32> {
  %0 = "jaxpr.vmap"(%xs, %is) {callee = @g, in_axes = array<i64: 0, 0>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<8x5x3xf32>, tensor<8x4x1xi32>) -> tensor<8x4x3xf32>
  return %0 : tensor<8x4x3xf32>
}

// -----

// scatter_add with batched updates only: the operand is broadcast (every example writes
// its own copy), the indices stay unbatched; the batch axis is one more window dim.
// CHECK-LABEL: func.func private @s_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<2x1xi32>, %[[U:.*]]: tensor<8x2x3xf32>)
// CHECK:         %[[XB:.*]] = "jaxpr.broadcast_in_dim"(%[[X]])
// CHECK-SAME:      shape = array<i64: 8, 5, 3>
// CHECK:         "jaxpr.scatter_add"(%[[XB]], %[[I]], %[[U]])
// CHECK-SAME:      inserted_window_dims = array<i64: 1>
// CHECK-SAME:      scatter_dims_to_operand_dims = array<i64: 1>
// CHECK-SAME:      update_window_dims = array<i64: 0, 2>
// CHECK-LABEL: func.func @scatter_add_updates_batched
func.func private @s(%x: tensor<5x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> tensor<5x3xf32> {
  %0 = "jaxpr.scatter_add"(%x, %i, %u) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}} : (tensor<5x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}
func.func @scatter_add_updates_batched(%x: tensor<5x3xf32>, %i: tensor<2x1xi32>, %us: tensor<8x2x3xf32>) -> tensor<8x5x3xf32> {
  %0 = "jaxpr.vmap"(%x, %i, %us) {callee = @s, in_axes = array<i64: -1, -1, 0>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<5x3xf32>, tensor<2x1xi32>, tensor<8x2x3xf32>) -> tensor<8x5x3xf32>
  return %0 : tensor<8x5x3xf32>
}

// -----

// scatter with batched indices (on axis 1): moved to the front, paired with the operand's
// batch dim as batching dims.
// CHECK-LABEL: func.func private @s_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<8x5x3xf32>, %[[I:.*]]: tensor<2x8x1xi32>, %[[U:.*]]: tensor<8x2x3xf32>)
// CHECK:         %[[IT:.*]] = "jaxpr.transpose"(%[[I]]) {permutation = array<i64: 1, 0, 2>}
// CHECK:         "jaxpr.scatter"(%[[X]], %[[IT]], %[[U]])
// CHECK-SAME:      operand_batching_dims = array<i64: 0>
// CHECK-SAME:      scatter_indices_batching_dims = array<i64: 0>
// CHECK-SAME:      update_window_dims = array<i64: 2>
// CHECK-LABEL: func.func @scatter_indices_batched
func.func private @s(%x: tensor<5x3xf32>, %i: tensor<2x1xi32>, %u: tensor<2x3xf32>) -> tensor<5x3xf32> {
  %0 = "jaxpr.scatter"(%x, %i, %u) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}} : (tensor<5x3xf32>, tensor<2x1xi32>, tensor<2x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}
func.func @scatter_indices_batched(%xs: tensor<8x5x3xf32>, %is: tensor<2x8x1xi32>, %us: tensor<8x2x3xf32>) -> tensor<8x5x3xf32> {
  %0 = "jaxpr.vmap"(%xs, %is, %us) {callee = @s, in_axes = array<i64: 0, 1, 0>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<8x5x3xf32>, tensor<2x8x1xi32>, tensor<8x2x3xf32>) -> tensor<8x5x3xf32>
  return %0 : tensor<8x5x3xf32>
}

// -----

// dynamic_slice with unbatched starts stays a dynamic_slice: the batch axis (here 1) is
// sliced whole from a constant 0 start.
// CHECK-LABEL: func.func private @d_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<5x8x3xf32>, %[[S:.*]]: tensor<i32>)
// CHECK:         %[[Z:.*]] = "jaxpr.constant"() {value = dense<0> : tensor<i32>}
// CHECK:         "jaxpr.dynamic_slice"(%[[X]], %[[S]], %[[Z]], %[[S]]) {slice_sizes = array<i64: 2, 8, 2>}
// CHECK-LABEL: func.func @dynamic_slice_operand_batched
func.func private @d(%x: tensor<5x3xf32>, %s: tensor<i32>) -> tensor<2x2xf32> {
  %0 = "jaxpr.dynamic_slice"(%x, %s, %s) {slice_sizes = array<i64: 2, 2>} : (tensor<5x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
func.func @dynamic_slice_operand_batched(%xs: tensor<5x8x3xf32>, %s: tensor<i32>) -> tensor<8x2x2xf32> {
  %0 = "jaxpr.vmap"(%xs, %s) {callee = @d, in_axes = array<i64: 1, -1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<5x8x3xf32>, tensor<i32>) -> tensor<8x2x2xf32>
  return %0 : tensor<8x2x2xf32>
}

// -----

// dynamic_slice with batched starts becomes a clamping gather, one index vector per
// example; the unbatched operand is not broadcast.
// CHECK-LABEL: func.func private @d_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<5x3xf32>, %[[S:.*]]: tensor<8xi32>)
// CHECK-NOT:     jaxpr.dynamic_slice
// CHECK:         %[[IDX:.*]] = "jaxpr.concatenate"
// CHECK-SAME:      -> tensor<8x2xi32>
// CHECK:         "jaxpr.gather"(%[[X]], %[[IDX]])
// CHECK-SAME:      mode = "clip"
// CHECK-SAME:      -> tensor<8x2x2xf32>
// CHECK-LABEL: func.func @dynamic_slice_starts_batched
func.func private @d(%x: tensor<5x3xf32>, %s: tensor<i32>) -> tensor<2x2xf32> {
  %0 = "jaxpr.dynamic_slice"(%x, %s, %s) {slice_sizes = array<i64: 2, 2>} : (tensor<5x3xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
func.func @dynamic_slice_starts_batched(%x: tensor<5x3xf32>, %s: tensor<8xi32>) -> tensor<8x2x2xf32> {
  %0 = "jaxpr.vmap"(%x, %s) {callee = @d, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<5x3xf32>, tensor<8xi32>) -> tensor<8x2x2xf32>
  return %0 : tensor<8x2x2xf32>
}

// -----

// dynamic_update_slice with batched starts becomes a clamping scatter with unique indices.
// CHECK-LABEL: func.func private @u_batched
// CHECK:         "jaxpr.scatter"
// CHECK-SAME:      mode = "clip"
// CHECK-SAME:      unique_indices = true
// CHECK-SAME:      -> tensor<8x5x3xf32>
// CHECK-LABEL: func.func @dynamic_update_slice_starts_batched
func.func private @u(%x: tensor<5x3xf32>, %v: tensor<2x3xf32>, %s: tensor<i32>) -> tensor<5x3xf32> {
  %0 = "jaxpr.dynamic_update_slice"(%x, %v, %s, %s) : (tensor<5x3xf32>, tensor<2x3xf32>, tensor<i32>, tensor<i32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}
func.func @dynamic_update_slice_starts_batched(%x: tensor<5x3xf32>, %v: tensor<2x3xf32>, %s: tensor<8xi32>) -> tensor<8x5x3xf32> {
  %0 = "jaxpr.vmap"(%x, %v, %s) {callee = @u, in_axes = array<i64: -1, -1, 0>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<5x3xf32>, tensor<2x3xf32>, tensor<8xi32>) -> tensor<8x5x3xf32>
  return %0 : tensor<8x5x3xf32>
}
