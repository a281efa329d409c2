// --jaxpr-vjp on jaxpr.stack and jaxpr.unstack: each transposes to the other (JAX:
// lax.stack_p's transpose is unstack, unstack_p's is stack, zero cotangents instantiated
// as a broadcast zero).
// RUN: mjax-opt %s --jaxpr-vjp --split-input-file | filecheck %s

// CHECK-LABEL: func.func private @f_bwd
// CHECK-SAME:    (%[[CT:.*]]: tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT:    %[[U:.*]]:2 = "jaxpr.unstack"(%[[CT]]) {axis = 0 : i64} : (tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
// CHECK-NEXT:    return %[[U]]#0, %[[U]]#1
// CHECK-LABEL: func.func @stack_vjp
func.func private @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.stack"(%x, %y) {axis = 0 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @stack_vjp(%x: tensor<3xf32>, %y: tensor<3xf32>, %ct: tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0:2 = "jaxpr.vjp"(%x, %y, %ct) {callee = @f} : (tensor<3xf32>, tensor<3xf32>, tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#0, %0#1 : tensor<3xf32>, tensor<3xf32>
}

// -----

// Only the second operand differentiated: the unstack's first slice is dropped.
// CHECK-LABEL: func.func private @f_bwd_a1_r0
// CHECK-SAME:    (%[[CT:.*]]: tensor<3x2xf32>) -> tensor<3xf32>
// CHECK:         %[[U:.*]]:2 = "jaxpr.unstack"(%[[CT]]) {axis = 1 : i64}
// CHECK-NEXT:    return %[[U]]#1
// CHECK-LABEL: func.func @stack_vjp_one_operand
func.func private @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3x2xf32> {
  %0 = "jaxpr.stack"(%x, %y) {axis = 1 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func @stack_vjp_one_operand(%x: tensor<3xf32>, %y: tensor<3xf32>, %ct: tensor<3x2xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.vjp"(%x, %y, %ct) {callee = @f, diff_args = array<i64: 1>} : (tensor<3xf32>, tensor<3xf32>, tensor<3x2xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// The first result unused: its zero cotangent is a broadcast zero, stacked with the
// second's (marked with the result it stands for, so that no two are merged: JAX's grad
// shows one such equation per unused result).
// CHECK-LABEL: func.func private @g_bwd
// CHECK-SAME:    (%[[CT:.*]]: tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    %[[C:.*]] = "jaxpr.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[Z:.*]] = "jaxpr.broadcast_in_dim"(%[[C]]) {broadcast_dimensions = array<i64>, mjax.zero_cotangent_of = 0 : i64, shape = array<i64: 3>}
// CHECK-NEXT:    %[[S:.*]] = "jaxpr.stack"(%[[Z]], %[[CT]]) {axis = 0 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
// CHECK-NEXT:    return %[[S]]
// CHECK-LABEL: func.func @unstack_vjp
func.func private @g(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %0:2 = "jaxpr.unstack"(%x) {axis = 0 : i64} : (tensor<2x3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  return %0#1 : tensor<3xf32>
}
func.func @unstack_vjp(%x: tensor<2x3xf32>, %ct: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @g} : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
