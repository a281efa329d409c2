// RUN: mjax-opt %s --split-input-file --verify-diagnostics
// One verifier error per chunk: jaxpr.manual_computation's stacked operands, axes and
// body (dialect/ops/manual.py).

func.func @operand_not_stacked(%x: tensor<3x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{jaxpr.manual_computation: operand 0 is f32[3,8]; it must be an array with leading dims (4,) (stacked along ('x',))}}
  %0 = "jaxpr.manual_computation"(%x) ({
  ^bb0(%b: tensor<8xf32>):
    "jaxpr.yield"(%b) : (tensor<8xf32>) -> ()
  }) {mesh_axes = ["x"], mesh_shape = array<i64: 4>, out_axes = ["x"], in_axes = [["x"]]} : (tensor<3x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @axis_not_in_mesh(%x: tensor<4x8xf32>) -> tensor<4x8xf32> {
  // expected-error @+1 {{jaxpr.manual_computation: out_axes ('z',) must be distinct axes of the mesh ('x',)}}
  %0 = "jaxpr.manual_computation"(%x) ({
  ^bb0(%b: tensor<4x8xf32>):
    "jaxpr.yield"(%b) : (tensor<4x8xf32>) -> ()
  }) {mesh_axes = ["x"], mesh_shape = array<i64: 4>, out_axes = ["z"], in_axes = [[]]} : (tensor<4x8xf32>) -> tensor<4x8xf32>
  return %0 : tensor<4x8xf32>
}

// -----

func.func @in_axes_out_of_order(%x: tensor<2x4x8xf32>) -> tensor<4x2x8xf32> {
  // expected-error @+1 {{jaxpr.manual_computation: in_axes[0] = ('y', 'x') must be a subsequence of out_axes ('x', 'y')}}
  %0 = "jaxpr.manual_computation"(%x) ({
  ^bb0(%b: tensor<8xf32>):
    "jaxpr.yield"(%b) : (tensor<8xf32>) -> ()
  }) {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>, out_axes = ["x", "y"], in_axes = [["y", "x"]]} : (tensor<2x4x8xf32>) -> tensor<4x2x8xf32>
  return %0 : tensor<4x2x8xf32>
}

// -----

func.func @body_takes_other_blocks(%x: tensor<4x8xf32>) -> tensor<4x4xf32> {
  // expected-error @+1 {{jaxpr.manual_computation body region arguments have types (f32[4]), expected (f32[8])}}
  %0 = "jaxpr.manual_computation"(%x) ({
  ^bb0(%b: tensor<4xf32>):
    "jaxpr.yield"(%b) : (tensor<4xf32>) -> ()
  }) {mesh_axes = ["x"], mesh_shape = array<i64: 4>, out_axes = ["x"], in_axes = [["x"]]} : (tensor<4x8xf32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
