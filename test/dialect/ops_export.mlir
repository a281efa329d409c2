// RUN: mjax-opt %s --jaxpr-verify --split-input-file | filecheck %s

// CHECK-LABEL: func.func @call_exported_one_result
// CHECK:         "jaxpr.call_exported"(%{{.*}}) {fun_name = "f", module = "module {{.*}}", result_dtypes = [f32], result_shapes = [array<i64: 3>]} : (tensor<3xf32>) -> tensor<3xf32>
func.func @call_exported_one_result(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.call_exported"(%x) {fun_name = "f", module = "module { func.func @main(%arg0: tensor<3xf32>) -> tensor<3xf32> { %0 = stablehlo.sine %arg0 : tensor<3xf32> \0A return %0 : tensor<3xf32> } }", result_shapes = [array<i64: 3>], result_dtypes = [f32]} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @call_exported_platform_index
// CHECK:         "jaxpr.call_exported"(%{{.*}}, %{{.*}}) {fun_name = "g", module = "{{.*}}", platform_index = 1 : i64, result_dtypes = [bf16], result_shapes = [array<i64>]}
func.func @call_exported_platform_index(%x: tensor<f32>, %y: tensor<i8>) -> tensor<bf16> {
  %0 = "jaxpr.call_exported"(%x, %y) {fun_name = "g", module = "module { func.func @main(%arg0: tensor<i32>, %arg1: tensor<f32>, %arg2: tensor<i8>) -> tensor<bf16> { %0 = stablehlo.convert %arg2 : (tensor<i8>) -> tensor<bf16> \0A return %0 : tensor<bf16> } }", platform_index = 1 : i64, result_shapes = [array<i64>], result_dtypes = [bf16]} : (tensor<f32>, tensor<i8>) -> tensor<bf16>
  return %0 : tensor<bf16>
}
