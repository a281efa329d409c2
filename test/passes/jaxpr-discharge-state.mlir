// RUN: mjax-opt %s --jaxpr-discharge-state --jaxpr-verify --split-input-file | filecheck %s

// Refs become values: reads are the value (or a dynamic_slice of it), writes replace it;
// each ref's final value is a new result.
// CHECK-LABEL: func.func private @kernel
// CHECK-SAME:    (%[[X:.*]]: tensor<8xf32>, %[[O:.*]]: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>)
// CHECK-NOT:     jaxpr.ref_
// CHECK:         %[[TWO:.*]] = "jaxpr.constant"() {value = dense<2> : tensor<i32>}
// CHECK:         %[[S:.*]] = "jaxpr.sin"(%[[X]])
// CHECK:         %[[P:.*]] = "jaxpr.dynamic_slice"(%[[X]], %[[TWO]]) {slice_sizes = array<i64: 4>}
// CHECK:         %[[OLD:.*]] = "jaxpr.dynamic_slice"(%[[S]], %[[TWO]]) {slice_sizes = array<i64: 4>}
// CHECK:         %[[SUM:.*]] = "jaxpr.add"(%[[OLD]], %[[P]])
// CHECK:         %[[NEW:.*]] = "jaxpr.dynamic_update_slice"(%[[S]], %[[SUM]], %[[TWO]])
// CHECK:         %[[E:.*]] = "jaxpr.dynamic_slice"(%[[X]], %[[TWO]]) {slice_sizes = array<i64: 1>}
// CHECK:         "jaxpr.reshape"(%[[E]]) {new_sizes = array<i64>} : (tensor<1xf32>) -> tensor<f32>
// CHECK:         return %[[X]], %[[NEW]] : tensor<8xf32>, tensor<8xf32>
func.func private @kernel(%x: memref<8xf32>, %o: memref<8xf32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %two = "jaxpr.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.ref_get"(%x, %z) {sizes = array<i64: 8>, squeezed = array<i64>} : (memref<8xf32>, tensor<i32>) -> tensor<8xf32>
  %s = "jaxpr.sin"(%v) : (tensor<8xf32>) -> tensor<8xf32>
  %old = "jaxpr.ref_swap"(%o, %s, %z) {sizes = array<i64: 8>, squeezed = array<i64>} : (memref<8xf32>, tensor<8xf32>, tensor<i32>) -> tensor<8xf32>
  %p = "jaxpr.ref_get"(%x, %two) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<8xf32>, tensor<i32>) -> tensor<4xf32>
  "jaxpr.ref_addupdate"(%o, %p, %two) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<8xf32>, tensor<4xf32>, tensor<i32>) -> ()
  %e = "jaxpr.ref_get"(%x, %two) {sizes = array<i64: 1>, squeezed = array<i64: 0>} : (memref<8xf32>, tensor<i32>) -> tensor<f32>
  return
}

// -----

// A loop whose body closes over a ref carries the ref's value.
// CHECK-LABEL: func.func private @loop
// CHECK-SAME:    (%[[O:.*]]: tensor<8xf32>) -> tensor<8xf32>
// CHECK:         %[[R:.*]]:2 = "jaxpr.while"(%{{.*}}, %{{.*}}, %[[O]]) ({
// CHECK:         ^bb0(%{{.*}}: tensor<i32>, %{{.*}}: tensor<i32>, %{{.*}}: tensor<8xf32>):
// CHECK:         ^bb0(%{{.*}}: tensor<i32>, %[[CUR:.*]]: tensor<8xf32>):
// CHECK:           %[[D:.*]] = "jaxpr.add"(%[[CUR]], %[[CUR]])
// CHECK:           "jaxpr.yield"(%{{.*}}, %[[D]]) : (tensor<i32>, tensor<8xf32>) -> ()
// CHECK:         }) {body_nconsts = 0 : i64, cond_nconsts = 1 : i64}
// CHECK:         return %[[R]]#1 : tensor<8xf32>
func.func private @loop(%o: memref<8xf32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %n = "jaxpr.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %r = "jaxpr.while"(%n, %o, %z) ({
  ^bb0(%nn: tensor<i32>, %i: tensor<i32>):
    %c = "jaxpr.lt"(%i, %nn) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "jaxpr.yield"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%oref: memref<8xf32>, %i: tensor<i32>):
    %zz = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %cur = "jaxpr.ref_get"(%oref, %zz) {sizes = array<i64: 8>, squeezed = array<i64>} : (memref<8xf32>, tensor<i32>) -> tensor<8xf32>
    %dbl = "jaxpr.add"(%cur, %cur) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %o2 = "jaxpr.ref_swap"(%oref, %dbl, %zz) {sizes = array<i64: 8>, squeezed = array<i64>} : (memref<8xf32>, tensor<8xf32>, tensor<i32>) -> tensor<8xf32>
    %one = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i2 = "jaxpr.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "jaxpr.yield"(%i2) : (tensor<i32>) -> ()
  }) {cond_nconsts = 1, body_nconsts = 1} : (tensor<i32>, memref<8xf32>, tensor<i32>) -> (tensor<i32>)
  return
}

// -----

// A cond returns the ref's value from every branch (unchanged where a branch does not
// write it); a scan carries it.
// CHECK-LABEL: func.func private @when_and_scan
// CHECK-SAME:    (%[[P:.*]]: tensor<i32>, %[[O:.*]]: tensor<4xf32>) -> tensor<4xf32>
// CHECK:         %[[C:.*]] = "jaxpr.cond"(%[[P]], %[[O]]) ({
// CHECK:         ^bb0(%[[A:.*]]: tensor<4xf32>):
// CHECK:           "jaxpr.yield"(%[[A]]) : (tensor<4xf32>) -> ()
// CHECK:         ^bb0(%[[B:.*]]: tensor<4xf32>):
// CHECK:           %[[N:.*]] = "jaxpr.neg"(%[[B]])
// CHECK:           "jaxpr.yield"(%[[N]]) : (tensor<4xf32>) -> ()
// CHECK:         }) : (tensor<i32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         %[[S:.*]] = "jaxpr.scan"(%[[C]]) ({
// CHECK:         ^bb0(%[[V:.*]]: tensor<4xf32>):
// CHECK:           %[[E:.*]] = "jaxpr.exp"(%[[V]])
// CHECK:           "jaxpr.yield"(%[[E]])
// CHECK:         }) {length = 2 : i64, num_carry = 1 : i64, num_consts = 0 : i64
// CHECK:         return %[[S]] : tensor<4xf32>
func.func private @when_and_scan(%p: tensor<i32>, %o: memref<4xf32>) {
  "jaxpr.cond"(%p, %o) ({
  ^bb0(%r: memref<4xf32>):
    "jaxpr.yield"() : () -> ()
  }, {
  ^bb0(%r: memref<4xf32>):
    %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %v = "jaxpr.ref_get"(%r, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<i32>) -> tensor<4xf32>
    %n = "jaxpr.neg"(%v) : (tensor<4xf32>) -> tensor<4xf32>
    %old = "jaxpr.ref_swap"(%r, %n, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
    "jaxpr.yield"() : () -> ()
  }) : (tensor<i32>, memref<4xf32>) -> ()
  "jaxpr.scan"(%o) ({
  ^bb0(%r: memref<4xf32>):
    %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %v = "jaxpr.ref_get"(%r, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<i32>) -> tensor<4xf32>
    %e = "jaxpr.exp"(%v) : (tensor<4xf32>) -> tensor<4xf32>
    %old = "jaxpr.ref_swap"(%r, %e, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
    "jaxpr.yield"() : () -> ()
  }) {length = 2, num_consts = 1, num_carry = 0} : (memref<4xf32>) -> ()
  return
}

// -----

// Masked ops pad the value so a block over the edge is not shifted back in, select by
// the mask, and crop back.
// CHECK-LABEL: func.func private @masked
// CHECK:         %[[PAD:.*]] = "jaxpr.pad"(%{{.*}}, %{{.*}}) {padding_config = {{\[}}array<i64: 0, 4, 0>]}
// CHECK:         %[[OLD:.*]] = "jaxpr.dynamic_slice"(%[[PAD]], %{{.*}}) {slice_sizes = array<i64: 4>}
// CHECK:         %[[SEL:.*]] = "jaxpr.select_n"(%{{.*}}, %{{.*}}, %[[OLD]])
// CHECK:         %[[PAD2:.*]] = "jaxpr.pad"
// CHECK:         %[[OLD2:.*]] = "jaxpr.dynamic_slice"(%[[PAD2]], %{{.*}})
// CHECK:         %[[NEW:.*]] = "jaxpr.select_n"(%{{.*}}, %[[OLD2]], %{{.*}})
// CHECK:         %[[UPD:.*]] = "jaxpr.dynamic_update_slice"(%[[PAD2]], %[[NEW]], %{{.*}})
// CHECK:         %[[CROP:.*]] = "jaxpr.slice"(%[[UPD]]) {limit_indices = array<i64: 6>, start_indices = array<i64: 0>}
// CHECK:         return %[[CROP]]
func.func private @masked(%m: tensor<4xi1>, %o: memref<6xf32>) {
  %s = "jaxpr.constant"() {value = dense<4> : tensor<i32>} : () -> tensor<i32>
  %other = "jaxpr.constant"() {value = dense<0.0> : tensor<4xf32>} : () -> tensor<4xf32>
  %v = "jaxpr.masked_load"(%o, %m, %other, %s) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<6xf32>, tensor<4xi1>, tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  %e = "jaxpr.exp"(%v) : (tensor<4xf32>) -> tensor<4xf32>
  %old = "jaxpr.masked_swap"(%o, %e, %m, %s) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<6xf32>, tensor<4xf32>, tensor<4xi1>, tensor<i32>) -> tensor<4xf32>
  return
}
