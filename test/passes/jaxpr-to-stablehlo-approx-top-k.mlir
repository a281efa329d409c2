// RUN: mjax-opt %s --jaxpr-to-stablehlo="platform=tpu" | filecheck %s --check-prefix=TPU
// RUN: mjax-opt %s --jaxpr-to-stablehlo | filecheck %s --check-prefix=GENERIC

// approx_top_k is XLA's ApproxTopK custom call, as JAX's _approx_top_k_lowering emits it:
// the operand, an iota of indices along the reduction dimension, the initial value and
// index, a comparator function, the options in mhlo.backend_config. For a TPU XLA computes
// it approximately; elsewhere it is marked is_fallback (XLA's exact sort).
// TPU-LABEL: func.func @approx_min_k
// TPU:         %[[IOTA:.*]] = stablehlo.iota dim = 0 : tensor<50x4xi32>
// TPU:         %[[INIT:.*]] = stablehlo.constant dense<0x7F800000> : tensor<f32>
// TPU:         %[[NONE:.*]] = stablehlo.constant dense<-1> : tensor<i32>
// TPU:         stablehlo.custom_call @ApproxTopK(%{{.*}}, %[[IOTA]], %[[INIT]], %[[NONE]]) {backend_config = "", called_computations = [@top_k_lt_f32_comparator], mhlo.backend_config = {aggregate_to_topk = false, recall_target = 5.000000e-01 : f32, reduction_dim = 0 : i64, reduction_input_size_override = -1 : i64, top_k = 4 : i64}} : (tensor<50x4xf32>, tensor<50x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<50x4xf32>, tensor<50x4xi32>)
// TPU:       func.func private @top_k_lt_f32_comparator(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>, %{{.*}}: tensor<i32>, %{{.*}}: tensor<i32>) -> tensor<i1>
// TPU:         stablehlo.compare LT, %[[A]], %[[B]] : (tensor<f32>, tensor<f32>) -> tensor<i1>
// GENERIC-LABEL: func.func @approx_min_k
// GENERIC:       stablehlo.custom_call @ApproxTopK({{.*}}mhlo.backend_config = {aggregate_to_topk = false, is_fallback = true, recall_target = 5.000000e-01 : f32
func.func @approx_min_k(%x: tensor<50x4xf32>) -> (tensor<50x4xf32>, tensor<50x4xi32>) {
  %0:2 = "jaxpr.approx_top_k"(%x) {aggregate_to_topk = false, is_max_k = false, k = 4 : i64, recall_target = 5.000000e-01 : f64, reduction_dimension = 0 : i64, reduction_input_size_override = -1 : i64} : (tensor<50x4xf32>) -> (tensor<50x4xf32>, tensor<50x4xi32>)
  return %0#0, %0#1 : tensor<50x4xf32>, tensor<50x4xi32>
}
