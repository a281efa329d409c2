// RUN: mjax-opt %s --stablehlo-broadcast-per-use --split-input-file | filecheck %s

// A same-rank broadcast stretching a size-1 dim, used twice: the second use gets its own
// copy, placed before it (JAX's lowering broadcasts each lax op's operands itself).
// CHECK-LABEL: func.func @two_uses
// CHECK:         %[[B:.*]] = stablehlo.broadcast_in_dim %[[S:.*]], dims = [0, 1]
// CHECK-NEXT:    %[[D:.*]] = stablehlo.divide %{{.*}}, %[[B]]
// CHECK-NEXT:    %[[B2:.*]] = stablehlo.broadcast_in_dim %[[S]], dims = [0, 1]
// CHECK-NEXT:    stablehlo.multiply %[[D]], %[[B2]]
func.func @two_uses(%x: tensor<2x3xf32>, %s: tensor<2x1xf32>) -> tensor<2x3xf32> {
  %e = stablehlo.exponential %s : tensor<2x1xf32>
  %b = stablehlo.broadcast_in_dim %e, dims = [0, 1] : (tensor<2x1xf32>) -> tensor<2x3xf32>
  %0 = stablehlo.divide %x, %b : tensor<2x3xf32>
  %1 = stablehlo.multiply %0, %b : tensor<2x3xf32>
  return %1 : tensor<2x3xf32>
}

// -----

// Scalars too; not broadcasts of constants, nor ones that move or add dims (explicit
// broadcasts), nor a use by the return.
// CHECK-LABEL: func.func @kinds
// CHECK-COUNT-2: stablehlo.broadcast_in_dim %arg1, dims = []
// CHECK-COUNT-1: stablehlo.broadcast_in_dim %cst
// CHECK-COUNT-1: stablehlo.broadcast_in_dim %arg2, dims = [1]
// CHECK-NOT:     stablehlo.broadcast_in_dim
func.func @kinds(%x: tensor<2x3xf32>, %s: tensor<f32>, %v: tensor<3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %b = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %0 = stablehlo.add %x, %b : tensor<2x3xf32>
  %1 = stablehlo.multiply %0, %b : tensor<2x3xf32>
  %cst = stablehlo.constant dense<2.0> : tensor<f32>
  %c = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<2x3xf32>
  %2 = stablehlo.add %1, %c : tensor<2x3xf32>
  %3 = stablehlo.multiply %2, %c : tensor<2x3xf32>
  %r = stablehlo.broadcast_in_dim %v, dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
  %4 = stablehlo.add %3, %r : tensor<2x3xf32>
  %5 = stablehlo.multiply %4, %r : tensor<2x3xf32>
  return %5, %r : tensor<2x3xf32>, tensor<2x3xf32>
}
