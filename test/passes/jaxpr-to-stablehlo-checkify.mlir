// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file --verify-diagnostics | filecheck %s

// A check outside checkify cannot be lowered (JAX's "not functionalized" ValueError).
func.func @check_not_functionalized(%ok: tensor<i1>) {
  // expected-error @+1 {{Cannot abstractly evaluate a checkify.check which was not functionalized}}
  "jaxpr.check"(%ok) {msg = "boom"} : (tensor<i1>) -> ()
  return
}

// -----

// A debug check outside checkify lowers to nothing (JAX's debug_check).
// CHECK-LABEL: func.func @debug_check_dropped
// CHECK-NOT:     jaxpr.
// CHECK:         return
func.func @debug_check_dropped(%ok: tensor<i1>) {
  "jaxpr.check"(%ok) {msg = "quiet", debug = true} : (tensor<i1>) -> ()
  return
}
