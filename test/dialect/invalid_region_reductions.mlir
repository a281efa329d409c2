// RUN: mjax-opt %s --split-input-file --verify-diagnostics

func.func @reduce_c1_init_dtype(%x: tensor<3x4xf32>, %init: tensor<i32>) -> tensor<4xf32> {
  // expected-error @+1 {{jaxpr.reduce init value 0 must be a scalar of its operand's dtype float32, got i32[]}}
  %0 = "jaxpr.reduce"(%x, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<3x4xf32>, tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_c2_body_yield(%x: tensor<3x4xf32>, %init: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{jaxpr.reduce computation must yield (f32[]), got (f32[], f32[])}}
  %0 = "jaxpr.reduce"(%x, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    "jaxpr.yield"(%a, %b) : (tensor<f32>, tensor<f32>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_window_c1_window(%x: tensor<3x4xf32>, %init: tensor<f32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{jaxpr.reduce_window got the wrong number of window_dimensions for operand of rank 2: got window_dimensions (2,)}}
  %0 = "jaxpr.reduce_window"(%x, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
  }) {base_dilation = array<i64: 1, 1>, padding = [array<i64: 0, 0>, array<i64: 0, 0>], window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 2>, window_strides = array<i64: 1, 1>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
