// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// Both operands batched: the two batch axes pair up as a new dot batch dimension (the
// result's first); nothing is moved or broadcast, whatever the operands' batch axes.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<8x2x3xf32>, %[[Y:.*]]: tensor<3x8x4xf32>) -> tensor<8x2x4xf32>
// CHECK-NOT:     jaxpr.transpose
// CHECK-NOT:     jaxpr.broadcast_in_dim
// CHECK:         %[[D:.*]] = "jaxpr.dot_general"(%[[X]], %[[Y]]) {dimension_numbers = {{\[}}[array<i64: 2>, array<i64: 0>], [array<i64: 0>, array<i64: 1>]]}
// CHECK-SAME:      -> tensor<8x2x4xf32>
// CHECK-NEXT:    return %[[D]]
// CHECK-LABEL: func.func @dot_general_both_batched
// CHECK-NOT:     jaxpr.transpose
func.func private @f(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
func.func @dot_general_both_batched(%xs: tensor<8x2x3xf32>, %ys: tensor<3x8x4xf32>) -> tensor<8x2x4xf32> {
  %0 = "jaxpr.vmap"(%xs, %ys) {callee = @f, in_axes = array<i64: 0, 1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<8x2x3xf32>, tensor<3x8x4xf32>) -> tensor<8x2x4xf32>
  return %0 : tensor<8x2x4xf32>
}

// -----

// Only the lhs batched (at its minor axis): the batch axis is one more lhs free dim, so the
// unbatched rhs is used as it is (no broadcast); the result has it after the lhs's other
// free dim (2x8x4), moved to out_axes = 0 only at the call site.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x8xf32>, %[[Y:.*]]: tensor<3x4xf32>) -> tensor<2x8x4xf32>
// CHECK-NOT:     jaxpr.transpose
// CHECK-NOT:     jaxpr.broadcast_in_dim
// CHECK:         %[[D:.*]] = "jaxpr.dot_general"(%[[X]], %[[Y]]) {dimension_numbers = {{\[}}[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]}
// CHECK-SAME:      -> tensor<2x8x4xf32>
// CHECK-NEXT:    return %[[D]]
// CHECK-LABEL: func.func @dot_general_lhs_batched
// CHECK:         %[[C:.*]] = "jaxpr.call"
// CHECK:         "jaxpr.transpose"(%[[C]]) {permutation = array<i64: 1, 0, 2>}
func.func private @f(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
func.func @dot_general_lhs_batched(%xs: tensor<2x3x8xf32>, %y: tensor<3x4xf32>) -> tensor<8x2x4xf32> {
  %0 = "jaxpr.vmap"(%xs, %y) {callee = @f, in_axes = array<i64: 2, -1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<2x3x8xf32>, tensor<3x4xf32>) -> tensor<8x2x4xf32>
  return %0 : tensor<8x2x4xf32>
}

// -----

// Only the rhs batched: its batch axis is one more rhs free dim, after the lhs free dims
// in the result (2x8x4); the lhs is not broadcast.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<8x3x4xf32>) -> tensor<2x8x4xf32>
// CHECK-NOT:     jaxpr.broadcast_in_dim
// CHECK:         "jaxpr.dot_general"(%[[X]], %[[Y]]) {dimension_numbers = {{\[}}[array<i64: 1>, array<i64: 1>], [array<i64>, array<i64>]]}
// CHECK-SAME:      -> tensor<2x8x4xf32>
// CHECK-LABEL: func.func @dot_general_rhs_batched
func.func private @f(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
func.func @dot_general_rhs_batched(%x: tensor<2x3xf32>, %ys: tensor<8x3x4xf32>) -> tensor<8x2x4xf32> {
  %0 = "jaxpr.vmap"(%x, %ys) {callee = @f, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<2x3xf32>, tensor<8x3x4xf32>) -> tensor<8x2x4xf32>
  return %0 : tensor<8x2x4xf32>
}

// -----

// A dot that already has batch dims, rhs batched at its minor axis: the vmap axis is a free
// dim of the rhs and lands last in the result (5x2x4x8), exactly where out_axes = 3 wants
// it, so nothing is moved anywhere.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<5x2x3xf32>, %[[Y:.*]]: tensor<5x3x4x8xf32>) -> tensor<5x2x4x8xf32>
// CHECK:         "jaxpr.dot_general"(%[[X]], %[[Y]]) {dimension_numbers = {{\[}}[array<i64: 2>, array<i64: 1>], [array<i64: 0>, array<i64: 0>]]}
// CHECK-LABEL: func.func @dot_general_rhs_batched_with_batch_dims
// CHECK-NOT:     jaxpr.transpose
// CHECK-NOT:     jaxpr.broadcast_in_dim
// CHECK:         return
func.func private @f(%x: tensor<5x2x3xf32>, %y: tensor<5x3x4xf32>) -> tensor<5x2x4xf32> {
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 2>, array<i64: 1>], [array<i64: 0>, array<i64: 0>]]} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}
func.func @dot_general_rhs_batched_with_batch_dims(%x: tensor<5x2x3xf32>, %ys: tensor<5x3x4x8xf32>) -> tensor<5x2x4x8xf32> {
  %0 = "jaxpr.vmap"(%x, %ys) {callee = @f, in_axes = array<i64: -1, 3>, out_axes = array<i64: 3>, axis_size = 8 : i64} : (tensor<5x2x3xf32>, tensor<5x3x4x8xf32>) -> tensor<5x2x4x8xf32>
  return %0 : tensor<5x2x4x8xf32>
}

// -----

// broadcast_in_dim moves the batch axis to the front of its operand and result, as
// JAX's _broadcast_in_dim_batch_rule (lax's implicit broadcasts keep theirs).
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<2x8x1xf32>) -> tensor<8x2x4x3xf32>
// CHECK-NEXT:    %[[T:.*]] = "jaxpr.transpose"(%[[X]]) {permutation = array<i64: 1, 0, 2>}
// CHECK-NEXT:    "jaxpr.broadcast_in_dim"(%[[T]]) {broadcast_dimensions = array<i64: 0, 1, 3>, shape = array<i64: 8, 2, 4, 3>}
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @broadcast_in_dim_batch_axis_to_front
func.func private @f(%x: tensor<2x1xf32>) -> tensor<2x4x3xf32> {
  %0 = "jaxpr.broadcast_in_dim"(%x) {shape = array<i64: 2, 4, 3>, broadcast_dimensions = array<i64: 0, 2>} : (tensor<2x1xf32>) -> tensor<2x4x3xf32>
  return %0 : tensor<2x4x3xf32>
}
func.func @broadcast_in_dim_batch_axis_to_front(%xs: tensor<2x8x1xf32>) -> tensor<8x2x4x3xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<2x8x1xf32>) -> tensor<8x2x4x3xf32>
  return %0 : tensor<8x2x4x3xf32>
}

// -----

// reshape is row-major, so the batch axis must lead: one transpose, then the reshape.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<2x8x3xf32>) -> tensor<8x3x2xf32>
// CHECK-NEXT:    %[[T:.*]] = "jaxpr.transpose"(%[[X]]) {permutation = array<i64: 1, 0, 2>}
// CHECK-NEXT:    "jaxpr.reshape"(%[[T]]) {new_sizes = array<i64: 8, 3, 2>}
// CHECK-LABEL: func.func @reshape_batch_to_front
func.func private @f(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "jaxpr.reshape"(%x) {new_sizes = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func @reshape_batch_to_front(%xs: tensor<2x8x3xf32>) -> tensor<8x3x2xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<2x8x3xf32>) -> tensor<8x3x2xf32>
  return %0 : tensor<8x3x2xf32>
}

// -----

// squeeze renumbers its dims around a batch axis that stays put; expand_dims (JAX's
// broadcast_in_dim) moves the batch axis to the front, as JAX's batching rule.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<2x1x3x8xf32>)
// CHECK-NEXT:    %[[S:.*]] = "jaxpr.squeeze"(%[[X]]) {dimensions = array<i64: 1>} : (tensor<2x1x3x8xf32>) -> tensor<2x3x8xf32>
// CHECK-NEXT:    %[[T:.*]] = "jaxpr.transpose"(%[[S]]) {permutation = array<i64: 2, 0, 1>}
// CHECK-NEXT:    "jaxpr.expand_dims"(%[[T]]) {dimensions = array<i64: 1, 3>} : (tensor<8x2x3xf32>) -> tensor<8x1x2x1x3xf32>
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @squeeze_expand_dims
func.func private @f(%x: tensor<2x1x3xf32>) -> tensor<1x2x1x3xf32> {
  %0 = "jaxpr.squeeze"(%x) {dimensions = array<i64: 1>} : (tensor<2x1x3xf32>) -> tensor<2x3xf32>
  %1 = "jaxpr.expand_dims"(%0) {dimensions = array<i64: 0, 2>} : (tensor<2x3xf32>) -> tensor<1x2x1x3xf32>
  return %1 : tensor<1x2x1x3xf32>
}
func.func @squeeze_expand_dims(%xs: tensor<2x1x3x8xf32>) -> tensor<8x1x2x1x3xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 3>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<2x1x3x8xf32>) -> tensor<8x1x2x1x3xf32>
  return %0 : tensor<8x1x2x1x3xf32>
}

// -----

// concatenate needs equal non-concatenated dims: the unbatched operand is broadcast at the
// batched operand's batch axis (and only here).
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<2x8x3xf32>, %[[Y:.*]]: tensor<1x3xf32>)
// CHECK-NEXT:    %[[B:.*]] = "jaxpr.broadcast_in_dim"(%[[Y]]) {broadcast_dimensions = array<i64: 0, 2>, shape = array<i64: 1, 8, 3>}
// CHECK-NEXT:    "jaxpr.concatenate"(%[[X]], %[[B]]) {dimension = 0 : i64} : (tensor<2x8x3xf32>, tensor<1x8x3xf32>) -> tensor<3x8x3xf32>
// CHECK-LABEL: func.func @concatenate_broadcasts_unbatched
func.func private @f(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>) -> tensor<3x3xf32> {
  %0 = "jaxpr.concatenate"(%x, %y) {dimension = 0 : i64} : (tensor<2x3xf32>, tensor<1x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}
func.func @concatenate_broadcasts_unbatched(%xs: tensor<2x8x3xf32>, %y: tensor<1x3xf32>) -> tensor<8x3x3xf32> {
  %0 = "jaxpr.vmap"(%xs, %y) {callee = @f, in_axes = array<i64: 1, -1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<2x8x3xf32>, tensor<1x3xf32>) -> tensor<8x3x3xf32>
  return %0 : tensor<8x3x3xf32>
}

// -----

// An unbatched padding value: one pad, no padding along the batch axis.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<3x8xf32>, %[[V:.*]]: tensor<f32>)
// CHECK-NEXT:    "jaxpr.pad"(%[[X]], %[[V]]) {padding_config = {{\[}}array<i64: 1, 2, 0>, array<i64: 0, 0, 0>]}
// CHECK-SAME:      -> tensor<6x8xf32>
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @pad_unbatched_value
func.func private @f(%x: tensor<3xf32>, %v: tensor<f32>) -> tensor<6xf32> {
  %0 = "jaxpr.pad"(%x, %v) {padding_config = [array<i64: 1, 2, 0>]} : (tensor<3xf32>, tensor<f32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
func.func @pad_unbatched_value(%xs: tensor<3x8xf32>, %v: tensor<f32>) -> tensor<8x6xf32> {
  %0 = "jaxpr.vmap"(%xs, %v) {callee = @f, in_axes = array<i64: 1, -1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<3x8xf32>, tensor<f32>) -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

// A padding value per example: pad with zero, then select each example's value where a
// mask padded the same way is false.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<8x3xf32>, %[[V:.*]]: tensor<8xf32>)
// CHECK:         %[[Z:.*]] = "jaxpr.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK:         %[[P:.*]] = "jaxpr.pad"(%[[X]], %[[Z]]) {padding_config = {{\[}}array<i64: 0, 0, 0>, array<i64: 1, 2, 0>]}
// CHECK:         %[[IN:.*]] = "jaxpr.constant"() {value = dense<true> : tensor<3xi1>}
// CHECK:         %[[OUT:.*]] = "jaxpr.constant"() {value = dense<false> : tensor<i1>}
// CHECK:         %[[M:.*]] = "jaxpr.pad"(%[[IN]], %[[OUT]]) {padding_config = {{\[}}array<i64: 1, 2, 0>]}
// CHECK:         %[[MB:.*]] = "jaxpr.broadcast_in_dim"(%[[M]]) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 8, 6>}
// CHECK:         %[[VB:.*]] = "jaxpr.broadcast_in_dim"(%[[V]]) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 8, 6>}
// CHECK:         %[[S:.*]] = "jaxpr.select_n"(%[[MB]], %[[VB]], %[[P]])
// CHECK-NEXT:    return %[[S]]
// CHECK-LABEL: func.func @pad_batched_value
func.func private @f(%x: tensor<3xf32>, %v: tensor<f32>) -> tensor<6xf32> {
  %0 = "jaxpr.pad"(%x, %v) {padding_config = [array<i64: 1, 2, 0>]} : (tensor<3xf32>, tensor<f32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
func.func @pad_batched_value(%xs: tensor<8x3xf32>, %vs: tensor<8xf32>) -> tensor<8x6xf32> {
  %0 = "jaxpr.vmap"(%xs, %vs) {callee = @f, in_axes = array<i64: 0, 0>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<8x3xf32>, tensor<8xf32>) -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

// A batched scalar predicate over unbatched cases: select_n wants a scalar or case-shaped
// predicate, so the predicate and the cases are broadcast (as JAX does).
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[P:.*]]: tensor<8xi1>, %[[A:.*]]: tensor<3xf32>, %[[B:.*]]: tensor<3xf32>)
// CHECK-DAG:     %[[AB:.*]] = "jaxpr.broadcast_in_dim"(%[[A]]) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 8, 3>}
// CHECK-DAG:     %[[BB:.*]] = "jaxpr.broadcast_in_dim"(%[[B]]) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 8, 3>}
// CHECK-DAG:     %[[PB:.*]] = "jaxpr.broadcast_in_dim"(%[[P]]) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 8, 3>}
// CHECK:         "jaxpr.select_n"(%[[PB]], %[[AB]], %[[BB]])
// CHECK-LABEL: func.func @select_n_batched_scalar_predicate
func.func private @f(%p: tensor<i1>, %a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.select_n"(%p, %a, %b) : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @select_n_batched_scalar_predicate(%ps: tensor<8xi1>, %a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<8x3xf32> {
  %0 = "jaxpr.vmap"(%ps, %a, %b) {callee = @f, in_axes = array<i64: 0, -1, -1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<8xi1>, tensor<3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

// An unbatched scalar predicate stays a scalar; cases batched on different axes (so of
// different batched shapes) get their batch axes at the front, as JAX's
// _select_batch_rule.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[P:.*]]: tensor<i1>, %[[A:.*]]: tensor<3x8xf32>, %[[B:.*]]: tensor<8x3xf32>)
// CHECK-NOT:     jaxpr.broadcast_in_dim
// CHECK:         %[[AT:.*]] = "jaxpr.transpose"(%[[A]]) {permutation = array<i64: 1, 0>}
// CHECK-NEXT:    "jaxpr.select_n"(%[[P]], %[[AT]], %[[B]]) : (tensor<i1>, tensor<8x3xf32>, tensor<8x3xf32>)
// CHECK-LABEL: func.func @select_n_unbatched_scalar_predicate
func.func private @f(%p: tensor<i1>, %a: tensor<3xf32>, %b: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.select_n"(%p, %a, %b) : (tensor<i1>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @select_n_unbatched_scalar_predicate(%p: tensor<i1>, %as: tensor<3x8xf32>, %bs: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %0 = "jaxpr.vmap"(%p, %as, %bs) {callee = @f, in_axes = array<i64: -1, 1, 0>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<i1>, tensor<3x8xf32>, tensor<8x3xf32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

// clamp: an unbatched scalar bound stays a scalar; a batched scalar bound is broadcast
// along the operand's shape.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[LO:.*]]: tensor<8xf32>, %[[X:.*]]: tensor<8x3xf32>, %[[HI:.*]]: tensor<f32>)
// CHECK-NEXT:    %[[LB:.*]] = "jaxpr.broadcast_in_dim"(%[[LO]]) {broadcast_dimensions = array<i64: 0>, shape = array<i64: 8, 3>}
// CHECK-NEXT:    "jaxpr.clamp"(%[[LB]], %[[X]], %[[HI]]) : (tensor<8x3xf32>, tensor<8x3xf32>, tensor<f32>)
// CHECK-LABEL: func.func @clamp_scalar_bounds
func.func private @f(%lo: tensor<f32>, %x: tensor<3xf32>, %hi: tensor<f32>) -> tensor<3xf32> {
  %0 = "jaxpr.clamp"(%lo, %x, %hi) : (tensor<f32>, tensor<3xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @clamp_scalar_bounds(%los: tensor<8xf32>, %xs: tensor<8x3xf32>, %hi: tensor<f32>) -> tensor<8x3xf32> {
  %0 = "jaxpr.vmap"(%los, %xs, %hi) {callee = @f, in_axes = array<i64: 0, 0, -1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<8xf32>, tensor<8x3xf32>, tensor<f32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

// A widening bitcast consumes the minor dim, so a batch axis sitting there moves first.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<2x4x8xui8>) -> tensor<8x2xf32>
// CHECK-NEXT:    %[[T:.*]] = "jaxpr.transpose"(%[[X]]) {permutation = array<i64: 2, 0, 1>}
// CHECK-NEXT:    "jaxpr.bitcast_convert_type"(%[[T]]) {new_dtype = f32} : (tensor<8x2x4xui8>) -> tensor<8x2xf32>
// CHECK-LABEL: func.func @bitcast_widening_batch_minor
func.func private @f(%x: tensor<2x4xui8>) -> tensor<2xf32> {
  %0 = "jaxpr.bitcast_convert_type"(%x) {new_dtype = f32} : (tensor<2x4xui8>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @bitcast_widening_batch_minor(%xs: tensor<2x4x8xui8>) -> tensor<8x2xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 2>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<2x4x8xui8>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}

// -----

// optimization_barrier passes each operand through with its own batch dim: the unbatched
// one stays unbatched, so out_axes = None (-1) is fine for it.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<8x3xf32>, %[[W:.*]]: tensor<2xi32>) -> (tensor<8x3xf32>, tensor<2xi32>)
// CHECK-NEXT:    "jaxpr.optimization_barrier"(%[[X]], %[[W]]) : (tensor<8x3xf32>, tensor<2xi32>) -> (tensor<8x3xf32>, tensor<2xi32>)
// CHECK-LABEL: func.func @optimization_barrier_partly_batched
// CHECK-NOT:     jaxpr.broadcast_in_dim
func.func private @f(%x: tensor<3xf32>, %w: tensor<2xi32>) -> (tensor<3xf32>, tensor<2xi32>) {
  %0:2 = "jaxpr.optimization_barrier"(%x, %w) : (tensor<3xf32>, tensor<2xi32>) -> (tensor<3xf32>, tensor<2xi32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<2xi32>
}
func.func @optimization_barrier_partly_batched(%xs: tensor<8x3xf32>, %w: tensor<2xi32>) -> (tensor<8x3xf32>, tensor<2xi32>) {
  %0:2 = "jaxpr.vmap"(%xs, %w) {callee = @f, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0, -1>, axis_size = 8 : i64} : (tensor<8x3xf32>, tensor<2xi32>) -> (tensor<8x3xf32>, tensor<2xi32>)
  return %0#0, %0#1 : tensor<8x3xf32>, tensor<2xi32>
}

// -----

// transpose folds the batch axis into its permutation (first in the result).
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<2x8x3x4xf32>) -> tensor<8x4x2x3xf32>
// CHECK-NEXT:    "jaxpr.transpose"(%[[X]]) {permutation = array<i64: 1, 3, 0, 2>}
// CHECK-NEXT:    return
// CHECK-LABEL: func.func @transpose_folds_batch_axis
// CHECK-NOT:     jaxpr.transpose
func.func private @f(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = "jaxpr.transpose"(%x) {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}
func.func @transpose_folds_batch_axis(%xs: tensor<2x8x3x4xf32>) -> tensor<8x4x2x3xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 1>, out_axes = array<i64: 0>, axis_size = 8 : i64} : (tensor<2x8x3x4xf32>) -> tensor<8x4x2x3xf32>
  return %0 : tensor<8x4x2x3xf32>
}
