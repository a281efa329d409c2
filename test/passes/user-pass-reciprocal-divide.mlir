// RUN: mjax-opt %s --jaxpr-to-stablehlo --load-pass-plugin=%S/../../examples/passes/reciprocal_divide.py --reciprocal-divide | filecheck %s

// On StableHLO: dividing by a float constant becomes multiplying by its reciprocal;
// dividing by a variable stays a division.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>, %[[Y:.*]]: tensor<3xf32>)
// CHECK-DAG:     %[[R:.*]] = stablehlo.constant dense<2.500000e-01> : tensor<3xf32>
// CHECK-DAG:     %[[M:.*]] = stablehlo.multiply %[[X]], %[[R]] : tensor<3xf32>
// CHECK:         %[[D:.*]] = stablehlo.divide %[[M]], %[[Y]] : tensor<3xf32>
// CHECK:         return %[[D]]

module {
  func.func @main(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
    %c = "jaxpr.constant"() {value = dense<4.000000e+00> : tensor<3xf32>} : () -> tensor<3xf32>
    %0 = "jaxpr.div"(%x, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %1 = "jaxpr.div"(%0, %y) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    return %1 : tensor<3xf32>
  }
}
