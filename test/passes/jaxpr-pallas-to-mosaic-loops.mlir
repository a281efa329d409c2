// --jaxpr-pallas-to-mosaic: a kernel's loops carry what JAX's do (passes/mosaic/loops.py):
// a carry the body returns unchanged becomes a loop constant, a carry nothing reads is
// dropped with what computed it (a fori index only its increment reads too), and so is
// a cond nothing reads that has no effects.
// RUN: mjax-opt %s --jaxpr-pallas-to-mosaic=dump-mosaic=1 -o %t 2>&1 | filecheck %s

// Carries (i, a, b, c): b is forwarded, c is never read; a reads b. Mosaic: one
// iter_arg (a), the body adds b's initial value; c's multiply and its load are gone.
// CHECK-LABEL: Mosaic module for @loops_kernel
// CHECK:         %[[A0:.*]] = vector.load %arg0
// CHECK:         %[[B0:.*]] = arith.mulf %[[A0]], %{{.*}} : vector<8x128xf32>
// CHECK-NOT:     vector.load %arg0
// CHECK:         %[[R:.*]] = scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} iter_args(%[[A:.*]] = %[[A0]]) -> (vector<8x128xf32>)  : i32 {
// CHECK-NEXT:      %[[S:.*]] = arith.addf %[[A]], %[[B0]] : vector<8x128xf32>
// CHECK-NEXT:      scf.yield %[[S]] : vector<8x128xf32>
// CHECK-NEXT:    }
// CHECK-NOT:     arith.constant 4 : i32
// CHECK:         tpu.vector_store %arg1[{{.*}}], %[[R]]
func.func private @loops_kernel(%arg0: memref<8x128xf32>, %arg1: memref<8x128xf32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %a = "jaxpr.ref_get"(%arg0, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  %two = "jaxpr.constant"() {value = dense<2.000000e+00> : tensor<8x128xf32>} : () -> tensor<8x128xf32>
  %b = "jaxpr.mul"(%a, %two) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
  %c = "jaxpr.ref_get"(%arg0, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  %r:4 = "jaxpr.scan"(%c0, %a, %b, %c) ({
  ^bb0(%i: tensor<i32>, %x: tensor<8x128xf32>, %y: tensor<8x128xf32>, %z: tensor<8x128xf32>):
    %one = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i1 = "jaxpr.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %x1 = "jaxpr.add"(%x, %y) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    %z1 = "jaxpr.mul"(%z, %y) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    "jaxpr.yield"(%i1, %x1, %y, %z1) : (tensor<i32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>) -> ()
  }) {length = 4 : i64, num_carry = 4 : i64, num_consts = 0 : i64, reverse = false, unroll = 1 : i64} : (tensor<i32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>) -> (tensor<i32>, tensor<8x128xf32>, tensor<8x128xf32>, tensor<8x128xf32>)
  %s = "jaxpr.ref_swap"(%arg1, %r#1, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  return
}
func.func private @zero_map() -> (tensor<i32>, tensor<i32>) {
  %0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %0, %0 : tensor<i32>, tensor<i32>
}
func.func @loops(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %0 = "jaxpr.pallas_call"(%x) {callee = @loops_kernel, name = "loops_kernel", grid = array<i64>,
      in_specs = [{block_shape = array<i64: 8, 128>, index_map = @zero_map}],
      out_specs = [{block_shape = array<i64: 8, 128>, index_map = @zero_map}],
      interpret = false} : (tensor<8x128xf32>) -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// A cond nothing reads and without effects (an empty pl.when, as emit_pipeline's
// write-back phase of an input) goes, as JAX's DCE drops it; a cond that stores stays.
// CHECK-LABEL: Mosaic module for @conds_kernel
// CHECK:         scf.for
// CHECK:           scf.if %{{.*}} {
// CHECK-NEXT:        arith.constant 0 : index
// CHECK:             tpu.vector_store %arg1
// CHECK-NOT:       scf.if
// CHECK-NOT:       arith.muli
// CHECK:         return
func.func private @conds_kernel(%arg0: memref<8x128xf32>, %arg1: memref<8x128xf32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %r = "jaxpr.scan"(%arg0, %arg1, %c0) ({
  ^bb0(%x: memref<8x128xf32>, %o: memref<8x128xf32>, %i: tensor<i32>):
    %one = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i1 = "jaxpr.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "jaxpr.cond"(%i, %i) ({
    ^bb0(%j: tensor<i32>):
      "jaxpr.yield"() : () -> ()
    }, {
    ^bb0(%j: tensor<i32>):
      %two = "jaxpr.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
      %m = "jaxpr.mul"(%j, %two) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      "jaxpr.yield"() : () -> ()
    }) : (tensor<i32>, tensor<i32>) -> ()
    "jaxpr.cond"(%i, %x, %o) ({
    ^bb0(%a: memref<8x128xf32>, %b: memref<8x128xf32>):
      "jaxpr.yield"() : () -> ()
    }, {
    ^bb0(%a: memref<8x128xf32>, %b: memref<8x128xf32>):
      %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
      %v = "jaxpr.ref_get"(%a, %z, %z) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
      %s = "jaxpr.ref_swap"(%b, %v, %z, %z) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
      "jaxpr.yield"() : () -> ()
    }) : (tensor<i32>, memref<8x128xf32>, memref<8x128xf32>) -> ()
    "jaxpr.yield"(%i1) : (tensor<i32>) -> ()
  }) {length = 4 : i64, num_carry = 1 : i64, num_consts = 2 : i64, reverse = false, unroll = 1 : i64} : (memref<8x128xf32>, memref<8x128xf32>, tensor<i32>) -> tensor<i32>
  return
}
func.func @conds(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %0 = "jaxpr.pallas_call"(%x) {callee = @conds_kernel, name = "conds_kernel", grid = array<i64>,
      in_specs = [{block_shape = array<i64: 8, 128>, index_map = @zero_map}],
      out_specs = [{block_shape = array<i64: 8, 128>, index_map = @zero_map}],
      interpret = false} : (tensor<8x128xf32>) -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}
