// Editing a kernel's Mosaic and compiling it again: dump-dir writes each kernel's module
// to <dir>/<kernel>.mlir; load-dir compiles an (edited) file there in place of the
// kernel's own lowering.
// RUN: rm -rf %t.d
// RUN: mjax-opt %s --jaxpr-pallas-to-mosaic=dump-dir=%t.d -o /dev/null
// RUN: filecheck %s --check-prefix=DUMPED --input-file %t.d/add_kernel.mlir
// RUN: sed -i -e 's/arith.addf/arith.mulf/' %t.d/add_kernel.mlir
// RUN: mjax-opt %s --jaxpr-pallas-to-mosaic="load-dir=%t.d dump-mosaic=1" -o %t 2>&1 | filecheck %s --check-prefix=EDITED
// RUN: filecheck %s --check-prefix=CALL --input-file %t

// DUMPED:      func.func @add_kernel
// DUMPED:        arith.addf
// DUMPED:      func.func @transform_0
// EDITED-LABEL: Mosaic module for @add_kernel
// EDITED:         arith.mulf
// EDITED-NOT:     arith.addf
// CALL-LABEL: func.func @add
// CALL:         stablehlo.custom_call @tpu_custom_call
// CALL-SAME:    kernel_name = "add_kernel"
func.func private @add_kernel(%x: memref<8x128xf32>, %y: memref<8x128xf32>, %o: memref<8x128xf32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %a = "jaxpr.ref_get"(%x, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  %b = "jaxpr.ref_get"(%y, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  %s = "jaxpr.add"(%a, %b) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
  %old = "jaxpr.ref_swap"(%o, %s, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  return
}
func.func private @row_map(%i: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %i, %c0 : tensor<i32>, tensor<i32>
}
func.func @add(%x: tensor<16x128xf32>, %y: tensor<16x128xf32>) -> tensor<16x128xf32> {
  %0 = "jaxpr.pallas_call"(%x, %y) {callee = @add_kernel, name = "add_kernel", grid = array<i64: 2>,
      in_specs = [{block_shape = array<i64: 8, 128>, index_map = @row_map},
                  {block_shape = array<i64: 8, 128>, index_map = @row_map}],
      out_specs = [{block_shape = array<i64: 8, 128>, index_map = @row_map}],
      interpret = false} : (tensor<16x128xf32>, tensor<16x128xf32>) -> tensor<16x128xf32>
  return %0 : tensor<16x128xf32>
}
