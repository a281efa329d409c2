// RUN: mjax-opt %s --jaxpr-verify --split-input-file --verify-diagnostics

func.func private @get_not_a_ref(%x: tensor<4xf32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{operand 0 must be a ref (memref), got f32[4]}}
  %v = "jaxpr.ref_get"(%x, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return
}

// -----

func.func private @get_start_count(%r: memref<4x4xf32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{takes one start index per dimension of the ref Ref{f32[4,4]}, got 1}}
  %v = "jaxpr.ref_get"(%r, %z) {sizes = array<i64: 4, 4>, squeezed = array<i64>} : (memref<4x4xf32>, tensor<i32>) -> tensor<4x4xf32>
  return
}

// -----

func.func private @get_size_too_big(%r: memref<4xf32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{size 5 along dimension 0 is out of range for the ref Ref{f32[4]}}}
  %v = "jaxpr.ref_get"(%r, %z) {sizes = array<i64: 5>, squeezed = array<i64>} : (memref<4xf32>, tensor<i32>) -> tensor<5xf32>
  return
}

// -----

func.func private @get_squeezed_size(%r: memref<4x4xf32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{squeezed dimension 0 must have size 1, got 2}}
  %v = "jaxpr.ref_get"(%r, %z, %z) {sizes = array<i64: 2, 4>, squeezed = array<i64: 0>} : (memref<4x4xf32>, tensor<i32>, tensor<i32>) -> tensor<4xf32>
  return
}

// -----

func.func private @get_float_start(%r: memref<4xf32>) {
  %z = "jaxpr.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  // expected-error @+1 {{start index 0 must be an integer scalar, got f32[]}}
  %v = "jaxpr.ref_get"(%r, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<f32>) -> tensor<4xf32>
  return
}

// -----

func.func private @swap_value_type(%r: memref<4xf32>, %v: tensor<4xi32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{value has type i32[4], expected f32[4] (the indexed part of the ref)}}
  %o = "jaxpr.ref_swap"(%r, %v, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<4xi32>, tensor<i32>) -> tensor<4xf32>
  return
}

// -----

func.func private @load_mask_shape(%r: memref<4xf32>, %m: tensor<2xi1>, %other: tensor<4xf32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{mask has type bool[2], expected bool[4] (one flag per indexed element)}}
  %o = "jaxpr.masked_load"(%r, %m, %other, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<2xi1>, tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return
}

// -----

func.func private @atomic_kind(%r: memref<4xf32>, %v: tensor<4xf32>, %m: tensor<4xi1>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  // expected-error @+1 {{attribute 'kind' must be one of 'add', 'max', 'min', 'and', 'or', 'xor', 'xchg', got 'mul'}}
  %o = "jaxpr.atomic_rmw"(%r, %v, %m, %z) {kind = "mul", sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<4xf32>, tensor<4xi1>, tensor<i32>) -> tensor<4xf32>
  return
}

// -----

func.func private @kernel(%x: memref<4xf32>, %o: memref<4xf32>) {
  return
}
func.func private @imap(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @kernel_block_mismatch(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{kernel @kernel has type (Ref{f32[4]}, Ref{f32[4]}) -> (), but the specs give (Ref{f32[2]}, Ref{f32[4]}) -> ()}}
  %0 = "jaxpr.pallas_call"(%a) {callee = @kernel, grid = array<i64: 2>, in_specs = [{block_shape = array<i64: 2>, index_map = @imap}], out_specs = [{block_shape = array<i64: 4>, index_map = @imap}]} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func private @kernel(%x: memref<4xf32>, %o: memref<4xf32>) {
  return
}
func.func private @imap2(%i: tensor<i32>, %j: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @index_map_arity(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{input 0 index map @imap2 takes (i32[], i32[]), but a grid of rank 1 gives (i32[])}}
  %0 = "jaxpr.pallas_call"(%a) {callee = @kernel, grid = array<i64: 2>, in_specs = [{block_shape = array<i64: 4>, index_map = @imap2}], out_specs = [{block_shape = array<i64: 4>, index_map = @imap2}]} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func private @kernel(%x: memref<4xf32>, %o: memref<4xf32>) {
  return
}
func.func private @imap(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @spec_count(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{has 1 operands but 0 in_specs}}
  %0 = "jaxpr.pallas_call"(%a) {callee = @kernel, grid = array<i64: 2>, in_specs = [], out_specs = [{block_shape = array<i64: 4>, index_map = @imap}]} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func private @kernel(%x: memref<4xf32>, %o: memref<4xf32>) {
  return
}
func.func private @imap(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @no_kernel(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{references @missing, which is not a function in this module}}
  %0 = "jaxpr.pallas_call"(%a) {callee = @missing, grid = array<i64: 2>, in_specs = [{block_shape = array<i64: 4>, index_map = @imap}], out_specs = [{block_shape = array<i64: 4>, index_map = @imap}]} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func private @kernel(%x: memref<4xf32>, %o: memref<4xf32>) {
  return
}
func.func private @imap(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @element_padding_count(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{in_specs[0] element_padding (1,) must hold a (low, high) pair of padding sizes >= 0 per element dim of block_shape (4,), and -1, -1 per other dim}}
  %0 = "jaxpr.pallas_call"(%a) {callee = @kernel, grid = array<i64: 2>, in_specs = [{block_shape = array<i64: 4>, element_padding = array<i64: 1>, index_map = @imap}], out_specs = [{block_shape = array<i64: 4>, index_map = @imap}]} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func private @kernel(%x: memref<4xf32>, %o: memref<4xf32>) {
  return
}
func.func private @imap(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @element_padding_half_blocked(%a: tensor<8xf32>) -> tensor<8xf32> {
  // expected-error @+1 {{out_specs[0] element_padding (-1, 2) must hold a (low, high) pair}}
  %0 = "jaxpr.pallas_call"(%a) {callee = @kernel, grid = array<i64: 2>, in_specs = [{block_shape = array<i64: 4>, index_map = @imap}], out_specs = [{block_shape = array<i64: 4>, element_padding = array<i64: -1, 2>, index_map = @imap}]} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
