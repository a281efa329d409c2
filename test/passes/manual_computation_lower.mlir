// RUN: mjax-opt %s --jaxpr-to-stablehlo | filecheck %s
// jaxpr.manual_computation lowers to sdy.manual_computation over the whole mesh (an
// sdy.mesh made where the module has none): a stacked operand's device dims merge into
// its block's first dim, split over them; a replicated one is whole; the body takes and
// gives each device's blocks (passes/rules/manual.py).

// CHECK: sdy.mesh @mesh = <["x"=4, "y"=2]>
// CHECK-LABEL: func.func @per_device
// CHECK:         %[[X:.*]] = stablehlo.reshape %{{.*}} : (tensor<4x2x8x128xf32>) -> tensor<64x128xf32>
// CHECK:         %[[M:.*]] = sdy.manual_computation(%[[X]], %{{.*}}) in_shardings=[<@mesh, [{"x", "y"}, {}]>, <@mesh, [{}]>] out_shardings=[<@mesh, [{"x", "y"}, {}]>] manual_axes={"x", "y"} (%[[B:.*]]: tensor<8x128xf32>, %[[V:.*]]: tensor<128xf32>) {
// CHECK:           stablehlo.broadcast_in_dim %[[V]]
// CHECK:           %[[S:.*]] = stablehlo.add %[[B]]
// CHECK:           sdy.return %[[S]] : tensor<8x128xf32>
// CHECK:         } : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>
// CHECK:         stablehlo.reshape %[[M]] : (tensor<64x128xf32>) -> tensor<4x2x8x128xf32>
func.func @per_device(%x: tensor<4x2x8x128xf32>, %w: tensor<128xf32>) -> tensor<4x2x8x128xf32> {
  %0 = "jaxpr.manual_computation"(%x, %w) ({
  ^bb0(%b: tensor<8x128xf32>, %v: tensor<128xf32>):
    %1 = "jaxpr.broadcast_in_dim"(%v) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 8, 128>} : (tensor<128xf32>) -> tensor<8x128xf32>
    %2 = "jaxpr.add"(%b, %1) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    "jaxpr.yield"(%2) : (tensor<8x128xf32>) -> ()
  }) {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, out_axes = ["x", "y"], in_axes = [["x", "y"], []]} : (tensor<4x2x8x128xf32>, tensor<128xf32>) -> tensor<4x2x8x128xf32>
  return %0 : tensor<4x2x8x128xf32>
}

// A scalar block keeps one dim per axis (each device's of size 1).
// CHECK-LABEL: func.func @scalar_blocks
// CHECK:         sdy.manual_computation(%{{.*}}) in_shardings=[<@mesh, [{"y"}]>] out_shardings=[<@mesh, [{"y"}]>] manual_axes={"x", "y"} (%[[A:.*]]: tensor<1xf32>) {
// CHECK:           %[[R:.*]] = stablehlo.reshape %[[A]] : (tensor<1xf32>) -> tensor<f32>
// CHECK:           %[[T:.*]] = stablehlo.reshape %[[R]] : (tensor<f32>) -> tensor<1xf32>
// CHECK:           sdy.return %[[T]] : tensor<1xf32>
// CHECK:         } : (tensor<2xf32>) -> tensor<2xf32>
func.func @scalar_blocks(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "jaxpr.manual_computation"(%x) ({
  ^bb0(%b: tensor<f32>):
    "jaxpr.yield"(%b) : (tensor<f32>) -> ()
  }) {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, out_axes = ["y"], in_axes = [["y"]]} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// Where layout ops made a stacked operand from a global value (the shard_map's split of
// it: here the columns over "x") and make a global value from a stacked result, the
// region takes and gives those values, sharded on the dims the mesh axes split, as JAX's
// shard_map lowers; the conversions left dead are erased (passes/rules/manual_layout.py).
// CHECK-LABEL: func.func @global_forms
// CHECK-SAME:    (%[[G:.*]]: tensor<16x512xf32>)
// CHECK-NEXT:    %[[M:.*]] = sdy.manual_computation(%[[G]]) in_shardings=[<@mesh, [{}, {"x"}]>] out_shardings=[<@mesh, [{}, {"x"}]>] manual_axes={"x", "y"} (%{{.*}}: tensor<16x128xf32>) {
// CHECK:         } : (tensor<16x512xf32>) -> tensor<16x512xf32>
// CHECK-NEXT:    return %[[M]] : tensor<16x512xf32>
func.func @global_forms(%g: tensor<16x512xf32>) -> tensor<16x512xf32> {
  %0 = "jaxpr.reshape"(%g) {new_sizes = array<i64: 16, 4, 128>} : (tensor<16x512xf32>) -> tensor<16x4x128xf32>
  %1 = "jaxpr.transpose"(%0) {permutation = array<i64: 1, 0, 2>} : (tensor<16x4x128xf32>) -> tensor<4x16x128xf32>
  %2 = "jaxpr.manual_computation"(%1) ({
  ^bb0(%b: tensor<16x128xf32>):
    "jaxpr.yield"(%b) : (tensor<16x128xf32>) -> ()
  }) {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, out_axes = ["x"], in_axes = [["x"]]} : (tensor<4x16x128xf32>) -> tensor<4x16x128xf32>
  %3 = "jaxpr.transpose"(%2) {permutation = array<i64: 1, 0, 2>} : (tensor<4x16x128xf32>) -> tensor<16x4x128xf32>
  %4 = "jaxpr.reshape"(%3) {new_sizes = array<i64: 16, 512>} : (tensor<16x4x128xf32>) -> tensor<16x512xf32>
  return %4 : tensor<16x512xf32>
}
