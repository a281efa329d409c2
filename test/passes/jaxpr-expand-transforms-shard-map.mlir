// RUN: mjax-opt %s --jaxpr-expand-transforms --jaxpr-inline --split-input-file | filecheck %s
// RUN: mjax-opt %s --jaxpr-verify --split-input-file | filecheck %s --check-prefix=VERIFY
// jaxpr.shard_map @body expands into what mjax runs on a mesh: the operand laid out
// per in_specs (a constraint), reshaped to one leading block axis per mesh axis its
// spec names, the body batched once per manual axis (its psum over x a reduce_sum over
// that block axis), and the blocks reassembled per out_specs.

// VERIFY-LABEL: func.func @psum_over_x
// VERIFY:         "jaxpr.shard_map"(%arg0) {{.*}}callee = @body
// CHECK-LABEL: func.func @psum_over_x
// CHECK:         "jaxpr.sharding_constraint"(%arg0) {{.*}}spec = ["x", "y"]
// CHECK:         "jaxpr.reshape"({{.*}}) {new_sizes = array<i64: 4, 2, 2, 3>}
// CHECK:         "jaxpr.transpose"({{.*}}) {permutation = array<i64: 0, 2, 1, 3>}
// CHECK:         "jaxpr.sharding_constraint"({{.*}}spec = ["x", "y", "", ""]
// CHECK:         "jaxpr.reduce_sum"({{.*}}) {axes = array<i64: 0>}
// CHECK:         "jaxpr.sharding_constraint"({{.*}}spec = ["y", "", ""]
// CHECK:         "jaxpr.transpose"({{.*}}) {permutation = array<i64: 1, 0, 2>}
// CHECK:         "jaxpr.reshape"({{.*}}) {new_sizes = array<i64: 2, 6>}
// CHECK:         "jaxpr.sharding_constraint"({{.*}}spec = ["", "y"]
// CHECK-NOT:     jaxpr.shard_map
// CHECK-NOT:     jaxpr.vmap
func.func private @body(%b: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %s = "jaxpr.psum"(%b) {axes = ["x"]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %s : tensor<2x3xf32>
}
func.func @psum_over_x(%x: tensor<8x6xf32>) -> tensor<2x6xf32> {
  %y = "jaxpr.shard_map"(%x) {callee = @body, mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, in_specs = [["x", "y"]], out_specs = [["", "y"]], manual_axes = ["x", "y"], check_vma = true} : (tensor<8x6xf32>) -> tensor<2x6xf32>
  return %y : tensor<2x6xf32>
}

// -----

// Over part of the mesh (manual_axes = ["x"]) the dimensions left whole are "?" (the
// compiler may split them over y); one vmap, over x.
// CHECK-LABEL: func.func @partial
// CHECK:         "jaxpr.sharding_constraint"(%arg0) {{.*}}spec = ["x", "?"]
// CHECK:         "jaxpr.reshape"({{.*}}) {new_sizes = array<i64: 4, 2, 6>}
// CHECK:         "jaxpr.sharding_constraint"({{.*}}spec = ["x", "?", "?"]
// CHECK:         "jaxpr.sin"
// CHECK:         "jaxpr.reshape"({{.*}}) {new_sizes = array<i64: 8, 6>}
// CHECK:         "jaxpr.sharding_constraint"({{.*}}spec = ["x", "?"]
func.func private @sine(%b: tensor<2x6xf32>) -> tensor<2x6xf32> {
  %s = "jaxpr.sin"(%b) : (tensor<2x6xf32>) -> tensor<2x6xf32>
  return %s : tensor<2x6xf32>
}
func.func @partial(%x: tensor<8x6xf32>) -> tensor<8x6xf32> {
  %y = "jaxpr.shard_map"(%x) {callee = @sine, mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, in_specs = [["x"]], out_specs = [["x"]], manual_axes = ["x"], check_vma = true} : (tensor<8x6xf32>) -> tensor<8x6xf32>
  return %y : tensor<8x6xf32>
}
