// RUN: mjax-opt %s --jaxpr-pallas-interpret --jaxpr-inline --jaxpr-dce --jaxpr-to-stablehlo --canonicalize --symbol-dce | filecheck %s

// A pallas_call lowered for XLA: interpret expansion, then the kernel and index map are
// inlined into the loop body and everything lowers to StableHLO; the kernel functions
// are gone.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[A:.*]]: tensor<10xf32>) -> tensor<10xf32>
// CHECK-NOT:     jaxpr.
// CHECK:         %[[P:.*]] = stablehlo.pad %[[A]], %{{.*}}, low = [0], high = [2], interior = [0]
// CHECK:         %[[W:.*]]:2 = stablehlo.while(%[[I:.*]] = %{{.*}}, %[[O:.*]] = %{{.*}}) : tensor<i32>, tensor<12xf32>
// CHECK:           stablehlo.compare LT, %[[I]]
// CHECK:         } do {
// CHECK:           %[[S:.*]] = stablehlo.multiply %[[I]], %{{.*}} : tensor<i32>
// CHECK:           %[[B:.*]] = stablehlo.dynamic_slice %[[P]], %[[S]], sizes = [4]
// CHECK:           %[[SIN:.*]] = stablehlo.sine %[[B]]
// CHECK:           %[[U:.*]] = stablehlo.dynamic_update_slice %[[O]], %[[SIN]], %[[S]]
// CHECK:           stablehlo.return %{{.*}}, %[[U]]
// CHECK:         %[[R:.*]] = stablehlo.slice %[[W]]#1 [0:10]
// CHECK:         return %[[R]]
// CHECK-NOT:     func.func private
func.func private @kernel(%x: memref<4xf32>, %o: memref<4xf32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.ref_get"(%x, %z) {sizes = array<i64: 4>, squeezed = array<i64>} : (memref<4xf32>, tensor<i32>) -> tensor<4xf32>
  %s = "jaxpr.sin"(%v) : (tensor<4xf32>) -> tensor<4xf32>
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
