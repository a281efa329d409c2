// RUN: mjax-opt %s --load-pass-plugin=%S/../../examples/passes/bf16_matmul.py --bf16-matmul | filecheck %s
// RUN: mjax-opt %s --load-pass-plugin=%S/../../examples/passes/bf16_matmul.py --pass-pipeline='builtin.module(bf16-matmul{min-size=64})' | filecheck %s --check-prefix=BIG
// RUN: mjax-opt --help --load-pass-plugin=%S/../../examples/passes/bf16_matmul.py | filecheck %s --check-prefix=HELP

// An f32 matmul runs on bf16 operands and accumulates in f32; the rest is unchanged.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    (%[[A:.*]]: tensor<8x16xf32>, %[[B:.*]]: tensor<16x4xf32>)
// CHECK:         %[[A16:.*]] = "jaxpr.convert_element_type"(%[[A]]) {new_dtype = bf16} : (tensor<8x16xf32>) -> tensor<8x16xbf16>
// CHECK:         %[[B16:.*]] = "jaxpr.convert_element_type"(%[[B]]) {new_dtype = bf16} : (tensor<16x4xf32>) -> tensor<16x4xbf16>
// CHECK:         %[[D:.*]] = "jaxpr.dot_general"(%[[A16]], %[[B16]]) {{.*}}preferred_element_type = f32{{.*}} : (tensor<8x16xbf16>, tensor<16x4xbf16>) -> tensor<8x4xf32>
// CHECK:         "jaxpr.tanh"(%[[D]])
// The i32 matmul is left alone.
// CHECK-LABEL: func.func @ints
// CHECK-NOT:     convert_element_type
// CHECK:         "jaxpr.dot_general"(%{{.*}}, %{{.*}}) {{.*}} : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x2xi32>

// min-size=64: only dots with at least 64 result elements (@main's has 32).
// BIG-LABEL: func.func @main
// BIG-NOT:     bf16
// BIG:         "jaxpr.dot_general"(%{{.*}}, %{{.*}}) {{.*}} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>

// HELP: plugin passes (--load-pass-plugin):
// HELP: --bf16-matmul {{ *}}Run f32 matmuls on bf16 operands, accumulating in f32.

module {
  func.func @main(%arg0: tensor<8x16xf32>, %arg1: tensor<16x4xf32>) -> tensor<8x4xf32> {
    %0 = "jaxpr.dot_general"(%arg0, %arg1) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %1 = "jaxpr.tanh"(%0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    return %1 : tensor<8x4xf32>
  }
  func.func @ints(%arg0: tensor<2x3xi32>, %arg1: tensor<3x2xi32>) -> tensor<2x2xi32> {
    %0 = "jaxpr.dot_general"(%arg0, %arg1) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<2x3xi32>, tensor<3x2xi32>) -> tensor<2x2xi32>
    return %0 : tensor<2x2xi32>
  }
}
