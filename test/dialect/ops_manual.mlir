// RUN: mjax-opt %s | mjax-opt --jaxpr-verify | filecheck %s
// jaxpr.manual_computation (dialect/ops/manual.py) prints and re-parses, and
// --jaxpr-verify checks its stacked operands against its body's blocks and gives its
// results one leading dim per axis of out_axes.

// CHECK-LABEL: func.func @per_device
// CHECK:         "jaxpr.manual_computation"(%{{.*}}, %{{.*}}) ({
// CHECK:         ^bb0(%{{.*}}: tensor<8x128xf32>, %{{.*}}: tensor<128xf32>):
// CHECK:           "jaxpr.yield"(%{{.*}}) : (tensor<8x128xf32>) -> ()
// CHECK:         }) {in_axes = {{\[}}["x", "y"], []], mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, out_axes = ["x", "y"]} : (tensor<4x2x8x128xf32>, tensor<128xf32>) -> tensor<4x2x8x128xf32>
func.func @per_device(%x: tensor<4x2x8x128xf32>, %w: tensor<128xf32>) -> tensor<4x2x8x128xf32> {
  %0 = "jaxpr.manual_computation"(%x, %w) ({
  ^bb0(%b: tensor<8x128xf32>, %v: tensor<128xf32>):
    %1 = "jaxpr.broadcast_in_dim"(%v) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 8, 128>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %2 = "jaxpr.add"(%b, %1) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    "jaxpr.yield"(%2) : (tensor<8x128xf32>) -> ()
  }) {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, out_axes = ["x", "y"], in_axes = [["x", "y"], []]} : (tensor<4x2x8x128xf32>, tensor<128xf32>) -> tensor<4x2x8x128xf32>
  return %0 : tensor<4x2x8x128xf32>
}

// CHECK-LABEL: func.func @stacked_on_one_axis
// CHECK:         "jaxpr.manual_computation"(%{{.*}}) ({
// CHECK:         }) {in_axes = {{\[}}["y"]], mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, out_axes = ["y"]} : (tensor<2xf32>) -> tensor<2xf32>
func.func @stacked_on_one_axis(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "jaxpr.manual_computation"(%x) ({
  ^bb0(%b: tensor<f32>):
    "jaxpr.yield"(%b) : (tensor<f32>) -> ()
  }) {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, out_axes = ["y"], in_axes = [["y"]]} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
