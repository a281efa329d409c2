// RUN: mjax-opt %s --jaxpr-verify --split-input-file --verify-diagnostics

func.func @callback_unknown_effect(%x: tensor<f32>) {
  // expected-error @+1 {{attribute 'effect' must be one of 'pure', 'unordered', 'ordered', 'debug', 'debug_ordered'}}
  "jaxpr.callback"(%x) {callback_id = 0 : i64, effect = "loud"} : (tensor<f32>) -> ()
  return
}

// -----

func.func @callback_result_type(%x: tensor<f32>) -> tensor<2xf32> {
  // expected-error @+1 {{result 0 has type tensor<2xf32>, but the operands give tensor<3xf32>}}
  %0 = "jaxpr.callback"(%x) {callback_id = 0 : i64, effect = "pure", result_shapes = [array<i64: 3>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @callback_shapes_dtypes_mismatch(%x: tensor<f32>) -> tensor<3xf32> {
  // expected-error @+1 {{has 1 result_shapes but 2 result_dtypes}}
  %0 = "jaxpr.callback"(%x) {callback_id = 0 : i64, effect = "pure", result_shapes = [array<i64: 3>], result_dtypes = [f32, f32]} : (tensor<f32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @callback_debug_results(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{a debug callback has no results, got 1}}
  %0 = "jaxpr.callback"(%x) {callback_id = 0 : i64, effect = "debug", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @callback_vmap_method_not_pure(%x: tensor<f32>) {
  // expected-error @+1 {{vmap_method is only for pure callbacks, got effect 'unordered'}}
  "jaxpr.callback"(%x) {callback_id = 0 : i64, effect = "unordered", vmap_method = "sequential"} : (tensor<f32>) -> ()
  return
}

// -----

func.func @callback_missing_id(%x: tensor<f32>) {
  // expected-error @+1 {{requires attribute 'callback_id'}}
  "jaxpr.callback"(%x) {effect = "debug"} : (tensor<f32>) -> ()
  return
}
