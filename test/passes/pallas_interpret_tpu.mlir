// RUN: mjax-opt %s --jaxpr-pallas-interpret --jaxpr-verify --split-input-file | filecheck %s

// Interpret mode of the Pallas TPU features: a DMA is a copy that adds 1 to its
// semaphore, a wait subtracts 1; scalar-prefetch operands reach the kernel and the
// (discharged) index maps whole; a dynamic grid bound is a loop bound.

// CHECK-LABEL: func.func private @kernel_interpret(%{{.*}}: tensor<i32>, %{{.*}}: tensor<i32>, %{{.*}}: tensor<4xi32>, %{{.*}}: tensor<32x128xf32>, %{{.*}}: tensor<8x128xf32>, %{{.*}}: tensor<8x128xf32>, %{{.*}}: tensor<i32>) -> (tensor<4xi32>, tensor<32x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<i32>)
// CHECK-NOT:     jaxpr.dma_
// CHECK:         "jaxpr.dynamic_slice"
// CHECK-NOT:     jaxpr.dma_
// CHECK:         return
// CHECK-LABEL: func.func private @imap_interpret(%{{.*}}: tensor<i32>, %{{.*}}: tensor<4xi32>) -> (tensor<i32>, tensor<i32>, tensor<4xi32>)
// CHECK-LABEL: func.func private @omap_interpret(%{{.*}}: tensor<i32>, %{{.*}}: tensor<4xi32>) -> (tensor<i32>, tensor<i32>, tensor<4xi32>)
// CHECK-LABEL: func.func @dma
// CHECK-NOT:     jaxpr.pallas_call
// CHECK:         "jaxpr.while"
// CHECK:         cond_nconsts = 1
func.func private @kernel(%idx: memref<4xi32>, %x: memref<32x128xf32>, %o: memref<8x128xf32>, %buf: memref<8x128xf32>, %sem: memref<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %i = "jaxpr.program_id"() {axis = 0} : () -> tensor<i32>
  %b = "jaxpr.ref_get"(%idx, %i) {sizes = array<i64: 1>, squeezed = array<i64: 0>} : (memref<4xi32>, tensor<i32>) -> tensor<i32>
  %c8 = "jaxpr.constant"() {value = dense<8> : tensor<i32>} : () -> tensor<i32>
  %row = "jaxpr.mul"(%b, %c8) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  "jaxpr.dma_start"(%x, %buf, %sem, %row, %z, %z, %z) {src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>, dst_sizes = array<i64: 8, 128>, dst_squeezed = array<i64>} : (memref<32x128xf32>, memref<8x128xf32>, memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  "jaxpr.dma_wait"(%sem, %buf, %z, %z) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<i32>, memref<8x128xf32>, tensor<i32>, tensor<i32>) -> ()
  %v = "jaxpr.ref_get"(%buf, %z, %z) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  %old = "jaxpr.ref_swap"(%o, %v, %z, %z) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  return
}
func.func private @imap(%i: tensor<i32>, %idx: memref<4xi32>) -> (tensor<i32>, tensor<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %z, %z : tensor<i32>, tensor<i32>
}
func.func private @omap(%i: tensor<i32>, %idx: memref<4xi32>) -> (tensor<i32>, tensor<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %i, %z : tensor<i32>, tensor<i32>
}
func.func @dma(%n: tensor<i32>, %idx: tensor<4xi32>, %x: tensor<32x128xf32>) -> tensor<32x128xf32> {
  %y = "jaxpr.pallas_call"(%n, %idx, %x) {callee = @kernel, name = "kernel", grid = array<i64: -1>, num_scalar_prefetch = 1, in_specs = [{block_shape = array<i64: 32, 128>, index_map = @imap, memory_space = "any"}], out_specs = [{block_shape = array<i64: 8, 128>, index_map = @omap}], scratch_shapes = [memref<8x128xf32>, memref<i32>], scratch_memory_spaces = ["vmem", "dma_semaphore"], interpret = true} : (tensor<i32>, tensor<4xi32>, tensor<32x128xf32>) -> tensor<32x128xf32>
  return %y : tensor<32x128xf32>
}
