// RUN: mjax-opt %s --jaxpr-verify --split-input-file | filecheck %s

// CHECK-LABEL: func.func private @ref_ops
// CHECK:         "jaxpr.ref_get"(%{{.*}}, %{{.*}}, %{{.*}}) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
// CHECK:         "jaxpr.ref_get"(%{{.*}}, %{{.*}}, %{{.*}}) {sizes = array<i64: 1, 16>, squeezed = array<i64: 0>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<16xf32>
// CHECK:         "jaxpr.ref_swap"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
// CHECK:         "jaxpr.ref_addupdate"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {sizes = array<i64: 1, 16>, squeezed = array<i64: 0>} : (memref<8x128xf32>, tensor<16xf32>, tensor<i32>, tensor<i32>) -> ()
// CHECK:         "jaxpr.masked_load"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {sizes = array<i64: 1, 16>, squeezed = array<i64: 0>} : (memref<8x128xf32>, tensor<16xi1>, tensor<16xf32>, tensor<i32>, tensor<i32>) -> tensor<16xf32>
// CHECK:         "jaxpr.masked_swap"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {sizes = array<i64: 1, 16>, squeezed = array<i64: 0>}
// CHECK:         "jaxpr.atomic_rmw"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {kind = "add", sizes = array<i64: 1, 16>, squeezed = array<i64: 0>}
// CHECK:         "jaxpr.program_id"() {axis = 0 : i64} : () -> tensor<i32>
// CHECK:         "jaxpr.num_programs"() {axis = 1 : i64} : () -> tensor<i32>
// CHECK:         "jaxpr.ref_new"(%{{.*}}) : (tensor<f32>) -> memref<f32>
// CHECK:         "jaxpr.ref_new"(%{{.*}}) {memory_space = "vmem"} : (tensor<f32>) -> memref<f32>
func.func private @ref_ops(%r: memref<8x128xf32>, %s: memref<f32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %i = "jaxpr.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %all = "jaxpr.ref_get"(%r, %z, %z) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  %row = "jaxpr.ref_get"(%r, %i, %z) {sizes = array<i64: 1, 16>, squeezed = array<i64: 0>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<16xf32>
  %old = "jaxpr.ref_swap"(%r, %all, %z, %z) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  "jaxpr.ref_addupdate"(%r, %row, %i, %z) {sizes = array<i64: 1, 16>, squeezed = array<i64: 0>} : (memref<8x128xf32>, tensor<16xf32>, tensor<i32>, tensor<i32>) -> ()
  %m = "jaxpr.constant"() {value = dense<true> : tensor<16xi1>} : () -> tensor<16xi1>
  %v = "jaxpr.masked_load"(%r, %m, %row, %i, %z) {sizes = array<i64: 1, 16>, squeezed = array<i64: 0>} : (memref<8x128xf32>, tensor<16xi1>, tensor<16xf32>, tensor<i32>, tensor<i32>) -> tensor<16xf32>
  %o2 = "jaxpr.masked_swap"(%r, %v, %m, %i, %z) {sizes = array<i64: 1, 16>, squeezed = array<i64: 0>} : (memref<8x128xf32>, tensor<16xf32>, tensor<16xi1>, tensor<i32>, tensor<i32>) -> tensor<16xf32>
  %o3 = "jaxpr.atomic_rmw"(%r, %v, %m, %i, %z) {kind = "add", sizes = array<i64: 1, 16>, squeezed = array<i64: 0>} : (memref<8x128xf32>, tensor<16xf32>, tensor<16xi1>, tensor<i32>, tensor<i32>) -> tensor<16xf32>
  %p = "jaxpr.program_id"() {axis = 0} : () -> tensor<i32>
  %n = "jaxpr.num_programs"() {axis = 1} : () -> tensor<i32>
  %sv = "jaxpr.ref_get"(%s) {sizes = array<i64>, squeezed = array<i64>} : (memref<f32>) -> tensor<f32>
  %fresh = "jaxpr.ref_new"(%sv) : (tensor<f32>) -> memref<f32>
  %vmem = "jaxpr.ref_new"(%sv) {memory_space = "vmem"} : (tensor<f32>) -> memref<f32>
  return
}

// -----

// CHECK-LABEL: func.func @call
// CHECK:         "jaxpr.pallas_call"(%{{.*}}) {callee = @kernel, compiler_params = {num_warps = 4 : i64}, grid = array<i64: 2>, in_specs = [{block_shape = array<i64: 4>, index_map = @imap}], input_output_aliases = array<i64>, interpret = true, name = "kernel", out_specs = [{block_shape = array<i64: 4>, index_map = @imap}], scratch_shapes = [memref<4xf32>]} : (tensor<8xf32>) -> tensor<8xf32>
func.func private @kernel(%x: memref<4xf32>, %o: memref<4xf32>, %acc: memref<4xf32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.ref_get"(%x, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<i32>) -> tensor<4xf32>
  %old = "jaxpr.ref_swap"(%o, %v, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return
}
func.func private @imap(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @call(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "jaxpr.pallas_call"(%a) {callee = @kernel, name = "kernel", grid = array<i64: 2>, in_specs = [{block_shape = array<i64: 4>, index_map = @imap}], out_specs = [{block_shape = array<i64: 4>, index_map = @imap}], scratch_shapes = [memref<4xf32>], input_output_aliases = array<i64>, interpret = true, compiler_params = {num_warps = 4}} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

// A squeezed block dim (-1, JAX's None): the kernel's ref drops it.
// CHECK-LABEL: func.func @squeezed
// CHECK:         "jaxpr.pallas_call"(%{{.*}}) {{.*}}block_shape = array<i64: -1, 8>
func.func private @row_kernel(%x: memref<8xf32>, %o: memref<8xf32>) {
  return
}
func.func private @row_map(%i: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %i, %z : tensor<i32>, tensor<i32>
}
func.func @squeezed(%a: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %0 = "jaxpr.pallas_call"(%a) {callee = @row_kernel, grid = array<i64: 3>, in_specs = [{block_shape = array<i64: -1, 8>, index_map = @row_map}], out_specs = [{block_shape = array<i64: -1, 8>, index_map = @row_map}]} : (tensor<3x8xf32>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}
