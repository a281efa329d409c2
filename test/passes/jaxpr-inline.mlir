// RUN: mjax-opt %s --jaxpr-inline --split-input-file | filecheck %s

// A private callee is inlined (transitively); the public entry point stays.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[A:.*]]: tensor<f32>)
// CHECK:         %[[S:.*]] = "jaxpr.mul"(%[[A]], %[[A]])
// CHECK:         %[[T:.*]] = "jaxpr.sin"(%[[S]])
// CHECK-NOT:     jaxpr.call
// CHECK:         return %[[T]]
func.func private @sq(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.mul"(%x, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @sin_sq(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.call"(%x) {callee = @sq} : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.sin"(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func @main(%a: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.call"(%a) {callee = @sin_sq} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Calls of public functions and checkpoints are not inlined.
// CHECK-LABEL: func.func @keep
// CHECK:         "jaxpr.call"(%{{.*}}) {callee = @pub}
// CHECK:         "jaxpr.checkpoint"(%{{.*}}) {callee = @priv}
func.func @pub(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func private @priv(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.exp"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @keep(%a: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = "jaxpr.call"(%a) {callee = @pub} : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.checkpoint"(%a) {callee = @priv} : (tensor<f32>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}
