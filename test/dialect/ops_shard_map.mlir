// RUN: mjax-opt %s | mjax-opt --jaxpr-verify | filecheck %s
// jaxpr.shard_map prints and re-parses, and --jaxpr-verify checks its operands against
// the per-device blocks @body takes (operand dims divided by the mesh axes in_specs
// name; the last num_captured operands whole) and gives its results the global shapes
// out_specs assemble.

func.func private @body(%b: tensor<2x3xf32>, %w: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.broadcast_in_dim"(%w) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 2, 3>} : (tensor<3xf32>) -> tensor<2x3xf32>
  %1 = "jaxpr.mul"(%b, %0) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = "jaxpr.psum"(%1) {axes = ["x"]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %2 : tensor<2x3xf32>
}

// CHECK-LABEL: func.func @shard_map_round_trip
// CHECK:         "jaxpr.shard_map"(%{{.*}}, %{{.*}}) {axis_types = ["Auto", "Auto"], callee = @body, check_vma = true, in_specs = {{\[}}["x", "y"]], manual_axes = ["x", "y"], mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, num_captured = 1 : i64, out_specs = {{\[}}["", "y"]]} : (tensor<8x6xf32>, tensor<3xf32>) -> tensor<2x6xf32>
func.func @shard_map_round_trip(%x: tensor<8x6xf32>, %w: tensor<3xf32>) -> tensor<2x6xf32> {
  %0 = "jaxpr.shard_map"(%x, %w) {callee = @body, mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, axis_types = ["Auto", "Auto"], in_specs = [["x", "y"]], out_specs = [["", "y"]], manual_axes = ["x", "y"], check_vma = true, num_captured = 1} : (tensor<8x6xf32>, tensor<3xf32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}
