// --jaxpr-batch through jaxpr.cond / jaxpr.while / jaxpr.scan.
// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// A batched index: both branches run on the (unbatched) operand and select_n picks
// each element's result. A batched operand with an unbatched index: the cond stays, its
// branches batched.
// CHECK-LABEL: func.func private @f_cond_batched_1
// CHECK-SAME:    (%[[IS:.*]]: tensor<4xi32>, %[[X:.*]]: tensor<3xf32>)
// CHECK-DAG:     %[[S:.*]] = "jaxpr.sin"(%[[X]]) : (tensor<3xf32>)
// CHECK-DAG:     %[[N:.*]] = "jaxpr.neg"(%[[X]]) : (tensor<3xf32>)
// CHECK-DAG:     %[[SB:.*]] = "jaxpr.broadcast_in_dim"(%[[S]])
// CHECK-DAG:     %[[NB:.*]] = "jaxpr.broadcast_in_dim"(%[[N]])
// CHECK:         %[[IB:.*]] = "jaxpr.broadcast_in_dim"(%[[IS]]) {broadcast_dimensions = array<i64: 0>
// CHECK:         %[[P:.*]] = "jaxpr.ne"(%[[IB]]
// CHECK:         %[[R:.*]] = "jaxpr.select_n"(%[[P]], %[[SB]], %[[NB]])
// CHECK:         return %[[R]]
// CHECK-LABEL: func.func private @f_cond_batched
// CHECK-SAME:    (%[[I:.*]]: tensor<i32>, %[[XS:.*]]: tensor<4x3xf32>)
// CHECK:         "jaxpr.cond"(%[[I]], %[[XS]]) ({
// CHECK:           "jaxpr.sin"(%{{.*}}) : (tensor<4x3xf32>)
// CHECK:         }, {
// CHECK:           "jaxpr.neg"(%{{.*}}) : (tensor<4x3xf32>)
// CHECK:         }) : (tensor<i32>, tensor<4x3xf32>) -> tensor<4x3xf32>
func.func private @f_cond(%i: tensor<i32>, %x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<3xf32>):
    %1 = "jaxpr.sin"(%a) : (tensor<3xf32>) -> tensor<3xf32>
    "jaxpr.yield"(%1) : (tensor<3xf32>) -> ()
  }, {
  ^bb0(%a: tensor<3xf32>):
    %1 = "jaxpr.neg"(%a) : (tensor<3xf32>) -> tensor<3xf32>
    "jaxpr.yield"(%1) : (tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @cond_batched_operand(%i: tensor<i32>, %xs: tensor<4x3xf32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.vmap"(%i, %xs) {callee = @f_cond, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 4 : i64} : (tensor<i32>, tensor<4x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
func.func @cond_batched_index(%is: tensor<4xi32>, %x: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.vmap"(%is, %x) {callee = @f_cond, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 4 : i64} : (tensor<4xi32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}


// -----

// A batched predicate: the loop runs while any element's predicate holds; the body
// recomputes the predicate and keeps finished elements' carries (select_n). The counter,
// unbatched on entry, becomes batched (each element counts its own trips).
// CHECK-LABEL: func.func private @f_while_batched
// CHECK-SAME:    (%[[XS:.*]]: tensor<4xf32>)
// CHECK:         %[[K:.*]] = "jaxpr.broadcast_in_dim"
// CHECK:         "jaxpr.while"(%[[K]], %[[XS]]) ({
// CHECK:           %[[P:.*]] = "jaxpr.lt"(%{{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK:           %[[ANY:.*]] = "jaxpr.reduce_or"(%[[P]]) {axes = array<i64: 0>}
// CHECK:           "jaxpr.yield"(%[[ANY]])
// CHECK:         }, {
// CHECK:         ^bb0(%[[BK:.*]]: tensor<4xi32>, %[[BV:.*]]: tensor<4xf32>):
// CHECK:           %[[P2:.*]] = "jaxpr.lt"(%[[BV]]
// CHECK:           %[[K1:.*]] = "jaxpr.add"(%[[BK]]
// CHECK:           %[[V1:.*]] = "jaxpr.add"(%[[BV]], %[[BV]])
// CHECK:           %[[W1:.*]] = "jaxpr.broadcast_in_dim"(%[[P2]])
// CHECK:           %[[SK:.*]] = "jaxpr.select_n"(%[[W1]], %[[BK]], %[[K1]])
// CHECK:           %[[W2:.*]] = "jaxpr.broadcast_in_dim"(%[[P2]])
// CHECK:           %[[SV:.*]] = "jaxpr.select_n"(%[[W2]], %[[BV]], %[[V1]])
// CHECK:           "jaxpr.yield"(%[[SK]], %[[SV]])
func.func private @f_while(%x: tensor<f32>) -> (tensor<i32>, tensor<f32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %0:2 = "jaxpr.while"(%z, %x) ({
  ^bb0(%k: tensor<i32>, %v: tensor<f32>):
    %ten = "jaxpr.constant"() {value = dense<10.0> : tensor<f32>} : () -> tensor<f32>
    %p = "jaxpr.lt"(%v, %ten) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "jaxpr.yield"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%k: tensor<i32>, %v: tensor<f32>):
    %one = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %k1 = "jaxpr.add"(%k, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %v1 = "jaxpr.add"(%v, %v) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%k1, %v1) : (tensor<i32>, tensor<f32>) -> ()
  }) {cond_nconsts = 0 : i64, body_nconsts = 0 : i64} : (tensor<i32>, tensor<f32>) -> (tensor<i32>, tensor<f32>)
  return %0#0, %0#1 : tensor<i32>, tensor<f32>
}
func.func @while_batched_predicate(%xs: tensor<4xf32>) -> (tensor<4xi32>, tensor<4xf32>) {
  %0:2 = "jaxpr.vmap"(%xs) {callee = @f_while, in_axes = array<i64: 0>, out_axes = array<i64: 0, 0>, axis_size = 4 : i64} : (tensor<4xf32>) -> (tensor<4xi32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<4xi32>, tensor<4xf32>
}


// -----

// Batched xs (batch axis 1, so each x slice is batched at 0): the carry multiplied by x
// becomes batched (fixed point), the one fed only by the unbatched const stays a scalar;
// ys come out batched at axis 1.
// CHECK-LABEL: func.func private @f_scan_batched
// CHECK-SAME:    (%[[W:.*]]: tensor<f32>, %[[N0:.*]]: tensor<f32>, %[[C0:.*]]: tensor<f32>, %[[XS:.*]]: tensor<5x4xf32>)
// CHECK:         %[[CB:.*]] = "jaxpr.broadcast_in_dim"(%[[C0]])
// CHECK:         %[[R:.*]]:3 = "jaxpr.scan"(%[[W]], %[[N0]], %[[CB]], %[[XS]]) ({
// CHECK:         ^bb0(%{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<4xf32>, %{{.*}}: tensor<4xf32>):
// CHECK:         -> (tensor<f32>, tensor<4xf32>, tensor<5x4xf32>)
// CHECK-LABEL: func.func @scan_batched_xs
// CHECK:         %[[C:.*]]:3 = "jaxpr.call"
// CHECK:         "jaxpr.transpose"(%[[C]]#2) {permutation = array<i64: 1, 0>}
func.func private @f_scan(%w: tensor<f32>, %n0: tensor<f32>, %c0: tensor<f32>, %xs: tensor<5xf32>) -> (tensor<f32>, tensor<f32>, tensor<5xf32>) {
  %0:3 = "jaxpr.scan"(%w, %n0, %c0, %xs) ({
  ^bb0(%wa: tensor<f32>, %n: tensor<f32>, %c: tensor<f32>, %x: tensor<f32>):
    %n1 = "jaxpr.add"(%n, %wa) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %1 = "jaxpr.mul"(%c, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%n1, %1, %1) : (tensor<f32>, tensor<f32>, tensor<f32>) -> ()
  }) {length = 5 : i64, num_consts = 1 : i64, num_carry = 2 : i64} : (tensor<f32>, tensor<f32>, tensor<f32>, tensor<5xf32>) -> (tensor<f32>, tensor<f32>, tensor<5xf32>)
  return %0#0, %0#1, %0#2 : tensor<f32>, tensor<f32>, tensor<5xf32>
}
func.func @scan_batched_xs(%w: tensor<f32>, %c0: tensor<f32>, %xs: tensor<5x4xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<4x5xf32>) {
  %0:3 = "jaxpr.vmap"(%w, %c0, %c0, %xs) {callee = @f_scan, in_axes = array<i64: -1, -1, -1, 1>, out_axes = array<i64: -1, 0, 0>, axis_size = 4 : i64} : (tensor<f32>, tensor<f32>, tensor<f32>, tensor<5x4xf32>) -> (tensor<f32>, tensor<4xf32>, tensor<4x5xf32>)
  return %0#0, %0#1, %0#2 : tensor<f32>, tensor<4xf32>, tensor<4x5xf32>
}
