// RUN: mjax-opt %s --split-input-file --verify-diagnostics --jaxpr-pallas-interpret="platform=cpu"

// Compiled for a CPU (no Pallas compiler), a call that does not ask for interpret mode
// is an error at its line, as in JAX.
func.func private @add_kernel(%x: memref<8xf32>, %o: memref<8xf32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.ref_get"(%x, %c0) {sizes = array<i64: 8>, squeezed = array<i64>} : (memref<8xf32>, tensor<i32>) -> tensor<8xf32>
  %old = "jaxpr.ref_swap"(%o, %v, %c0) {sizes = array<i64: 8>, squeezed = array<i64>} : (memref<8xf32>, tensor<8xf32>, tensor<i32>) -> tensor<8xf32>
  return
}
func.func private @map(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error@+1 {{Only interpret mode is supported on CPU backend.}}
  %0 = "jaxpr.pallas_call"(%x) {callee = @add_kernel, name = "add_kernel", grid = array<i64: 2>,
      in_specs = [{block_shape = array<i64: 8>, index_map = @map}],
      out_specs = [{block_shape = array<i64: 8>, index_map = @map}],
      interpret = false} : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
