// --jaxpr-jvp on jaxpr.stack and jaxpr.unstack: both are linear, so the tangent is the
// same op on the tangents (a symbolic zero tangent instantiated as zeros).
// RUN: mjax-opt %s --jaxpr-jvp --split-input-file | filecheck %s

// CHECK-LABEL: func.func private @f_jvp_a1_r0
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>, %[[T:.*]]: tensor<3xf32>)
// CHECK-NEXT:    %[[P:.*]] = "jaxpr.stack"(%[[X]], %[[Y]]) {axis = 1 : i64}
// CHECK-NEXT:    %[[Z:.*]] = "jaxpr.constant"() {value = dense<0.000000e+00> : tensor<3xf32>}
// CHECK-NEXT:    %[[D:.*]] = "jaxpr.stack"(%[[Z]], %[[T]]) {axis = 1 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3x2xf32>
// CHECK-NEXT:    return %[[P]], %[[D]]
// CHECK-LABEL: func.func @stack_jvp
func.func private @f(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3x2xf32> {
  %0 = "jaxpr.stack"(%x, %y) {axis = 1 : i64} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func @stack_jvp(%x: tensor<3xf32>, %y: tensor<3xf32>, %t: tensor<3xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>) {
  %0:2 = "jaxpr.jvp"(%x, %y, %t) {callee = @f, diff_args = array<i64: 1>} : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<3x2xf32>, tensor<3x2xf32>)
  return %0#0, %0#1 : tensor<3x2xf32>, tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func private @g_jvp
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>, %[[T:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[P:.*]]:3 = "jaxpr.unstack"(%[[X]]) {axis = 1 : i64}
// CHECK-NEXT:    %[[D:.*]]:3 = "jaxpr.unstack"(%[[T]]) {axis = 1 : i64} : (tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK-NEXT:    return %[[P]]#0, %[[P]]#1, %[[P]]#2, %[[D]]#0, %[[D]]#1, %[[D]]#2
// CHECK-LABEL: func.func @unstack_jvp
func.func private @g(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %0:3 = "jaxpr.unstack"(%x) {axis = 1 : i64} : (tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1, %0#2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
func.func @unstack_jvp(%x: tensor<2x3xf32>, %t: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %0:6 = "jaxpr.jvp"(%x, %t) {callee = @g} : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1, %0#2, %0#3, %0#4, %0#5 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}
