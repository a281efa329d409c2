// RUN: mjax-opt %s --jaxpr-jvp --split-input-file | filecheck %s

// The JVP of a check checks the primals; it has no tangent (JAX: check_jvp_rule).
// CHECK-LABEL: func.func private @f_jvp
// CHECK-SAME:    (%[[X:[^:]*]]: tensor<f32>, %[[T:[^:]*]]: tensor<f32>)
// CHECK:         %[[OK:.*]] = "jaxpr.gt"(%[[X]]
// CHECK:         "jaxpr.check"(%[[OK]], %[[X]]) {{{.*}}msg = "{} must be positive"}
// CHECK:         %[[C:.*]] = "jaxpr.cos"(%[[X]])
// CHECK:         %[[DY:.*]] = "jaxpr.mul"(%[[T]], %[[C]])
// CHECK:         return %{{.*}}, %[[DY]]
func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  %z = "jaxpr.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %ok = "jaxpr.gt"(%x, %z) : (tensor<f32>, tensor<f32>) -> tensor<i1>
  "jaxpr.check"(%ok, %x) {msg = "{} must be positive"} : (tensor<i1>, tensor<f32>) -> ()
  %y = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}
func.func @check_jvp(%x: tensor<f32>, %t: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0:2 = "jaxpr.jvp"(%x, %t) {callee = @f} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#0, %0#1 : tensor<f32>, tensor<f32>
}
