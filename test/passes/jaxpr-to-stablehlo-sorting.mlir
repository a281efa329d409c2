// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// CHECK-LABEL: func.func @top_k_last_axis
// CHECK-SAME:    (%[[X:.*]]: tensor<3x5xf32>)
// CHECK:         %[[V:.*]], %[[I:.*]] = chlo.top_k(%[[X]], k = 2)
// CHECK:         return %[[V]], %[[I]]
// CHECK-NOT:     jaxpr.
func.func @top_k_last_axis(%x: tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>) {
  %0:2 = "jaxpr.top_k"(%x) {axis = 1 : i64, k = 2 : i64} : (tensor<3x5xf32>) -> (tensor<3x2xf32>, tensor<3x2xi32>)
  return %0#0, %0#1 : tensor<3x2xf32>, tensor<3x2xi32>
}

// -----

// Another axis is swapped with the last one around the chlo.top_k.
// CHECK-LABEL: func.func @top_k_axis0
// CHECK:         %[[T:.*]] = stablehlo.transpose %{{.*}}, dims = [1, 0]
// CHECK:         %[[V:.*]], %[[I:.*]] = chlo.top_k(%[[T]], k = 2)
// CHECK-DAG:     stablehlo.transpose %[[V]], dims = [1, 0]
// CHECK-DAG:     stablehlo.transpose %[[I]], dims = [1, 0]
// CHECK-NOT:     jaxpr.
func.func @top_k_axis0(%x: tensor<3x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi32>) {
  %0:2 = "jaxpr.top_k"(%x) {axis = 0 : i64, k = 2 : i64} : (tensor<3x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi32>)
  return %0#0, %0#1 : tensor<2x5xf32>, tensor<2x5xi32>
}
