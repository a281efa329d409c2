// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// CHECK-LABEL: func.func @reduce_sum
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[INIT:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK:         %[[R:.*]] = stablehlo.reduce(%[[X]] init: %[[INIT]]) applies stablehlo.add across dimensions = [0, 1]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @reduce_sum(%x: tensor<2x3xf32>) -> tensor<f32> {
  %0 = "jaxpr.reduce_sum"(%x) {axes = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// CHECK-LABEL: func.func @reduce_prod_i32
// CHECK:         %[[INIT:.*]] = stablehlo.constant dense<1> : tensor<i32>
// CHECK:         stablehlo.reduce(%{{.*}} init: %[[INIT]]) applies stablehlo.multiply across dimensions = [1]
// CHECK-NOT:     jaxpr.
func.func @reduce_prod_i32(%x: tensor<2x3xi32>) -> tensor<2xi32> {
  %0 = "jaxpr.reduce_prod"(%x) {axes = array<i64: 1>} : (tensor<2x3xi32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// reduce_max starts from -inf.
// CHECK-LABEL: func.func @reduce_max_f32
// CHECK:         %[[INIT:.*]] = stablehlo.constant dense<0xFF800000> : tensor<f32>
// CHECK:         stablehlo.reduce(%{{.*}} init: %[[INIT]]) applies stablehlo.maximum across dimensions = [0]
// CHECK-NOT:     jaxpr.
func.func @reduce_max_f32(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.reduce_max"(%x) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// reduce_min over integers starts from the largest value.
// CHECK-LABEL: func.func @reduce_min_i8
// CHECK:         %[[INIT:.*]] = stablehlo.constant dense<127> : tensor<i8>
// CHECK:         stablehlo.reduce(%{{.*}} init: %[[INIT]]) applies stablehlo.minimum across dimensions = [0]
// CHECK-NOT:     jaxpr.
func.func @reduce_min_i8(%x: tensor<4xi8>) -> tensor<i8> {
  %0 = "jaxpr.reduce_min"(%x) {axes = array<i64: 0>} : (tensor<4xi8>) -> tensor<i8>
  return %0 : tensor<i8>
}

// -----

// CHECK-LABEL: func.func @reduce_and_bool
// CHECK:         %[[INIT:.*]] = stablehlo.constant dense<true> : tensor<i1>
// CHECK:         stablehlo.reduce(%{{.*}} init: %[[INIT]]) applies stablehlo.and across dimensions = [0]
// CHECK-NOT:     jaxpr.
func.func @reduce_and_bool(%x: tensor<4xi1>) -> tensor<i1> {
  %0 = "jaxpr.reduce_and"(%x) {axes = array<i64: 0>} : (tensor<4xi1>) -> tensor<i1>
  return %0 : tensor<i1>
}

// -----

// CHECK-LABEL: func.func @reduce_or_u8
// CHECK:         %[[INIT:.*]] = stablehlo.constant dense<0> : tensor<ui8>
// CHECK:         stablehlo.reduce(%{{.*}} init: %[[INIT]]) applies stablehlo.or across dimensions = [0]
// CHECK-NOT:     jaxpr.
func.func @reduce_or_u8(%x: tensor<4xui8>) -> tensor<ui8> {
  %0 = "jaxpr.reduce_or"(%x) {axes = array<i64: 0>} : (tensor<4xui8>) -> tensor<ui8>
  return %0 : tensor<ui8>
}

// -----

// argmax: variadic reduce over (value, iota); NaN-aware comparator; returns the index.
// CHECK-LABEL: func.func @argmax
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[IOTA:.*]] = stablehlo.iota dim = 1 : tensor<2x3xi32>
// CHECK:         %[[R:.*]]:2 = stablehlo.reduce(%[[X]] init: %{{.*}}), (%[[IOTA]] init: %{{.*}}) across dimensions = [1]
// CHECK:           stablehlo.compare GT
// CHECK:           stablehlo.compare NE
// CHECK:           stablehlo.compare LT, {{.*}} SIGNED
// CHECK:           stablehlo.return
// CHECK:         return %[[R]]#1 : tensor<2xi32>
// CHECK-NOT:     jaxpr.
func.func @argmax(%x: tensor<2x3xf32>) -> tensor<2xi32> {
  %0 = "jaxpr.argmax"(%x) {axes = array<i64: 1>, index_dtype = i32} : (tensor<2x3xf32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// argmin over integers: starts from the largest value and needs no NaN test.
// CHECK-LABEL: func.func @argmin_i32
// CHECK:         %[[IOTA:.*]] = stablehlo.iota dim = 0 : tensor<5xi64>
// CHECK:         %[[INIT:.*]] = stablehlo.constant dense<2147483647> : tensor<i32>
// CHECK:         %[[R:.*]]:2 = stablehlo.reduce(%{{.*}} init: %[[INIT]]), (%[[IOTA]] init: %{{.*}}) across dimensions = [0]
// CHECK-NOT:       stablehlo.compare NE
// CHECK:           stablehlo.compare LT
// CHECK:         return %[[R]]#1 : tensor<i64>
// CHECK-NOT:     jaxpr.
func.func @argmin_i32(%x: tensor<5xi32>) -> tensor<i64> {
  %0 = "jaxpr.argmin"(%x) {axes = array<i64: 0>, index_dtype = i64} : (tensor<5xi32>) -> tensor<i64>
  return %0 : tensor<i64>
}

// -----

// cumsum: a window over the whole axis, padded with n-1 zeros before it.
// CHECK-LABEL: func.func @cumsum
// CHECK:         %[[INIT:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK:         "stablehlo.reduce_window"(%{{.*}}, %[[INIT]]) <{padding = dense<{{\[\[}}0, 0], [3, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 1, 4>}>
// CHECK:           stablehlo.add
// CHECK-NOT:     jaxpr.
func.func @cumsum(%x: tensor<2x4xf32>) -> tensor<2x4xf32> {
  %0 = "jaxpr.cumsum"(%x) {axis = 1 : i64} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// reverse pads after the elements instead: a suffix scan.
// CHECK-LABEL: func.func @cumprod_reverse
// CHECK:         %[[INIT:.*]] = stablehlo.constant dense<1> : tensor<i32>
// CHECK:         "stablehlo.reduce_window"(%{{.*}}, %[[INIT]]) <{padding = dense<{{\[\[}}0, 2], [0, 0]]> : tensor<2x2xi64>, window_dimensions = array<i64: 3, 1>}>
// CHECK:           stablehlo.multiply
// CHECK-NOT:     jaxpr.
func.func @cumprod_reverse(%x: tensor<3x2xi32>) -> tensor<3x2xi32> {
  %0 = "jaxpr.cumprod"(%x) {axis = 0 : i64, reverse = true} : (tensor<3x2xi32>) -> tensor<3x2xi32>
  return %0 : tensor<3x2xi32>
}

// -----

// CHECK-LABEL: func.func @cummax
// CHECK:         %[[INIT:.*]] = stablehlo.constant dense<0xFF800000> : tensor<f32>
// CHECK:         "stablehlo.reduce_window"(%{{.*}}, %[[INIT]])
// CHECK:           stablehlo.maximum
// CHECK-NOT:     jaxpr.
func.func @cummax(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.cummax"(%x) {axis = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cummin
// CHECK:         %[[INIT:.*]] = stablehlo.constant dense<0x7F800000> : tensor<f32>
// CHECK:         "stablehlo.reduce_window"(%{{.*}}, %[[INIT]])
// CHECK:           stablehlo.minimum
// CHECK-NOT:     jaxpr.
func.func @cummin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.cummin"(%x) {axis = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// cumlogsumexp combines with a stable logaddexp, starting from -inf.
// CHECK-LABEL: func.func @cumlogsumexp
// CHECK:         %[[INIT:.*]] = stablehlo.constant dense<0xFF800000> : tensor<f32>
// CHECK:         "stablehlo.reduce_window"(%{{.*}}, %[[INIT]])
// CHECK:           stablehlo.log_plus_one
// CHECK:           stablehlo.select
// CHECK-NOT:     jaxpr.
func.func @cumlogsumexp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.cumlogsumexp"(%x) {axis = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// A length-1 axis needs no scan.
// CHECK-LABEL: func.func @cumsum_length1
// CHECK-SAME:    (%[[X:.*]]: tensor<1x3xf32>)
// CHECK-NEXT:    return %[[X]]
// CHECK-NOT:     jaxpr.
func.func @cumsum_length1(%x: tensor<1x3xf32>) -> tensor<1x3xf32> {
  %0 = "jaxpr.cumsum"(%x) {axis = 0 : i64} : (tensor<1x3xf32>) -> tensor<1x3xf32>
  return %0 : tensor<1x3xf32>
}

// -----

// sort: floats compare in TOTALORDER after -0.0 -> 0.0 and NaN -> canonical NaN.
// CHECK-LABEL: func.func @sort_f32
// CHECK:         "stablehlo.sort"(%{{.*}}) <{dimension = 0 : i64, is_stable = true}>
// CHECK:         ^bb0(%[[A:.*]]: tensor<f32>, %[[B:.*]]: tensor<f32>):
// CHECK:           stablehlo.compare EQ, %[[A]]
// CHECK:           %[[NAN:.*]] = stablehlo.constant dense<0x7FC00000>
// CHECK:           %[[LT:.*]] = stablehlo.compare LT, %{{.*}}, %{{.*}}, TOTALORDER
// CHECK:           stablehlo.return %[[LT]]
// CHECK-NOT:     jaxpr.
func.func @sort_f32(%x: tensor<5xf32>) -> tensor<5xf32> {
  %0 = "jaxpr.sort"(%x) {dimension = 0 : i64, is_stable = true, num_keys = 1 : i64} : (tensor<5xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// Two keys: lt(k0) | (eq(k0) & lt(k1)); the third operand is carried along.
// CHECK-LABEL: func.func @sort_two_keys
// CHECK:         %[[S:.*]]:3 = "stablehlo.sort"(%{{.*}}, %{{.*}}, %{{.*}}) <{dimension = 1 : i64, is_stable = false}>
// CHECK:         ^bb0(%[[A0:.*]]: tensor<i32>, %[[B0:.*]]: tensor<i32>, %[[A1:.*]]: tensor<ui8>, %[[B1:.*]]: tensor<ui8>, %{{.*}}: tensor<f32>, %{{.*}}: tensor<f32>):
// CHECK-DAG:       %[[LT1:.*]] = stablehlo.compare LT, %[[A1]], %[[B1]], UNSIGNED
// CHECK-DAG:       %[[LT0:.*]] = stablehlo.compare LT, %[[A0]], %[[B0]], SIGNED
// CHECK-DAG:       %[[EQ0:.*]] = stablehlo.compare EQ, %[[A0]], %[[B0]], SIGNED
// CHECK:           %[[AND:.*]] = stablehlo.and %[[EQ0]], %[[LT1]]
// CHECK:           %[[OR:.*]] = stablehlo.or %[[LT0]], %[[AND]]
// CHECK:           stablehlo.return %[[OR]]
// CHECK:         return %[[S]]#0, %[[S]]#1, %[[S]]#2
// CHECK-NOT:     jaxpr.
func.func @sort_two_keys(%k0: tensor<2x4xi32>, %k1: tensor<2x4xui8>, %v: tensor<2x4xf32>) -> (tensor<2x4xi32>, tensor<2x4xui8>, tensor<2x4xf32>) {
  %0:3 = "jaxpr.sort"(%k0, %k1, %v) {dimension = 1 : i64, is_stable = false, num_keys = 2 : i64} : (tensor<2x4xi32>, tensor<2x4xui8>, tensor<2x4xf32>) -> (tensor<2x4xi32>, tensor<2x4xui8>, tensor<2x4xf32>)
  return %0#0, %0#1, %0#2 : tensor<2x4xi32>, tensor<2x4xui8>, tensor<2x4xf32>
}
