// RUN: mjax-opt %s --jaxpr-expand-transforms --split-input-file | filecheck %s

// linear_transpose: each op is transposed by its own rule, as JAX's backward pass does.
// @f is linear in %x (its first argument); %c is a non-linear operand. The custom_jvp
// call is transposed through its primal @double (2 * ct), never its JVP rule @double_jvp
// (which would give 3 * ct).
// CHECK-LABEL: func.func private @f_transpose
// CHECK-SAME:    (%[[C:.*]]: tensor<3xf32>, %[[CT:.*]]: tensor<3xf32>)
// CHECK-DAG:     %[[TWO:.*]] = "jaxpr.constant"() {value = dense<2.000000e+00> : tensor<3xf32>}
// CHECK-DAG:     "jaxpr.mul"(%[[CT]], %[[C]])
// CHECK:         "jaxpr.mul"({{.*}}%[[TWO]]{{.*}})
// CHECK-NOT:     3.000000e+00
// CHECK-LABEL: func.func @main
// CHECK:         "jaxpr.call"(%{{.*}}, %{{.*}}) {callee = @f_transpose}
// CHECK-NOT:     jaxpr.linear_transpose
func.func private @double(%x: tensor<3xf32>) -> tensor<3xf32> {
  %two = "jaxpr.constant"() {value = dense<2.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = "jaxpr.mul"(%x, %two) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @double_jvp(%x: tensor<3xf32>, %t: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %three = "jaxpr.constant"() {value = dense<3.0> : tensor<3xf32>} : () -> tensor<3xf32>
  %0 = "jaxpr.call"(%x) {callee = @double} : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.mul"(%t, %three) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1 : tensor<3xf32>, tensor<3xf32>
}
func.func private @f(%x: tensor<3xf32>, %c: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.custom_jvp_call"(%x) {callee = @double, jvp = @double_jvp} : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.mul"(%0, %c) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
func.func @main(%c: tensor<3xf32>, %ct: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.linear_transpose"(%c, %ct) {callee = @f, num_linear = 1} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

