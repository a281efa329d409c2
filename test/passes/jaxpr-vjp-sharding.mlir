// RUN: mjax-opt %s --jaxpr-vjp --split-input-file | filecheck %s

// The cotangent of a constraint carries the same constraint.
// CHECK-LABEL: func.func private @f_bwd
// CHECK-SAME:    (%[[CT:.*]]: tensor<8x2xf32>)
// CHECK:         %[[G:.*]] = "jaxpr.sharding_constraint"(%[[CT]]) {{{.*}}spec = ["x", ""]}
// CHECK:         return %[[G]]
func.func private @f(%x: tensor<8x2xf32>) -> tensor<8x2xf32> {
  %0 = "jaxpr.sharding_constraint"(%x) {mesh_axes = ["x"], mesh_shape = array<i64: 8>, spec = ["x", ""]} : (tensor<8x2xf32>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}
func.func @sharding_constraint_vjp(%x: tensor<8x2xf32>, %ct: tensor<8x2xf32>) -> tensor<8x2xf32> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @f} : (tensor<8x2xf32>, tensor<8x2xf32>) -> tensor<8x2xf32>
  return %0 : tensor<8x2xf32>
}
