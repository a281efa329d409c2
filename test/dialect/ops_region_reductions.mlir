// RUN: mjax-opt %s --split-input-file | filecheck %s

// CHECK-LABEL: func.func @reduce_custom
// CHECK:         "jaxpr.reduce"(%{{.*}}, %{{.*}}) ({
// CHECK:           "jaxpr.yield"
// CHECK:         }) {dimensions = array<i64: 0>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>
func.func @reduce_custom(%x: tensor<3x4xf32>, %init: tensor<f32>) -> tensor<4xf32> {
  %0 = "jaxpr.reduce"(%x, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = "jaxpr.mul"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_window_variadic
// CHECK:         "jaxpr.reduce_window"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) ({
// CHECK:         }) {base_dilation = array<i64: 1, 1>, padding = [array<i64: 0, 0>, array<i64: 0, 1>], window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>}
func.func @reduce_window_variadic(%x: tensor<3x4xf32>, %i: tensor<3x4xi32>, %x0: tensor<f32>, %i0: tensor<i32>) -> (tensor<2x4xf32>, tensor<2x4xi32>) {
  %0:2 = "jaxpr.reduce_window"(%x, %i, %x0, %i0) ({
  ^bb0(%a: tensor<f32>, %ai: tensor<i32>, %b: tensor<f32>, %bi: tensor<i32>):
    %p = "jaxpr.ge"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %v = "jaxpr.select_n"(%p, %b, %a) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %k = "jaxpr.select_n"(%p, %bi, %ai) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    "jaxpr.yield"(%v, %k) : (tensor<f32>, tensor<i32>) -> ()
  }) {base_dilation = array<i64: 1, 1>, padding = [array<i64: 0, 0>, array<i64: 0, 1>], window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>} : (tensor<3x4xf32>, tensor<3x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<2x4xf32>, tensor<2x4xi32>)
  return %0#0, %0#1 : tensor<2x4xf32>, tensor<2x4xi32>
}
