// RUN: mjax-opt %s --jaxpr-verify --split-input-file | filecheck %s

// A user-defined primitive: its name, its rule handle (names the Python rules of the
// process that staged it) and its parameters shown as text; the result types declared.
// CHECK-LABEL: func.func @multiply_add
// CHECK:         "jaxpr.custom_primitive"(%{{.*}}, %{{.*}}, %{{.*}}) {name = "multiply_add", params = {axis = "0"}, result_dtypes = [f32], result_shapes = [array<i64: 3>], rule = "multiply_add#7"} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
func.func @multiply_add(%x: tensor<3xf32>, %y: tensor<3xf32>, %z: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.custom_primitive"(%x, %y, %z) {name = "multiply_add", rule = "multiply_add#7", params = {axis = "0"}, result_shapes = [array<i64: 3>], result_dtypes = [f32]} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @two_results
// CHECK:         "jaxpr.custom_primitive"(%{{.*}}) {name = "split_half", result_dtypes = [f32, i32], result_shapes = [array<i64: 2>, array<i64>]} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<i32>)
func.func @two_results(%x: tensor<4xf32>) -> (tensor<2xf32>, tensor<i32>) {
  %0:2 = "jaxpr.custom_primitive"(%x) {name = "split_half", result_shapes = [array<i64: 2>, array<i64>], result_dtypes = [f32, i32]} : (tensor<4xf32>) -> (tensor<2xf32>, tensor<i32>)
  return %0#0, %0#1 : tensor<2xf32>, tensor<i32>
}

// -----

// With effects (declared by def_effectful_abstract_eval): kept by DCE, even unused.
// CHECK-LABEL: func.func @effects
// CHECK:         "jaxpr.custom_primitive"(%{{.*}}) {effects = "Noise", name = "noisy", result_dtypes = [f32], result_shapes = [array<i64>]}
func.func @effects(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.custom_primitive"(%x) {name = "noisy", effects = "Noise", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  return %x : tensor<f32>
}
