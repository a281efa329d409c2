// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// CHECK-LABEL: func.func @reduce_window_sum_padded
// CHECK-SAME:    (%[[X:.*]]: tensor<4x6xf32>)
// CHECK:         %[[Z:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<f32>
// CHECK:         %[[Y:.*]] = "stablehlo.reduce_window"(%[[X]], %[[Z]]) <{base_dilations = array<i64: 1, 2>, padding = dense<{{\[\[}}0, 1], [1, 1]]> : tensor<2x2xi64>, window_dilations = array<i64: 1, 1>, window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 1>}>
// CHECK:           stablehlo.add
// CHECK:         return %[[Y]]
// CHECK-NOT:     jaxpr.
func.func @reduce_window_sum_padded(%x: tensor<4x6xf32>) -> tensor<2x11xf32> {
  %0 = "jaxpr.reduce_window_sum"(%x) {base_dilation = array<i64: 1, 2>, padding = [array<i64: 0, 1>, array<i64: 1, 1>], window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 1>} : (tensor<4x6xf32>) -> tensor<2x11xf32>
  return %0 : tensor<2x11xf32>
}

// -----

// Padding takes the monoid's identity: the lowest int32 for max.
// CHECK-LABEL: func.func @reduce_window_max_int
// CHECK:         %[[I:.*]] = stablehlo.constant dense<-2147483648> : tensor<i32>
// CHECK:         "stablehlo.reduce_window"(%{{.*}}, %[[I]]) <{{.*}}window_dilations = array<i64: 2>
// CHECK:           stablehlo.maximum
// CHECK-NOT:     jaxpr.
func.func @reduce_window_max_int(%x: tensor<7xi32>) -> tensor<5xi32> {
  %0 = "jaxpr.reduce_window_max"(%x) {base_dilation = array<i64: 1>, padding = [array<i64: 0, 0>], window_dilation = array<i64: 2>, window_dimensions = array<i64: 2>, window_strides = array<i64: 1>} : (tensor<7xi32>) -> tensor<5xi32>
  return %0 : tensor<5xi32>
}

// -----

// CHECK-LABEL: func.func @reduce_window_min_float
// CHECK:         %[[I:.*]] = stablehlo.constant dense<0x7F800000> : tensor<f32>
// CHECK:         "stablehlo.reduce_window"(%{{.*}}, %[[I]])
// CHECK:           stablehlo.minimum
// CHECK-NOT:     jaxpr.
func.func @reduce_window_min_float(%x: tensor<7xf32>) -> tensor<2xf32> {
  %0 = "jaxpr.reduce_window_min"(%x) {base_dilation = array<i64: 1>, padding = [array<i64: 0, 0>], window_dilation = array<i64: 1>, window_dimensions = array<i64: 3>, window_strides = array<i64: 3>} : (tensor<7xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// A variadic reduce_window over (value, tangent) pairs keeps the tangent of the winner.
// CHECK-LABEL: func.func @select_and_gather_add_ge
// CHECK-SAME:    (%[[T:.*]]: tensor<4x6xf32>, %[[X:.*]]: tensor<4x6xf32>)
// CHECK:         %[[R:.*]]:2 = "stablehlo.reduce_window"(%[[X]], %[[T]], %{{.*}}, %{{.*}})
// CHECK:           %[[C:.*]] = stablehlo.compare GE
// CHECK:           stablehlo.select %[[C]]
// CHECK:         return %[[R]]#1
// CHECK-NOT:     jaxpr.
func.func @select_and_gather_add_ge(%t: tensor<4x6xf32>, %x: tensor<4x6xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.select_and_gather_add"(%t, %x) {select_prim = "ge", base_dilation = array<i64: 1, 1>, padding = [array<i64: 0, 1>, array<i64: 1, 1>], window_dilation = array<i64: 1, 1>, window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 2>} : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// The operand is padded with the selection's identity (+inf for "le"), scattered without
// padding, and sliced back.
// CHECK-LABEL: func.func @select_and_scatter_add_le
// CHECK-SAME:    (%[[S:.*]]: tensor<2x3xf32>, %[[X:.*]]: tensor<4x6xf32>)
// CHECK:         %[[INF:.*]] = stablehlo.constant dense<0x7F800000> : tensor<f32>
// CHECK:         %[[P:.*]] = stablehlo.pad %[[X]], %[[INF]], low = [0, 1], high = [1, 1], interior = [0, 0]
// CHECK:         %[[SS:.*]] = "stablehlo.select_and_scatter"(%[[P]], %[[S]], %{{.*}}) <{padding = dense<0> : tensor<2x2xi64>, window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 2>}>
// CHECK:           stablehlo.compare LE
// CHECK:           stablehlo.add
// CHECK:         %[[OUT:.*]] = stablehlo.slice %[[SS]] [0:4, 1:7]
// CHECK:         return %[[OUT]]
// CHECK-NOT:     jaxpr.
func.func @select_and_scatter_add_le(%s: tensor<2x3xf32>, %x: tensor<4x6xf32>) -> tensor<4x6xf32> {
  %0 = "jaxpr.select_and_scatter_add"(%s, %x) {select_prim = "le", padding = [array<i64: 0, 1>, array<i64: 1, 1>], window_dimensions = array<i64: 2, 3>, window_strides = array<i64: 2, 2>} : (tensor<2x3xf32>, tensor<4x6xf32>) -> tensor<4x6xf32>
  return %0 : tensor<4x6xf32>
}
