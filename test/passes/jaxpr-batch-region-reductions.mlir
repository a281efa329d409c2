// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// The batch axis goes in front and is not reduced; the scalar body is cloned unchanged
// and the unbatched init value stays unbatched.
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[XS:.*]]: tensor<4x3x5xf32>, %[[I:.*]]: tensor<f32>) -> tensor<4x3xf32>
// CHECK:         %[[R:.*]] = "jaxpr.reduce"(%[[XS]], %[[I]]) ({
// CHECK:           "jaxpr.mul"
// CHECK:         }) {dimensions = array<i64: 2>} : (tensor<4x3x5xf32>, tensor<f32>) -> tensor<4x3xf32>
// CHECK:         return %[[R]]
func.func private @f(%x: tensor<3x5xf32>, %init: tensor<f32>) -> tensor<3xf32> {
  %0 = "jaxpr.reduce"(%x, %init) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = "jaxpr.mul"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<3x5xf32>, tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @reduce_batched_operand(%xs: tensor<4x3x5xf32>, %init: tensor<f32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.vmap"(%xs, %init) {callee = @f, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 4 : i64} : (tensor<4x3x5xf32>, tensor<f32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
