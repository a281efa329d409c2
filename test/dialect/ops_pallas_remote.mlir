// RUN: mjax-opt %s --jaxpr-verify --split-input-file | filecheck %s

// jaxpr.remote_update round-trips (dialect/ops/pallas_remote.py): unbatched, and with
// its mesh axis 0 resolved (every operand stacked along it).

// CHECK-LABEL: func.func private @put
// CHECK: "jaxpr.remote_update"(%{{.*}}) {add = false, axes = ["x"], mesh_shape = array<i64: 4>} : (tensor<2x8xf32>, tensor<1x8xf32>, tensor<i1>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x8xf32>
func.func private @put(%d: tensor<2x8xf32>, %u: tensor<1x8xf32>, %a: tensor<i1>, %i: tensor<i32>) -> tensor<2x8xf32> {
  %0 = "jaxpr.remote_update"(%d, %u, %a, %i, %i, %i) {add = false, axes = ["x"], mesh_shape = array<i64: 4>} : (tensor<2x8xf32>, tensor<1x8xf32>, tensor<i1>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<2x8xf32>
  return %0 : tensor<2x8xf32>
}

// -----

// CHECK-LABEL: func.func private @signal
// CHECK: "jaxpr.remote_update"(%{{.*}}) {add = true, axes = ["x", "y"], mesh_shape = array<i64: 2, 4>, resolved = array<i64: 1>} : (tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
func.func private @signal(%s: tensor<4xi32>, %a: tensor<4xi1>, %c: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.remote_update"(%s, %s, %a, %c, %c) {add = true, axes = ["x", "y"], mesh_shape = array<i64: 2, 4>, resolved = array<i64: 1>} : (tensor<4xi32>, tensor<4xi32>, tensor<4xi1>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
