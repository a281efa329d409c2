// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file --verify-diagnostics

// Outside every vmap a named axis is unbound: lowering names the op and its axis (device
// collectives under pmap/shard_map are a later issue).
func.func @psum_unbound_axis(%x: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{'jaxpr.psum' op names axis 'i', which no enclosing vmap binds; collectives over device axes (pmap, shard_map) cannot be lowered yet}}
  %0 = "jaxpr.psum"(%x) {axes = ["i"]} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @axis_index_unbound_axis() -> tensor<i32> {
  // expected-error @+1 {{'jaxpr.axis_index' op names axis 'j', which no enclosing vmap binds}}
  %0 = "jaxpr.axis_index"() {axes = ["j"]} : () -> tensor<i32>
  return %0 : tensor<i32>
}
