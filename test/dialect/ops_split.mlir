// Round trip of jaxpr.split (dialect/ops/structural.py): parse, verify, print.
// RUN: mjax-opt %s --split-input-file | filecheck %s
// RUN: mjax-opt %s --split-input-file | mjax-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @split
// CHECK-SAME:    (%[[X:.*]]: tensor<2x6xf32>)
// CHECK:         %[[R:.*]]:3 = "jaxpr.split"(%[[X]]) {axis = 1 : i64, sizes = array<i64: 1, 3, 2>} : (tensor<2x6xf32>) -> (tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x2xf32>)
// CHECK:         return %[[R]]#0, %[[R]]#1, %[[R]]#2
func.func @split(%x: tensor<2x6xf32>) -> (tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x2xf32>) {
  %0:3 = "jaxpr.split"(%x) {axis = 1 : i64, sizes = array<i64: 1, 3, 2>} : (tensor<2x6xf32>) -> (tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x2xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x2xf32>
}

// -----

// One piece (the whole operand) and an empty piece.
// CHECK-LABEL: func.func @split_one_and_empty
// CHECK:         "jaxpr.split"(%{{.*}}) {axis = 0 : i64, sizes = array<i64: 4>} : (tensor<4xi32>) -> tensor<4xi32>
// CHECK:         "jaxpr.split"(%{{.*}}) {axis = 0 : i64, sizes = array<i64: 0, 4>} : (tensor<4xi32>) -> (tensor<0xi32>, tensor<4xi32>)
func.func @split_one_and_empty(%x: tensor<4xi32>) -> (tensor<4xi32>, tensor<0xi32>) {
  %0 = "jaxpr.split"(%x) {axis = 0 : i64, sizes = array<i64: 4>} : (tensor<4xi32>) -> tensor<4xi32>
  %1:2 = "jaxpr.split"(%x) {axis = 0 : i64, sizes = array<i64: 0, 4>} : (tensor<4xi32>) -> (tensor<0xi32>, tensor<4xi32>)
  return %0, %1#0 : tensor<4xi32>, tensor<0xi32>
}
