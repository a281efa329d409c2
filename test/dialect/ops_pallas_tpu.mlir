// RUN: mjax-opt %s --jaxpr-verify --split-input-file | filecheck %s

// DMAs, semaphores and run_scoped round-trip (dialect/ops/pallas_tpu.py).

// CHECK-LABEL: func.func private @dma
// CHECK:         "jaxpr.dma_start"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {dst_sizes = array<i64: 1, 8, 128>, dst_squeezed = array<i64: 0>, src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>} : (memref<32x128xf32>, memref<2x8x128xf32>, memref<2xi32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
// CHECK:         "jaxpr.dma_wait"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {sizes = array<i64: 1, 8, 128>, squeezed = array<i64: 0>} : (memref<2xi32>, memref<2x8x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
// CHECK:         "jaxpr.dma_start"({{.*}}) {add = true, dst_sizes = array<i64: 8, 128>, dst_squeezed = array<i64>, has_src_sem = true, priority = 1 : i64, src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>}
func.func private @dma(%src: memref<32x128xf32>, %buf: memref<2x8x128xf32>, %sems: memref<2xi32>, %dst: memref<8x128xf32>, %sem: memref<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %i = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  "jaxpr.dma_start"(%src, %buf, %sems, %i, %z, %i, %z, %z, %i) {src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>, dst_sizes = array<i64: 1, 8, 128>, dst_squeezed = array<i64: 0>} : (memref<32x128xf32>, memref<2x8x128xf32>, memref<2xi32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  "jaxpr.dma_wait"(%sems, %buf, %i, %i, %z, %z) {sizes = array<i64: 1, 8, 128>, squeezed = array<i64: 0>} : (memref<2xi32>, memref<2x8x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  "jaxpr.dma_start"(%src, %dst, %sem, %sem, %z, %z, %z, %z) {src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>, dst_sizes = array<i64: 8, 128>, dst_squeezed = array<i64>, has_src_sem = true, priority = 1, add = true} : (memref<32x128xf32>, memref<8x128xf32>, memref<i32>, memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  return
}

// -----

// CHECK-LABEL: func.func private @semaphores
// CHECK:         "jaxpr.semaphore_signal"(%{{.*}}, %{{.*}}, %{{.*}}) : (memref<2xi32>, tensor<i32>, tensor<i32>) -> ()
// CHECK:         "jaxpr.semaphore_wait"(%{{.*}}, %{{.*}}, %{{.*}}) {decrement = false} : (memref<2xi32>, tensor<i32>, tensor<i32>) -> ()
// CHECK:         "jaxpr.semaphore_read"(%{{.*}}) : (memref<i32>) -> tensor<i32>
func.func private @semaphores(%sems: memref<2xi32>, %sem: memref<i32>) {
  %i = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  "jaxpr.semaphore_signal"(%sems, %i, %i) : (memref<2xi32>, tensor<i32>, tensor<i32>) -> ()
  "jaxpr.semaphore_wait"(%sems, %i, %i) {decrement = false} : (memref<2xi32>, tensor<i32>, tensor<i32>) -> ()
  %v = "jaxpr.semaphore_read"(%sem) : (memref<i32>) -> tensor<i32>
  return
}

// -----

// CHECK-LABEL: func.func private @scoped
// CHECK:         "jaxpr.run_scoped"(%{{.*}}) ({
// CHECK-NEXT:    ^bb0(%{{.*}}: memref<8xf32>, %{{.*}}: memref<8xf32>, %{{.*}}: memref<i32>):
// CHECK:           "jaxpr.yield"(%{{.*}}) : (tensor<8xf32>) -> ()
// CHECK-NEXT:    }) {scratch_memory_spaces = ["vmem", "dma_semaphore"], scratch_shapes = [memref<8xf32>, memref<i32>]} : (memref<8xf32>) -> tensor<8xf32>
func.func private @scoped(%x: memref<8xf32>) {
  %r = "jaxpr.run_scoped"(%x) ({
  ^bb0(%a: memref<8xf32>, %tmp: memref<8xf32>, %sem: memref<i32>):
    %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    "jaxpr.dma_start"(%a, %tmp, %sem, %z, %z) {src_sizes = array<i64: 8>, src_squeezed = array<i64>, dst_sizes = array<i64: 8>, dst_squeezed = array<i64>} : (memref<8xf32>, memref<8xf32>, memref<i32>, tensor<i32>, tensor<i32>) -> ()
    "jaxpr.dma_wait"(%sem, %tmp, %z) {sizes = array<i64: 8>, squeezed = array<i64>} : (memref<i32>, memref<8xf32>, tensor<i32>) -> ()
    %v = "jaxpr.ref_get"(%tmp, %z) {sizes = array<i64: 8>, squeezed = array<i64>} : (memref<8xf32>, tensor<i32>) -> tensor<8xf32>
    "jaxpr.yield"(%v) : (tensor<8xf32>) -> ()
  }) {scratch_shapes = [memref<8xf32>, memref<i32>], scratch_memory_spaces = ["vmem", "dma_semaphore"]} : (memref<8xf32>) -> tensor<8xf32>
  return
}

// -----

// A pallas_call with a dynamic grid dimension, scalar prefetch, memory spaces, TPU
// compiler params and a cost estimate.
// CHECK-LABEL: func.func @call
// CHECK:         "jaxpr.pallas_call"(%{{.*}}, %{{.*}}, %{{.*}}) {callee = @kernel, compiler_params = {backend = "mosaic_tpu", dimension_semantics = ["parallel", "arbitrary"], vmem_limit_bytes = 1048576 : i64}, cost_estimate = {bytes_accessed = 64 : i64, flops = 8 : i64, transcendentals = 0 : i64}, grid = array<i64: -1, 2>, in_specs = [{block_shape = array<i64: 32, 128>, index_map = @imap, memory_space = "any"}], input_output_aliases = array<i64>, interpret = true, metadata = {xprof_metadata = "{\22block_q\22: 128}"}, name = "kernel", num_scalar_prefetch = 1 : i64, out_specs = [{block_shape = array<i64: 8, 128>, buffer_count = 2 : i64, index_map = @omap}], scratch_memory_spaces = ["vmem", "dma_semaphore"], scratch_shapes = [memref<8x128xf32>, memref<2xi32>]} : (tensor<i32>, tensor<4xi32>, tensor<32x128xf32>) -> tensor<32x128xf32>
func.func private @kernel(%idx: memref<4xi32>, %x: memref<32x128xf32>, %o: memref<8x128xf32>, %buf: memref<8x128xf32>, %sems: memref<2xi32>) {
  return
}
func.func private @imap(%i: tensor<i32>, %j: tensor<i32>, %idx: memref<4xi32>) -> (tensor<i32>, tensor<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %z, %z : tensor<i32>, tensor<i32>
}
func.func private @omap(%i: tensor<i32>, %j: tensor<i32>, %idx: memref<4xi32>) -> (tensor<i32>, tensor<i32>) {
  %b = "jaxpr.ref_get"(%idx, %i) {sizes = array<i64: 1>, squeezed = array<i64: 0>} : (memref<4xi32>, tensor<i32>) -> tensor<i32>
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %b, %z : tensor<i32>, tensor<i32>
}
func.func @call(%n: tensor<i32>, %idx: tensor<4xi32>, %x: tensor<32x128xf32>) -> tensor<32x128xf32> {
  %y = "jaxpr.pallas_call"(%n, %idx, %x) {callee = @kernel, name = "kernel", grid = array<i64: -1, 2>, num_scalar_prefetch = 1, in_specs = [{block_shape = array<i64: 32, 128>, index_map = @imap, memory_space = "any"}], out_specs = [{block_shape = array<i64: 8, 128>, index_map = @omap, buffer_count = 2}], scratch_shapes = [memref<8x128xf32>, memref<2xi32>], scratch_memory_spaces = ["vmem", "dma_semaphore"], input_output_aliases = array<i64>, interpret = true, compiler_params = {backend = "mosaic_tpu", dimension_semantics = ["parallel", "arbitrary"], vmem_limit_bytes = 1048576}, cost_estimate = {flops = 8, transcendentals = 0, bytes_accessed = 64}, metadata = {xprof_metadata = "{\22block_q\22: 128}"}} : (tensor<i32>, tensor<4xi32>, tensor<32x128xf32>) -> tensor<32x128xf32>
  return %y : tensor<32x128xf32>
}

// -----

// pl.multiple_of: the value itself, with its divisors.
// CHECK-LABEL: func.func private @multiple_of
// CHECK:         "jaxpr.multiple_of"(%{{.*}}) {values = array<i64: 8, 4>} : (tensor<i32>) -> tensor<i32>
func.func private @multiple_of(%i: tensor<i32>) -> tensor<i32> {
  %0 = "jaxpr.multiple_of"(%i) {values = array<i64: 8, 4>} : (tensor<i32>) -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// pltpu.roll: a rotation by an i32 shift (per slice along stride_axis with a stride).
// CHECK-LABEL: func.func private @roll
// CHECK:         "jaxpr.roll"(%{{.*}}, %{{.*}}) {axis = 1 : i64} : (tensor<8x128xf32>, tensor<i32>) -> tensor<8x128xf32>
// CHECK:         "jaxpr.roll"(%{{.*}}, %{{.*}}) {axis = 1 : i64, stride = 2 : i64, stride_axis = 0 : i64}
func.func private @roll(%x: tensor<8x128xf32>, %s: tensor<i32>) -> tensor<8x128xf32> {
  %0 = "jaxpr.roll"(%x, %s) {axis = 1} : (tensor<8x128xf32>, tensor<i32>) -> tensor<8x128xf32>
  %1 = "jaxpr.roll"(%0, %s) {axis = 1, stride = 2, stride_axis = 0} : (tensor<8x128xf32>, tensor<i32>) -> tensor<8x128xf32>
  return %1 : tensor<8x128xf32>
}

// -----

// pltpu.bitcast: bits read as another dtype, the second-minor dim scaled by the widths.
// CHECK-LABEL: func.func private @tpu_bitcast
// CHECK:         "jaxpr.tpu_bitcast"(%{{.*}}) {dtype = i32} : (tensor<16x2x256xbf16>) -> tensor<16x1x256xi32>
// CHECK:         "jaxpr.tpu_bitcast"(%{{.*}}) {dtype = i8} : (tensor<16x1x256xi32>) -> tensor<16x4x256xi8>
func.func private @tpu_bitcast(%x: tensor<16x2x256xbf16>) -> tensor<16x4x256xi8> {
  %0 = "jaxpr.tpu_bitcast"(%x) {dtype = i32} : (tensor<16x2x256xbf16>) -> tensor<16x1x256xi32>
  %1 = "jaxpr.tpu_bitcast"(%0) {dtype = i8} : (tensor<16x1x256xi32>) -> tensor<16x4x256xi8>
  return %1 : tensor<16x4x256xi8>
}

// -----

// The kernel PRNG: seeding (i32 scalars) and drawing i32 bits.
// CHECK-LABEL: func.func private @prng
// CHECK:         "jaxpr.prng_seed"(%{{.*}}, %{{.*}}) : (tensor<i32>, tensor<i32>) -> ()
// CHECK:         "jaxpr.prng_random_bits"() {shape = array<i64: 8, 128>} : () -> tensor<8x128xi32>
func.func private @prng(%a: tensor<i32>, %b: tensor<i32>) -> tensor<8x128xi32> {
  "jaxpr.prng_seed"(%a, %b) : (tensor<i32>, tensor<i32>) -> ()
  %0 = "jaxpr.prng_random_bits"() {shape = array<i64: 8, 128>} : () -> tensor<8x128xi32>
  return %0 : tensor<8x128xi32>
}

// -----

// A read through a reshaped view, every other row (ref.reshape(16, 64)[pl.ds(0, 8, stride=2)]).

// CHECK-LABEL: func.func private @strided
// CHECK:         "jaxpr.strided_get"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {access_sizes = array<i64: 8, 64>, access_squeezed = array<i64>, access_strides = array<i64: 2, 1>, reshaped = true, shape = array<i64: 16, 64>, sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x64xf32>
func.func private @strided(%x: memref<8x128xf32>) -> tensor<8x64xf32> {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.strided_get"(%x, %z, %z, %z, %z) {access_sizes = array<i64: 8, 64>, access_squeezed = array<i64>, access_strides = array<i64: 2, 1>, reshaped = true, shape = array<i64: 16, 64>, sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x64xf32>
  return %v : tensor<8x64xf32>
}

// -----

// A read through a reshaped, then bitcast view, every other row of the bitcast words
// (ref.reshape(32, 128).bitcast(jnp.uint32)[pl.ds(1, 8, stride=2)]: bf16 rows two to a
// 32-bit word, the second-minor dim halved), and a view's bf16 rows split into int8
// ones (ref.at[1].bitcast(jnp.int8)[...]: the second-minor dim doubled).

// CHECK-LABEL: func.func private @bitcast_view
// CHECK:         "jaxpr.strided_get"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {access_sizes = array<i64: 8, 128>, access_squeezed = array<i64>, access_strides = array<i64: 2, 1>, bitcast = ui32, reshaped = true, shape = array<i64: 32, 128>, sizes = array<i64: 2, 16, 128>, squeezed = array<i64>} : (memref<2x16x128xbf16>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x128xui32>
// CHECK:         "jaxpr.strided_get"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {access_sizes = array<i64: 32, 128>, access_squeezed = array<i64>, access_strides = array<i64: 1, 1>, bitcast = i8, shape = array<i64: 16, 128>, sizes = array<i64: 1, 16, 128>, squeezed = array<i64: 0>} : (memref<2x16x128xbf16>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<32x128xi8>
func.func private @bitcast_view(%x: memref<2x16x128xbf16>) -> (tensor<8x128xui32>, tensor<32x128xi8>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %one = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.strided_get"(%x, %z, %z, %z, %one, %z) {access_sizes = array<i64: 8, 128>, access_squeezed = array<i64>, access_strides = array<i64: 2, 1>, bitcast = ui32, reshaped = true, shape = array<i64: 32, 128>, sizes = array<i64: 2, 16, 128>, squeezed = array<i64>} : (memref<2x16x128xbf16>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x128xui32>
  %w = "jaxpr.strided_get"(%x, %one, %z, %z, %z, %z) {access_sizes = array<i64: 32, 128>, access_squeezed = array<i64>, access_strides = array<i64: 1, 1>, bitcast = i8, shape = array<i64: 16, 128>, sizes = array<i64: 1, 16, 128>, squeezed = array<i64: 0>} : (memref<2x16x128xbf16>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<32x128xi8>
  return %v, %w : tensor<8x128xui32>, tensor<32x128xi8>
}

// -----

// Writes through the same views: every other row of a reshaped view
// (ref.reshape(16, 64)[pl.ds(1, 8, stride=2)] = v) and a bitcast view's row
// (ref.at[1].bitcast(jnp.int8)[3] = v: squeezed in the view and in the access); each
// gives the old value.

// CHECK-LABEL: func.func private @strided_swap
// CHECK:         "jaxpr.strided_swap"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {access_sizes = array<i64: 8, 64>, access_squeezed = array<i64>, access_strides = array<i64: 2, 1>, reshaped = true, shape = array<i64: 16, 64>, sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<8x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x64xf32>
// CHECK:         "jaxpr.strided_swap"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {access_sizes = array<i64: 1, 128>, access_squeezed = array<i64: 0>, access_strides = array<i64: 1, 1>, bitcast = i8, shape = array<i64: 16, 128>, sizes = array<i64: 1, 16, 128>, squeezed = array<i64: 0>} : (memref<2x16x128xbf16>, tensor<128xi8>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<128xi8>
func.func private @strided_swap(%x: memref<8x128xf32>, %v: tensor<8x64xf32>, %y: memref<2x16x128xbf16>, %w: tensor<128xi8>) -> (tensor<8x64xf32>, tensor<128xi8>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %one = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %three = "jaxpr.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %old = "jaxpr.strided_swap"(%x, %v, %z, %z, %one, %z) {access_sizes = array<i64: 8, 64>, access_squeezed = array<i64>, access_strides = array<i64: 2, 1>, reshaped = true, shape = array<i64: 16, 64>, sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<8x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x64xf32>
  %row = "jaxpr.strided_swap"(%y, %w, %one, %z, %z, %three, %z) {access_sizes = array<i64: 1, 128>, access_squeezed = array<i64: 0>, access_strides = array<i64: 1, 1>, bitcast = i8, shape = array<i64: 16, 128>, sizes = array<i64: 1, 16, 128>, squeezed = array<i64: 0>} : (memref<2x16x128xbf16>, tensor<128xi8>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<128xi8>
  return %old, %row : tensor<8x64xf32>, tensor<128xi8>
}

// -----

// A DMA of reshaped and bitcast views: the windows before the reshape/bitcast
// (`*_view_at` of them), the new shape and dtype, then the windows after.
// CHECK-LABEL: func.func private @dma_view_transforms
// CHECK:         "jaxpr.dma_start"({{.*}}) {dst_levels = array<i64: 2>, dst_sizes = array<i64: 4, 128>, dst_squeezed = array<i64>, src_bitcast = ui32, src_levels = array<i64: 3, 2>, src_reshape = array<i64: 16, 128>, src_sizes = array<i64: 1, 16, 128, 4, 128>, src_squeezed = array<i64: 0>, src_view_at = 1 : i64}
// CHECK:         "jaxpr.dma_wait"({{.*}}) {bitcast = ui32, has_src = true, levels = array<i64: 2>, reshape = array<i64: 8, 256>, sizes = array<i64: 4, 128>, squeezed = array<i64>, src_levels = array<i64: 2>, src_sizes = array<i64: 4, 128>, src_squeezed = array<i64>, view_at = 0 : i64}
func.func private @dma_view_transforms(%src: memref<2x16x128xbf16>, %dst: memref<4x128xui32>, %hbm: memref<16x128xbf16>, %sem: memref<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %i = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  "jaxpr.dma_start"(%src, %dst, %sem, %i, %z, %z, %i, %z, %z, %z) {src_levels = array<i64: 3, 2>, src_sizes = array<i64: 1, 16, 128, 4, 128>, src_squeezed = array<i64: 0>, src_view_at = 1, src_reshape = array<i64: 16, 128>, src_bitcast = ui32, dst_levels = array<i64: 2>, dst_sizes = array<i64: 4, 128>, dst_squeezed = array<i64>} : (memref<2x16x128xbf16>, memref<4x128xui32>, memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  "jaxpr.dma_wait"(%sem, %hbm, %dst, %i, %z, %z, %z) {levels = array<i64: 2>, sizes = array<i64: 4, 128>, squeezed = array<i64>, view_at = 0, reshape = array<i64: 8, 256>, bitcast = ui32, has_src = true, src_levels = array<i64: 2>, src_sizes = array<i64: 4, 128>, src_squeezed = array<i64>} : (memref<i32>, memref<16x128xbf16>, memref<4x128xui32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  return
}

// -----

// A remote DMA, its waits and a remote signal: the last `device_ids` operands name the
// device (mesh coordinates, or one logical id); a send's wait has `dummy_device`.
// CHECK-LABEL: func.func private @remote
// CHECK:         "jaxpr.dma_start"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {device_id_type = "mesh", device_ids = 2 : i64, dst_sizes = array<i64: 8, 128>, dst_squeezed = array<i64>, has_src_sem = true, src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>}
// CHECK:         "jaxpr.dma_wait"({{.*}}) {dummy_device = true, has_src = true, sizes = array<i64: 8, 128>, squeezed = array<i64>, src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>}
// CHECK:         "jaxpr.dma_wait"({{.*}}) {device_id_type = "logical", device_ids = 1 : i64, has_src = true, sizes = array<i64: 8, 128>, squeezed = array<i64>, src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>}
// CHECK:         "jaxpr.semaphore_signal"(%{{.*}}, %{{.*}}, %{{.*}}) {device_ids = 1 : i64} : (memref<i32>, tensor<i32>, tensor<i32>) -> ()
// CHECK:         %[[B:.*]] = "jaxpr.get_barrier_semaphore"() : () -> memref<i32>
// CHECK:         "jaxpr.semaphore_signal"(%[[B]], %{{.*}}, %{{.*}}) {device_id_type = "logical", device_ids = 1 : i64}
func.func private @remote(%src: memref<8x128xf32>, %dst: memref<8x128xf32>, %send: memref<i32>, %recv: memref<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %i = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  "jaxpr.dma_start"(%src, %dst, %recv, %send, %z, %z, %z, %z, %i, %z) {src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>, dst_sizes = array<i64: 8, 128>, dst_squeezed = array<i64>, has_src_sem = true, device_ids = 2, device_id_type = "mesh"} : (memref<8x128xf32>, memref<8x128xf32>, memref<i32>, memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  "jaxpr.dma_wait"(%send, %src, %dst, %z, %z, %z, %z) {sizes = array<i64: 8, 128>, squeezed = array<i64>, has_src = true, src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>, dummy_device = true} : (memref<i32>, memref<8x128xf32>, memref<8x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  "jaxpr.dma_wait"(%recv, %dst, %src, %z, %z, %z, %z, %i) {sizes = array<i64: 8, 128>, squeezed = array<i64>, has_src = true, src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>, device_ids = 1, device_id_type = "logical"} : (memref<i32>, memref<8x128xf32>, memref<8x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  "jaxpr.semaphore_signal"(%recv, %i, %z) {device_ids = 1} : (memref<i32>, tensor<i32>, tensor<i32>) -> ()
  %b = "jaxpr.get_barrier_semaphore"() : () -> memref<i32>
  "jaxpr.semaphore_signal"(%b, %i, %z) {device_ids = 1, device_id_type = "logical"} : (memref<i32>, tensor<i32>, tensor<i32>) -> ()
  return
}

// -----

// Copies and signals to another core of the chip (a multi-core TensorCore mesh): with
// `core_ids` = 1 the last operand (after any device ids) is the core's index.
// CHECK-LABEL: func.func private @other_core
// CHECK:         "jaxpr.dma_start"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {core_ids = 1 : i64, dst_sizes = array<i64: 8, 128>, dst_squeezed = array<i64>, has_src_sem = true, src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>}
// CHECK:         "jaxpr.dma_wait"({{.*}}) {core_ids = 1 : i64, has_src = true, sizes = array<i64: 8, 128>, squeezed = array<i64>, src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>}
// CHECK:         "jaxpr.semaphore_signal"(%{{.*}}, %{{.*}}, %{{.*}}) {core_ids = 1 : i64} : (memref<i32>, tensor<i32>, tensor<i32>) -> ()
// CHECK:         "jaxpr.semaphore_signal"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {core_ids = 1 : i64, device_ids = 1 : i64} : (memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
func.func private @other_core(%src: memref<8x128xf32>, %dst: memref<8x128xf32>, %send: memref<i32>, %recv: memref<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %c = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  "jaxpr.dma_start"(%src, %dst, %recv, %send, %z, %z, %z, %z, %c) {src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>, dst_sizes = array<i64: 8, 128>, dst_squeezed = array<i64>, has_src_sem = true, core_ids = 1} : (memref<8x128xf32>, memref<8x128xf32>, memref<i32>, memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  "jaxpr.dma_wait"(%recv, %dst, %src, %z, %z, %z, %z, %c) {sizes = array<i64: 8, 128>, squeezed = array<i64>, has_src = true, src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>, core_ids = 1} : (memref<i32>, memref<8x128xf32>, memref<8x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  "jaxpr.semaphore_signal"(%recv, %c, %z) {core_ids = 1} : (memref<i32>, tensor<i32>, tensor<i32>) -> ()
  "jaxpr.semaphore_signal"(%recv, %c, %z, %c) {device_ids = 1, core_ids = 1} : (memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  return
}

// -----

// pl.debug_print / jax.debug.print in a kernel: the format, the host callback interpret
// mode runs, and the values.
// CHECK-LABEL: func.func private @debug_print
// CHECK:         "jaxpr.debug_print"(%{{.*}}, %{{.*}}) {callback_id = 0 : i64, fmt = "i = {} {}", has_placeholders = true} : (tensor<i32>, tensor<i32>) -> ()
// CHECK:         "jaxpr.debug_print"(%{{.*}}) {callback_id = 1 : i64, fmt = "x = {}", has_placeholders = true, keywords = true, ordered = true} : (tensor<8x128xf32>) -> ()
func.func private @debug_print(%i: tensor<i32>, %x: tensor<8x128xf32>) {
  "jaxpr.debug_print"(%i, %i) {fmt = "i = {} {}", callback_id = 0, has_placeholders = true} : (tensor<i32>, tensor<i32>) -> ()
  "jaxpr.debug_print"(%x) {fmt = "x = {}", callback_id = 1, has_placeholders = true, ordered = true, keywords = true} : (tensor<8x128xf32>) -> ()
  return
}
