// RUN: mjax-opt %s --split-input-file --verify-diagnostics

func.func @sharding_constraint_spec_rank(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  // expected-error @+1 {{sharding_constraint: spec has 1 entries, expected one per dimension of the operand of shape (8, 6)}}
  %0 = "jaxpr.sharding_constraint"(%x) {mesh_axes = ["x"], mesh_shape = array<i64: 8>, spec = ["x"]} : (tensor<8x6xf32>) -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

func.func @sharding_constraint_unknown_axis(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  // expected-error @+1 {{sharding_constraint: spec entry 1 names axis 'z', which is not a mesh axis ('x',)}}
  %0 = "jaxpr.sharding_constraint"(%x) {mesh_axes = ["x"], mesh_shape = array<i64: 8>, spec = ["", "z"]} : (tensor<8x6xf32>) -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

func.func @sharding_constraint_not_divisible(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  // expected-error @+1 {{sharding_constraint: dimension 1 of shape (8, 6) (size 6) is not divisible by the 4 tiles of mesh axes ('x',)}}
  %0 = "jaxpr.sharding_constraint"(%x) {mesh_axes = ["x"], mesh_shape = array<i64: 4>, spec = ["", "x"]} : (tensor<8x6xf32>) -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

func.func @sharding_constraint_axis_twice(%x: tensor<8x8xf32>) -> tensor<8x8xf32> {
  // expected-error @+1 {{sharding_constraint: spec ('x', 'x') uses a mesh axis more than once}}
  %0 = "jaxpr.sharding_constraint"(%x) {mesh_axes = ["x"], mesh_shape = array<i64: 4>, spec = ["x", "x"]} : (tensor<8x8xf32>) -> tensor<8x8xf32>
  return %0 : tensor<8x8xf32>
}
