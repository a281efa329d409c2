// RUN: mjax-opt %s --jaxpr-pallas-interpret --jaxpr-verify --split-input-file | filecheck %s

// A grid of 3 over 10 elements in blocks of 4: the input is padded to 12 (NaN), the
// output starts as NaN, a while loop slices block i, calls the discharged kernel (grid
// index first, program_id replaced by it) and writes the block back; the result is cropped.
// CHECK-LABEL: func.func private @kernel_interpret
// CHECK-SAME:    (%[[I:.*]]: tensor<i32>, %[[X:.*]]: tensor<4xf32>, %[[O:.*]]: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
// CHECK-NOT:     jaxpr.program_id
// CHECK:         %[[F:.*]] = "jaxpr.convert_element_type"(%[[I]])
// CHECK:         return %[[X]], %{{.*}} : tensor<4xf32>, tensor<4xf32>
// CHECK-LABEL: func.func @main
// CHECK:         %[[NAN:.*]] = "jaxpr.constant"() {value = dense<0x7FC00000> : tensor<f32>}
// CHECK:         %[[PX:.*]] = "jaxpr.pad"(%{{.*}}, %[[NAN]]) {padding_config = {{\[}}array<i64: 0, 2, 0>]} : (tensor<10xf32>, tensor<f32>) -> tensor<12xf32>
// CHECK:         %[[INIT:.*]] = "jaxpr.constant"() {value = dense<0x7FC00000> : tensor<12xf32>}
// CHECK:         %[[W:.*]]:2 = "jaxpr.while"(%[[PX]], %{{.*}}, %[[INIT]]) ({
// CHECK:           "jaxpr.lt"
// CHECK:         }, {
// CHECK:         ^bb0(%[[CX:.*]]: tensor<12xf32>, %[[K:.*]]: tensor<i32>, %[[CO:.*]]: tensor<12xf32>):
// CHECK:           %[[B:.*]] = "jaxpr.call"(%[[K]]) {callee = @imap}
// CHECK:           %[[S:.*]] = "jaxpr.mul"(%[[B]], %{{.*}})
// CHECK:           %[[XB:.*]] = "jaxpr.dynamic_slice"(%[[CX]], %[[S]]) {slice_sizes = array<i64: 4>}
// CHECK:           %[[OB:.*]] = "jaxpr.dynamic_slice"(%[[CO]], %{{.*}}) {slice_sizes = array<i64: 4>}
// CHECK:           %[[R:.*]]:2 = "jaxpr.call"(%[[K]], %[[XB]], %[[OB]]) {callee = @kernel_interpret}
// CHECK:           %[[UPD:.*]] = "jaxpr.dynamic_update_slice"(%[[CO]], %[[R]]#1, %{{.*}})
// CHECK:           "jaxpr.yield"(%{{.*}}, %[[UPD]])
// CHECK:         }) {body_nconsts = 1 : i64, cond_nconsts = 0 : i64}
// CHECK:         %[[OUT:.*]] = "jaxpr.slice"(%[[W]]#1) {limit_indices = array<i64: 10>, start_indices = array<i64: 0>}
// CHECK:         return %[[OUT]]
func.func private @kernel(%x: memref<4xf32>, %o: memref<4xf32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.ref_get"(%x, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<i32>) -> tensor<4xf32>
  %p = "jaxpr.program_id"() {axis = 0} : () -> tensor<i32>
  %pf = "jaxpr.convert_element_type"(%p) {new_dtype = f32} : (tensor<i32>) -> tensor<f32>
  %pb = "jaxpr.broadcast_in_dim"(%pf) {shape = array<i64: 4>, broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<4xf32>
  %s = "jaxpr.add"(%v, %pb) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %old = "jaxpr.ref_swap"(%o, %s, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return
}
func.func private @imap(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @main(%a: tensor<10xf32>) -> tensor<10xf32> {
  %0 = "jaxpr.pallas_call"(%a) {callee = @kernel, name = "kernel", grid = array<i64: 3>, in_specs = [{block_shape = array<i64: 4>, index_map = @imap}], out_specs = [{block_shape = array<i64: 4>, index_map = @imap}], interpret = true} : (tensor<10xf32>) -> tensor<10xf32>
  return %0 : tensor<10xf32>
}

// -----

// A 2-D grid: the flat step k gives (k / 2, k % 2); a squeezed block dim (-1) is sliced
// with size 1 and reshaped away; num_programs becomes a constant.
// CHECK-LABEL: func.func private @rows_interpret
// CHECK-SAME:    (%{{.*}}: tensor<i32>, %{{.*}}: tensor<i32>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>)
// CHECK:         "jaxpr.constant"() {value = dense<2> : tensor<i32>}
// CHECK-LABEL: func.func @grid2
// CHECK:         "jaxpr.while"
// CHECK:           %[[ROW:.*]] = "jaxpr.div"(%[[K:.*]], %{{.*}})
// CHECK:           %[[COL:.*]] = "jaxpr.rem"(%[[K]], %{{.*}})
// CHECK:           %[[B:.*]]:2 = "jaxpr.call"(%[[ROW]], %[[COL]]) {callee = @rows_map}
// CHECK:           %[[BLK:.*]] = "jaxpr.dynamic_slice"(%{{.*}}, %{{.*}}, %{{.*}}) {slice_sizes = array<i64: 1, 4>} : (tensor<3x8xf32>, tensor<i32>, tensor<i32>) -> tensor<1x4xf32>
// CHECK:           "jaxpr.reshape"(%[[BLK]]) {new_sizes = array<i64: 4>}
// CHECK:           "jaxpr.call"(%[[ROW]], %[[COL]], %{{.*}}, %{{.*}}) {callee = @rows_interpret}
// CHECK:           "jaxpr.reshape"(%{{.*}}) {new_sizes = array<i64: 1, 4>}
// CHECK:           "jaxpr.dynamic_update_slice"
func.func private @rows(%x: memref<4xf32>, %o: memref<4xf32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.ref_get"(%x, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<i32>) -> tensor<4xf32>
  %n = "jaxpr.num_programs"() {axis = 1} : () -> tensor<i32>
  %old = "jaxpr.ref_swap"(%o, %v, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return
}
func.func private @rows_map(%i: tensor<i32>, %j: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  return %i, %j : tensor<i32>, tensor<i32>
}
func.func @grid2(%a: tensor<3x8xf32>) -> tensor<3x8xf32> {
  %0 = "jaxpr.pallas_call"(%a) {callee = @rows, grid = array<i64: 3, 2>, in_specs = [{block_shape = array<i64: -1, 4>, index_map = @rows_map}], out_specs = [{block_shape = array<i64: -1, 4>, index_map = @rows_map}]} : (tensor<3x8xf32>) -> tensor<3x8xf32>
  return %0 : tensor<3x8xf32>
}

// -----

// A grid of one point needs no loop; a scratch buffer starts as NaN; an aliased output
// starts as its input; a block that is the whole array needs no slicing.
// CHECK-LABEL: func.func @single
// CHECK-SAME:    (%[[A:.*]]: tensor<2xf32>)
// CHECK-NOT:     jaxpr.while
// CHECK:         %[[SCR:.*]] = "jaxpr.constant"() {value = dense<0x7FC00000> : tensor<2xf32>}
// CHECK:         %[[R:.*]]:3 = "jaxpr.call"(%[[A]], %[[A]], %[[SCR]]) {callee = @acc_interpret}
// CHECK:         return %[[R]]#1
func.func private @acc(%x: memref<2xf32>, %o: memref<2xf32>, %s: memref<2xf32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.ref_get"(%x, %z) {sizes = array<i64: 2>, squeezed = array<i64>} : (memref<2xf32>, tensor<i32>) -> tensor<2xf32>
  %o1 = "jaxpr.ref_swap"(%s, %v, %z) {sizes = array<i64: 2>, squeezed = array<i64>} : (memref<2xf32>, tensor<2xf32>, tensor<i32>) -> tensor<2xf32>
  "jaxpr.ref_addupdate"(%o, %v, %z) {sizes = array<i64: 2>, squeezed = array<i64>} : (memref<2xf32>, tensor<2xf32>, tensor<i32>) -> ()
  return
}
func.func private @zero_map() -> tensor<i32> {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %z : tensor<i32>
}
func.func @single(%a: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "jaxpr.pallas_call"(%a) {callee = @acc, grid = array<i64>, in_specs = [{block_shape = array<i64: 2>, index_map = @zero_map}], out_specs = [{block_shape = array<i64: 2>, index_map = @zero_map}], scratch_shapes = [memref<2xf32>], input_output_aliases = array<i64: 0, 0>} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
