// RUN: mjax-opt %s --jaxpr-expand-transforms --split-input-file --verify-diagnostics
// Transformations a host callback refuses, with JAX's messages, at the callback's line.

func.func private @pure(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{Pure callbacks do not support JVP. Please use `jax.custom_jvp` to use callbacks while taking gradients.}}
  %0 = "jaxpr.callback"(%x) {callback_id = 1 : i64, effect = "pure", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @callback_pure_jvp(%x: tensor<f32>, %t: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0:2 = "jaxpr.jvp"(%x, %t) {callee = @pure} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#0, %0#1 : tensor<f32>, tensor<f32>
}

// -----

func.func private @io(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{IO callbacks do not support JVP.}}
  %0 = "jaxpr.callback"(%x) {callback_id = 1 : i64, effect = "unordered", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @callback_io_vjp(%x: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @io} : (tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func private @no_method(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{vmap is only supported for the pure_callback primitive when vmap_method is one of 'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or 'legacy_vectorized'. Got vmap_method=None.}}
  %0 = "jaxpr.callback"(%x) {callback_id = 1 : i64, effect = "pure", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @callback_vmap_without_method(%xs: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @no_method, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 4 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func private @ordered(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{Cannot `vmap` ordered IO callback.}}
  %0 = "jaxpr.callback"(%x) {callback_id = 1 : i64, effect = "ordered", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @callback_vmap_ordered_io(%xs: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @ordered, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 4 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
