// RUN: mjax-opt %s --jaxpr-expand-transforms --split-input-file | filecheck %s
// RUN: mjax-opt %s --split-input-file | filecheck %s --check-prefix=ROUNDTRIP

// jax_default_matmul_precision as it stood when an op was traced, recorded on it by the
// frontend (passes/default_precision.py): the dots its rule makes with no precision get
// it, as JAX's rules read the option when they run. QR's JVP multiplies at the default.
// The primal qr the rule emits again keeps the record.
// ROUNDTRIP-LABEL: func.func private @h
// ROUNDTRIP: "jaxpr.qr"(%{{.*}}) {full_matrices = false, mjax.default_precision = ["HIGHEST", "HIGHEST"]}
// CHECK-LABEL: func.func private @h_jvp
// CHECK:         "jaxpr.qr"(%{{.*}}) {full_matrices = false, mjax.default_precision = ["HIGHEST", "HIGHEST"]}
// CHECK-COUNT-3: "jaxpr.dot_general"{{.*}}precision = ["HIGHEST", "HIGHEST"]
// CHECK-NOT:     "jaxpr.dot_general"
// CHECK-LABEL: func.func @jvp_qr
func.func private @h(%a: tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>) {
  %0:2 = "jaxpr.qr"(%a) {full_matrices = false, mjax.default_precision = ["HIGHEST", "HIGHEST"]} : (tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>)
  return %0#0, %0#1 : tensor<5x3xf32>, tensor<3x3xf32>
}
func.func @jvp_qr(%a: tensor<5x3xf32>, %t: tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>) {
  %0:4 = "jaxpr.jvp"(%a, %t) {callee = @h} : (tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>, tensor<5x3xf32>, tensor<3x3xf32>)
  return %0#2, %0#3 : tensor<5x3xf32>, tensor<3x3xf32>
}

// -----

// No record (the option unset when traced): the rule's dots have no precision.
// CHECK-LABEL: func.func private @h_jvp
// CHECK-NOT:     precision
// CHECK-LABEL: func.func @jvp_qr_unset
func.func private @h(%a: tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>) {
  %0:2 = "jaxpr.qr"(%a) {full_matrices = false} : (tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>)
  return %0#0, %0#1 : tensor<5x3xf32>, tensor<3x3xf32>
}
func.func @jvp_qr_unset(%a: tensor<5x3xf32>, %t: tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>) {
  %0:4 = "jaxpr.jvp"(%a, %t) {callee = @h} : (tensor<5x3xf32>, tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>, tensor<5x3xf32>, tensor<3x3xf32>)
  return %0#2, %0#3 : tensor<5x3xf32>, tensor<3x3xf32>
}

// -----

// A dot algorithm's name, through vmap then jvp: the batched qr keeps the record, so
// the JVP of the batched function multiplies with the algorithm.
// CHECK-LABEL: func.func private @h_batched
// CHECK:         "jaxpr.qr"(%{{.*}}) {full_matrices = false, mjax.default_precision = "BF16_BF16_F32"} : (tensor<2x5x3xf32>)
// CHECK-LABEL: func.func private @h_batched_jvp
// CHECK-COUNT-3: "jaxpr.dot_general"{{.*}}precision = "BF16_BF16_F32"
// CHECK-NOT:     "jaxpr.dot_general"
// CHECK-LABEL: func.func @jvp_vmap_qr
func.func private @h(%a: tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>) {
  %0:2 = "jaxpr.qr"(%a) {full_matrices = false, mjax.default_precision = "BF16_BF16_F32"} : (tensor<5x3xf32>) -> (tensor<5x3xf32>, tensor<3x3xf32>)
  return %0#0, %0#1 : tensor<5x3xf32>, tensor<3x3xf32>
}
func.func private @g(%a: tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<2x3x3xf32>) {
  %0:2 = "jaxpr.vmap"(%a) {callee = @h, in_axes = array<i64: 0>, out_axes = array<i64: 0, 0>, axis_size = 2 : i64} : (tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<2x3x3xf32>)
  return %0#0, %0#1 : tensor<2x5x3xf32>, tensor<2x3x3xf32>
}
func.func @jvp_vmap_qr(%a: tensor<2x5x3xf32>, %t: tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<2x3x3xf32>) {
  %0:4 = "jaxpr.jvp"(%a, %t) {callee = @g} : (tensor<2x5x3xf32>, tensor<2x5x3xf32>) -> (tensor<2x5x3xf32>, tensor<2x3x3xf32>, tensor<2x5x3xf32>, tensor<2x3x3xf32>)
  return %0#2, %0#3 : tensor<2x5x3xf32>, tensor<2x3x3xf32>
}
