// --jaxpr-to-stablehlo and XLA frontend attributes (jax.experimental.xla_metadata):
// jaxpr.xla_metadata_value tags the StableHLO op defining its operand; an op whose
// location is fused with {mhlo.frontend_attributes = {...}} (what `with
// set_xla_metadata(...)` traces) carries those attributes onto every op it lowers to;
// a module named @jit_<f> names each lowered op jit(<f>)/<primitive> (JAX's op names).
// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s
// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file --mlir-print-debuginfo | filecheck %s --check-prefix=LOC
// RUN: mjax-opt %s --split-input-file | filecheck %s --check-prefix=OP

// The op itself: verified and printed back as it was written.
// OP-LABEL: func.func @value_tag
// OP:         "jaxpr.xla_metadata_value"(%{{.*}}) {xla_metadata_kvs = {{\[\[}}"breakpoint", true], ["n", 2]]}

// CHECK-LABEL: func.func @value_tag
// CHECK-NEXT:    %[[S:.*]] = stablehlo.sine %{{.*}} : tensor<3xf32>
// CHECK-NEXT:    %[[M:.*]] = stablehlo.multiply %[[S]], %[[S]] {mhlo.frontend_attributes = {breakpoint = "true", n = "2"}} : tensor<3xf32>
// CHECK-NEXT:    return %[[M]]
func.func @value_tag(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.mul"(%0, %0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %2 = "jaxpr.xla_metadata_value"(%1) {xla_metadata_kvs = [["breakpoint", true], ["n", 2]]} : (tensor<3xf32>) -> tensor<3xf32>
  return %2 : tensor<3xf32>
}

// -----

// A tagged argument has no defining op: nothing to tag.
// CHECK-LABEL: func.func @value_tag_argument
// CHECK-NEXT:    return %arg0
func.func @value_tag_argument(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.xla_metadata_value"(%x) {xla_metadata_kvs = [["k", "v"]]} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @block_tag
// CHECK-NEXT:    stablehlo.sine %{{.*}} {mhlo.frontend_attributes = {_xla_log = "true"}}
// CHECK-NEXT:    stablehlo.cosine
// CHECK-NOT:     frontend_attributes
// CHECK:         return
func.func @block_tag(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32> loc(#tagged)
  %1 = "jaxpr.cos"(%0) : (tensor<3xf32>) -> tensor<3xf32> loc("f.py":4:7)
  return %1 : tensor<3xf32>
}
#tagged = loc(fused<{mhlo.frontend_attributes = {_xla_log = "true"}}>["f.py":3:7])

// -----

// LOC-LABEL: module @jit_f
// LOC:         stablehlo.sine {{.*}} loc(#[[SIN:loc[0-9]*]])
// LOC:         #[[SIN]] = loc("jit(f)/sin"(
module @jit_f {
  func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
    %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32> loc("f.py":3:7)
    return %0 : tensor<3xf32>
  }
}
