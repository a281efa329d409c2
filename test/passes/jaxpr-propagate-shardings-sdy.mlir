// RUN: mjax-opt %s --jaxpr-propagate-shardings="sdy=true" --jaxpr-to-stablehlo --split-input-file | filecheck %s

// sdy=true hands the propagated decisions to XLA's Shardy partitioner: the mesh as an
// sdy.mesh op, the user's argument/result shardings as sdy.sharding, each propagated
// decision as a closed sdy.sharding_constraint after its value, and the user's own
// constraint as an sdy.sharding_constraint ("?" stays open). The add's value is the
// annotated result #0, a user decision: no constraint. Lowering keeps them all.
// CHECK-LABEL: module
// CHECK:         sdy.mesh @mesh = <["x"=4, "y"=2]>
// CHECK-LABEL: func.func @to_sdy
// CHECK-SAME:    (%[[X:.*]]: tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}, %[[B:.*]]: tensor<4xf32>)
// CHECK-SAME:    -> (tensor<8x4xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {}]>}, tensor<8x4xf32>)
// CHECK:         %[[CB:.*]] = sdy.sharding_constraint %[[B]] <@mesh, [{"y"}]>
// CHECK:         %[[BB:.*]] = stablehlo.broadcast_in_dim %[[CB]]
// CHECK:         %[[CBB:.*]] = sdy.sharding_constraint %[[BB]] <@mesh, [{"x"}, {"y"}]>
// CHECK:         %[[S:.*]] = stablehlo.add %[[X]], %[[CBB]]
// CHECK-NEXT:    %[[U:.*]] = sdy.sharding_constraint %[[S]] <@mesh, [{?}, {"y"}]>
// CHECK-NEXT:    return %[[S]], %[[U]]
// CHECK-NOT:     mjax.sharding
func.func @to_sdy(%x: tensor<8x4xf32> {mjax.sharding = {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["x", "y"]}}, %b: tensor<4xf32>) -> (tensor<8x4xf32> {mjax.sharding = {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["x", ""]}}, tensor<8x4xf32>) {
  %0 = "jaxpr.broadcast_in_dim"(%b) {shape = array<i64: 8, 4>, broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>) -> tensor<8x4xf32>
  %1 = "jaxpr.add"(%x, %0) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
  %2 = "jaxpr.sharding_constraint"(%1) {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["?", "y"]} : (tensor<8x4xf32>) -> tensor<8x4xf32>
  return %1, %2 : tensor<8x4xf32>, tensor<8x4xf32>
}
