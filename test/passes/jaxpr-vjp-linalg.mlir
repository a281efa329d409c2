// RUN: mjax-opt %s --jaxpr-vjp --split-input-file | filecheck %s

// triangular_solve is linear in b: its cotangent is a solve with the transposed matrix.
// The cotangent of a is -tril(ct_b x^T), masked to the triangle that is read.
// CHECK-LABEL: func.func private @f_bwd
// CHECK-SAME:    (%[[A:[^:]*]]: tensor<3x3xf32>, %[[X:[^:]*]]: tensor<3x2xf32>, %[[CT:[^:]*]]: tensor<3x2xf32>)
// CHECK:         %[[CTB:.*]] = "jaxpr.triangular_solve"(%[[A]], %[[CT]]) {conjugate_a = false, left_side = true, lower = true, transpose_a = true, unit_diagonal = false}
// CHECK:         %[[OUTER:.*]] = "jaxpr.dot_general"(%[[CTB]], %[[X]])
// CHECK:         %[[NEG:.*]] = "jaxpr.neg"(%[[OUTER]])
// CHECK:         %[[CTA:.*]] = "jaxpr.select_n"(%{{.*}}, %{{.*}}, %[[NEG]])
// CHECK:         return %[[CTA]], %{{.*}}
// CHECK-LABEL: func.func @vjp_triangular_solve
func.func private @f(%a: tensor<3x3xf32>, %b: tensor<3x2xf32>) -> tensor<3x2xf32> {
  %0 = "jaxpr.triangular_solve"(%a, %b) {left_side = true, lower = true} : (tensor<3x3xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}
func.func @vjp_triangular_solve(%a: tensor<3x3xf32>, %b: tensor<3x2xf32>, %ct: tensor<3x2xf32>) -> (tensor<3x3xf32>, tensor<3x2xf32>) {
  %0:2 = "jaxpr.vjp"(%a, %b, %ct) {callee = @f} : (tensor<3x3xf32>, tensor<3x2xf32>, tensor<3x2xf32>) -> (tensor<3x3xf32>, tensor<3x2xf32>)
  return %0#0, %0#1 : tensor<3x3xf32>, tensor<3x2xf32>
}

// -----

// The transpose of RFFT is an IRFFT of the conjugated cotangent, with the bins RFFT
// stores once for two counted twice, scaled by n (JAX: fft._rfft_transpose).
// CHECK-LABEL: func.func private @g_bwd
// CHECK-SAME:    (%[[CT:.*]]: tensor<5xcomplex<f32>>)
// CHECK:         %[[MASK:.*]] = "jaxpr.constant"() {value = dense<[(1.000000e+00,0.000000e+00), (2.000000e+00,0.000000e+00), (2.000000e+00,0.000000e+00), (2.000000e+00,0.000000e+00), (1.000000e+00,0.000000e+00)]>
// CHECK:         %[[C:.*]] = "jaxpr.conj"(%[[CT]])
// CHECK:         %[[D:.*]] = "jaxpr.div"(%[[C]], %[[MASK]])
// CHECK:         %[[I:.*]] = "jaxpr.fft"(%[[D]]) {fft_lengths = array<i64: 8>, fft_type = "IRFFT"}
// CHECK:         %[[Y:.*]] = "jaxpr.mul"(%[[I]], %{{.*}})
// CHECK:         return %[[Y]]
// CHECK-LABEL: func.func @vjp_rfft
func.func private @g(%x: tensor<8xf32>) -> tensor<5xcomplex<f32>> {
  %0 = "jaxpr.fft"(%x) {fft_type = "RFFT", fft_lengths = array<i64: 8>} : (tensor<8xf32>) -> tensor<5xcomplex<f32>>
  return %0 : tensor<5xcomplex<f32>>
}
func.func @vjp_rfft(%x: tensor<8xf32>, %ct: tensor<5xcomplex<f32>>) -> tensor<8xf32> {
  %0 = "jaxpr.vjp"(%x, %ct) {callee = @g} : (tensor<8xf32>, tensor<5xcomplex<f32>>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
