// RUN: mjax-opt %s --jaxpr-dce --split-input-file | filecheck %s

// Dead pure ops go (transitively); live ones stay.
// CHECK-LABEL: func.func @dead_ops
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>)
// CHECK-NEXT:    %[[Y:.*]] = "jaxpr.exp"(%[[X]])
// CHECK-NEXT:    return %[[Y]]
func.func @dead_ops(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.mul"(%0, %0) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  %2 = "jaxpr.exp"(%x) : (tensor<f32>) -> tensor<f32>
  return %2 : tensor<f32>
}

// -----

// Unreferenced private functions go, also once their last caller went; public and
// referenced ones stay.
// CHECK-NOT:     @unused
// CHECK-NOT:     @only_from_dead
// CHECK-LABEL:   func.func private @used
// CHECK-LABEL:   func.func @entry
// CHECK:         "jaxpr.call"(%{{.*}}) {callee = @used}
func.func private @only_from_dead(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func private @unused(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.call"(%x) {callee = @only_from_dead} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @used(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @entry(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.call"(%x) {callee = @used} : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.call"(%x) {callee = @unused} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
