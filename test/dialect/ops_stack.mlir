// Round trip of jaxpr.stack and jaxpr.unstack (dialect/ops/structural.py): parse, verify,
// print.
// RUN: mjax-opt %s --split-input-file | filecheck %s
// RUN: mjax-opt %s --split-input-file | mjax-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @stack
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<2x3xf32>, %[[Z:.*]]: tensor<2x3xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.stack"(%[[X]], %[[Y]], %[[Z]]) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3x3xf32>
// CHECK:         return %[[R]]
func.func @stack(%x: tensor<2x3xf32>, %y: tensor<2x3xf32>, %z: tensor<2x3xf32>) -> tensor<2x3x3xf32> {
  %0 = "jaxpr.stack"(%x, %y, %z) {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3x3xf32>
  return %0 : tensor<2x3x3xf32>
}

// -----

// One operand, stacked along a new last axis; scalars stack to a vector.
// CHECK-LABEL: func.func @stack_single_and_scalars
// CHECK:         "jaxpr.stack"(%{{.*}}) {axis = 2 : i64} : (tensor<2x3xi32>) -> tensor<2x3x1xi32>
// CHECK:         "jaxpr.stack"(%{{.*}}, %{{.*}}) {axis = 0 : i64} : (tensor<f16>, tensor<f16>) -> tensor<2xf16>
func.func @stack_single_and_scalars(%x: tensor<2x3xi32>, %s: tensor<f16>) -> (tensor<2x3x1xi32>, tensor<2xf16>) {
  %0 = "jaxpr.stack"(%x) {axis = 2 : i64} : (tensor<2x3xi32>) -> tensor<2x3x1xi32>
  %1 = "jaxpr.stack"(%s, %s) {axis = 0 : i64} : (tensor<f16>, tensor<f16>) -> tensor<2xf16>
  return %0, %1 : tensor<2x3x1xi32>, tensor<2xf16>
}

// -----

// CHECK-LABEL: func.func @unstack
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[R:.*]]:3 = "jaxpr.unstack"(%[[X]]) {axis = 1 : i64} : (tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
// CHECK:         return %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @unstack(%x: tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) {
  %0:3 = "jaxpr.unstack"(%x) {axis = 1 : i64} : (tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>)
  return %0#0, %0#1, %0#2 : tensor<2xf32>, tensor<2xf32>, tensor<2xf32>
}

// -----

// A size-1 axis gives one result; a size-0 axis none.
// CHECK-LABEL: func.func @unstack_one_and_none
// CHECK:         "jaxpr.unstack"(%{{.*}}) {axis = 0 : i64} : (tensor<1x4xi8>) -> tensor<4xi8>
// CHECK:         "jaxpr.unstack"(%{{.*}}) {axis = 0 : i64} : (tensor<0x4xf32>) -> ()
func.func @unstack_one_and_none(%x: tensor<1x4xi8>, %e: tensor<0x4xf32>) -> tensor<4xi8> {
  %0 = "jaxpr.unstack"(%x) {axis = 0 : i64} : (tensor<1x4xi8>) -> tensor<4xi8>
  "jaxpr.unstack"(%e) {axis = 0 : i64} : (tensor<0x4xf32>) -> ()
  return %0 : tensor<4xi8>
}
