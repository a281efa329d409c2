// --jaxpr-batch on jaxpr.split, as JAX's batching rule: the batch axis stays where it
// is and the split axis moves past it when it comes first.
// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// Batched at 1, split at 0: the split is unchanged, every piece batched at 1.
// CHECK-LABEL: func.func private @h_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<6x8xf32>) -> (tensor<2x8xf32>, tensor<4x8xf32>)
// CHECK-SAME:    mjax.batch_out_dims = array<i64: 1, 1>
// CHECK-NEXT:    %[[R:.*]]:2 = "jaxpr.split"(%[[X]]) {axis = 0 : i64, sizes = array<i64: 2, 4>}
// CHECK-NEXT:    return %[[R]]#0, %[[R]]#1
// CHECK-LABEL: func.func @split_batch_after
func.func private @h(%x: tensor<6xf32>) -> (tensor<2xf32>, tensor<4xf32>) {
  %0:2 = "jaxpr.split"(%x) {axis = 0 : i64, sizes = array<i64: 2, 4>} : (tensor<6xf32>) -> (tensor<2xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<4xf32>
}
func.func @split_batch_after(%xs: tensor<6x8xf32>) -> (tensor<2x8xf32>, tensor<4x8xf32>) {
  %0:2 = "jaxpr.vmap"(%xs) {callee = @h, in_axes = array<i64: 1>, out_axes = array<i64: 1, 1>, axis_size = 8 : i64} : (tensor<6x8xf32>) -> (tensor<2x8xf32>, tensor<4x8xf32>)
  return %0#0, %0#1 : tensor<2x8xf32>, tensor<4x8xf32>
}

// -----

// Batched at 0, split at 0 of the example: the split moves to axis 1.
// CHECK-LABEL: func.func private @h_batched
// CHECK-SAME:    mjax.batch_out_dims = array<i64: 0, 0>
// CHECK-NEXT:    "jaxpr.split"(%{{.*}}) {axis = 1 : i64, sizes = array<i64: 2, 4>} : (tensor<8x6xf32>) -> (tensor<8x2xf32>, tensor<8x4xf32>)
// CHECK-LABEL: func.func @split_batch_before
func.func private @h(%x: tensor<6xf32>) -> (tensor<2xf32>, tensor<4xf32>) {
  %0:2 = "jaxpr.split"(%x) {axis = 0 : i64, sizes = array<i64: 2, 4>} : (tensor<6xf32>) -> (tensor<2xf32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<4xf32>
}
func.func @split_batch_before(%xs: tensor<8x6xf32>) -> (tensor<8x2xf32>, tensor<8x4xf32>) {
  %0:2 = "jaxpr.vmap"(%xs) {callee = @h, in_axes = array<i64: 0>, out_axes = array<i64: 0, 0>, axis_size = 8 : i64} : (tensor<8x6xf32>) -> (tensor<8x2xf32>, tensor<8x4xf32>)
  return %0#0, %0#1 : tensor<8x2xf32>, tensor<8x4xf32>
}
