// RUN: mjax-opt %s --jaxpr-verify --split-input-file | filecheck %s

// pltpu.matmul_push_rhs, matmul_acc_lhs and matmul_pop round-trip
// (dialect/ops/pallas_tpu_mxu.py).

// CHECK-LABEL: func.func private @mxu
// CHECK:         "jaxpr.matmul_push_rhs"(%{{.*}}) {mxu_index = 0 : i64, staging_register = 1 : i64, transpose = true} : (tensor<256x256xbf16>) -> ()
// CHECK:         "jaxpr.matmul_acc_lhs"(%{{.*}}) {acc_addr = 0 : i64, load_staged_rhs = 1 : i64, mxu_index = 0 : i64} : (tensor<128x256xbf16>) -> ()
// CHECK:         "jaxpr.matmul_acc_lhs"(%{{.*}}) {acc_addr = 8 : i64, mxu_index = 0 : i64} : (tensor<128x256xbf16>) -> ()
// CHECK:         "jaxpr.matmul_pop"() {acc_addr = 0 : i64, dtype = f32, mxu_index = 0 : i64, shape = array<i64: 128, 256>} : () -> tensor<128x256xf32>
func.func private @mxu(%a: tensor<128x256xbf16>, %b: tensor<256x256xbf16>) -> tensor<128x256xf32> {
  "jaxpr.matmul_push_rhs"(%b) {mxu_index = 0 : i64, staging_register = 1 : i64, transpose = true} : (tensor<256x256xbf16>) -> ()
  "jaxpr.matmul_acc_lhs"(%a) {acc_addr = 0 : i64, load_staged_rhs = 1 : i64, mxu_index = 0 : i64} : (tensor<128x256xbf16>) -> ()
  "jaxpr.matmul_acc_lhs"(%a) {acc_addr = 8 : i64, mxu_index = 0 : i64} : (tensor<128x256xbf16>) -> ()
  %0 = "jaxpr.matmul_pop"() {acc_addr = 0 : i64, dtype = f32, mxu_index = 0 : i64, shape = array<i64: 128, 256>} : () -> tensor<128x256xf32>
  return %0 : tensor<128x256xf32>
}
