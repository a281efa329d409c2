// RUN: mjax-opt %s --jaxpr-propagate-shardings="explain=true" --split-input-file | filecheck %s

// Elementwise ops carry the argument's sharding forward; explain names the rule, the
// operand, and the annotation each dimension's axes came from.
// CHECK-LABEL: func.func @elementwise_forward
// CHECK:         "jaxpr.sin"
// CHECK-SAME:    mjax.sharding = ["[{x}, {}]"]
// CHECK-SAME:    mjax.sharding_explain = ["sin (elementwise): from operand 0; dim 0 {x} <- argument #0 of @elementwise_forward"]
// CHECK:         "jaxpr.mul"
// CHECK-SAME:    mjax.sharding = ["[{x}, {}]"]
func.func @elementwise_forward(%x: tensor<8x4xf32> {mjax.sharding = {mesh_axes = ["x"], mesh_shape = array<i64: 4>, spec = ["x", ""]}}) -> tensor<8x4xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %1 = "jaxpr.mul"(%0, %0) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}

// -----

// A matmul whose contracting dimension is sharded: the result keeps the free dims'
// axes and the op is marked as leaving partial sums over "y" (an all-reduce); the other
// operand's contracting dim gets "y" too (operand to operand, as Shardy does).
// CHECK-LABEL: func.func @dot_general_sharded_contraction
// CHECK-SAME:    %{{.*}}: tensor<4x6xf32> {mjax.sharding_explain = "dot_general (dot_general): from operand 0; dim 0 {y} <- argument #0 of @dot_general_sharded_contraction", mjax.sharding_propagated = "[{y}, {}]"}
// CHECK:         "jaxpr.dot_general"
// CHECK-SAME:    mjax.sharding = ["[{x}, {}]"]
// CHECK-SAME:    mjax.sharding_reduced = ["y"]
func.func @dot_general_sharded_contraction(%a: tensor<8x4xf32> {mjax.sharding = {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["x", "y"]}}, %w: tensor<4x6xf32>) -> tensor<8x6xf32> {
  %0 = "jaxpr.dot_general"(%a, %w) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<8x4xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

// Backward: the bias is broadcast and added to a sharded value; the add's rule gives
// the broadcast's result [{x}, {y}] (from its other operand) and broadcast_in_dim's rule
// gives the bias {y}, written on the argument as a propagated (not user) sharding.
// CHECK-LABEL: func.func @broadcast_backward_to_argument
// CHECK-SAME:    %{{.*}}: tensor<6xf32> {mjax.sharding_explain = "broadcast_in_dim (broadcast_in_dim): from result 0; dim 0 {y} <- argument #0 of @broadcast_backward_to_argument", mjax.sharding_propagated = "[{y}]"}
// CHECK:         "jaxpr.broadcast_in_dim"
// CHECK-SAME:    mjax.sharding = ["[{x}, {y}]"]
// CHECK-SAME:    mjax.sharding_explain = ["add (elementwise): from operand 0;
func.func @broadcast_backward_to_argument(%h: tensor<8x6xf32> {mjax.sharding = {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["x", "y"]}}, %b: tensor<6xf32>) -> tensor<8x6xf32> {
  %0 = "jaxpr.broadcast_in_dim"(%b) {shape = array<i64: 8, 6>, broadcast_dimensions = array<i64: 1>} : (tensor<6xf32>) -> tensor<8x6xf32>
  %1 = "jaxpr.add"(%h, %0) : (tensor<8x6xf32>, tensor<8x6xf32>) -> tensor<8x6xf32>
  return %1 : tensor<8x6xf32>
}

// -----

// transpose permutes the dims' axes; reduce_sum over an unsharded dim keeps the rest
// and marks nothing.
// CHECK-LABEL: func.func @transpose_then_reduce
// CHECK:         "jaxpr.transpose"
// CHECK-SAME:    mjax.sharding = ["[{}, {x}]"]
// CHECK:         "jaxpr.reduce_sum"
// CHECK-NOT:     mjax.sharding_reduced
// CHECK-SAME:    mjax.sharding = ["[{x}]"]
func.func @transpose_then_reduce(%x: tensor<8x4xf32> {mjax.sharding = {mesh_axes = ["x"], mesh_shape = array<i64: 4>, spec = ["x", ""]}}) -> tensor<8xf32> {
  %0 = "jaxpr.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<8x4xf32>) -> tensor<4x8xf32>
  %1 = "jaxpr.reduce_sum"(%0) {axes = array<i64: 0>} : (tensor<4x8xf32>) -> tensor<8xf32>
  return %1 : tensor<8xf32>
}

// -----

// reshape: splitting a sharded dim gives its axes to the major new dim; merging two
// dims keeps the major dim's axes.
// CHECK-LABEL: func.func @reshape_split_and_merge
// CHECK:         "jaxpr.reshape"
// CHECK-SAME:    mjax.sharding = ["[{x}, {}, {}]"]
// CHECK:         "jaxpr.reshape"
// CHECK-SAME:    mjax.sharding = ["[{x}, {}]"]
func.func @reshape_split_and_merge(%x: tensor<8x6xf32> {mjax.sharding = {mesh_axes = ["x"], mesh_shape = array<i64: 4>, spec = ["x", ""]}}) -> tensor<16x3xf32> {
  %0 = "jaxpr.reshape"(%x) {new_sizes = array<i64: 4, 2, 6>} : (tensor<8x6xf32>) -> tensor<4x2x6xf32>
  %1 = "jaxpr.reshape"(%0) {new_sizes = array<i64: 16, 3>} : (tensor<4x2x6xf32>) -> tensor<16x3xf32>
  return %1 : tensor<16x3xf32>
}

// -----

// A constraint is a source: it flows backward to the constant and the argument (no
// annotation of its own) and forward to its users.
// CHECK-LABEL: func.func @constraint_as_source
// CHECK-SAME:    mjax.sharding_propagated = "[{}, {y}]"
// CHECK:         "jaxpr.constant"
// CHECK-SAME:    mjax.sharding = ["[{}, {y}]"]
// CHECK:         "jaxpr.sharding_constraint"
// CHECK-SAME:    mjax.sharding_explain = ["sharding_constraint; dim 1 {y} <- constraint at
// CHECK:         "jaxpr.exp"
// CHECK-SAME:    mjax.sharding = ["[{}, {y}]"]
func.func @constraint_as_source(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  %c = "jaxpr.constant"() {value = dense<1.0> : tensor<4x8xf32>} : () -> tensor<4x8xf32>
  %0 = "jaxpr.add"(%x, %c) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = "jaxpr.sharding_constraint"(%0) {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["", "y"]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = "jaxpr.exp"(%1) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %2 : tensor<4x8xf32>
}

// -----

// Conflict: operands disagree on dim 0. A user annotation beats a propagated sharding
// (priority 2), so the add takes "y" from %b although %a's "x" comes first.
// CHECK-LABEL: func.func @conflict_annotation_wins
// CHECK:         "jaxpr.add"
// CHECK-SAME:    mjax.sharding = ["[{y}, {}]"]
// CHECK-SAME:    mjax.sharding_explain = ["add (elementwise): from operand 1; dim 0 {y} <- argument #1 of @conflict_annotation_wins"]
func.func @conflict_annotation_wins(%x: tensor<8x4xf32> {mjax.sharding = {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["x", ""]}}, %b: tensor<8x4xf32> {mjax.sharding = {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["y", ""]}}) -> tensor<8x4xf32> {
  %a = "jaxpr.neg"(%x) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  %0 = "jaxpr.add"(%a, %b) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %0 : tensor<8x4xf32>
}

// -----

// Ops without a sharding rule are left to XLA, with the stated reason under explain;
// a sort keeps its sorted dimension whole.
// CHECK-LABEL: func.func @not_propagated_ops
// CHECK:         "jaxpr.sort"
// CHECK-SAME:    mjax.sharding = ["[{}, {x}]"]
// CHECK:         "jaxpr.cholesky"
// CHECK-SAME:    mjax.sharding_explain = ["replicated, not propagated: factorizations and FFTs need whole matrices on one device here"]
func.func @not_propagated_ops(%x: tensor<4x4xf32> {mjax.sharding = {mesh_axes = ["x"], mesh_shape = array<i64: 4>, spec = ["x", ""]}}) -> (tensor<4x4xf32>, tensor<4x4xf32>) {
  %0 = "jaxpr.transpose"(%x) {permutation = array<i64: 1, 0>} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %1 = "jaxpr.sort"(%0) {dimension = 0 : i64, is_stable = true, num_keys = 1 : i64} : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %2 = "jaxpr.cholesky"(%x) : (tensor<4x4xf32>) -> tensor<4x4xf32>
  return %1, %2 : tensor<4x4xf32>, tensor<4x4xf32>
}

// -----

// approx_top_k, as top_k, keeps its reduction dimension whole: the row axis passes to
// both results, the sharded reduced dimension does not.
// CHECK-LABEL: func.func @approx_top_k_keeps_reduction_whole
// CHECK:         "jaxpr.approx_top_k"
// CHECK-SAME:    mjax.sharding = ["[{x}, {}]", "[{x}, {}]"]
func.func @approx_top_k_keeps_reduction_whole(%x: tensor<8x50xf32> {mjax.sharding = {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["x", "y"]}}) -> (tensor<8x4xf32>, tensor<8x4xi32>) {
  %0:2 = "jaxpr.approx_top_k"(%x) {aggregate_to_topk = true, is_max_k = true, k = 4 : i64, recall_target = 9.500000e-01 : f64, reduction_dimension = 1 : i64, reduction_input_size_override = -1 : i64} : (tensor<8x50xf32>) -> (tensor<8x4xf32>, tensor<8x4xi32>)
  return %0#0, %0#1 : tensor<8x4xf32>, tensor<8x4xi32>
}

// -----

// Axes whose tile count does not divide a dimension are dropped (priority 4): 6 rows
// over 4 devices stay whole after the reshape.
// CHECK-LABEL: func.func @indivisible_dimension_dropped
// CHECK:         "jaxpr.reshape"
// CHECK-SAME:    mjax.sharding = ["[{}, {}]"]
func.func @indivisible_dimension_dropped(%x: tensor<8x3xf32> {mjax.sharding = {mesh_axes = ["x"], mesh_shape = array<i64: 4>, spec = ["x", ""]}}) -> tensor<6x4xf32> {
  %0 = "jaxpr.reshape"(%x) {new_sizes = array<i64: 6, 4>} : (tensor<8x3xf32>) -> tensor<6x4xf32>
  return %0 : tensor<6x4xf32>
}
