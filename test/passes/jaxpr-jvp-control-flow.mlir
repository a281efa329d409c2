// --jaxpr-jvp through jaxpr.cond / jaxpr.while / jaxpr.scan: each body is JVP'd into a
// new region; symbolic-zero tangents stay symbolic (no tangent operand, no tangent result).
// RUN: mjax-opt %s --jaxpr-jvp --split-input-file | filecheck %s

// Each branch yields (primal, tangent); the branch with a constant output yields a zero
// tangent because the other branch's tangent is nonzero.
// CHECK-LABEL: func.func private @f_cond_jvp
// CHECK-SAME:    (%[[I:.*]]: tensor<i32>, %[[X:.*]]: tensor<f32>, %[[T:.*]]: tensor<f32>)
// CHECK:         %[[R:.*]]:2 = "jaxpr.cond"(%[[I]], %[[X]], %[[T]]) ({
// CHECK:         ^bb0(%[[A:.*]]: tensor<f32>, %[[AT:.*]]: tensor<f32>):
// CHECK:           %[[S:.*]] = "jaxpr.sin"(%[[A]])
// CHECK:           %[[C:.*]] = "jaxpr.cos"(%[[A]])
// CHECK:           %[[M:.*]] = "jaxpr.mul"(%[[AT]], %[[C]])
// CHECK:           "jaxpr.yield"(%[[S]], %[[M]])
// CHECK:         }, {
// CHECK:           %[[Z:.*]] = "jaxpr.constant"() {value = dense<0.000000e+00>
// CHECK:           "jaxpr.yield"(%{{.*}}, %[[Z]])
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func private @f_cond(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    %1 = "jaxpr.sin"(%a) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    %c = "jaxpr.constant"() {value = dense<2.0> : tensor<f32>} : () -> tensor<f32>
    "jaxpr.yield"(%c) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @cond_jvp(%i: tensor<i32>, %x: tensor<f32>, %t: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0:2 = "jaxpr.jvp"(%i, %x, %t) {callee = @f_cond, diff_args = array<i64: 1>, diff_results = array<i64: 0>} : (tensor<i32>, tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#0, %0#1 : tensor<f32>, tensor<f32>
}


// -----

// Only the const w has a tangent; the carry's tangent starts as a zero and turns
// nonzero in the body (fixed point), so it becomes a carry; ys (= xs) keeps a symbolic
// zero tangent: no extra ys result.
// CHECK-LABEL: func.func private @f_scan_jvp_a0_r0
// CHECK-SAME:    (%[[W:.*]]: tensor<f32>, %[[C0:.*]]: tensor<f32>, %[[XS:.*]]: tensor<5xf32>, %[[TW:.*]]: tensor<f32>)
// CHECK:         %[[Z:.*]] = "jaxpr.constant"() {value = dense<0.000000e+00>
// CHECK:         %[[R:.*]]:3 = "jaxpr.scan"(%[[W]], %[[TW]], %[[C0]], %[[Z]], %[[XS]]) ({
// CHECK:         ^bb0(%[[BW:.*]]: tensor<f32>, %[[BTW:.*]]: tensor<f32>, %[[C:.*]]: tensor<f32>, %[[CT:.*]]: tensor<f32>, %[[X:.*]]: tensor<f32>):
// CHECK-DAG:       "jaxpr.mul"(%[[CT]], %[[BW]])
// CHECK-DAG:       "jaxpr.mul"(%[[C]], %[[BTW]])
// CHECK:           "jaxpr.yield"(%{{.*}}, %{{.*}}, %[[X]])
// CHECK:         }) {length = 5 : i64, num_carry = 2 : i64, num_consts = 2 : i64
// CHECK-SAME:    -> (tensor<f32>, tensor<f32>, tensor<5xf32>)
// CHECK:         return %[[R]]#0, %[[R]]#2, %[[R]]#1
func.func private @f_scan(%w: tensor<f32>, %c0: tensor<f32>, %xs: tensor<5xf32>) -> (tensor<f32>, tensor<5xf32>) {
  %0:2 = "jaxpr.scan"(%w, %c0, %xs) ({
  ^bb0(%wa: tensor<f32>, %c: tensor<f32>, %x: tensor<f32>):
    %1 = "jaxpr.mul"(%c, %wa) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %2 = "jaxpr.add"(%1, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%2, %x) : (tensor<f32>, tensor<f32>) -> ()
  }) {length = 5 : i64, num_consts = 1 : i64, num_carry = 1 : i64} : (tensor<f32>, tensor<f32>, tensor<5xf32>) -> (tensor<f32>, tensor<5xf32>)
  return %0#0, %0#1 : tensor<f32>, tensor<5xf32>
}
func.func @scan_jvp_const_tangent(%w: tensor<f32>, %c0: tensor<f32>, %xs: tensor<5xf32>, %tw: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0:3 = "jaxpr.jvp"(%w, %c0, %xs, %tw) {callee = @f_scan, diff_args = array<i64: 0>, diff_results = array<i64: 0>} : (tensor<f32>, tensor<f32>, tensor<5xf32>, tensor<f32>) -> (tensor<f32>, tensor<5xf32>, tensor<f32>)
  return %0#0, %0#2 : tensor<f32>, tensor<f32>
}


// -----

// Forward mode through while: the integer counter gets no tangent; the cond region
// takes the tangent carry and ignores it.
// CHECK-LABEL: func.func private @f_while_jvp
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>, %[[T:.*]]: tensor<f32>)
// CHECK:         %[[R:.*]]:3 = "jaxpr.while"(%{{.*}}, %{{.*}}, %[[X]], %[[T]]) ({
// CHECK:         ^bb0(%{{.*}}: tensor<i32>, %[[K:.*]]: tensor<i32>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>):
// CHECK:           "jaxpr.lt"(%[[K]]
// CHECK:         }, {
// CHECK:         ^bb0(%{{.*}}: tensor<i32>, %[[V:.*]]: tensor<f32>, %[[VT:.*]]: tensor<f32>):
// CHECK:           %[[COS:.*]] = "jaxpr.cos"(%[[V]])
// CHECK:           %[[M:.*]] = "jaxpr.mul"(%[[VT]], %[[COS]])
// CHECK:           "jaxpr.yield"(%{{.*}}, %{{.*}}, %[[M]])
// CHECK:         }) {body_nconsts = 0 : i64, cond_nconsts = 1 : i64}
// CHECK:         return %[[R]]#1, %[[R]]#2
func.func private @f_while(%x: tensor<f32>) -> tensor<f32> {
  %n = "jaxpr.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %0:2 = "jaxpr.while"(%n, %z, %x) ({
  ^bb0(%nn: tensor<i32>, %k: tensor<i32>, %v: tensor<f32>):
    %p = "jaxpr.lt"(%k, %nn) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "jaxpr.yield"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%k: tensor<i32>, %v: tensor<f32>):
    %one = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %k1 = "jaxpr.add"(%k, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %s = "jaxpr.sin"(%v) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%k1, %s) : (tensor<i32>, tensor<f32>) -> ()
  }) {cond_nconsts = 1 : i64, body_nconsts = 0 : i64} : (tensor<i32>, tensor<i32>, tensor<f32>) -> (tensor<i32>, tensor<f32>)
  return %0#1 : tensor<f32>
}
func.func @while_jvp(%x: tensor<f32>, %t: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0:2 = "jaxpr.jvp"(%x, %t) {callee = @f_while} : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)
  return %0#0, %0#1 : tensor<f32>, tensor<f32>
}
