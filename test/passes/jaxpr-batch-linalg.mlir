// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// Linalg ops take leading batch axes: the vmapped axis moves to the front and the op
// runs once on the stack.
// CHECK-LABEL: func.func private @chol_batched
// CHECK-SAME:    (%[[A:.*]]: tensor<3x3x5xf32>)
// CHECK:         %[[T:.*]] = "jaxpr.transpose"(%[[A]]) {permutation = array<i64: 2, 0, 1>}
// CHECK:         %[[L:.*]] = "jaxpr.cholesky"(%[[T]]) : (tensor<5x3x3xf32>) -> tensor<5x3x3xf32>
// CHECK:         return %[[L]]
// CHECK-LABEL: func.func @cholesky_axis2
// CHECK-NOT:     jaxpr.vmap
func.func private @chol(%a: tensor<3x3xf32>) -> tensor<3x3xf32> {
  %0 = "jaxpr.cholesky"(%a) : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}
func.func @cholesky_axis2(%as: tensor<3x3x5xf32>) -> tensor<5x3x3xf32> {
  %0 = "jaxpr.vmap"(%as) {callee = @chol, in_axes = array<i64: 2>, out_axes = array<i64: 0>, axis_size = 5 : i64} : (tensor<3x3x5xf32>) -> tensor<5x3x3xf32>
  return %0 : tensor<5x3x3xf32>
}

// -----

// With only b batched, triangular_solve folds the batch into b's columns: `a` is not
// broadcast (JAX: _triangular_solve_batching_rule).
// CHECK-LABEL: func.func private @tri_batched
// CHECK-SAME:    (%[[A:.*]]: tensor<3x3xf32>, %[[B:.*]]: tensor<4x3x2xf32>)
// CHECK-NOT:     jaxpr.broadcast_in_dim
// CHECK:         %[[T:.*]] = "jaxpr.transpose"(%[[B]]) {permutation = array<i64: 1, 2, 0>}
// CHECK:         %[[F:.*]] = "jaxpr.reshape"(%[[T]]) {new_sizes = array<i64: 3, 8>}
// CHECK:         %[[X:.*]] = "jaxpr.triangular_solve"(%[[A]], %[[F]]) {{.*}} : (tensor<3x3xf32>, tensor<3x8xf32>) -> tensor<3x8xf32>
// CHECK:         %[[Y:.*]] = "jaxpr.reshape"(%[[X]]) {new_sizes = array<i64: 3, 2, 4>}
// CHECK:         return %[[Y]]
// CHECK-LABEL: func.func @triangular_solve_unbatched_a
// CHECK:         %[[C:.*]] = "jaxpr.call"
// CHECK:         "jaxpr.transpose"(%[[C]]) {permutation = array<i64: 2, 0, 1>}
func.func private @tri(%a: tensor<3x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0 = "jaxpr.triangular_solve"(%a, %b) {left_side = true, lower = true} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func @triangular_solve_unbatched_a(%a: tensor<3x3xf32>, %bs: tensor<4x3x2xf32>) -> tensor<4x3x2xf32> {
  %0 = "jaxpr.vmap"(%a, %bs) {callee = @tri, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 4 : i64} : (tensor<3x3xf32>, tensor<4x3x2xf32>) -> tensor<4x3x2xf32>
  return %0 : tensor<4x3x2xf32>
}

// -----

// A batched `a` and an unbatched b: b is broadcast, since the op needs equal batch axes.
// CHECK-LABEL: func.func private @tri2_batched
// CHECK-SAME:    (%[[A:.*]]: tensor<4x3x3xf32>, %[[B:.*]]: tensor<3x2xf32>)
// CHECK:         %[[BB:.*]] = "jaxpr.broadcast_in_dim"(%[[B]]) {broadcast_dimensions = array<i64: 1, 2>, shape = array<i64: 4, 3, 2>}
// CHECK:         "jaxpr.triangular_solve"(%[[A]], %[[BB]])
// CHECK-LABEL: func.func @triangular_solve_batched_a
func.func private @tri2(%a: tensor<3x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0 = "jaxpr.triangular_solve"(%a, %b) {left_side = true, lower = true} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func @triangular_solve_batched_a(%as: tensor<4x3x3xf32>, %b: tensor<3x2xf32>) -> tensor<4x3x2xf32> {
  %0 = "jaxpr.vmap"(%as, %b) {callee = @tri2, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 4 : i64} : (tensor<4x3x3xf32>, tensor<3x2xf32>) -> tensor<4x3x2xf32>
  return %0 : tensor<4x3x2xf32>
}

// -----

// Multi-result ops (lu, svd) give every result the batch axis in front.
// CHECK-LABEL: func.func private @lu_batched
// CHECK:         %[[R:.*]]:3 = "jaxpr.lu"(%{{.*}}) : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3xi32>, tensor<2x4xi32>)
// CHECK:         return %[[R]]#2
// CHECK-LABEL: func.func @lu_permutation
func.func private @lu(%a: tensor<4x3xf32>) -> tensor<4xi32> {
  %0:3 = "jaxpr.lu"(%a) : (tensor<4x3xf32>) -> (tensor<4x3xf32>, tensor<3xi32>, tensor<4xi32>)
  return %0#2 : tensor<4xi32>
}
func.func @lu_permutation(%as: tensor<2x4x3xf32>) -> tensor<2x4xi32> {
  %0 = "jaxpr.vmap"(%as) {callee = @lu, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 2 : i64} : (tensor<2x4x3xf32>) -> tensor<2x4xi32>
  return %0 : tensor<2x4xi32>
}

// -----

// fft transforms trailing axes, so a batch axis moves in front of them.
// CHECK-LABEL: func.func private @rfft_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<8x3xf32>)
// CHECK:         %[[T:.*]] = "jaxpr.transpose"(%[[X]]) {permutation = array<i64: 1, 0>}
// CHECK:         "jaxpr.fft"(%[[T]]) {fft_lengths = array<i64: 8>, fft_type = "RFFT"} : (tensor<3x8xf32>) -> tensor<3x5xcomplex<f32>>
// CHECK-LABEL: func.func @fft_batch_last
func.func private @rfft(%x: tensor<8xf32>) -> tensor<5xcomplex<f32>> {
  %0 = "jaxpr.fft"(%x) {fft_type = "RFFT", fft_lengths = array<i64: 8>} : (tensor<8xf32>) -> tensor<5xcomplex<f32>>
  return %0 : tensor<5xcomplex<f32>>
}
func.func @fft_batch_last(%xs: tensor<8x3xf32>) -> tensor<3x5xcomplex<f32>> {
  %0 = "jaxpr.vmap"(%xs) {callee = @rfft, in_axes = array<i64: 1>, out_axes = array<i64: 0>, axis_size = 3 : i64} : (tensor<8x3xf32>) -> tensor<3x5xcomplex<f32>>
  return %0 : tensor<3x5xcomplex<f32>>
}
