// RUN: mjax-opt %s --jaxpr-verify --split-input-file --verify-diagnostics

func.func private @dma_shapes(%src: memref<16x128xf32>, %dst: memref<8x128xf32>, %sem: memref<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{copies f32[16,128] into f32[8,128]; the source and destination views must have the same shape and dtype}}
  "jaxpr.dma_start"(%src, %dst, %sem, %z, %z, %z, %z) {src_sizes = array<i64: 16, 128>, src_squeezed = array<i64>, dst_sizes = array<i64: 8, 128>, dst_squeezed = array<i64>} : (memref<16x128xf32>, memref<8x128xf32>, memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  return
}

// -----

func.func private @dma_levels(%src: memref<2x8x128xf32>, %dst: memref<8x128xf32>, %sem: memref<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{a view's window 1 has 3 dimensions, but the view it takes is of shape (8, 128)}}
  "jaxpr.dma_start"(%src, %dst, %sem, %z, %z, %z, %z, %z, %z, %z, %z, %z) {src_levels = array<i64: 3, 3>, src_sizes = array<i64: 1, 8, 128, 1, 8, 128>, src_squeezed = array<i64: 0>, dst_sizes = array<i64: 8, 128>, dst_squeezed = array<i64>} : (memref<2x8x128xf32>, memref<8x128xf32>, memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  return
}

// -----

func.func private @dma_wait_source(%src: memref<16x128xf32>, %dst: memref<8x128xf32>, %sem: memref<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{waits for a copy of f32[16,128] into f32[8,128]; the views must have the same shape and dtype}}
  "jaxpr.dma_wait"(%sem, %dst, %src, %z, %z, %z, %z) {sizes = array<i64: 8, 128>, squeezed = array<i64>, has_src = true, src_sizes = array<i64: 16, 128>, src_squeezed = array<i64>} : (memref<i32>, memref<8x128xf32>, memref<16x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  return
}

// -----

func.func private @dma_sem_type(%src: memref<8xf32>, %dst: memref<8xf32>, %sem: memref<f32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{dst_sem must be a semaphore (an i32 ref of counters), got Ref{f32[]}}}
  "jaxpr.dma_start"(%src, %dst, %sem, %z, %z) {src_sizes = array<i64: 8>, src_squeezed = array<i64>, dst_sizes = array<i64: 8>, dst_squeezed = array<i64>} : (memref<8xf32>, memref<8xf32>, memref<f32>, tensor<i32>, tensor<i32>) -> ()
  return
}

// -----

func.func private @signal_index_count(%sems: memref<2xi32>) {
  %i = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{semaphore takes 1 start indices (one per dimension), got 0}}
  "jaxpr.semaphore_signal"(%sems, %i) : (memref<2xi32>, tensor<i32>) -> ()
  return
}

// -----

func.func private @scoped_args(%x: memref<8xf32>) {
  // expected-error @+1 {{block arguments have types (Ref{f32[8]}), expected (Ref{f32[8]}, Ref{f32[4]})}}
  "jaxpr.run_scoped"(%x) ({
  ^bb0(%a: memref<8xf32>):
    "jaxpr.yield"() : () -> ()
  }) {scratch_shapes = [memref<4xf32>]} : (memref<8xf32>) -> ()
  return
}

// -----

func.func private @kernel(%x: memref<8xf32>, %o: memref<8xf32>) {
  return
}
func.func private @imap(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @semantics(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{compiler_params dimension_semantics ('parallel', 'arbitrary') must give one of parallel, arbitrary, core_parallel, subcore_parallel per grid dimension (grid (2,))}}
  %y = "jaxpr.pallas_call"(%x) {callee = @kernel, grid = array<i64: 2>, in_specs = [{block_shape = array<i64: 8>, index_map = @imap}], out_specs = [{block_shape = array<i64: 8>, index_map = @imap}], interpret = true, compiler_params = {dimension_semantics = ["parallel", "arbitrary"]}} : (tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

func.func private @kernel(%idx: memref<2xi32>, %x: memref<8xf32>, %o: memref<8xf32>) {
  return
}
func.func private @imap(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @prefetch_map(%idx: tensor<2xi32>, %x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{input 0 index map @imap takes (i32[]), but a grid of rank 1 and 1 scalar-prefetch operand(s) give (i32[], Ref{i32[2]})}}
  %y = "jaxpr.pallas_call"(%idx, %x) {callee = @kernel, grid = array<i64: 2>, num_scalar_prefetch = 1, in_specs = [{block_shape = array<i64: 8>, index_map = @imap}], out_specs = [{block_shape = array<i64: 8>, index_map = @imap}], interpret = true} : (tensor<2xi32>, tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

func.func private @kernel(%x: memref<8xf32>, %o: memref<8xf32>) {
  return
}
func.func private @imap(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @dynamic_bound(%n: tensor<f32>, %x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{dynamic grid bound 0 is f32[]; the first 1 operand(s) must be i32 scalars (one per -1 in grid (-1,))}}
  %y = "jaxpr.pallas_call"(%n, %x) {callee = @kernel, grid = array<i64: -1>, in_specs = [{block_shape = array<i64: 8>, index_map = @imap}], out_specs = [{block_shape = array<i64: 8>, index_map = @imap}], interpret = true} : (tensor<f32>, tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

func.func private @kernel(%x: memref<8xf32>, %o: memref<8xf32>, %s: memref<2xf32>) {
  return
}
func.func private @imap(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @float_semaphore(%x: tensor<16xf32>) -> tensor<16xf32> {
  // expected-error @+1 {{scratch buffer 0 is a dma_semaphore but has type Ref{f32[2]}; semaphores are i32 counters}}
  %y = "jaxpr.pallas_call"(%x) {callee = @kernel, grid = array<i64: 2>, in_specs = [{block_shape = array<i64: 8>, index_map = @imap}], out_specs = [{block_shape = array<i64: 8>, index_map = @imap}], scratch_shapes = [memref<2xf32>], scratch_memory_spaces = ["dma_semaphore"], interpret = true} : (tensor<16xf32>) -> tensor<16xf32>
  return %y : tensor<16xf32>
}

// -----

// A bitcast view changing the bitwidth needs a second-minor dim (JAX's TPU rule).
func.func private @bitcast_rank1(%x: memref<256xf32>) -> tensor<1024xi8> {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{jaxpr.strided_get bitcast to int8: Bitcast 1D ref with bitwidth change is not supported.}}
  %v = "jaxpr.strided_get"(%x, %z, %z) {access_sizes = array<i64: 1024>, access_strides = array<i64: 1>, bitcast = i8, shape = array<i64: 256>, sizes = array<i64: 256>} : (memref<256xf32>, tensor<i32>, tensor<i32>) -> tensor<1024xi8>
  return %v : tensor<1024xi8>
}

// -----

// ... and one the bitwidths' ratio divides: 3 int8 rows do not fill 16-bit words.
func.func private @bitcast_indivisible(%x: memref<3x128xi8>) -> tensor<1x128xi16> {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{jaxpr.strided_get bitcast to int16: Expected input and output shapes are the same after multiplying the second-minor dimension by the bitwidths}}
  %v = "jaxpr.strided_get"(%x, %z, %z, %z, %z) {access_sizes = array<i64: 1, 128>, access_strides = array<i64: 1, 1>, bitcast = i16, shape = array<i64: 3, 128>, sizes = array<i64: 3, 128>} : (memref<3x128xi8>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<1x128xi16>
  return %v : tensor<1x128xi16>
}

// -----

// The read is of the bitcast view: (16, 128) bf16 is (8, 128) words, not 16 rows of them.
func.func private @bitcast_read_past_view(%x: memref<16x128xbf16>) -> tensor<16x128xui32> {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{jaxpr.strided_get reads 16 elements 1 apart along dimension 0 of size 8}}
  %v = "jaxpr.strided_get"(%x, %z, %z, %z, %z) {access_sizes = array<i64: 16, 128>, access_strides = array<i64: 1, 1>, bitcast = ui32, shape = array<i64: 16, 128>, sizes = array<i64: 16, 128>} : (memref<16x128xbf16>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<16x128xui32>
  return %v : tensor<16x128xui32>
}

// -----

// A write through a view takes the value the same access would read.
func.func private @strided_swap_value(%x: memref<8x128xf32>, %v: tensor<8x128xf32>) -> tensor<8x64xf32> {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{jaxpr.strided_swap value has type f32[8,128], expected f32[8,64] (the indexed part of the ref)}}
  %old = "jaxpr.strided_swap"(%x, %v, %z, %z, %z, %z) {access_sizes = array<i64: 8, 64>, access_strides = array<i64: 2, 1>, reshaped = true, shape = array<i64: 16, 64>, sizes = array<i64: 8, 128>} : (memref<8x128xf32>, tensor<8x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x64xf32>
  return %old : tensor<8x64xf32>
}

// -----

// ... and stays inside the view: 8 rows 3 apart span 22 of the 16.
func.func private @strided_swap_past_view(%x: memref<8x128xf32>, %v: tensor<8x64xf32>) -> tensor<8x64xf32> {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{jaxpr.strided_swap reads 8 elements 3 apart along dimension 0 of size 16}}
  %old = "jaxpr.strided_swap"(%x, %v, %z, %z, %z, %z) {access_sizes = array<i64: 8, 64>, access_strides = array<i64: 3, 1>, reshaped = true, shape = array<i64: 16, 64>, sizes = array<i64: 8, 128>} : (memref<8x128xf32>, tensor<8x64xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x64xf32>
  return %old : tensor<8x64xf32>
}

// -----

// pltpu.bitcast takes arrays of rank >= 2 ...
func.func private @tpu_bitcast_rank1(%x: tensor<256xi32>) -> tensor<256xf32> {
  // expected-error @+1 {{jaxpr.tpu_bitcast takes an array of rank >= 2, got i32[256]}}
  %0 = "jaxpr.tpu_bitcast"(%x) {dtype = f32} : (tensor<256xi32>) -> tensor<256xf32>
  return %0 : tensor<256xf32>
}

// -----

// ... whose second-minor dim the bitwidths' ratio divides.
func.func private @tpu_bitcast_ragged(%x: tensor<3x128xbf16>) -> tensor<1x128xi32> {
  // expected-error @+1 {{Expected input and output shapes are the same after multiplying the second-minor dimension by the bitwidths}}
  %0 = "jaxpr.tpu_bitcast"(%x) {dtype = i32} : (tensor<3x128xbf16>) -> tensor<1x128xi32>
  return %0 : tensor<1x128xi32>
}

// -----

func.func private @dma_bad_reshape(%src: memref<16x128xf32>, %dst: memref<8x128xf32>, %sem: memref<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{cannot reshape a view of shape (16, 128) to (8, 128)}}
  "jaxpr.dma_start"(%src, %dst, %sem, %z, %z, %z, %z) {src_levels = array<i64: 2>, src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>, src_view_at = 0, src_reshape = array<i64: 8, 128>, dst_sizes = array<i64: 8, 128>, dst_squeezed = array<i64>} : (memref<16x128xf32>, memref<8x128xf32>, memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  return
}

// -----

func.func private @dma_bad_bitcast(%src: memref<16x128xbf16>, %dst: memref<16x128xf32>, %sem: memref<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{copies f32[8,128] into f32[16,128]; the source and destination views must have the same shape and dtype}}
  "jaxpr.dma_start"(%src, %dst, %sem, %z, %z, %z, %z) {src_levels = array<i64: 2>, src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>, src_view_at = 0, src_bitcast = f32, dst_sizes = array<i64: 16, 128>, dst_squeezed = array<i64>} : (memref<16x128xbf16>, memref<16x128xf32>, memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  return
}

// -----

func.func private @remote_logical_ids(%src: memref<8x128xf32>, %dst: memref<8x128xf32>, %sem: memref<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{has 2 device id operands (logical)}}
  "jaxpr.semaphore_signal"(%sem, %z, %z, %z) {device_ids = 2, device_id_type = "logical"} : (memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  return
}

// -----

func.func private @remote_id_type(%sem: memref<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{device_id_type must be "mesh" or "logical", got 'core'}}
  "jaxpr.semaphore_signal"(%sem, %z, %z) {device_ids = 1, device_id_type = "core"} : (memref<i32>, tensor<i32>, tensor<i32>) -> ()
  return
}

// -----

func.func private @two_cores_named(%sem: memref<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{has core_ids = 2; it names at most one core}}
  "jaxpr.semaphore_signal"(%sem, %z, %z, %z) {core_ids = 2} : (memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  return
}

// -----

func.func private @core_index_type(%sem: memref<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %f = "jaxpr.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
  // expected-error @+1 {{device ids must be i32 scalars, got f32[]}}
  "jaxpr.semaphore_signal"(%sem, %z, %f) {core_ids = 1} : (memref<i32>, tensor<i32>, tensor<f32>) -> ()
  return
}
