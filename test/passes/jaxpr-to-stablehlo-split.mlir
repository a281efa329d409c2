// --jaxpr-to-stablehlo on jaxpr.split: a slice per piece along the axis, as JAX lowers
// lax.split_p.
// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// CHECK-LABEL: func.func @split
// CHECK-SAME:    (%[[X:.*]]: tensor<2x6xf32>)
// CHECK-NEXT:    %[[A:.*]] = stablehlo.slice %[[X]] [0:2, 0:1]
// CHECK-NEXT:    %[[B:.*]] = stablehlo.slice %[[X]] [0:2, 1:4]
// CHECK-NEXT:    %[[C:.*]] = stablehlo.slice %[[X]] [0:2, 4:6]
// CHECK-NEXT:    return %[[A]], %[[B]], %[[C]]
func.func @split(%x: tensor<2x6xf32>) -> (tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x2xf32>) {
  %0:3 = "jaxpr.split"(%x) {axis = 1 : i64, sizes = array<i64: 1, 3, 2>} : (tensor<2x6xf32>) -> (tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x2xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x1xf32>, tensor<2x3xf32>, tensor<2x2xf32>
}
