// RUN: mjax-opt %s | mjax-opt | filecheck %s
// Every transformation op prints and re-parses, and --jaxpr-verify (run on input and
// output) accepts its callee signatures.

func.func private @f(%x: tensor<3xf32>, %n: tensor<3xi32>) -> tensor<3xf32> {
  %0 = "jaxpr.convert_element_type"(%n) {new_dtype = f32} : (tensor<3xi32>) -> tensor<3xf32>
  %1 = "jaxpr.mul"(%x, %0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}
func.func private @f_rule(%x: tensor<3xf32>, %n: tensor<3xi32>, %t: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  %0 = "jaxpr.call"(%x, %n) {callee = @f} : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  return %0, %t : tensor<3xf32>, tensor<3xf32>
}
func.func private @f_fwd(%x: tensor<3xf32>, %n: tensor<3xi32>) -> (tensor<3xf32>, tensor<3xi32>) {
  %0 = "jaxpr.call"(%x, %n) {callee = @f} : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  return %0, %n : tensor<3xf32>, tensor<3xi32>
}
func.func private @f_bwd(%n: tensor<3xi32>, %ct: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.convert_element_type"(%n) {new_dtype = f32} : (tensor<3xi32>) -> tensor<3xf32>
  %1 = "jaxpr.mul"(%ct, %0) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %1 : tensor<3xf32>
}

// CHECK-LABEL: func.func @transforms
// CHECK:         "jaxpr.call"(%{{.*}}, %{{.*}}) {callee = @f}
// CHECK:         "jaxpr.checkpoint"(%{{.*}}, %{{.*}}) {callee = @f}
// CHECK:         "jaxpr.jvp"(%{{.*}}, %{{.*}}, %{{.*}}) {callee = @f, diff_args = array<i64: 0>}
// CHECK:         "jaxpr.vjp"(%{{.*}}, %{{.*}}, %{{.*}}) {callee = @f}
// CHECK:         "jaxpr.linear_transpose"(%{{.*}}, %{{.*}}) {callee = @f, num_linear = 1 : i64}
// CHECK:         "jaxpr.custom_jvp_call"(%{{.*}}, %{{.*}}) {callee = @f, jvp = @f_rule}
// CHECK:         "jaxpr.custom_vjp_call"(%{{.*}}, %{{.*}}) {bwd = @f_bwd, callee = @f, fwd = @f_fwd}
// CHECK:         "jaxpr.checkpoint_tangent"(%{{.*}}, %{{.*}}, %{{.*}}) {callee = @f, diff_args = array<i64: 0>, diff_results = array<i64: 0>}
// CHECK:         "jaxpr.custom_vjp_tangent"(%{{.*}}, %{{.*}}) {bwd = @f_bwd, num_residuals = 1 : i64}
func.func @transforms(%x: tensor<3xf32>, %n: tensor<3xi32>, %t: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0 = "jaxpr.call"(%x, %n) {callee = @f} : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  %1 = "jaxpr.checkpoint"(%x, %n) {callee = @f} : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  %2:2 = "jaxpr.jvp"(%x, %n, %t) {callee = @f, diff_args = array<i64: 0>} : (tensor<3xf32>, tensor<3xi32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  %3 = "jaxpr.vjp"(%x, %n, %t) {callee = @f} : (tensor<3xf32>, tensor<3xi32>, tensor<3xf32>) -> tensor<3xf32>
  %lt = "jaxpr.linear_transpose"(%n, %t) {callee = @f, num_linear = 1} : (tensor<3xi32>, tensor<3xf32>) -> tensor<3xf32>
  %4 = "jaxpr.custom_jvp_call"(%x, %n) {callee = @f, jvp = @f_rule} : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  %5 = "jaxpr.custom_vjp_call"(%x, %n) {callee = @f, fwd = @f_fwd, bwd = @f_bwd} : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  %6 = "jaxpr.checkpoint_tangent"(%x, %n, %t) {callee = @f, diff_args = array<i64: 0>, diff_results = array<i64: 0>} : (tensor<3xf32>, tensor<3xi32>, tensor<3xf32>) -> tensor<3xf32>
  %7 = "jaxpr.custom_vjp_tangent"(%n, %t) {bwd = @f_bwd, num_residuals = 1} : (tensor<3xi32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1, %2#0, %2#1, %3, %lt, %4, %5, %6, %7 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}

// CHECK-LABEL: func.func @vmap_round_trip
// CHECK:         "jaxpr.vmap"(%{{.*}}, %{{.*}}) {axis_name = "i", axis_size = 4 : i64, callee = @f, in_axes = array<i64: 1, -1>, out_axes = array<i64: 0>}
func.func @vmap_round_trip(%x: tensor<3x4xf32>, %n: tensor<3xi32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.vmap"(%x, %n) {callee = @f, in_axes = array<i64: 1, -1>, out_axes = array<i64: 0>, axis_size = 4, axis_name = "i"} : (tensor<3x4xf32>, tensor<3xi32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// Rules not traced yet are named by a handle into the process's registry of Python rules
// (a custom_vjp_call may name fwd and leave bwd to the handle); a transposed
// custom_vjp_tangent with such a bwd leaves a custom_vjp_bwd. They print and re-parse,
// and verify with types taken from @f.
// CHECK-LABEL: func.func @rule_handles
// CHECK:         "jaxpr.custom_jvp_call"(%{{.*}}, %{{.*}}) {callee = @f, rule = "f_jvp#1"}
// CHECK:         "jaxpr.custom_vjp_call"(%{{.*}}, %{{.*}}) {callee = @f, rule = "f_fwd#2"}
// CHECK:         "jaxpr.custom_vjp_call"(%{{.*}}, %{{.*}}) {callee = @f, fwd = @f_fwd, rule = "f_fwd#2"}
// CHECK:         "jaxpr.custom_vjp_tangent"(%{{.*}}, %{{.*}}) {callee = @f, num_residuals = 1 : i64, rule = "f_fwd#2"}
// CHECK:         "jaxpr.custom_vjp_bwd"(%{{.*}}, %{{.*}}) {callee = @f, num_residuals = 1 : i64, rule = "f_fwd#2"}
func.func @rule_handles(%x: tensor<3xf32>, %n: tensor<3xi32>, %t: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %0 = "jaxpr.custom_jvp_call"(%x, %n) {callee = @f, rule = "f_jvp#1"} : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  %1 = "jaxpr.custom_vjp_call"(%x, %n) {callee = @f, rule = "f_fwd#2"} : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  %2 = "jaxpr.custom_vjp_call"(%x, %n) {callee = @f, fwd = @f_fwd, rule = "f_fwd#2"} : (tensor<3xf32>, tensor<3xi32>) -> tensor<3xf32>
  %3 = "jaxpr.custom_vjp_tangent"(%n, %t) {callee = @f, rule = "f_fwd#2", num_residuals = 1} : (tensor<3xi32>, tensor<3xf32>) -> tensor<3xf32>
  %4 = "jaxpr.custom_vjp_bwd"(%n, %t) {callee = @f, rule = "f_fwd#2", num_residuals = 1} : (tensor<3xi32>, tensor<3xf32>) -> tensor<3xf32>
  return %0, %1, %2, %3, %4 : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
