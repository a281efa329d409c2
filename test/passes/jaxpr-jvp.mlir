// RUN: mjax-opt %s --jaxpr-jvp --split-input-file | filecheck %s

// The JVP of @f is a new private function; the jvp op becomes a call of it.
// CHECK-LABEL: func.func private @f_jvp
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>, %[[T:.*]]: tensor<3xf32>)
// CHECK:         %[[Y:.*]] = "jaxpr.sin"(%[[X]])
// CHECK:         %[[C:.*]] = "jaxpr.cos"(%[[X]])
// CHECK:         %[[TY:.*]] = "jaxpr.mul"(%[[T]], %[[C]])
// CHECK:         return %[[Y]], %[[TY]]
// CHECK-LABEL: func.func @jvp_sin
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>, %[[T:.*]]: tensor<3xf32>)
// CHECK:         "jaxpr.call"(%[[X]], %[[T]]) {callee = @f_jvp}
// CHECK-NOT:     jaxpr.jvp
func.func private @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @jvp_sin(%x: tensor<3xf32>, %t: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = "jaxpr.jvp"(%x, %t) {callee = @f} : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// Only %x is differentiated: %y's tangent is a symbolic zero and emits nothing (no
// zeros constant, no add); exp(%y) is copied as a primal op.
// CHECK-LABEL: func.func private @g_jvp_a0_r0
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>, %[[T:.*]]: tensor<3xf32>)
// CHECK:         %[[TY:.*]] = "jaxpr.mul"(%[[T]], %[[Y]])
// CHECK-NOT:     jaxpr.constant
// CHECK:         return %{{.*}}, %[[TY]]
// CHECK-LABEL: func.func @jvp_symbolic_zero
// CHECK:         "jaxpr.call"{{.*}}{callee = @g_jvp_a0_r0}
func.func private @g(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.mul"(%x, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.exp"(%y) : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "jaxpr.add"(%0, %1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %2 : tensor<3xf32>
}
func.func @jvp_symbolic_zero(%x: tensor<3xf32>, %y: tensor<3xf32>, %t: tensor<3xf32>) -> tensor<3xf32> {
  %0:2 = "jaxpr.jvp"(%x, %y, %t) {callee = @g, diff_args = array<i64: 0>} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#1 : tensor<3xf32>
}

// -----

// An integer argument has no tangent (float0): the jvp takes one tangent, for %x.
// CHECK-LABEL: func.func private @h_jvp
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>, %[[N:.*]]: tensor<3xi32>, %[[T:.*]]: tensor<3xf32>)
// CHECK:         %[[NF:.*]] = "jaxpr.convert_element_type"(%[[N]])
// CHECK:         %[[TY:.*]] = "jaxpr.mul"(%[[T]], %[[NF]])
// CHECK:         return %{{.*}}, %[[TY]]
func.func private @h(%x: tensor<3xf32>, %n: tensor<3xi32>) -> tensor<3xf32> {
  %0 = "jaxpr.convert_element_type"(%n) {new_dtype = f32} : (tensor<3xi32>) -> tensor<3xf32>
  %1 = "jaxpr.mul"(%x, %0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
func.func @jvp_int_arg(%x: tensor<3xf32>, %n: tensor<3xi32>, %t: tensor<3xf32>) -> tensor<3xf32> {
  %0:2 = "jaxpr.jvp"(%x, %n, %t) {callee = @h} : (tensor<3xf32>, tensor<3xi32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#1 : tensor<3xf32>
}

// -----

// digamma' = polygamma(1, x) (JAX: digamma_p's defjvp); polygamma' in x is
// polygamma(m + 1, x), and m has no tangent (only x is differentiated here).
// CHECK-LABEL: func.func private @dg_jvp
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf64>, %[[T:.*]]: tensor<3xf64>)
// CHECK:         %[[ONE:.*]] = "jaxpr.constant"() {value = dense<1.000000e+00> : tensor<3xf64>}
// CHECK:         %[[P1:.*]] = "jaxpr.polygamma"(%[[ONE]], %[[X]])
// CHECK:         %[[TY:.*]] = "jaxpr.mul"(%[[T]], %[[P1]])
// CHECK:         return %{{.*}}, %[[TY]]
// CHECK-LABEL: func.func private @pg_jvp_a1_r0
// CHECK-SAME:    (%[[M:.*]]: tensor<3xf64>, %[[X:.*]]: tensor<3xf64>, %[[T:.*]]: tensor<3xf64>)
// CHECK:         %[[M1:.*]] = "jaxpr.add"(%[[M]], %{{.*}})
// CHECK:         %[[P:.*]] = "jaxpr.polygamma"(%[[M1]], %[[X]])
// CHECK:         %[[TY:.*]] = "jaxpr.mul"(%[[T]], %[[P]])
// CHECK:         return %{{.*}}, %[[TY]]
func.func private @dg(%x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = "jaxpr.digamma"(%x) : (tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
func.func private @pg(%m: tensor<3xf64>, %x: tensor<3xf64>) -> tensor<3xf64> {
  %0 = "jaxpr.polygamma"(%m, %x) : (tensor<3xf64>, tensor<3xf64>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}
func.func @jvp_digamma_polygamma(%m: tensor<3xf64>, %x: tensor<3xf64>, %t: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %0:2 = "jaxpr.jvp"(%x, %t) {callee = @dg} : (tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  %1:2 = "jaxpr.jvp"(%m, %x, %t) {callee = @pg, diff_args = array<i64: 1>} : (tensor<3xf64>, tensor<3xf64>, tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>)
  return %0#1, %1#1 : tensor<3xf64>, tensor<3xf64>
}

// -----

// optimization_barrier (JAX: _opt_barrier_jvp): one barrier on the primals, one on the
// tangents of the inexact operands, a symbolic zero instantiated (%y is not
// differentiated); the i32 operand has no tangent.
// CHECK-LABEL: func.func private @obj_jvp_a0_r0
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>, %[[N:.*]]: tensor<3xi32>, %[[T:.*]]: tensor<3xf32>)
// CHECK:         %[[P:.*]]:3 = "jaxpr.optimization_barrier"(%[[X]], %[[Y]], %[[N]])
// CHECK:         %[[Z:.*]] = "jaxpr.constant"() {value = dense<0.000000e+00> : tensor<3xf32>}
// CHECK:         %[[TB:.*]]:2 = "jaxpr.optimization_barrier"(%[[T]], %[[Z]]) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK:         return %[[P]]#0, %[[TB]]#0
// CHECK-LABEL: func.func @jvp_optimization_barrier
func.func private @obj(%x: tensor<3xf32>, %y: tensor<3xf32>, %n: tensor<3xi32>) -> tensor<3xf32> {
  %0:3 = "jaxpr.optimization_barrier"(%x, %y, %n) : (tensor<3xf32>, tensor<3xf32>, tensor<3xi32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xi32>)
  return %0#0 : tensor<3xf32>
}
func.func @jvp_optimization_barrier(%x: tensor<3xf32>, %y: tensor<3xf32>, %n: tensor<3xi32>, %t: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = "jaxpr.jvp"(%x, %y, %n, %t) {callee = @obj, diff_args = array<i64: 0>} : (tensor<3xf32>, tensor<3xf32>, tensor<3xi32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}
