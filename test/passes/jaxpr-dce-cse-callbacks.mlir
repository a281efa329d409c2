// RUN: mjax-opt %s --jaxpr-dce --jaxpr-cse --split-input-file | filecheck %s

// An unused pure callback goes (as JAX drops it); effectful ones stay although nothing
// uses their results.
// CHECK-LABEL: func.func @callback_dce
// CHECK-NOT:     effect = "pure"
// CHECK:         effect = "unordered"
// CHECK:         effect = "ordered"
// CHECK:         effect = "debug"
// CHECK-NOT:     effect = "pure"
// CHECK:         return
func.func @callback_dce(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.callback"(%x) {callback_id = 0 : i64, effect = "pure", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.callback"(%x) {callback_id = 1 : i64, effect = "unordered", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  %2 = "jaxpr.callback"(%x) {callback_id = 2 : i64, effect = "ordered", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  "jaxpr.callback"(%x) {callback_id = 3 : i64, effect = "debug"} : (tensor<f32>) -> ()
  return %x : tensor<f32>
}

// -----

// Identical pure callbacks merge; identical effectful ones do not.
// CHECK-LABEL: func.func @callback_cse
// CHECK-COUNT-1: effect = "pure"
// CHECK-COUNT-2: effect = "unordered"
// CHECK:         return
func.func @callback_cse(%x: tensor<f32>) -> (tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>) {
  %0 = "jaxpr.callback"(%x) {callback_id = 0 : i64, effect = "pure", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.callback"(%x) {callback_id = 0 : i64, effect = "pure", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  %2 = "jaxpr.callback"(%x) {callback_id = 1 : i64, effect = "unordered", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  %3 = "jaxpr.callback"(%x) {callback_id = 1 : i64, effect = "unordered", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  return %0, %1, %2, %3 : tensor<f32>, tensor<f32>, tensor<f32>, tensor<f32>
}

// -----

// A cond or call whose body has an effect stays although its results are unused (and
// two such calls are not merged); one whose body is pure goes.
// CHECK-LABEL: func.func @callback_in_bodies
// CHECK:         "jaxpr.cond"
// CHECK:           effect = "debug"
// CHECK:         "jaxpr.call"(%{{.*}}) {callee = @prints}
// CHECK-NEXT:    "jaxpr.call"(%{{.*}}) {callee = @prints}
// CHECK-NEXT:    return
func.func private @prints(%x: tensor<f32>) -> tensor<f32> {
  "jaxpr.callback"(%x) {callback_id = 4 : i64, effect = "debug"} : (tensor<f32>) -> ()
  return %x : tensor<f32>
}
func.func private @quiet(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @callback_in_bodies(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    "jaxpr.callback"(%a) {callback_id = 5 : i64, effect = "debug"} : (tensor<f32>) -> ()
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.call"(%x) {callee = @prints} : (tensor<f32>) -> tensor<f32>
  %2 = "jaxpr.call"(%x) {callee = @quiet} : (tensor<f32>) -> tensor<f32>
  %3 = "jaxpr.call"(%x) {callee = @prints} : (tensor<f32>) -> tensor<f32>
  return %x : tensor<f32>
}
