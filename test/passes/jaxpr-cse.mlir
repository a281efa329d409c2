// RUN: mjax-opt %s --jaxpr-cse | filecheck %s

// CHECK-LABEL: func.func @cse
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>)
// CHECK:         %[[C:.*]] = "jaxpr.cos"(%[[X]])
// CHECK-NOT:     "jaxpr.cos"
// CHECK:         %[[M:.*]] = "jaxpr.mul"(%[[C]], %[[C]])
// CHECK:         "jaxpr.checkpoint"
// CHECK:         "jaxpr.checkpoint"
// CHECK:         return %[[M]]
func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @cse(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>) {
  %0 = "jaxpr.cos"(%x) : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.cos"(%x) : (tensor<f32>) -> tensor<f32>
  %2 = "jaxpr.mul"(%0, %1) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %3 = "jaxpr.checkpoint"(%x) {callee = @f} : (tensor<f32>) -> tensor<f32>
  %4 = "jaxpr.checkpoint"(%x) {callee = @f} : (tensor<f32>) -> tensor<f32>
  return %2, %3, %4 : tensor<f32>, tensor<f32>, tensor<f32>
}
