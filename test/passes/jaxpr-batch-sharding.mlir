// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// Under vmap the batch dimension is not split: "" is inserted at the batch position
// (here 1, where in_axes put it).
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<8x3xf32>)
// CHECK:         "jaxpr.sharding_constraint"(%[[X]]) {{{.*}}spec = ["x", ""]} : (tensor<8x3xf32>) -> tensor<8x3xf32>
// CHECK-LABEL: func.func @sharding_constraint_vmap
func.func private @f(%x: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "jaxpr.sharding_constraint"(%x) {mesh_axes = ["x"], mesh_shape = array<i64: 8>, spec = ["x"]} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @sharding_constraint_vmap(%xs: tensor<8x3xf32>) -> tensor<3x8xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 1>, out_axes = array<i64: 0>, axis_size = 3 : i64} : (tensor<8x3xf32>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}
