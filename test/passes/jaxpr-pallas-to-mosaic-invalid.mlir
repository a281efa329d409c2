// RUN: mjax-opt %s --split-input-file --verify-diagnostics --jaxpr-pallas-to-mosaic

// An op without a Mosaic rule is an error at its line, naming the op and the reason.
func.func private @rev_kernel(%x: memref<8x128xf32>, %o: memref<8x128xf32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.ref_get"(%x, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  // expected-error@+1 {{no Mosaic lowering rule for 'jaxpr.rev' in a Pallas TPU kernel}}
  %s = "jaxpr.rev"(%v) {dimensions = array<i64: 0>} : (tensor<8x128xf32>) -> tensor<8x128xf32>
  %old = "jaxpr.ref_swap"(%o, %s, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  return
}
func.func private @map() -> (tensor<i32>, tensor<i32>) {
  %0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %0, %0 : tensor<i32>, tensor<i32>
}
func.func @main(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %0 = "jaxpr.pallas_call"(%x) {callee = @rev_kernel, name = "rev_kernel", grid = array<i64>,
      in_specs = [{block_shape = array<i64: 8, 128>, index_map = @map}],
      out_specs = [{block_shape = array<i64: 8, 128>, index_map = @map}],
      interpret = false} : (tensor<8x128xf32>) -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// Atomics are a GPU feature: the reason says what to use on a TPU.
func.func private @atomic_kernel(%x: memref<8x128xf32>, %o: memref<8x128xf32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.ref_get"(%x, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  %m = "jaxpr.constant"() {value = dense<true> : tensor<8x128xi1>} : () -> tensor<8x128xi1>
  // expected-error@+1 {{'jaxpr.atomic_rmw' in a Pallas TPU kernel: atomics are a GPU feature}}
  %old = "jaxpr.atomic_rmw"(%o, %v, %m, %c0, %c0) {kind = "add", sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<8x128xf32>, tensor<8x128xi1>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  return
}
func.func private @map() -> (tensor<i32>, tensor<i32>) {
  %0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %0, %0 : tensor<i32>, tensor<i32>
}
func.func @main(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %0 = "jaxpr.pallas_call"(%x) {callee = @atomic_kernel, name = "atomic_kernel", grid = array<i64>,
      in_specs = [{block_shape = array<i64: 8, 128>, index_map = @map}],
      out_specs = [{block_shape = array<i64: 8, 128>, index_map = @map}],
      interpret = false} : (tensor<8x128xf32>) -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// TPU blocks tile (8, 128): a block's last two dims are divisible by them or whole.
func.func private @k(%x: memref<4x128xf32>, %o: memref<4x128xf32>) {
  return
}
func.func private @map(%i: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %i, %c0 : tensor<i32>, tensor<i32>
}
func.func @main(%x: tensor<16x128xf32>) -> tensor<16x128xf32> {
  // expected-error@+1 {{the last two dimensions of a TPU block must be divisible by 8 and 128 respectively, or equal the array's (block shape (4, 128) of an array of shape (16, 128))}}
  %0 = "jaxpr.pallas_call"(%x) {callee = @k, name = "k", grid = array<i64: 4>,
      in_specs = [{block_shape = array<i64: 4, 128>, index_map = @map}],
      out_specs = [{block_shape = array<i64: 4, 128>, index_map = @map}],
      interpret = false} : (tensor<16x128xf32>) -> tensor<16x128xf32>
  return %0 : tensor<16x128xf32>
}
