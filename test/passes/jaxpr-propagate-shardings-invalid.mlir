// RUN: mjax-opt %s --jaxpr-propagate-shardings --split-input-file --verify-diagnostics

// expected-error @+1 {{mjax.sharding: spec ('x', 'x') uses a mesh axis more than once}}
func.func @annotation_axis_twice(%x: tensor<4x4xf32> {mjax.sharding = {mesh_axes = ["x"], mesh_shape = array<i64: 4>, spec = ["x", "x"]}}) -> tensor<4x4xf32> {
  return %x : tensor<4x4xf32>
}

// -----

// The constraint's mesh differs from the argument's: reported at the constraint.
func.func @two_meshes(%x: tensor<8xf32> {mjax.sharding = {mesh_axes = ["x"], mesh_shape = array<i64: 4>, spec = ["x"]}}) -> tensor<8xf32> {
  // expected-error @+1 {{jaxpr-propagate-shardings: @two_meshes uses two meshes, (('x',), (4,)) and (('x',), (8,))}}
  %0 = "jaxpr.sharding_constraint"(%x) {mesh_axes = ["x"], mesh_shape = array<i64: 8>, spec = ["x"]} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// An annotation holding an attribute kind no annotation has (array<i32>).
// expected-error @+1 {{mjax.sharding must be a dictionary with mesh_axes, mesh_shape and spec, got {mesh_axes = ["x"], mesh_shape = array<i32: 4>}}
func.func @annotation_i32_mesh_shape(%x: tensor<8xf32> {mjax.sharding = {mesh_axes = ["x"], mesh_shape = array<i32: 4>, spec = ["x"]}}) -> tensor<8xf32> {
  return %x : tensor<8xf32>
}

// -----

// expected-error @+1 {{mjax.sharding needs mesh_axes and spec of strings and mesh_shape of integers}}
func.func @annotation_spec_not_strings(%x: tensor<8x2xf32> {mjax.sharding = {mesh_axes = ["x"], mesh_shape = array<i64: 4>, spec = [3, 4]}}) -> tensor<8x2xf32> {
  return %x : tensor<8x2xf32>
}
