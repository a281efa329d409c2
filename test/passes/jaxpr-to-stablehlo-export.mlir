// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// The exported module's @main is cloned in as a private function (once, however many
// calls there are) and called.
// CHECK-LABEL: func.func @call_exported_twice
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>)
// CHECK:         %[[A:.*]] = call @[[F:exported_f_[0-9a-f]+_main]](%[[X]])
// CHECK:         %[[B:.*]] = call @[[F]](%[[A]])
// CHECK:         return %[[B]]
// CHECK:       func.func private @[[F]](%{{.*}}: tensor<3xf32>) -> tensor<3xf32>
// CHECK:         stablehlo.sine
// CHECK-NOT:   func.func private @exported_f
// CHECK-NOT:   jaxpr.
func.func @call_exported_twice(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.call_exported"(%x) {fun_name = "f", module = "module { func.func @main(%arg0: tensor<3xf32>) -> tensor<3xf32> { %0 = stablehlo.sine %arg0 : tensor<3xf32> \0A return %0 : tensor<3xf32> } }", result_shapes = [array<i64: 3>], result_dtypes = [f32]} : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.call_exported"(%0) {fun_name = "f", module = "module { func.func @main(%arg0: tensor<3xf32>) -> tensor<3xf32> { %0 = stablehlo.sine %arg0 : tensor<3xf32> \0A return %0 : tensor<3xf32> } }", result_shapes = [array<i64: 3>], result_dtypes = [f32]} : (tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}

// -----

// A module exported for several platforms gets the platform index as a constant first.
// CHECK-LABEL: func.func @call_exported_platform_index
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>)
// CHECK:         %[[I:.*]] = stablehlo.constant dense<1> : tensor<i32>
// CHECK:         call @exported_g_{{[0-9a-f]+}}_main(%[[I]], %[[X]])
// CHECK-NOT:   jaxpr.
func.func @call_exported_platform_index(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.call_exported"(%x) {fun_name = "g", module = "module { func.func @main(%arg0: tensor<i32>, %arg1: tensor<f32>) -> tensor<f32> { return %arg1 : tensor<f32> } }", platform_index = 1 : i64, result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
