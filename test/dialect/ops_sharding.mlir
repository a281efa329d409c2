// RUN: mjax-opt %s --jaxpr-verify --split-input-file | filecheck %s

// The constraint names its mesh (axes, shape, devices) and one spec entry per dimension.
// CHECK-LABEL: func.func @sharding_constraint_2d
// CHECK:         "jaxpr.sharding_constraint"(%{{.*}}) {device_ids = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["x", ""]} : (tensor<8x6xf32>) -> tensor<8x6xf32>
func.func @sharding_constraint_2d(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %0 = "jaxpr.sharding_constraint"(%x) {device_ids = array<i64: 0, 1, 2, 3, 4, 5, 6, 7>, mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["x", ""]} : (tensor<8x6xf32>) -> tensor<8x6xf32>
  return %0 : tensor<8x6xf32>
}

// -----

// One dimension over two mesh axes (major to minor); device_ids is optional.
// CHECK-LABEL: func.func @sharding_constraint_two_axes
// CHECK:         "jaxpr.sharding_constraint"(%{{.*}}) {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["", "x,y"]}
func.func @sharding_constraint_two_axes(%x: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %0 = "jaxpr.sharding_constraint"(%x) {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, spec = ["", "x,y"]} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  return %0 : tensor<3x16xf32>
}

// -----

// "?" leaves a dimension to the compiler (JAX's P.UNCONSTRAINED).
// CHECK-LABEL: func.func @sharding_constraint_unconstrained
// CHECK:         "jaxpr.sharding_constraint"(%{{.*}}) {mesh_axes = ["x"], mesh_shape = array<i64: 8>, spec = ["?", "x"]}
func.func @sharding_constraint_unconstrained(%x: tensor<3x16xf32>) -> tensor<3x16xf32> {
  %0 = "jaxpr.sharding_constraint"(%x) {mesh_axes = ["x"], mesh_shape = array<i64: 8>, spec = ["?", "x"]} : (tensor<3x16xf32>) -> tensor<3x16xf32>
  return %0 : tensor<3x16xf32>
}
