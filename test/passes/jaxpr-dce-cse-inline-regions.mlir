// --jaxpr-inline, --jaxpr-dce and --jaxpr-cse on ops with regions (cond/while/scan).
// RUN: mjax-opt %s --jaxpr-inline --jaxpr-dce --jaxpr-cse --jaxpr-verify --split-input-file | filecheck %s

// A call inside a body is inlined there; the callee goes away.
// CHECK-LABEL: func.func @inline_call_in_branch
// CHECK:         "jaxpr.cond"
// CHECK:           "jaxpr.sin"
// CHECK-NOT:     jaxpr.call
// CHECK-NOT:     func.func private @sq
func.func private @sq(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @inline_call_in_branch(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    %1 = "jaxpr.call"(%a) {callee = @sq} : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    "jaxpr.yield"(%a) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Dead ops inside a body go; the yield and an unused loop carry stay; identical ops in
// a body merge.
// CHECK-LABEL: func.func @dce_cse_in_scan_body
// CHECK:         %[[R:.*]]:2 = "jaxpr.scan"
// CHECK-NOT:       "jaxpr.exp"
// CHECK:           %[[C:.*]] = "jaxpr.cos"
// CHECK-NOT:       "jaxpr.cos"
// CHECK:           "jaxpr.mul"(%[[C]], %[[C]])
// CHECK:           "jaxpr.yield"
// CHECK:         return %[[R]]#1
func.func @dce_cse_in_scan_body(%c0: tensor<f32>, %xs: tensor<3xf32>) -> tensor<3xf32> {
  %0:2 = "jaxpr.scan"(%c0, %xs) ({
  ^bb0(%c: tensor<f32>, %x: tensor<f32>):
    %1 = "jaxpr.exp"(%x) : (tensor<f32>) -> tensor<f32>
    %2 = "jaxpr.cos"(%x) : (tensor<f32>) -> tensor<f32>
    %3 = "jaxpr.cos"(%x) : (tensor<f32>) -> tensor<f32>
    %4 = "jaxpr.mul"(%2, %3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%c, %4) : (tensor<f32>, tensor<f32>) -> ()
  }) {length = 3 : i64, num_carry = 1 : i64} : (tensor<f32>, tensor<3xf32>) -> (tensor<f32>, tensor<3xf32>)
  return %0#1 : tensor<3xf32>
}

// -----

// A control-flow op whose results are all unused is removed.
// CHECK-LABEL: func.func @dce_unused_while
// CHECK-NOT:     jaxpr.while
// CHECK:         return
func.func @dce_unused_while(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.while"(%x) ({
  ^bb0(%c: tensor<f32>):
    %1 = "jaxpr.constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>
    "jaxpr.yield"(%1) : (tensor<i1>) -> ()
  }, {
  ^bb0(%c: tensor<f32>):
    "jaxpr.yield"(%c) : (tensor<f32>) -> ()
  }) : (tensor<f32>) -> tensor<f32>
  return %x : tensor<f32>
}
