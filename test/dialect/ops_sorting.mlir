// RUN: mjax-opt %s --split-input-file | filecheck %s

// CHECK-LABEL: func.func @top_k_axis0
// CHECK:         "jaxpr.top_k"(%{{.*}}) {axis = 0 : i64, k = 2 : i64} : (tensor<3x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi32>)
func.func @top_k_axis0(%x: tensor<3x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi32>) {
  %0:2 = "jaxpr.top_k"(%x) {axis = 0 : i64, k = 2 : i64} : (tensor<3x5xf32>) -> (tensor<2x5xf32>, tensor<2x5xi32>)
  return %0#0, %0#1 : tensor<2x5xf32>, tensor<2x5xi32>
}

// -----

// CHECK-LABEL: func.func @approx_max_k
// CHECK:         "jaxpr.approx_top_k"(%{{.*}}) {aggregate_to_topk = true, is_max_k = true, k = 5 : i64, recall_target = 0.94999999999999996 : f64, reduction_dimension = 1 : i64, reduction_input_size_override = -1 : i64} : (tensor<4x50xf32>) -> (tensor<4x5xf32>, tensor<4x5xi32>)
func.func @approx_max_k(%x: tensor<4x50xf32>) -> (tensor<4x5xf32>, tensor<4x5xi32>) {
  %0:2 = "jaxpr.approx_top_k"(%x) {aggregate_to_topk = true, is_max_k = true, k = 5 : i64, recall_target = 9.500000e-01 : f64, reduction_dimension = 1 : i64, reduction_input_size_override = -1 : i64} : (tensor<4x50xf32>) -> (tensor<4x5xf32>, tensor<4x5xi32>)
  return %0#0, %0#1 : tensor<4x5xf32>, tensor<4x5xi32>
}
