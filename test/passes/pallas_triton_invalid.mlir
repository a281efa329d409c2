// RUN: mjax-opt %s --split-input-file --verify-diagnostics --jaxpr-pallas-to-triton

// An op without a Triton rule is an error at its line, naming the op.
func.func private @rev_kernel(%x: memref<128xf32>, %o: memref<128xf32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.ref_get"(%x, %c0) {sizes = array<i64: 128>, squeezed = array<i64>} : (memref<128xf32>, tensor<i32>) -> tensor<128xf32>
  // expected-error@+1 {{no Triton lowering rule for 'jaxpr.rev' in a Pallas kernel}}
  %s = "jaxpr.rev"(%v) {dimensions = array<i64: 0>} : (tensor<128xf32>) -> tensor<128xf32>
  %old = "jaxpr.ref_swap"(%o, %s, %c0) {sizes = array<i64: 128>, squeezed = array<i64>} : (memref<128xf32>, tensor<128xf32>, tensor<i32>) -> tensor<128xf32>
  return
}
func.func private @map(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @main(%x: tensor<256xf32>) -> tensor<256xf32> {
  %0 = "jaxpr.pallas_call"(%x) {callee = @rev_kernel, name = "rev_kernel", grid = array<i64: 2>,
      in_specs = [{block_shape = array<i64: 128>, index_map = @map}],
      out_specs = [{block_shape = array<i64: 128>, index_map = @map}],
      interpret = false} : (tensor<256xf32>) -> tensor<256xf32>
  return %0 : tensor<256xf32>
}

// -----

// Triton tensors have power-of-2 sizes.
func.func private @odd_kernel(%x: memref<100xf32>, %o: memref<100xf32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error@+1 {{the Triton lowering needs power-of-2 block dimensions, but a ref access has shape (100,)}}
  %v = "jaxpr.ref_get"(%x, %c0) {sizes = array<i64: 100>, squeezed = array<i64>} : (memref<100xf32>, tensor<i32>) -> tensor<100xf32>
  %old = "jaxpr.ref_swap"(%o, %v, %c0) {sizes = array<i64: 100>, squeezed = array<i64>} : (memref<100xf32>, tensor<100xf32>, tensor<i32>) -> tensor<100xf32>
  return
}
func.func private @map(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @main(%x: tensor<200xf32>) -> tensor<200xf32> {
  %0 = "jaxpr.pallas_call"(%x) {callee = @odd_kernel, name = "odd_kernel", grid = array<i64: 2>,
      in_specs = [{block_shape = array<i64: 100>, index_map = @map}],
      out_specs = [{block_shape = array<i64: 100>, index_map = @map}],
      interpret = false} : (tensor<200xf32>) -> tensor<200xf32>
  return %0 : tensor<200xf32>
}

// -----

// Scratch buffers would live in shared memory, which the lowering does not manage.
func.func private @scratch_kernel(%x: memref<128xf32>, %o: memref<128xf32>, %s: memref<128xf32>) {
  return
}
func.func private @map(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @main(%x: tensor<128xf32>) -> tensor<128xf32> {
  // expected-error@+1 {{scratch buffers are not supported by the Triton lowering}}
  %0 = "jaxpr.pallas_call"(%x) {callee = @scratch_kernel, name = "scratch_kernel", grid = array<i64: 1>,
      in_specs = [{block_shape = array<i64: 128>, index_map = @map}],
      out_specs = [{block_shape = array<i64: 128>, index_map = @map}],
      scratch_shapes = [memref<128xf32>],
      interpret = false} : (tensor<128xf32>) -> tensor<128xf32>
  return %0 : tensor<128xf32>
}

// -----

// interpret = true calls are left for --jaxpr-pallas-interpret (no diagnostic).
func.func private @kept_kernel(%x: memref<128xf32>, %o: memref<128xf32>) {
  return
}
func.func private @map(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @main(%x: tensor<128xf32>) -> tensor<128xf32> {
  %0 = "jaxpr.pallas_call"(%x) {callee = @kept_kernel, name = "kept_kernel", grid = array<i64: 1>,
      in_specs = [{block_shape = array<i64: 128>, index_map = @map}],
      out_specs = [{block_shape = array<i64: 128>, index_map = @map}],
      interpret = true} : (tensor<128xf32>) -> tensor<128xf32>
  return %0 : tensor<128xf32>
}
