// Round trip of every op in dialect/ops/control_flow.py: parse, verify, print.
// RUN: mjax-opt %s --split-input-file | filecheck %s
// RUN: mjax-opt %s --split-input-file | mjax-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @cond_two_branches
// CHECK-SAME:    (%[[I:.*]]: tensor<i32>, %[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.cond"(%[[I]], %[[Y]], %[[X]]) ({
// CHECK:           "jaxpr.sin"
// CHECK:           "jaxpr.yield"
// CHECK:         }, {
// CHECK:           "jaxpr.mul"
// CHECK:           "jaxpr.yield"
// CHECK:         }) : (tensor<i32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
// CHECK:         return %[[R]]
func.func @cond_two_branches(%i: tensor<i32>, %x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.cond"(%i, %y, %x) ({
  ^bb0(%c: tensor<3xf32>, %a: tensor<3xf32>):
    %1 = "jaxpr.sin"(%a) : (tensor<3xf32>) -> tensor<3xf32>
    "jaxpr.yield"(%1) : (tensor<3xf32>) -> ()
  }, {
  ^bb0(%c: tensor<3xf32>, %a: tensor<3xf32>):
    %1 = "jaxpr.mul"(%a, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "jaxpr.yield"(%1) : (tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @cond_three_branches_no_operands
// CHECK:         "jaxpr.cond"(%{{.*}}) ({
// CHECK-COUNT-3: "jaxpr.yield"
func.func @cond_three_branches_no_operands(%i: tensor<i32>) -> tensor<f32> {
  %0 = "jaxpr.cond"(%i) ({
    %1 = "jaxpr.constant"() {value = dense<1.0> : tensor<f32>} : () -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }, {
    %1 = "jaxpr.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }, {
    %1 = "jaxpr.constant"() {value = dense<3.0> : tensor<f32>} : () -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) : (tensor<i32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @while_with_consts
// CHECK:         "jaxpr.while"(%{{.*}}, %{{.*}}, %{{.*}}) ({
// CHECK:           "jaxpr.lt"
// CHECK:         }, {
// CHECK:           "jaxpr.add"
// CHECK:         }) {body_nconsts = 1 : i64, cond_nconsts = 1 : i64}
func.func @while_with_consts(%limit: tensor<f32>, %step: tensor<f32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.while"(%limit, %step, %x) ({
  ^bb0(%l: tensor<f32>, %c: tensor<f32>):
    %1 = "jaxpr.lt"(%c, %l) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "jaxpr.yield"(%1) : (tensor<i1>) -> ()
  }, {
  ^bb0(%s: tensor<f32>, %c: tensor<f32>):
    %1 = "jaxpr.add"(%c, %s) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) {cond_nconsts = 1 : i64, body_nconsts = 1 : i64} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @scan_consts_carry_xs
// CHECK:         %[[R:.*]]:2 = "jaxpr.scan"(%{{.*}}, %{{.*}}, %{{.*}}) ({
// CHECK:           "jaxpr.yield"
// CHECK:         }) {length = 4 : i64, num_carry = 1 : i64, num_consts = 1 : i64, reverse = true, unroll = 2 : i64} : (tensor<f32>, tensor<f32>, tensor<4x2xf32>) -> (tensor<f32>, tensor<4x2xf32>)
func.func @scan_consts_carry_xs(%w: tensor<f32>, %c0: tensor<f32>, %xs: tensor<4x2xf32>) -> (tensor<f32>, tensor<4x2xf32>) {
  %0:2 = "jaxpr.scan"(%w, %c0, %xs) ({
  ^bb0(%k: tensor<f32>, %c: tensor<f32>, %x: tensor<2xf32>):
    %1 = "jaxpr.mul"(%c, %k) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %2 = "jaxpr.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<2xf32>) -> tensor<f32>
    %3 = "jaxpr.add"(%1, %2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%3, %x) : (tensor<f32>, tensor<2xf32>) -> ()
  }) {length = 4 : i64, reverse = true, unroll = 2 : i64, num_consts = 1 : i64, num_carry = 1 : i64} : (tensor<f32>, tensor<f32>, tensor<4x2xf32>) -> (tensor<f32>, tensor<4x2xf32>)
  return %0#0, %0#1 : tensor<f32>, tensor<4x2xf32>
}

// -----

// A cond nested in a scan body: region ops nest, each isolated from above.
// CHECK-LABEL: func.func @scan_with_nested_cond
// CHECK:         "jaxpr.scan"
// CHECK:           "jaxpr.cond"
func.func @scan_with_nested_cond(%c0: tensor<f32>, %ps: tensor<3xi32>) -> tensor<f32> {
  %0 = "jaxpr.scan"(%c0, %ps) ({
  ^bb0(%c: tensor<f32>, %p: tensor<i32>):
    %1 = "jaxpr.cond"(%p, %c) ({
    ^bb0(%a: tensor<f32>):
      "jaxpr.yield"(%a) : (tensor<f32>) -> ()
    }, {
    ^bb0(%a: tensor<f32>):
      %2 = "jaxpr.neg"(%a) : (tensor<f32>) -> tensor<f32>
      "jaxpr.yield"(%2) : (tensor<f32>) -> ()
    }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) {length = 3 : i64, num_carry = 1 : i64} : (tensor<f32>, tensor<3xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// pl.select_ref's cond around a DMA (select_ref: branch 0 where the index is 0, else
// branch 1; no results).
// CHECK-LABEL: func.func private @select_ref_cond
// CHECK:         "jaxpr.cond"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) ({
// CHECK:           "jaxpr.dma_start"
// CHECK:         }, {
// CHECK:           "jaxpr.dma_start"
// CHECK:         }) {select_ref = true} : (tensor<i32>, memref<8x128xf32>, memref<8x128xf32>, memref<8x128xf32>, memref<i32>) -> ()
func.func private @select_ref_cond(%i: tensor<i32>, %a: memref<8x128xf32>, %b: memref<8x128xf32>, %dst: memref<8x128xf32>, %sem: memref<i32>) {
  "jaxpr.cond"(%i, %a, %b, %dst, %sem) ({
  ^bb0(%x: memref<8x128xf32>, %y: memref<8x128xf32>, %d: memref<8x128xf32>, %s: memref<i32>):
    %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    "jaxpr.dma_start"(%x, %d, %s, %z, %z, %z, %z) {src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>, dst_sizes = array<i64: 8, 128>, dst_squeezed = array<i64>} : (memref<8x128xf32>, memref<8x128xf32>, memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
    "jaxpr.yield"() : () -> ()
  }, {
  ^bb0(%x: memref<8x128xf32>, %y: memref<8x128xf32>, %d: memref<8x128xf32>, %s: memref<i32>):
    %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    "jaxpr.dma_start"(%y, %d, %s, %z, %z, %z, %z) {src_sizes = array<i64: 8, 128>, src_squeezed = array<i64>, dst_sizes = array<i64: 8, 128>, dst_squeezed = array<i64>} : (memref<8x128xf32>, memref<8x128xf32>, memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
    "jaxpr.yield"() : () -> ()
  }) {select_ref = true} : (tensor<i32>, memref<8x128xf32>, memref<8x128xf32>, memref<8x128xf32>, memref<i32>) -> ()
  return
}
