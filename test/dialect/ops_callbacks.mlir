// RUN: mjax-opt %s --jaxpr-verify --split-input-file | filecheck %s

// CHECK-LABEL: func.func @callback_pure
// CHECK:         "jaxpr.callback"(%{{.*}}) {callback_id = 3 : i64, effect = "pure", result_dtypes = [f32, i32], result_shapes = [array<i64: 3>, array<i64>]} : (tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>)
func.func @callback_pure(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>) {
  %0:2 = "jaxpr.callback"(%x) {callback_id = 3 : i64, effect = "pure", result_shapes = [array<i64: 3>, array<i64>], result_dtypes = [f32, i32]} : (tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<i32>
}

// -----

// CHECK-LABEL: func.func @callback_effects
// CHECK:         "jaxpr.callback"(%{{.*}}) {callback_id = 0 : i64, effect = "debug"} : (tensor<2xf32>) -> ()
// CHECK:         "jaxpr.callback"(%{{.*}}) {callback_id = 1 : i64, effect = "debug_ordered"} : (tensor<2xf32>) -> ()
// CHECK:         "jaxpr.callback"() {callback_id = 2 : i64, effect = "unordered", result_dtypes = [f32], result_shapes = [array<i64: 2>]} : () -> tensor<2xf32>
// CHECK:         "jaxpr.callback"(%{{.*}}) {callback_id = 3 : i64, effect = "ordered", result_dtypes = [f32], result_shapes = [array<i64: 2>]}
// CHECK:         "jaxpr.callback"(%{{.*}}) {callback_id = 4 : i64, effect = "pure", result_dtypes = [f32], result_shapes = [array<i64: 2>], vmap_method = "expand_dims"}
func.func @callback_effects(%x: tensor<2xf32>) -> tensor<2xf32> {
  "jaxpr.callback"(%x) {callback_id = 0 : i64, effect = "debug"} : (tensor<2xf32>) -> ()
  "jaxpr.callback"(%x) {callback_id = 1 : i64, effect = "debug_ordered"} : (tensor<2xf32>) -> ()
  %0 = "jaxpr.callback"() {callback_id = 2 : i64, effect = "unordered", result_shapes = [array<i64: 2>], result_dtypes = [f32]} : () -> tensor<2xf32>
  %1 = "jaxpr.callback"(%0) {callback_id = 3 : i64, effect = "ordered", result_shapes = [array<i64: 2>], result_dtypes = [f32]} : (tensor<2xf32>) -> tensor<2xf32>
  %2 = "jaxpr.callback"(%1) {callback_id = 4 : i64, effect = "pure", result_shapes = [array<i64: 2>], result_dtypes = [f32], vmap_method = "expand_dims"} : (tensor<2xf32>) -> tensor<2xf32>
  return %2 : tensor<2xf32>
}
