// RUN: mjax-opt %s --jaxpr-verify --split-input-file --verify-diagnostics

func.func private @pop_dtype() -> tensor<8x128xbf16> {
  // expected-error @+1 {{Only float32 and int32 accumulators are supported, got bfloat16}}
  %0 = "jaxpr.matmul_pop"() {acc_addr = 0 : i64, dtype = bf16, mxu_index = 0 : i64, shape = array<i64: 8, 128>} : () -> tensor<8x128xbf16>
  return %0 : tensor<8x128xbf16>
}

// -----

func.func private @push_rank(%b: tensor<256xf32>) {
  // expected-error @+1 {{jaxpr.matmul_push_rhs takes a matrix (a rank-2 array), got f32[256]}}
  "jaxpr.matmul_push_rhs"(%b) {mxu_index = 0 : i64, staging_register = 0 : i64} : (tensor<256xf32>) -> ()
  return
}
