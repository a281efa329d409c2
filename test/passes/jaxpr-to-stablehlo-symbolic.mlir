// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s
// Symbolic dimensions lower to StableHLO's dynamic forms. Each dimension variable is read
// once per function off an argument that has it as a dimension; shapes that need a value
// are computed from it; the encodings are dropped, leaving `?` (shape refinement, given
// static argument shapes, folds them away again).

// CHECK-LABEL: func.func @mean
// CHECK-SAME:    (%[[X:.*]]: tensor<?x4xf32>) -> tensor<4xf32>
// CHECK:         %[[SIZE:.*]] = stablehlo.get_dimension_size %[[X]], dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
// CHECK:         %[[B:.*]] = stablehlo.convert %[[SIZE]] {mjax.dim_var = "b"} : (tensor<i32>) -> tensor<i64>
// CHECK:         stablehlo.reduce(%[[X]] {{.*}} -> tensor<4xf32>
// CHECK:         %[[B32:.*]] = stablehlo.convert %[[B]] : (tensor<i64>) -> tensor<i32>
// CHECK:         stablehlo.convert %[[B32]] : (tensor<i32>) -> tensor<f32>
func.func @mean(%x: tensor<?x4xf32, "b, 4">) -> tensor<4xf32> {
  %0 = "jaxpr.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<?x4xf32, "b, 4">) -> tensor<4xf32>
  %1 = "jaxpr.dim_as_value"() {dim = "b", dtype = i32} : () -> tensor<i32>
  %2 = "jaxpr.convert_element_type"(%1) {new_dtype = f32} : (tensor<i32>) -> tensor<f32>
  %3 = "jaxpr.broadcast_in_dim"(%2) {broadcast_dimensions = array<i64>, shape = array<i64: 4>} : (tensor<f32>) -> tensor<4xf32>
  %4 = "jaxpr.div"(%0, %3) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %4 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @flatten
// CHECK-SAME:    (%[[X:.*]]: tensor<?x4xf32>) -> tensor<?xf32>
// CHECK:         %[[B:.*]] = stablehlo.convert {{.*}} {mjax.dim_var = "b"}
// CHECK:         %[[N:.*]] = stablehlo.multiply %{{.*}}, %[[B]] : tensor<i64>
// CHECK:         %[[SHAPE:.*]] = stablehlo.reshape %[[N]] : (tensor<i64>) -> tensor<1xi64>
// CHECK:         stablehlo.dynamic_reshape %[[X]], %[[SHAPE]] : (tensor<?x4xf32>, tensor<1xi64>) -> tensor<?xf32>
// CHECK:         stablehlo.dynamic_iota %{{.*}}, dim = 0 : (tensor<1xi64>) -> tensor<?xf32>
// CHECK:         stablehlo.add %{{.*}}, %{{.*}} : tensor<?xf32>
func.func @flatten(%x: tensor<?x4xf32, "b, 4">) -> tensor<?xf32, "4*b"> {
  %0 = "jaxpr.reshape"(%x) {new_sizes = ["4*b"]} : (tensor<?x4xf32, "b, 4">) -> tensor<?xf32, "4*b">
  %1 = "jaxpr.iota"() {dtype = f32, shape = ["4*b"]} : () -> tensor<?xf32, "4*b">
  %2 = "jaxpr.add"(%0, %1) : (tensor<?xf32, "4*b">, tensor<?xf32, "4*b">) -> tensor<?xf32, "4*b">
  return %2 : tensor<?xf32, "4*b">
}

// -----

// A variable read off a dimension 2*c + 1: (size - 1) / 2. A broadcast to a symbolic
// shape is dynamic_broadcast_in_dim.
// CHECK-LABEL: func.func @odd
// CHECK:         %[[SIZE:.*]] = stablehlo.get_dimension_size %{{.*}}, dim = 0
// CHECK:         %[[C64:.*]] = stablehlo.convert %[[SIZE]] : (tensor<i32>) -> tensor<i64>
// CHECK:         %[[M:.*]] = stablehlo.subtract %[[C64]], %{{.*}} : tensor<i64>
// CHECK:         %[[C:.*]] = stablehlo.divide %[[M]], %{{.*}} {mjax.dim_var = "c"} : tensor<i64>
// CHECK:         stablehlo.dynamic_broadcast_in_dim %{{.*}}, %{{.*}}, dims = [] : (tensor<f32>, tensor<1xi64>) -> tensor<?xf32>
func.func @odd(%x: tensor<?xf32, "2*c + 1">, %s: tensor<f32>) -> tensor<?xf32, "c"> {
  %0 = "jaxpr.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64>, shape = ["c"]} : (tensor<f32>) -> tensor<?xf32, "c">
  return %0 : tensor<?xf32, "c">
}
