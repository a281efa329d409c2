// RUN: mjax-opt %s --split-input-file --verify-diagnostics

func.func @cholesky_not_square(%a: tensor<3x4xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{cholesky requires square matrices, got operand of shape (3, 4)}}
  %0 = "jaxpr.cholesky"(%a) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @cholesky_int(%a: tensor<3x3xi32>) -> tensor<3x3xi32> {
  // expected-error @+1 {{cholesky does not accept dtype i32 (operand must be float16, bfloat16, float32, float64, complex64 or complex128)}}
  %0 = "jaxpr.cholesky"(%a) : (tensor<3x3xi32>) -> tensor<3x3xi32>
  return %0 : tensor<3x3xi32>
}

// -----

func.func @lu_rank1(%a: tensor<3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{lu requires the operand to have rank >= 2}}
  %0:3 = "jaxpr.lu"(%a) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<1xi32>, tensor<3xi32>)
  return %0#0 : tensor<3xf32>
}

// -----

func.func @triangular_solve_rows_mismatch(%a: tensor<3x3xf32>, %b: tensor<4x2xf32>) -> tensor<4x2xf32> {
  // expected-error @+1 {{a of shape (3, 3) needs b with 3 rows (left_side=True), got b of shape (4, 2)}}
  %0 = "jaxpr.triangular_solve"(%a, %b) {left_side = true} : (tensor<3x3xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

func.func @triangular_solve_batch_mismatch(%a: tensor<2x3x3xf32>, %b: tensor<3x3x2xf32>) -> tensor<3x3x2xf32> {
  // expected-error @+1 {{a and b must have equal batch dimensions, got shapes (2, 3, 3) and (3, 3, 2)}}
  %0 = "jaxpr.triangular_solve"(%a, %b) {left_side = true} : (tensor<2x3x3xf32>, tensor<3x3x2xf32>) -> tensor<3x3x2xf32>
  return %0 : tensor<3x3x2xf32>
}

// -----

func.func @triangular_solve_dtypes(%a: tensor<3x3xf32>, %b: tensor<3x2xf64>) -> tensor<3x2xf64> {
  // expected-error @+1 {{triangular_solve requires a and b of one dtype, got f32 and f64}}
  %0 = "jaxpr.triangular_solve"(%a, %b) {left_side = true} : (tensor<3x3xf32>, tensor<3x2xf64>) -> tensor<3x2xf64>
  return %0 : tensor<3x2xf64>
}

// -----

func.func @eigh_result_type(%a: tensor<3x3xf32>) -> tensor<3xf64> {
  // expected-error @+1 {{tensor<3xf64>}}
  %0:2 = "jaxpr.eigh"(%a) : (tensor<3x3xf32>) -> (tensor<3x3xf32>, tensor<3xf64>)
  return %0#1 : tensor<3xf64>
}

// -----

func.func @fft_rfft_complex(%x: tensor<8xcomplex<f32>>) -> tensor<5xcomplex<f32>> {
  // expected-error @+1 {{fft: RFFT needs a float32 or float64 operand, got c64}}
  %0 = "jaxpr.fft"(%x) {fft_type = "RFFT", fft_lengths = array<i64: 8>} : (tensor<8xcomplex<f32>>) -> tensor<5xcomplex<f32>>
  return %0 : tensor<5xcomplex<f32>>
}

// -----

func.func @fft_irfft_lengths(%x: tensor<4xcomplex<f32>>) -> tensor<8xf32> {
  // expected-error @+1 {{fft: IRFFT of fft_lengths (8,) needs trailing dimensions (5,), got operand shape (4,)}}
  %0 = "jaxpr.fft"(%x) {fft_type = "IRFFT", fft_lengths = array<i64: 8>} : (tensor<4xcomplex<f32>>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}

// -----

func.func @fft_bad_type(%x: tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>> {
  // expected-error @+1 {{attribute 'fft_type' must be one of 'FFT', 'IFFT', 'RFFT', 'IRFFT', got 'DCT'}}
  %0 = "jaxpr.fft"(%x) {fft_type = "DCT", fft_lengths = array<i64: 8>} : (tensor<8xcomplex<f32>>) -> tensor<8xcomplex<f32>>
  return %0 : tensor<8xcomplex<f32>>
}

// -----

func.func @householder_product_wide(%a: tensor<3x4xf32>, %taus: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{must have at least as many rows as columns, got shape (3, 4)}}
  %0 = "jaxpr.householder_product"(%a, %taus) : (tensor<3x4xf32>, tensor<3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @householder_product_too_many_taus(%a: tensor<4x3xf32>, %taus: tensor<4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{must not have more rows than the minimum}}
  %0 = "jaxpr.householder_product"(%a, %taus) : (tensor<4x3xf32>, tensor<4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}
