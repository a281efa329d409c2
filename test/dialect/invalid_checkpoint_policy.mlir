// RUN: mjax-opt %s --jaxpr-verify --split-input-file --verify-diagnostics

func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @checkpoint_unknown_policy(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{policy}}
  %0 = "jaxpr.checkpoint"(%x) {callee = @f, policy = "save_what_i_like"} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A known policy round-trips.
func.func private @g(%x: tensor<f32>) -> tensor<f32> {
  return %x : tensor<f32>
}
func.func @checkpoint_policy(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.checkpoint"(%x) {callee = @g, policy = "everything_saveable"} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

func.func @checkpoint_name_without_name(%x: tensor<f32>) -> tensor<f32> {
  // expected-error @+1 {{name}}
  %0 = "jaxpr.checkpoint_name"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
