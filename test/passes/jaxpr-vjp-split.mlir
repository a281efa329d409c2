// --jaxpr-vjp on jaxpr.split: its transpose is one concatenate of the pieces'
// cotangents (JAX: lax.split_p's transpose), a zero one instantiated as a broadcast zero.
// RUN: mjax-opt %s --jaxpr-vjp --split-input-file | filecheck %s

// CHECK-LABEL: func.func private @f_bwd
// CHECK-SAME:    (%[[A:.*]]: tensor<1x2xf32>, %[[B:.*]]: tensor<3x2xf32>, %[[C:.*]]: tensor<2x2xf32>) -> tensor<6x2xf32>
// CHECK-NEXT:    %[[R:.*]] = "jaxpr.concatenate"(%[[A]], %[[B]], %[[C]]) {dimension = 0 : i64}
// CHECK-NEXT:    return %[[R]]
// CHECK-LABEL: func.func @split_vjp
func.func private @f(%x: tensor<6x2xf32>) -> (tensor<1x2xf32>, tensor<3x2xf32>, tensor<2x2xf32>) {
  %0:3 = "jaxpr.split"(%x) {axis = 0 : i64, sizes = array<i64: 1, 3, 2>} : (tensor<6x2xf32>) -> (tensor<1x2xf32>, tensor<3x2xf32>, tensor<2x2xf32>)
  return %0#0, %0#1, %0#2 : tensor<1x2xf32>, tensor<3x2xf32>, tensor<2x2xf32>
}
func.func @split_vjp(%x: tensor<6x2xf32>, %a: tensor<1x2xf32>, %b: tensor<3x2xf32>, %c: tensor<2x2xf32>) -> tensor<6x2xf32> {
  %0 = "jaxpr.vjp"(%x, %a, %b, %c) {callee = @f} : (tensor<6x2xf32>, tensor<1x2xf32>, tensor<3x2xf32>, tensor<2x2xf32>) -> tensor<6x2xf32>
  return %0 : tensor<6x2xf32>
}

// -----

// Only the middle piece used: the others' cotangents are broadcast zeros (each marked
// with the piece it stands for, so that CSE keeps JAX's one equation per piece).
// CHECK-LABEL: func.func private @g_bwd
// CHECK-SAME:    (%[[CT:.*]]: tensor<2xf32>) -> tensor<6xf32>
// CHECK-NEXT:    %[[Z:.*]] = "jaxpr.constant"() {value = dense<0.000000e+00> : tensor<f32>}
// CHECK-NEXT:    %[[Z0:.*]] = "jaxpr.broadcast_in_dim"(%[[Z]]) {broadcast_dimensions = array<i64>, mjax.zero_cotangent_of = 0 : i64, shape = array<i64: 2>}
// CHECK-NEXT:    %[[Z2:.*]] = "jaxpr.broadcast_in_dim"(%[[Z]]) {broadcast_dimensions = array<i64>, mjax.zero_cotangent_of = 2 : i64, shape = array<i64: 2>}
// CHECK-NEXT:    %[[R:.*]] = "jaxpr.concatenate"(%[[Z0]], %[[CT]], %[[Z2]]) {dimension = 0 : i64}
// CHECK-NEXT:    return %[[R]]
// CHECK-LABEL: func.func @split_vjp_one_piece
func.func private @g(%x: tensor<6xf32>) -> tensor<2xf32> {
  %0:3 = "jaxpr.split"(%x) {axis = 0 : i64, sizes = array<i64: 2, 2, 2>} : (tensor<6xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %0#1 : tensor<2xf32>
}
func.func @split_vjp_one_piece(%x: tensor<6xf32>, %ct: tensor<2xf32>) -> tensor<6xf32> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @g} : (tensor<6xf32>, tensor<2xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}
