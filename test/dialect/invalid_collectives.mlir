// RUN: mjax-opt %s --split-input-file --verify-diagnostics

func.func @psum_axes_not_names(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'jaxpr.psum' op attribute 'axes' must be a non-empty sequence of axis names (strings), got (1,)}}
  %0 = "jaxpr.psum"(%x) {axes = array<i64: 1>} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @psum_repeated_name(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{psum: axis names must not repeat, got ('i', 'i')}}
  %0 = "jaxpr.psum"(%x) {axes = ["i", "i"]} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @all_gather_axis_out_of_range(%x: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{all_gather: axis 2 is out of range for rank 2}}
  %0 = "jaxpr.all_gather"(%x) {axes = ["i"], axis = 2 : i64, axis_size = 4 : i64, tiled = false} : (tensor<3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @psum_scatter_size_mismatch(%x: tensor<3x2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{psum_scatter: dimension 0 of shape (3, 2) must equal the axis size 4, got 3}}
  %0 = "jaxpr.psum_scatter"(%x) {axes = ["i"], axis_size = 4 : i64, scatter_dimension = 0 : i64, tiled = false} : (tensor<3x2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @all_to_all_not_divisible(%x: tensor<3x2xf32>) -> tensor<1x4xf32> {
  // expected-error @+1 {{all_to_all: split_axis 0 of shape (3, 2) (size 3) must be divisible by the axis size 2}}
  %0 = "jaxpr.all_to_all"(%x) {axes = ["i"], axis_size = 2 : i64, concat_axis = 1 : i64, split_axis = 0 : i64, tiled = true} : (tensor<3x2xf32>) -> tensor<1x4xf32>
  return %0 : tensor<1x4xf32>
}

// -----

func.func @ppermute_repeated_destination(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{ppermute: perm sources and destinations must be unique, got ((0, 1), (2, 1))}}
  %0 = "jaxpr.ppermute"(%x) {axes = ["i"], perm = [array<i64: 0, 1>, array<i64: 2, 1>]} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @axis_index_two_names() -> tensor<i32> {
  // expected-error @+1 {{axis_index takes one axis name, got ('i', 'j')}}
  %0 = "jaxpr.axis_index"() {axes = ["i", "j"]} : () -> tensor<i32>
  return %0 : tensor<i32>
}
