// RUN: mjax-opt %s --jaxpr-vjp --split-input-file | filecheck %s

// gather transposes to a scatter_add into zeros with the mirrored dimension numbers and
// the same mode (clip clamps the same windows both ways); the indices are the residual.
// CHECK-LABEL: func.func private @take_fwd
// CHECK-SAME:    (%[[X:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<4x1xi32>)
// CHECK:         %[[Y:.*]] = "jaxpr.gather"(%[[X]], %[[I]])
// CHECK:         return %[[Y]], %[[I]]
// CHECK-LABEL: func.func private @take_bwd
// CHECK-SAME:    (%[[I:.*]]: tensor<4x1xi32>, %[[CT:.*]]: tensor<4x3xf32>)
// CHECK:         %[[Z:.*]] = "jaxpr.constant"() {value = dense<0.000000e+00> : tensor<5x3xf32>}
// CHECK-NEXT:    %[[G:.*]] = "jaxpr.scatter_add"(%[[Z]], %[[I]], %[[CT]])
// CHECK-SAME:      inserted_window_dims = array<i64: 0>
// CHECK-SAME:      scatter_dims_to_operand_dims = array<i64: 0>
// CHECK-SAME:      update_window_dims = array<i64: 1>
// CHECK-SAME:      mode = "clip"
// CHECK-NEXT:    return %[[G]]
func.func private @take(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.gather"(%x, %i) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, mode = "clip", slice_sizes = array<i64: 1, 3>} : (tensor<5x3xf32>, tensor<4x1xi32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func @vjp_gather(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>, %ct: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %0 = "jaxpr.vjp"(%x, %i, %ct) {callee = @take} : (tensor<5x3xf32>, tensor<4x1xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// scatter_add is linear in operand and updates: the operand's cotangent is the output
// cotangent itself, the updates' a gather of it (fill mode, 0 for dropped windows).
// CHECK-LABEL: func.func private @acc_bwd
// CHECK-SAME:    (%[[I:.*]]: tensor<4x1xi32>, %[[CT:.*]]: tensor<5x3xf32>)
// CHECK-NEXT:    %[[GU:.*]] = "jaxpr.gather"(%[[CT]], %[[I]])
// CHECK-SAME:      collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>
// CHECK-SAME:      fill_value = 0.000000e+00 : f64
// CHECK-SAME:      mode = "fill", slice_sizes = array<i64: 1, 3>
// CHECK-NEXT:    return %[[CT]], %[[GU]]
func.func private @acc(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>, %u: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %0 = "jaxpr.scatter_add"(%x, %i, %u) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}} : (tensor<5x3xf32>, tensor<4x1xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}
func.func @vjp_scatter_add(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>, %u: tensor<4x3xf32>, %ct: tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<4x3xf32>) {
  %0:2 = "jaxpr.vjp"(%x, %i, %u, %ct) {callee = @acc} : (tensor<5x3xf32>, tensor<4x1xi32>, tensor<4x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<4x3xf32>)
  return %0#0, %0#1 : tensor<5x3xf32>, tensor<4x3xf32>
}

// -----

// sort: the forward pass sorts an iota along to record the permutation (the residual);
// the backward pass scatters the cotangent back through it (batching dims = the other
// dimensions, unique in-bounds indices).
// CHECK-LABEL: func.func private @srt_fwd
// CHECK:         %[[IOTA:.*]] = "jaxpr.iota"() {dimension = 1 : i64, dtype = i32
// CHECK:         %[[S:.*]]:2 = "jaxpr.sort"(%{{.*}}, %[[IOTA]]) {dimension = 1 : i64, is_stable = true, num_keys = 1 : i64}
// CHECK:         %[[P:.*]] = "jaxpr.reshape"(%[[S]]#1) {new_sizes = array<i64: 2, 4, 1>}
// CHECK:         return %[[S]]#0, %[[P]]
// CHECK-LABEL: func.func private @srt_bwd
// CHECK-SAME:    (%[[P:.*]]: tensor<2x4x1xi32>, %[[CT:.*]]: tensor<2x4xf32>)
// CHECK:         "jaxpr.scatter_add"(%{{.*}}, %[[P]], %[[CT]])
// CHECK-SAME:      operand_batching_dims = array<i64: 0>
// CHECK-SAME:      mode = "promise_in_bounds", unique_indices = true
func.func private @srt(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = "jaxpr.sort"(%x) {dimension = 1} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
func.func @vjp_sort(%x: tensor<2x4xf32>, %ct: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @srt} : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// scatter with unique indices: the overwritten operand elements get no cotangent (scatter
// zeros into it), the updates gather theirs.
// CHECK-LABEL: func.func private @sc_bwd
// CHECK-SAME:    (%[[I:.*]]: tensor<2x1xi32>, %[[CT:.*]]: tensor<5xf32>)
// CHECK:         %[[Z:.*]] = "jaxpr.constant"() {value = dense<0.000000e+00> : tensor<2xf32>}
// CHECK-NEXT:    %[[GX:.*]] = "jaxpr.scatter"(%[[CT]], %[[I]], %[[Z]])
// CHECK-SAME:      unique_indices = true
// CHECK-NEXT:    %[[GU:.*]] = "jaxpr.gather"(%[[CT]], %[[I]])
// CHECK-NEXT:    return %[[GX]], %[[GU]]
func.func private @sc(%x: tensor<5xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>) -> tensor<5xf32> {
  %0 = "jaxpr.scatter"(%x, %i, %u) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64>}, unique_indices = true} : (tensor<5xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
func.func @vjp_scatter_unique(%x: tensor<5xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>, %ct: tensor<5xf32>) -> (tensor<5xf32>, tensor<2xf32>) {
  %0:2 = "jaxpr.vjp"(%x, %i, %u, %ct) {callee = @sc} : (tensor<5xf32>, tensor<2x1xi32>, tensor<2xf32>, tensor<5xf32>) -> (tensor<5xf32>, tensor<2xf32>)
  return %0#0, %0#1 : tensor<5xf32>, tensor<2xf32>
}
