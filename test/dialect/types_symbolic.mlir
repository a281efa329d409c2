// Symbolic dimensions (shape polymorphism): a `?` of the tensor type, and the type's
// encoding spelling every dimension. Shape attributes spell symbolic entries as strings.
// The verifier checks each op's result types, expressions included.
// RUN: mjax-opt %s --split-input-file --jaxpr-verify | filecheck %s
// RUN: mjax-opt %s --split-input-file | mjax-opt --split-input-file --jaxpr-verify | filecheck %s

// CHECK-LABEL: func.func @mlp_layer
// CHECK-SAME:    (%[[X:.*]]: tensor<?x4xf32, "b, 4">, %[[W:.*]]: tensor<4x8xf32>)
// CHECK:         "jaxpr.dot_general"(%[[X]], %[[W]]) {{.*}} -> tensor<?x8xf32, "b, 8">
// CHECK:         "jaxpr.tanh"({{.*}}) : (tensor<?x8xf32, "b, 8">) -> tensor<?x8xf32, "b, 8">
func.func @mlp_layer(%x: tensor<?x4xf32, "b, 4">, %w: tensor<4x8xf32>) -> tensor<?x8xf32, "b, 8"> {
  %0 = "jaxpr.dot_general"(%x, %w) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]], preferred_element_type = f32} : (tensor<?x4xf32, "b, 4">, tensor<4x8xf32>) -> tensor<?x8xf32, "b, 8">
  %1 = "jaxpr.tanh"(%0) : (tensor<?x8xf32, "b, 8">) -> tensor<?x8xf32, "b, 8">
  return %1 : tensor<?x8xf32, "b, 8">
}

// -----

// Expressions: a reshape to 4*b, an iota of that length, max/min/floordiv spelled as JAX
// spells them.
// CHECK-LABEL: func.func @flatten
// CHECK:         "jaxpr.reshape"(%{{.*}}) {new_sizes = ["4*b"]} : (tensor<?x4xf32, "b, 4">) -> tensor<?xf32, "4*b">
// CHECK:         "jaxpr.iota"() {dtype = f32, shape = ["4*b"]} : () -> tensor<?xf32, "4*b">
// CHECK:         "jaxpr.broadcast_in_dim"(%{{.*}}) {broadcast_dimensions = array<i64>, shape = ["max(b, 3)", "floordiv(b, 2)", 2]} : (tensor<f32>) -> tensor<?x?x2xf32, "max(b, 3), floordiv(b, 2), 2">
func.func @flatten(%x: tensor<?x4xf32, "b, 4">, %s: tensor<f32>) -> tensor<?xf32, "4*b"> {
  %0 = "jaxpr.reshape"(%x) {new_sizes = ["4*b"]} : (tensor<?x4xf32, "b, 4">) -> tensor<?xf32, "4*b">
  %1 = "jaxpr.iota"() {dtype = f32, shape = ["4*b"]} : () -> tensor<?xf32, "4*b">
  %2 = "jaxpr.add"(%0, %1) : (tensor<?xf32, "4*b">, tensor<?xf32, "4*b">) -> tensor<?xf32, "4*b">
  %3 = "jaxpr.broadcast_in_dim"(%s) {broadcast_dimensions = array<i64>, shape = ["max(b, 3)", "floordiv(b, 2)", 2]} : (tensor<f32>) -> tensor<?x?x2xf32, "max(b, 3), floordiv(b, 2), 2">
  return %2 : tensor<?xf32, "4*b">
}
