// RUN: mjax-opt %s --split-input-file | filecheck %s

// CHECK-LABEL: func.func @top_k_axis0
// CHECK:         "jaxpr.top_k"(%{{.*}}) {axis = 0 : i64, k = 2 : i64} : (tensor<3x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi32>)
func.func @top_k_axis0(%x: tensor<3x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi32>) {
  %0:2 = "jaxpr.top_k"(%x) {axis = 0 : i64, k = 2 : i64} : (tensor<3x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi32>)
  return %0#0, %0#1 : tensor<2x5xf32>, tensor<2x5xi32>
}
