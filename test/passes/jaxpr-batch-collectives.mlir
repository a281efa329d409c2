// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// psum over the vmap's own axis is a reduce_sum of the batch axis; its result is the same
// for every member (unbatched), so it is broadcast only at the call site.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<8x3xf32>) -> tensor<3xf32>
// CHECK:         %[[S:.*]] = "jaxpr.reduce_sum"(%[[X]]) {axes = array<i64: 0>}
// CHECK-NOT:     jaxpr.psum
// CHECK:         return %[[S]]
// CHECK-LABEL: func.func @psum_own_axis
// CHECK:         %[[C:.*]] = "jaxpr.call"
// CHECK:         "jaxpr.broadcast_in_dim"(%[[C]])
func.func private @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.psum"(%x) {axes = ["i"]} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @psum_own_axis(%xs: tensor<8x3xf32>) -> tensor<8x3xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 8 : i64, axis_name = "i"} : (tensor<8x3xf32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

// A psum over two names reduces this vmap's name and keeps the other for an outer vmap;
// a psum naming only another axis passes through with its operand batched.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<8x3xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.reduce_sum"(%[[X]]) {axes = array<i64: 0>}
// CHECK:         "jaxpr.psum"(%[[R]]) {axes = ["j"]} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:         "jaxpr.psum"(%[[X]]) {axes = ["j"]} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK-LABEL: func.func @psum_two_names
func.func private @f(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = "jaxpr.psum"(%x) {axes = ["i", "j"]} : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.psum"(%x) {axes = ["j"]} : (tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}
func.func @psum_two_names(%xs: tensor<8x3xf32>) -> (tensor<8x3xf32>, tensor<8x3xf32>) {
  %0:2 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 0>, out_axes = array<i64: 0, 0>, axis_size = 8 : i64, axis_name = "i"} : (tensor<8x3xf32>) -> (tensor<8x3xf32>, tensor<8x3xf32>)
  return %0#0, %0#1 : tensor<8x3xf32>, tensor<8x3xf32>
}

// -----

// psum of an unbatched value over the vmap's axis: the value times the axis size, with
// no broadcast of the operand.
// CHECK-LABEL: func.func private @g_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<8x3xf32>, %[[W:.*]]: tensor<3xf32>)
// CHECK:         %[[N:.*]] = "jaxpr.constant"() {value = dense<8.000000e+00> : tensor<3xf32>}
// CHECK:         "jaxpr.mul"(%[[W]], %[[N]])
// CHECK-LABEL: func.func @psum_unbatched
func.func private @g(%x: tensor<3xf32>, %w: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.psum"(%w) {axes = ["i"]} : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.add"(%x, %0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
func.func @psum_unbatched(%xs: tensor<8x3xf32>, %w: tensor<3xf32>) -> tensor<8x3xf32> {
  %0 = "jaxpr.vmap"(%xs, %w) {callee = @g, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 8 : i64, axis_name = "i"} : (tensor<8x3xf32>, tensor<3xf32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

// axis_index has no operand; under its vmap it is an iota along the batch axis.
// CHECK-LABEL: func.func private @h_batched
// CHECK:         "jaxpr.iota"() {dimension = 0 : i64, dtype = i32, shape = array<i64: 8>}
// CHECK-NOT:     jaxpr.axis_index
// CHECK-LABEL: func.func @axis_index_iota
func.func private @h(%x: tensor<3xf32>) -> tensor<i32> {
  %0 = "jaxpr.axis_index"() {axes = ["i"]} : () -> tensor<i32>
  return %0 : tensor<i32>
}
func.func @axis_index_iota(%xs: tensor<8x3xf32>) -> tensor<8xi32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @h, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 8 : i64, axis_name = "i"} : (tensor<8x3xf32>) -> tensor<8xi32>
  return %0 : tensor<8xi32>
}

// -----

// all_gather over the vmap's axis is the batched operand itself, batch axis moved to
// the gathered axis; every member gets it (unbatched result).
// CHECK-LABEL: func.func private @k_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<8x2x3xf32>) -> tensor<2x8x3xf32>
// CHECK:         %[[T:.*]] = "jaxpr.transpose"(%[[X]]) {permutation = array<i64: 1, 0, 2>}
// CHECK-NEXT:    return %[[T]]
// CHECK-LABEL: func.func @all_gather_own_axis
func.func private @k(%x: tensor<2x3xf32>) -> tensor<2x8x3xf32> {
  %0 = "jaxpr.all_gather"(%x) {axes = ["i"], axis = 1 : i64, axis_size = 8 : i64, tiled = false} : (tensor<2x3xf32>) -> tensor<2x8x3xf32>
  return %0 : tensor<2x8x3xf32>
}
func.func @all_gather_own_axis(%xs: tensor<8x2x3xf32>) -> tensor<8x2x8x3xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @k, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 8 : i64, axis_name = "i"} : (tensor<8x2x3xf32>) -> tensor<8x2x8x3xf32>
  return %0 : tensor<8x2x8x3xf32>
}

// -----

// psum_scatter over the vmap's axis: the sum over the batch axis, whose scattered
// dimension becomes the new batch axis (no broadcast, no transpose).
// CHECK-LABEL: func.func private @p_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<8x8x3xf32>) -> tensor<8x3xf32>
// CHECK:         %[[S:.*]] = "jaxpr.reduce_sum"(%[[X]]) {axes = array<i64: 0>}
// CHECK-NEXT:    return %[[S]]
// CHECK-LABEL: func.func @psum_scatter_own_axis
func.func private @p(%x: tensor<8x3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.psum_scatter"(%x) {axes = ["i"], axis_size = 8 : i64, scatter_dimension = 0 : i64, tiled = false} : (tensor<8x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @psum_scatter_own_axis(%xs: tensor<8x8x3xf32>) -> tensor<8x3xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @p, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 8 : i64, axis_name = "i"} : (tensor<8x8x3xf32>) -> tensor<8x3xf32>
  return %0 : tensor<8x3xf32>
}

// -----

// ppermute over the vmap's axis: a gather of batch rows at constant source indices.
// CHECK-LABEL: func.func private @q_batched
// CHECK:         %[[I:.*]] = "jaxpr.constant"() {value = dense<{{\[\[}}3], [0], [1], [2]]> : tensor<4x1xi32>}
// CHECK:         "jaxpr.gather"(%{{.*}}, %[[I]])
// CHECK-NOT:     jaxpr.ppermute
// CHECK-LABEL: func.func @ppermute_own_axis
func.func private @q(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.ppermute"(%x) {axes = ["i"], perm = [array<i64: 0, 1>, array<i64: 1, 2>, array<i64: 2, 3>, array<i64: 3, 0>]} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @ppermute_own_axis(%xs: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @q, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 4 : i64, axis_name = "i"} : (tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
