// --jaxpr-vjp through jaxpr.scan and jaxpr.cond: partial evaluation splits each op into
// a forward op (primal values + residuals) and a linear op, which is then transposed.
// RUN: mjax-opt %s --jaxpr-vjp --split-input-file | filecheck %s

// Residuals: exp(w) depends on the const w only, so it is computed once before the
// loop (hoisted); cos(c) changes every iteration, so the forward scan stacks it (an
// extra ys result). The transposed scan runs in reverse over the stacked residuals.
// CHECK-LABEL: func.func private @f_scan_fwd_a1_r0
// CHECK-SAME:    (%[[W:.*]]: tensor<f32>, %[[C0:.*]]: tensor<3xf32>, %[[XS:.*]]: tensor<5x3xf32>)
// CHECK:         %[[E:.*]] = "jaxpr.exp"(%[[W]])
// CHECK:         %[[EB:.*]] = "jaxpr.broadcast_in_dim"(%[[E]])
// CHECK:         %[[S:.*]]:3 = "jaxpr.scan"(%[[W]], %[[C0]], %[[XS]]) ({
// CHECK:         ^bb0(%{{.*}}: tensor<f32>, %[[C:.*]]: tensor<3xf32>, %{{.*}}: tensor<3xf32>):
// CHECK:           %[[COS:.*]] = "jaxpr.cos"(%[[C]])
// CHECK:           "jaxpr.yield"(%{{.*}}, %{{.*}}, %[[COS]])
// CHECK:         -> (tensor<3xf32>, tensor<5x3xf32>, tensor<5x3xf32>)
// CHECK:         return %[[S]]#0, %[[EB]], %[[S]]#2
// CHECK-LABEL: func.func private @f_scan_bwd_a1_r0
// CHECK-SAME:    (%[[R:.*]]: tensor<3xf32>, %[[RS:.*]]: tensor<5x3xf32>, %[[CT:.*]]: tensor<3xf32>)
// CHECK:         %[[B:.*]] = "jaxpr.scan"(%[[R]], %[[CT]], %[[RS]]) ({
// CHECK:         ^bb0(%[[BR:.*]]: tensor<3xf32>, %[[BCT:.*]]: tensor<3xf32>, %[[BRS:.*]]: tensor<3xf32>):
// CHECK:           %[[M1:.*]] = "jaxpr.mul"(%[[BCT]], %[[BR]])
// CHECK:           %[[M2:.*]] = "jaxpr.mul"(%[[M1]], %[[BRS]])
// CHECK:           "jaxpr.yield"(%[[M2]])
// CHECK:         }) {length = 5 : i64, num_carry = 1 : i64, num_consts = 1 : i64, reverse = true
// CHECK:         return %[[B]]
func.func private @f_scan(%w: tensor<f32>, %c0: tensor<3xf32>, %xs: tensor<5x3xf32>) -> tensor<3xf32> {
  %0:2 = "jaxpr.scan"(%w, %c0, %xs) ({
  ^bb0(%wa: tensor<f32>, %c: tensor<3xf32>, %x: tensor<3xf32>):
    %e = "jaxpr.exp"(%wa) : (tensor<f32>) -> tensor<f32>
    %eb = "jaxpr.broadcast_in_dim"(%e) {shape = array<i64: 3>, broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<3xf32>
    %s = "jaxpr.sin"(%c) : (tensor<3xf32>) -> tensor<3xf32>
    %m = "jaxpr.mul"(%s, %eb) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    %a = "jaxpr.add"(%m, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
    "jaxpr.yield"(%a, %a) : (tensor<3xf32>, tensor<3xf32>) -> ()
  }) {length = 5 : i64, num_consts = 1 : i64, num_carry = 1 : i64} : (tensor<f32>, tensor<3xf32>, tensor<5x3xf32>) -> (tensor<3xf32>, tensor<5x3xf32>)
  return %0#0 : tensor<3xf32>
}
func.func @scan_vjp(%w: tensor<f32>, %c0: tensor<3xf32>, %xs: tensor<5x3xf32>, %ct: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.vjp"(%w, %c0, %xs, %ct) {callee = @f_scan, diff_args = array<i64: 1>} : (tensor<f32>, tensor<3xf32>, tensor<5x3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}


// -----

// Each branch has its own residuals (cos(x) in branch 0, x in branch 1); the forward
// cond yields all of them, zeros for the other branch's. The transposed cond takes the
// residuals and the cotangent.
// CHECK-LABEL: func.func private @f_cond_fwd
// CHECK:         %[[F:.*]]:3 = "jaxpr.cond"
// CHECK:         ^bb0(%[[A:.*]]: tensor<f32>):
// CHECK:           %[[COS:.*]] = "jaxpr.cos"(%[[A]])
// CHECK:           %[[Z:.*]] = "jaxpr.constant"() {value = dense<0.000000e+00>
// CHECK:           "jaxpr.yield"(%{{.*}}, %[[COS]], %[[Z]])
// CHECK:         ^bb0(%[[A2:.*]]: tensor<f32>):
// CHECK:           %[[Z2:.*]] = "jaxpr.constant"() {value = dense<0.000000e+00>
// CHECK:           "jaxpr.yield"(%{{.*}}, %[[Z2]], %[[A2]])
// CHECK:         -> (tensor<f32>, tensor<f32>, tensor<f32>)
// CHECK-LABEL: func.func private @f_cond_bwd
// CHECK-SAME:    (%[[I:.*]]: tensor<i32>, %[[R0:.*]]: tensor<f32>, %[[R1:.*]]: tensor<f32>, %[[CT:.*]]: tensor<f32>)
// CHECK:         %[[B:.*]] = "jaxpr.cond"(%[[I]], %[[R0]], %[[R1]], %[[CT]]) ({
// CHECK:         ^bb0(%[[BR0:.*]]: tensor<f32>, %{{.*}}: tensor<f32>, %[[BCT:.*]]: tensor<f32>):
// CHECK:           "jaxpr.mul"(%[[BCT]], %[[BR0]])
// CHECK:         }, {
// CHECK:           "jaxpr.add"
// CHECK:         return %[[B]]
func.func private @f_cond(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    %1 = "jaxpr.sin"(%a) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    %1 = "jaxpr.mul"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @cond_vjp(%i: tensor<i32>, %x: tensor<f32>, %ct: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.vjp"(%i, %x, %ct) {callee = @f_cond, diff_args = array<i64: 1>} : (tensor<i32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
