// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// The computation region becomes the reducer body, lowered in place (one multiply prints
// in stablehlo's compact "applies" form).
// CHECK-LABEL: func.func @reduce_custom
// CHECK-SAME:    (%[[X:.*]]: tensor<3x4xf32>, %[[I:.*]]: tensor<f32>)
// CHECK:         %[[R:.*]] = stablehlo.reduce(%[[X]] init: %[[I]]) applies stablehlo.multiply across dimensions = [0]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @reduce_custom(%x: tensor<3x4xf32>, %init: tensor<f32>) -> tensor<4xf32> {
  %0 = "jaxpr.reduce"(%x, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = "jaxpr.mul"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_window_custom
// CHECK:         "stablehlo.reduce_window"(%{{.*}}, %{{.*}}) <{base_dilations = array<i64: 1, 2>, padding = dense<{{\[\[}}0, 0], [0, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>}>
// CHECK:           stablehlo.multiply
// CHECK-NOT:     jaxpr.
func.func @reduce_window_custom(%x: tensor<3x4xf32>, %init: tensor<f32>) -> tensor<2x7xf32> {
  %0 = "jaxpr.reduce_window"(%x, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = "jaxpr.mul"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) {base_dilation = array<i64: 1, 2>, padding = [array<i64: 0, 0>, array<i64: 0, 1>], window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>} : (tensor<3x4xf32>, tensor<f32>) -> tensor<2x7xf32>
  return %0 : tensor<2x7xf32>
}
