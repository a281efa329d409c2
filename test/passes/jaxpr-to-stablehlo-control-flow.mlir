// --jaxpr-to-stablehlo on every op in dialect/ops/control_flow.py, bodies included.
// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// Two branches: stablehlo.case on the index, branch 0 first, as JAX lowers a cond
// (XLA's copy insertion depends on the order: passes/rules/control_flow.py).
// CHECK-LABEL: func.func @cond_two_branches
// CHECK-SAME:    (%[[I:.*]]: tensor<i32>, %[[X:.*]]: tensor<f32>)
// CHECK-NOT:     stablehlo.compare
// CHECK:         %[[R:.*]] = "stablehlo.case"(%[[I]]) ({
// CHECK:           %[[S:.*]] = stablehlo.sine %[[X]]
// CHECK:           stablehlo.return %[[S]]
// CHECK:         }, {
// CHECK:           %[[N:.*]] = stablehlo.negate %[[X]]
// CHECK:           stablehlo.return %[[N]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @cond_two_branches(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    %1 = "jaxpr.sin"(%a) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    %1 = "jaxpr.neg"(%a) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @cond_three_branches_to_case
// CHECK-SAME:    (%[[I:.*]]: tensor<i32>, %[[X:.*]]: tensor<f32>)
// CHECK:         "stablehlo.case"(%[[I]]) ({
// CHECK:           stablehlo.sine %[[X]]
// CHECK:         }, {
// CHECK:           stablehlo.cosine %[[X]]
// CHECK:         }, {
// CHECK:           stablehlo.negate %[[X]]
// CHECK-NOT:     jaxpr.
func.func @cond_three_branches_to_case(%i: tensor<i32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.cond"(%i, %x) ({
  ^bb0(%a: tensor<f32>):
    %1 = "jaxpr.sin"(%a) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    %1 = "jaxpr.cos"(%a) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }, {
  ^bb0(%a: tensor<f32>):
    %1 = "jaxpr.neg"(%a) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Consts are used from above inside the stablehlo.while regions.
// CHECK-LABEL: func.func @while_to_while
// CHECK-SAME:    (%[[L:.*]]: tensor<f32>, %[[S:.*]]: tensor<f32>, %[[X:.*]]: tensor<f32>)
// CHECK:         %[[R:.*]] = stablehlo.while(%[[C:.*]] = %[[X]])
// CHECK:         cond {
// CHECK:           %[[P:.*]] = stablehlo.compare LT, %[[C]], %[[L]]
// CHECK:           stablehlo.return %[[P]]
// CHECK:         } do {
// CHECK:           %[[N:.*]] = stablehlo.add %[[C]], %[[S]]
// CHECK:           stablehlo.return %[[N]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @while_to_while(%limit: tensor<f32>, %step: tensor<f32>, %x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.while"(%limit, %step, %x) ({
  ^bb0(%l: tensor<f32>, %c: tensor<f32>):
    %1 = "jaxpr.lt"(%c, %l) : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "jaxpr.yield"(%1) : (tensor<i1>) -> ()
  }, {
  ^bb0(%s: tensor<f32>, %c: tensor<f32>):
    %1 = "jaxpr.add"(%c, %s) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) {cond_nconsts = 1 : i64, body_nconsts = 1 : i64} : (tensor<f32>, tensor<f32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// A scan is a while over (i, carry, ys): x read by dynamic_slice at i, y written by
// dynamic_update_slice at i.
// CHECK-LABEL: func.func @scan_to_while
// CHECK-SAME:    (%[[C0:.*]]: tensor<f32>, %[[XS:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]]:3 = stablehlo.while(%[[I:.*]] = %{{.*}}, %[[C:.*]] = %[[C0]], %[[YS:.*]] = %{{.*}})
// CHECK:         cond {
// CHECK:           stablehlo.compare LT, %[[I]]
// CHECK:         } do {
// CHECK:           %[[X1:.*]] = stablehlo.dynamic_slice %[[XS]], %[[I]], sizes = [1]
// CHECK:           %[[X:.*]] = stablehlo.reshape %[[X1]]
// CHECK:           %[[N:.*]] = stablehlo.add %[[C]], %[[X]]
// CHECK:           %[[Y:.*]] = stablehlo.broadcast_in_dim %[[N]], dims = []
// CHECK:           %[[U:.*]] = stablehlo.dynamic_update_slice %[[YS]], %[[Y]], %[[I]]
// CHECK:           %[[I1:.*]] = stablehlo.add %[[I]]
// CHECK:           stablehlo.return %[[I1]], %[[N]], %[[U]]
// CHECK:         return %[[R]]#1, %[[R]]#2
// CHECK-NOT:     jaxpr.
func.func @scan_to_while(%c0: tensor<f32>, %xs: tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>) {
  %0:2 = "jaxpr.scan"(%c0, %xs) ({
  ^bb0(%c: tensor<f32>, %x: tensor<f32>):
    %1 = "jaxpr.add"(%c, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1, %1) : (tensor<f32>, tensor<f32>) -> ()
  }) {length = 4 : i64, num_carry = 1 : i64} : (tensor<f32>, tensor<4xf32>) -> (tensor<f32>, tensor<4xf32>)
  return %0#0, %0#1 : tensor<f32>, tensor<4xf32>
}

// -----

// unroll = 2 over length 5: two body copies per iteration while i < 4, then one more
// copy after the loop at the constant index 4; reverse reads index 4 - i.
// CHECK-LABEL: func.func @scan_unroll_reverse
// CHECK:         stablehlo.while
// CHECK:         cond {
// CHECK:           stablehlo.compare LT
// CHECK:         } do {
// CHECK:           stablehlo.subtract
// CHECK-COUNT-2:   stablehlo.sine
// CHECK:           stablehlo.return
// CHECK:         }
// CHECK:         stablehlo.dynamic_slice
// CHECK:         stablehlo.sine
// CHECK:         stablehlo.dynamic_update_slice
// CHECK-NOT:     jaxpr.
func.func @scan_unroll_reverse(%xs: tensor<5xf32>) -> tensor<5xf32> {
  %0 = "jaxpr.scan"(%xs) ({
  ^bb0(%x: tensor<f32>):
    %1 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) {length = 5 : i64, reverse = true, unroll = 2 : i64} : (tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Zero iterations: no loop; the carry passes through and ys are zeros.
// CHECK-LABEL: func.func @scan_length_zero
// CHECK-SAME:    (%[[C0:.*]]: tensor<f32>, %{{.*}}: tensor<0xf32>)
// CHECK-NOT:     stablehlo.while
// CHECK:         %[[Z:.*]] = stablehlo.constant dense<> : tensor<0xf32>
// CHECK:         return %[[C0]], %[[Z]]
func.func @scan_length_zero(%c0: tensor<f32>, %xs: tensor<0xf32>) -> (tensor<f32>, tensor<0xf32>) {
  %0:2 = "jaxpr.scan"(%c0, %xs) ({
  ^bb0(%c: tensor<f32>, %x: tensor<f32>):
    "jaxpr.yield"(%c, %x) : (tensor<f32>, tensor<f32>) -> ()
  }) {length = 0 : i64, num_carry = 1 : i64} : (tensor<f32>, tensor<0xf32>) -> (tensor<f32>, tensor<0xf32>)
  return %0#0, %0#1 : tensor<f32>, tensor<0xf32>
}

// -----

// Nested region ops lower recursively.
// CHECK-LABEL: func.func @scan_with_nested_cond
// CHECK:         stablehlo.while
// CHECK:           "stablehlo.case"
// CHECK:             stablehlo.negate
// CHECK-NOT:     jaxpr.
func.func @scan_with_nested_cond(%c0: tensor<f32>, %ps: tensor<3xi32>) -> tensor<f32> {
  %0 = "jaxpr.scan"(%c0, %ps) ({
  ^bb0(%c: tensor<f32>, %p: tensor<i32>):
    %1 = "jaxpr.cond"(%p, %c) ({
    ^bb0(%a: tensor<f32>):
      "jaxpr.yield"(%a) : (tensor<f32>) -> ()
    }, {
    ^bb0(%a: tensor<f32>):
      %2 = "jaxpr.neg"(%a) : (tensor<f32>) -> tensor<f32>
      "jaxpr.yield"(%2) : (tensor<f32>) -> ()
    }) : (tensor<i32>, tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%1) : (tensor<f32>) -> ()
  }) {length = 3 : i64, num_carry = 1 : i64} : (tensor<f32>, tensor<3xi32>) -> tensor<f32>
  return %0 : tensor<f32>
}
