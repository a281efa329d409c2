// RUN: mjax-opt %s --jaxpr-expand-transforms --jaxpr-verify | filecheck %s
// RUN: mjax-opt %s --jaxpr-expand-transforms --jaxpr-pallas-interpret --jaxpr-inline --jaxpr-dce --jaxpr-to-stablehlo --symbol-dce | filecheck %s --check-prefix=LOWER

// jvp of a pallas_call: the discharged kernel is differentiated and wrapped in a kernel
// over (x, dx, o, do) refs; the call takes tangents with their primals' specs.
// CHECK-LABEL: func.func private @kernel_jvp
// CHECK-SAME:    (%[[X:.*]]: memref<4xf32>, %[[DX:.*]]: memref<4xf32>, %[[O:.*]]: memref<4xf32>, %[[DO:.*]]: memref<4xf32>)
// CHECK:         %[[XV:.*]] = "jaxpr.ref_get"(%[[X]]
// CHECK:         %[[DXV:.*]] = "jaxpr.ref_get"(%[[DX]]
// CHECK:         %[[S:.*]] = "jaxpr.sin"(%[[XV]])
// CHECK:         %[[C:.*]] = "jaxpr.cos"(%[[XV]])
// CHECK:         %[[T:.*]] = "jaxpr.mul"(%[[DXV]], %[[C]])
// CHECK:         "jaxpr.ref_swap"(%[[O]], %[[S]]
// CHECK:         "jaxpr.ref_swap"(%[[DO]], %[[T]]
// CHECK-NOT:     "jaxpr.ref_swap"

// vmap: the kernel's grid query moves to axis 1 and the grid gains a leading dim.
// CHECK-LABEL: func.func private @kernel_batched
// CHECK:         "jaxpr.program_id"() {axis = 1 : i64}
// CHECK-LABEL: func.func private @imap_batched
// CHECK-SAME:    (%[[B:.*]]: tensor<i32>, %[[I:.*]]: tensor<i32>) -> (tensor<i32>, tensor<i32>)
// CHECK:         %[[J:.*]] = "jaxpr.call"(%[[I]]) {callee = @imap}
// CHECK:         return %[[B]], %[[J]]

// CHECK-LABEL: func.func private @f_jvp
// CHECK:         "jaxpr.pallas_call"(%{{.*}}, %{{.*}}) {callee = @kernel_jvp, grid = array<i64: 2>, in_specs = [{block_shape = array<i64: 4>, index_map = @imap}, {block_shape = array<i64: 4>, index_map = @imap}]
// CHECK-SAME:    out_specs = [{block_shape = array<i64: 4>, index_map = @imap}, {block_shape = array<i64: 4>, index_map = @imap}]
// CHECK-SAME:    : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
// CHECK-LABEL: func.func private @f_batched
// CHECK:         "jaxpr.pallas_call"(%{{.*}}) {callee = @kernel_batched, compiler_params = {dimension_semantics = ["parallel", "arbitrary"]}, grid = array<i64: 3, 2>, in_specs = [{block_shape = array<i64: -1, 4>, index_map = @imap_batched}]
// CHECK-SAME:    out_specs = [{block_shape = array<i64: -1, 4>, index_map = @imap_batched}]
// CHECK-SAME:    : (tensor<3x8xf32>) -> tensor<3x8xf32>

// Lowered: the batched call is one while loop over 3 x 2 = 6 grid points.
// LOWER-LABEL: func.func @batched
// LOWER-NOT:     jaxpr.
// LOWER:         stablehlo.while
// LOWER:           stablehlo.constant dense<6>
// LOWER:         stablehlo.dynamic_slice %{{.*}}, sizes = [1, 4]
// LOWER:         stablehlo.sine
// LOWER:         stablehlo.dynamic_update_slice
// LOWER-LABEL: func.func @tangent
// LOWER:         stablehlo.sine
// LOWER:         stablehlo.cosine
// LOWER:         stablehlo.multiply
func.func private @kernel(%x: memref<4xf32>, %o: memref<4xf32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.ref_get"(%x, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<i32>) -> tensor<4xf32>
  %p = "jaxpr.program_id"() {axis = 0} : () -> tensor<i32>
  %s = "jaxpr.sin"(%v) : (tensor<4xf32>) -> tensor<4xf32>
  %old = "jaxpr.ref_swap"(%o, %s, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return
}
func.func private @imap(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func private @f(%a: tensor<8xf32>) -> tensor<8xf32> {
  %0 = "jaxpr.pallas_call"(%a) {callee = @kernel, name = "kernel", grid = array<i64: 2>, in_specs = [{block_shape = array<i64: 4>, index_map = @imap}], out_specs = [{block_shape = array<i64: 4>, index_map = @imap}], interpret = true} : (tensor<8xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
func.func @batched(%a: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %0 = "jaxpr.vmap"(%a) {callee = @f, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 3} : (tensor<3x8xf32>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}
func.func @tangent(%a: tensor<8xf32>, %t: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %0:2 = "jaxpr.jvp"(%a, %t) {callee = @f} : (tensor<8xf32>, tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
  return %0#0, %0#1 : tensor<8xf32>, tensor<8xf32>
}
