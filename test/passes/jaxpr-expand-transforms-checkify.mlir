// RUN: mjax-opt %s --jaxpr-expand-transforms --jaxpr-to-stablehlo --split-input-file | filecheck %s
// RUN: mjax-opt %s --jaxpr-expand-transforms --jaxpr-to-stablehlo --split-input-file | filecheck %s --check-prefix=GONE
// checkify consumes the function it checks: once the jaxpr.checkify ops are expanded,
// the unchecked private @f, which nothing runs any more, is erased with it (its
// jaxpr.check cannot be lowered outside checkify), so a valid checkify program lowers
// without --jaxpr-dce. A function still called stays.

// CHECK-LABEL: func.func private @f_checkify
// CHECK-NOT:     jaxpr.
// CHECK:         stablehlo.log
// CHECK-LABEL: func.func @user_check
// CHECK:         call @f_checkify
// CHECK-NOT:     jaxpr.
// GONE-NOT:      func.func private @f(
func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  %z = "jaxpr.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %ok = "jaxpr.gt"(%x, %z) : (tensor<f32>, tensor<f32>) -> tensor<i1>
  "jaxpr.check"(%ok, %x) {msg = "{} must be positive"} : (tensor<i1>, tensor<f32>) -> ()
  %y = "jaxpr.log"(%x) : (tensor<f32>) -> tensor<f32>
  return %y : tensor<f32>
}
func.func @user_check(%x: tensor<f32>) -> (tensor<i1>, tensor<i32>, tensor<f32>, tensor<f32>) {
  %p, %c, %v, %y = "jaxpr.checkify"(%x) {callee = @f, errors = ["user"], error_payloads = [["tensor<f32>"]]} : (tensor<f32>) -> (tensor<i1>, tensor<i32>, tensor<f32>, tensor<f32>)
  return %p, %c, %v, %y : tensor<i1>, tensor<i32>, tensor<f32>, tensor<f32>
}

// -----

// The functions only the consumed one called go with it: @inner's check is lowered
// only inside @outer_checkify's copy.
// CHECK-LABEL: func.func private @inner_checkify
// CHECK-LABEL: func.func private @outer_checkify
// CHECK:         call @inner_checkify
// CHECK-LABEL: func.func @nested_call
// CHECK:         call @outer_checkify
// CHECK-NOT:     jaxpr.
// GONE-NOT:      func.func private @outer(
// GONE-NOT:      func.func private @inner(
func.func private @inner(%x: tensor<f32>) -> tensor<f32> {
  %z = "jaxpr.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %ok = "jaxpr.gt"(%x, %z) : (tensor<f32>, tensor<f32>) -> tensor<i1>
  "jaxpr.check"(%ok) {msg = "negative"} : (tensor<i1>) -> ()
  return %x : tensor<f32>
}
func.func private @outer(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.call"(%x) {callee = @inner} : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.sin"(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func @nested_call(%x: tensor<f32>) -> (tensor<i1>, tensor<i32>, tensor<f32>) {
  %p, %c, %y = "jaxpr.checkify"(%x) {callee = @outer, errors = ["user"], error_payloads = [[]]} : (tensor<f32>) -> (tensor<i1>, tensor<i32>, tensor<f32>)
  return %p, %c, %y : tensor<i1>, tensor<i32>, tensor<f32>
}

// -----

// A consumed function that something else still calls is kept.
// CHECK-LABEL: func.func private @g
// CHECK:         stablehlo.sine
// CHECK-LABEL: func.func @still_called
func.func private @g(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @still_called(%x: tensor<f32>, %t: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0:2 = "jaxpr.jvp"(%x, %t) {callee = @g} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  %1 = "jaxpr.call"(%x) {callee = @g} : (tensor<f32>) -> tensor<f32>
  return %0#1, %1 : tensor<f32>, tensor<f32>
}
