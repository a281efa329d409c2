// RUN: mjax-opt %s | mjax-opt | filecheck %s
// RUN: mjax-opt %s --jaxpr-to-stablehlo | filecheck %s --check-prefix=LOWER

// xla_metadata_value (jax.experimental.xla_metadata.set_xla_metadata on a value): an
// identity carrying XLA frontend attributes as sorted (key, value) pairs.
// CHECK-LABEL: func.func @tagged
// CHECK:         "jaxpr.xla_metadata_value"(%{{.*}}) {xla_metadata_kvs = {{\[\[}}"a", 1], ["b", "s"]]} : (tensor<3xf32>) -> tensor<3xf32>
// LOWER-LABEL: func.func @tagged
// LOWER:         stablehlo.exponential %{{.*}} {mhlo.frontend_attributes = {a = "1", b = "s"}}
// LOWER-NOT:     xla_metadata_value
func.func @tagged(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.exp"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.xla_metadata_value"(%0) {xla_metadata_kvs = [["a", 1], ["b", "s"]]} : (tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
