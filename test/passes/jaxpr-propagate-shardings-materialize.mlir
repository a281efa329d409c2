// RUN: mjax-opt %s --jaxpr-propagate-shardings="materialize=true" --split-input-file | filecheck %s

// materialize=true writes each propagated decision as a sharding_constraint after the
// value (and after an argument that received one), so lowering hands it to XLA.
// CHECK-LABEL: func.func @materialize_decisions
// CHECK-SAME:    (%[[X:.*]]: tensor<8x4xf32> {{.*}}, %[[B:.*]]: tensor<4xf32> {{.*}})
// CHECK:         %[[CB:.*]] = "jaxpr.sharding_constraint"(%[[B]]) {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["y"]}
// CHECK:         %[[BB:.*]] = "jaxpr.broadcast_in_dim"(%[[CB]])
// CHECK:         %[[CBB:.*]] = "jaxpr.sharding_constraint"(%[[BB]]) {{{.*}}spec = ["x", "y"]}
// CHECK:         %[[S:.*]] = "jaxpr.add"(%[[X]], %[[CBB]])
// CHECK:         %[[CS:.*]] = "jaxpr.sharding_constraint"(%[[S]]) {{{.*}}spec = ["x", "y"]}
// CHECK:         return %[[CS]]
func.func @materialize_decisions(%x: tensor<8x4xf32> {mjax.sharding = {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["x", "y"]}}, %b: tensor<4xf32>) -> tensor<8x4xf32> {
  %0 = "jaxpr.broadcast_in_dim"(%b) {shape = array<i64: 8, 4>, broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<8x4xf32>
  %1 = "jaxpr.add"(%x, %0) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  return %1 : tensor<8x4xf32>
}
