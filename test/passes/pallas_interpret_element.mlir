// RUN: mjax-opt %s --jaxpr-pallas-interpret --jaxpr-verify | filecheck %s

// An element dim (pl.Element(6, (1, 1))): the input is padded by its virtual padding
// (one element each side, not to whole blocks), the index map's value is the block's
// offset as is (no multiply by the block size); the blocked output is as usual.
// CHECK-LABEL: func.func @main
// CHECK:         %[[PX:.*]] = "jaxpr.pad"(%{{.*}}, %{{.*}}) {padding_config = {{\[}}array<i64: 1, 1, 0>]} : (tensor<16xf32>, tensor<f32>) -> tensor<18xf32>
// CHECK:         "jaxpr.while"(%[[PX]]
// CHECK:         ^bb0(%[[CX:.*]]: tensor<18xf32>, %[[K:.*]]: tensor<i32>, %[[CO:.*]]: tensor<16xf32>):
// CHECK:           %[[S:.*]] = "jaxpr.call"(%[[K]]) {callee = @wmap}
// CHECK-NEXT:      %{{.*}} = "jaxpr.dynamic_slice"(%[[CX]], %[[S]]) {slice_sizes = array<i64: 6>}
// CHECK:           %[[B:.*]] = "jaxpr.call"(%[[K]]) {callee = @imap}
// CHECK:           "jaxpr.mul"(%[[B]], %{{.*}})
func.func private @kernel(%w: memref<6xf32>, %o: memref<4xf32>) {
  %z = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.ref_get"(%w, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<6xf32>, tensor<i32>) -> tensor<4xf32>
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %old = "jaxpr.ref_swap"(%o, %v, %c0) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return
}
func.func private @wmap(%i: tensor<i32>) -> tensor<i32> {
  %c = "jaxpr.constant"() {value = dense<4> : tensor<i32>} : () -> tensor<i32>
  %r = "jaxpr.mul"(%i, %c) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  return %r : tensor<i32>
}
func.func private @imap(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @main(%x: tensor<16xf32>) -> tensor<16xf32> {
  %0 = "jaxpr.pallas_call"(%x) {callee = @kernel, name = "kernel", grid = array<i64: 4>,
      in_specs = [{block_shape = array<i64: 6>, element_padding = array<i64: 1, 1>, index_map = @wmap}],
      out_specs = [{block_shape = array<i64: 4>, index_map = @imap}],
      interpret = true} : (tensor<16xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}
