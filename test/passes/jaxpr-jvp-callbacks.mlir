// RUN: mjax-opt %s --jaxpr-jvp --split-input-file | filecheck %s

// A debug callback sees the primal values; tangents pass it by. A pure callback on a
// value without tangent is copied unchanged.
// CHECK-LABEL: func.func private @f_jvp
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>, %[[C:.*]]: tensor<f32>, %[[T:.*]]: tensor<f32>)
// CHECK:         "jaxpr.callback"(%[[X]]) {callback_id = 1 : i64, effect = "debug"} : (tensor<f32>) -> ()
// CHECK:         %[[P:.*]] = "jaxpr.callback"(%[[C]]) {callback_id = 2 : i64, effect = "pure"
// CHECK:         "jaxpr.mul"(%[[T]], %[[P]])
func.func private @f(%x: tensor<f32>, %c: tensor<f32>) -> tensor<f32> {
  "jaxpr.callback"(%x) {callback_id = 1 : i64, effect = "debug"} : (tensor<f32>) -> ()
  %p = "jaxpr.callback"(%c) {callback_id = 2 : i64, effect = "pure", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  %0 = "jaxpr.mul"(%x, %p) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @callback_jvp(%x: tensor<f32>, %c: tensor<f32>, %t: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0:2 = "jaxpr.jvp"(%x, %c, %t) {callee = @f, diff_args = array<i64: 0>} : (tensor<f32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#0, %0#1 : tensor<f32>, tensor<f32>
}
