// RUN: mjax-opt %s --load-pass-plugin=%S/../../examples/passes/count_flops.py --count-flops=report=true 2>&1 >/dev/null | filecheck %s
// RUN: mjax-opt %s --load-pass-plugin=%S/../../examples/passes/count_flops.py --count-flops | filecheck %s --check-prefix=SAME

// 2*8*16*4 = 1024 for the matmul, 32 for tanh, 32 for add; the constant costs nothing.
// CHECK: count-flops: 1088 flops
// CHECK: count-flops: jaxpr.add 1
// CHECK: count-flops: jaxpr.constant 1
// CHECK: count-flops: jaxpr.dot_general 1
// CHECK: count-flops: jaxpr.tanh 1

// An analysis: the module comes out as it went in.
// SAME:      "jaxpr.dot_general"
// SAME-NEXT: "jaxpr.tanh"
// SAME-NEXT: "jaxpr.constant"
// SAME-NEXT: "jaxpr.add"

module {
  func.func @main(%arg0: tensor<8x16xf32>, %arg1: tensor<16x4xf32>) -> tensor<8x4xf32> {
    %0 = "jaxpr.dot_general"(%arg0, %arg1) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<8x16xf32>, tensor<16x4xf32>) -> tensor<8x4xf32>
    %1 = "jaxpr.tanh"(%0) : (tensor<8x4xf32>) -> tensor<8x4xf32>
    %2 = "jaxpr.constant"() {value = dense<1.000000e+00> : tensor<8x4xf32>} : () -> tensor<8x4xf32>
    %3 = "jaxpr.add"(%1, %2) : (tensor<8x4xf32>, tensor<8x4xf32>) -> tensor<8x4xf32>
    return %3 : tensor<8x4xf32>
  }
}
