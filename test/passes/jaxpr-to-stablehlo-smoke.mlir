// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// CHECK-LABEL: func.func @sin
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>)
// CHECK:         %[[Y:.*]] = stablehlo.sine %[[X]]
// CHECK:         return %[[Y]]
// CHECK-NOT:     jaxpr.
func.func @sin(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
