// RUN: mjax-opt %s --load-pass-plugin=%S/../../examples/passes/strip_debug_prints.py --strip-debug-prints | filecheck %s
// RUN: mjax-opt %s --load-pass-plugin=%S/../../examples/passes/strip_debug_prints.py --strip-debug-prints --jaxpr-to-stablehlo | filecheck %s --check-prefix=HLO

// Debug callbacks go (in called functions too); the pure callback stays.
// CHECK-LABEL: func.func @main
// CHECK-NOT:     effect = "debug
// CHECK:         "jaxpr.callback"(%{{.*}}) {callback_id = 1 : i64, effect = "pure"
// CHECK-NOT:     effect = "debug
// CHECK-LABEL: func.func private @helper
// CHECK-NOT:     jaxpr.callback
// CHECK:         return

// HLO-NOT: debug
// HLO:     stablehlo.custom_call

module {
  func.func @main(%arg0: tensor<f32>) -> tensor<f32> {
    "jaxpr.callback"(%arg0) {callback_id = 0 : i64, effect = "debug"} : (tensor<f32>) -> ()
    %0 = "jaxpr.callback"(%arg0) {callback_id = 1 : i64, effect = "pure", result_dtypes = [f32], result_shapes = [array<i64>]} : (tensor<f32>) -> tensor<f32>
    %1 = "jaxpr.call"(%0) {callee = @helper} : (tensor<f32>) -> tensor<f32>
    return %1 : tensor<f32>
  }
  func.func private @helper(%arg0: tensor<f32>) -> tensor<f32> {
    "jaxpr.callback"(%arg0) {callback_id = 2 : i64, effect = "debug_ordered"} : (tensor<f32>) -> ()
    %0 = "jaxpr.mul"(%arg0, %arg0) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    return %0 : tensor<f32>
  }
}
