// A small jaxpr-dialect program: y = integer_pow(sin(x) @ w, 3).
// Lower it with: mjax-opt examples/sin_dot.mlir --jaxpr-to-stablehlo --canonicalize
func.func @main(%x: tensor<2x3xf32>, %w: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = "jaxpr.dot_general"(%0, %w) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  %2 = "jaxpr.integer_pow"(%1) {y = 3} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %2 : tensor<2x4xf32>
}
