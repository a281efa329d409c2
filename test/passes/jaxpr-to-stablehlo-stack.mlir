// --jaxpr-to-stablehlo on jaxpr.stack (each operand broadcast to a size-1 axis, then one
// concatenate) and jaxpr.unstack (a width-1 slice per result, reshaped): as JAX lowers
// lax.stack_p and lax.unstack_p.
// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// CHECK-LABEL: func.func @stack
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<2x3xf32>)
// CHECK-NEXT:    %[[BX:.*]] = stablehlo.broadcast_in_dim %[[X]], dims = [0, 2] : (tensor<2x3xf32>) -> tensor<2x1x3xf32>
// CHECK-NEXT:    %[[BY:.*]] = stablehlo.broadcast_in_dim %[[Y]], dims = [0, 2] : (tensor<2x3xf32>) -> tensor<2x1x3xf32>
// CHECK-NEXT:    %[[R:.*]] = stablehlo.concatenate %[[BX]], %[[BY]], dim = 1 : (tensor<2x1x3xf32>, tensor<2x1x3xf32>) -> tensor<2x2x3xf32>
// CHECK-NEXT:    return %[[R]]
func.func @stack(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>) -> tensor<2x2x3xf32> {
  %0 = "jaxpr.stack"(%x, %y) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2x3xf32>
  return %0 : tensor<2x2x3xf32>
}

// -----

// One operand: the broadcast alone, no concatenate.
// CHECK-LABEL: func.func @stack_one
// CHECK-NEXT:    %[[R:.*]] = stablehlo.broadcast_in_dim %{{.*}}, dims = [] : (tensor<i8>) -> tensor<1xi8>
// CHECK-NEXT:    return %[[R]]
func.func @stack_one(%x: tensor<i8>) -> tensor<1xi8> {
  %0 = "jaxpr.stack"(%x) {axis = 0 : i64} : (tensor<i8>) -> tensor<1xi8>
  return %0 : tensor<1xi8>
}

// -----

// CHECK-LABEL: func.func @unstack
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xi32>)
// CHECK-NEXT:    %[[S0:.*]] = stablehlo.slice %[[X]] [0:2, 0:1] : (tensor<2x3xi32>) -> tensor<2x1xi32>
// CHECK-NEXT:    %[[R0:.*]] = stablehlo.reshape %[[S0]] : (tensor<2x1xi32>) -> tensor<2xi32>
// CHECK-NEXT:    %[[S1:.*]] = stablehlo.slice %[[X]] [0:2, 1:2]
// CHECK-NEXT:    %[[R1:.*]] = stablehlo.reshape %[[S1]]
// CHECK-NEXT:    %[[S2:.*]] = stablehlo.slice %[[X]] [0:2, 2:3]
// CHECK-NEXT:    %[[R2:.*]] = stablehlo.reshape %[[S2]]
// CHECK-NEXT:    return %[[R0]], %[[R1]], %[[R2]]
func.func @unstack(%x: tensor<2x3xi32>) -> (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>) {
  %0:3 = "jaxpr.unstack"(%x) {axis = 1 : i64} : (tensor<2x3xi32>) -> (tensor<2xi32>, tensor<2xi32>, tensor<2xi32>)
  return %0#0, %0#1, %0#2 : tensor<2xi32>, tensor<2xi32>, tensor<2xi32>
}

// -----

// A size-0 axis: no results, nothing left.
// CHECK-LABEL: func.func @unstack_none
// CHECK-NEXT:    return
func.func @unstack_none(%x: tensor<0x3xf32>) -> () {
  "jaxpr.unstack"(%x) {axis = 0 : i64} : (tensor<0x3xf32>) -> ()
  return
}
