// RUN: mjax-opt %s --split-input-file --verify-diagnostics --jaxpr-to-stablehlo="platform=cpu"

// Lowered for a CPU, a dot algorithm XLA's CPU backend would ignore is an error at its
// line, as JAX refuses it (the presets CPUs compute lower as any other target's).
func.func @tf32(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{The precision 'TF32_TF32_F32' is not supported by dot_general on CPU}}
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]], precision = "TF32_TF32_F32"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @explicit_algorithm(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{is not supported by dot_general on CPU}}
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]], precision = ["DotAlgorithm", "float32", "float32", "float32", 1, 1, 1, false]} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
