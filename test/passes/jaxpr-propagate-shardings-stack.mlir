// --jaxpr-propagate-shardings through jaxpr.stack and jaxpr.unstack: every operand
// dimension keeps its axes; the stacking axis stays whole (JAX: a stacked result is
// unsharded along the new axis; an unstack operand is not split along it).
// RUN: mjax-opt %s --jaxpr-propagate-shardings="explain=true" --split-input-file | filecheck %s

// The result gets the operand's axes around the new (whole) axis; the other operand gets
// them too (operand to operand).
// CHECK-LABEL: func.func @stack_forward
// CHECK-SAME:    mjax.sharding_propagated = "[{x}, {y}]"
// CHECK:         "jaxpr.stack"
// CHECK-SAME:    mjax.sharding = ["[{x}, {}, {y}]"]
// CHECK-SAME:    mjax.sharding_explain = ["stack (stack): from operand 0; dim 0 {x} <- argument #0 of @stack_forward; dim 2 {y} <- argument #0 of @stack_forward"]
func.func @stack_forward(%x: tensor<8x4xf32> {mjax.sharding = {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["x", "y"]}}, %y: tensor<8x4xf32>) -> tensor<8x2x4xf32> {
  %0 = "jaxpr.stack"(%x, %y) {axis = 1 : i64} : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x2x4xf32>
  return %0 : tensor<8x2x4xf32>
}

// -----

// Each result gets the operand's axes without the unstacked axis.
// CHECK-LABEL: func.func @unstack_forward
// CHECK:         "jaxpr.unstack"
// CHECK-SAME:    mjax.sharding = ["[{x}, {y}]", "[{x}, {y}]"]
func.func @unstack_forward(%x: tensor<8x2x4xf32> {mjax.sharding = {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["x", "", "y"]}}) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %0:2 = "jaxpr.unstack"(%x) {axis = 1 : i64} : (tensor<8x2x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>)
  return %0#0, %0#1 : tensor<8x4xf32>, tensor<8x4xf32>
}

// -----

// An operand split along the unstacked axis: nothing reaches the results.
// CHECK-LABEL: func.func @unstack_sharded_axis
// CHECK:         "jaxpr.unstack"
// CHECK-SAME:    mjax.sharding = ["[{}, {}]", "[{}, {}]"]
func.func @unstack_sharded_axis(%x: tensor<8x2x4xf32> {mjax.sharding = {mesh_axes = ["x"], mesh_shape = array<i64: 2>, spec = ["", "x", ""]}}) -> (tensor<8x4xf32>, tensor<8x4xf32>) {
  %0:2 = "jaxpr.unstack"(%x) {axis = 1 : i64} : (tensor<8x2x4xf32>) -> (tensor<8x4xf32>, tensor<8x4xf32>)
  return %0#0, %0#1 : tensor<8x4xf32>, tensor<8x4xf32>
}
