// --jaxpr-to-stablehlo on every op in dialect/ops/elementwise.py.
// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// CHECK-LABEL: func.func @exp
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.exponential %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @exp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @expm1
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.exponential_minus_one %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @expm1(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.expm1"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @log
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.log %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @log(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.log"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @log1p
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.log_plus_one %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @log1p(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.log1p"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sqrt
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.sqrt %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @sqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.sqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @rsqrt
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.rsqrt %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @rsqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.rsqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cbrt
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.cbrt %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @cbrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.cbrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sin
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.sine %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @sin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cos
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.cosine %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @cos(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.cos"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @tan
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.tan %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @tan(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.tan"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @tanh
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.tanh %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @logistic
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[ONE:.*]] = stablehlo.constant dense<1.000000e+00>
// CHECK:         %[[N:.*]] = stablehlo.negate %[[X]]
// CHECK:         %[[E:.*]] = stablehlo.exponential %[[N]]
// CHECK:         %[[D:.*]] = stablehlo.add %[[ONE]], %[[E]]
// CHECK:         %[[R:.*]] = stablehlo.divide %[[ONE]], %[[D]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @logistic(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.logistic"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @asin
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.asin %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @asin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.asin"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @acos
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.acos %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @acos(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.acos"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @atan
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.atan %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @atan(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.atan"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sinh
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.sinh %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @sinh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.sinh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cosh
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.cosh %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @cosh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.cosh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @asinh
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.asinh %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @asinh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.asinh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @acosh
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.acosh %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @acosh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.acosh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @atanh
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.atanh %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @atanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.atanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @erf
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.erf %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @erf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.erf"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @erfc
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.erfc %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @erfc(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.erfc"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @erf_inv
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.erf_inv %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @erf_inv(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.erf_inv"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @lgamma
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.lgamma %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @lgamma(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.lgamma"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @bessel_i1e
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.bessel_i1e %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @bessel_i1e(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.bessel_i1e"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// Cephes' Chebyshev series (Clenshaw's recurrence) on |x|, 8 the switch between its two
// ranges; a bf16 operand is computed in f32.
// CHECK-LABEL: func.func @bessel_i0e
// CHECK-SAME:    (%[[X:.*]]: tensor<4xbf16>)
// CHECK:         %[[W:.*]] = stablehlo.convert %[[X]] : (tensor<4xbf16>) -> tensor<4xf32>
// CHECK:         %[[A:.*]] = stablehlo.abs %[[W]]
// CHECK:         stablehlo.divide %{{.*}}, %[[A]]
// CHECK:         %[[S:.*]] = stablehlo.sqrt %[[A]]
// CHECK:         %[[LE:.*]] = stablehlo.compare LE, %[[A]]
// CHECK:         %[[R:.*]] = stablehlo.select %[[LE]]
// CHECK:         %[[N:.*]] = stablehlo.convert %[[R]] : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK:         return %[[N]]
// CHECK-NOT:     jaxpr.
func.func @bessel_i0e(%x: tensor<4xbf16>) -> tensor<4xbf16> {
  %0 = "jaxpr.bessel_i0e"(%x) : (tensor<4xbf16>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// CHECK-LABEL: func.func @digamma
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.digamma %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @digamma(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.digamma"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @polygamma
// CHECK-SAME:    (%[[M:.*]]: tensor<4xf32>, %[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.polygamma %[[M]], %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @polygamma(%m: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.polygamma"(%m, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @floor
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.floor %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @floor(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.floor"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @ceil
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.ceil %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @ceil(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.ceil"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @neg
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.negate %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sin_complex
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = stablehlo.sine %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @sin_complex(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = "jaxpr.sin"(%x) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @exp_bf16
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xbf16>)
// CHECK:         %[[R:.*]] = stablehlo.exponential %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @exp_bf16(%x: tensor<2x3xbf16>) -> tensor<2x3xbf16> {
  %0 = "jaxpr.exp"(%x) : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}

// -----

// CHECK-LABEL: func.func @sqrt_f64
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf64>)
// CHECK:         %[[R:.*]] = stablehlo.sqrt %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @sqrt_f64(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = "jaxpr.sqrt"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// CHECK-LABEL: func.func @neg_i32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = stablehlo.negate %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @neg_i32(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.neg"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @is_finite
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.is_finite %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @is_finite(%x: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.is_finite"(%x) : (tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @abs
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = stablehlo.abs %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @abs(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.abs"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @abs_complex
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = stablehlo.abs %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @abs_complex(%x: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  %0 = "jaxpr.abs"(%x) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sign
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.sign %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @sign(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.sign"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sign_i8
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi8>)
// CHECK:         %[[R:.*]] = stablehlo.sign %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @sign_i8(%x: tensor<4xi8>) -> tensor<4xi8> {
  %0 = "jaxpr.sign"(%x) : (tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// CHECK-LABEL: func.func @sign_unsigned
// CHECK-SAME:    (%[[X:.*]]: tensor<4xui8>)
// CHECK:         %[[ZERO:.*]] = stablehlo.constant dense<0> : tensor<4xui8>
// CHECK:         %[[ISZERO:.*]] = stablehlo.compare EQ, %[[X]], %[[ZERO]], UNSIGNED
// CHECK:         %[[ONE:.*]] = stablehlo.constant dense<1> : tensor<4xui8>
// CHECK:         %[[R:.*]] = stablehlo.select %[[ISZERO]], %[[ZERO]], %[[ONE]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @sign_unsigned(%x: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "jaxpr.sign"(%x) : (tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK-LABEL: func.func @round
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.round_nearest_afz %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @round(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.round"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @round_away_from_zero
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.round_nearest_afz %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @round_away_from_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.round"(%x) {rounding_method = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @round_to_nearest_even
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.round_nearest_even %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @round_to_nearest_even(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.round"(%x) {rounding_method = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @exp2
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[LN2:.*]] = stablehlo.constant dense<0.693147182> : tensor<4xf32>
// CHECK:         %[[T:.*]] = stablehlo.multiply %[[X]], %[[LN2]]
// CHECK:         %[[R:.*]] = stablehlo.exponential %[[T]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @exp2(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.exp2"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @integer_pow
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[SQ:.*]] = stablehlo.multiply %[[X]], %[[X]]
// CHECK:         %[[R:.*]] = stablehlo.multiply %[[SQ]], %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @integer_pow(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.integer_pow"(%x) {y = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @integer_pow_zero
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = stablehlo.constant dense<1> : tensor<4xi32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @integer_pow_zero(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.integer_pow"(%x) {y = 0 : i64} : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @integer_pow_negative
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[SQ:.*]] = stablehlo.multiply %[[X]], %[[X]]
// CHECK:         %[[ONE:.*]] = stablehlo.constant dense<1.000000e+00>
// CHECK:         %[[R:.*]] = stablehlo.divide %[[ONE]], %[[SQ]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @integer_pow_negative(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.integer_pow"(%x) {y = -2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @not
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi1>)
// CHECK:         %[[R:.*]] = stablehlo.not %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @not(%x: tensor<4xi1>) -> tensor<4xi1> {
  %0 = "jaxpr.not"(%x) : (tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @not_i32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = stablehlo.not %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @not_i32(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.not"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @population_count
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = stablehlo.popcnt %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @population_count(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.population_count"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @clz
// CHECK-SAME:    (%[[X:.*]]: tensor<4xui8>)
// CHECK:         %[[R:.*]] = stablehlo.count_leading_zeros %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @clz(%x: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "jaxpr.clz"(%x) : (tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK-LABEL: func.func @real
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = stablehlo.real %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @real(%x: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  %0 = "jaxpr.real"(%x) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @imag
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = stablehlo.imag %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @imag(%x: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  %0 = "jaxpr.imag"(%x) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @conj
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[RE:.*]] = stablehlo.real %[[X]]
// CHECK:         %[[IM:.*]] = stablehlo.imag %[[X]]
// CHECK:         %[[NEG:.*]] = stablehlo.negate %[[IM]]
// CHECK:         %[[R:.*]] = stablehlo.complex %[[RE]], %[[NEG]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @conj(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = "jaxpr.conj"(%x) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @conj_real
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK:         %[[R:.*]] = stablehlo.complex %[[X]], %[[ZERO]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @conj_real(%x: tensor<4xf32>) -> tensor<4xcomplex<f32>> {
  %0 = "jaxpr.conj"(%x) {input_dtype = f32} : (tensor<4xf32>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @add
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.add %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @add(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.add"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sub
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.subtract %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @sub(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.sub"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @mul
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.multiply %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @mul(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.mul"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @div
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.divide %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @div(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.div"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @rem
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.remainder %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @rem(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.rem"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @max
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.maximum %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @max(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.max"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @min
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.minimum %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @min(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.min"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @atan2
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.atan2 %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @atan2(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.atan2"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @pow
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.power %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @pow(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.pow"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @add_complex
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>, %[[Y:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = stablehlo.add %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @add_complex(%x: tensor<4xcomplex<f32>>, %y: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = "jaxpr.add"(%x, %y) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @add_bf16
// CHECK-SAME:    (%[[X:.*]]: tensor<2x2xbf16>, %[[Y:.*]]: tensor<2x2xbf16>)
// CHECK:         %[[R:.*]] = stablehlo.add %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @add_bf16(%x: tensor<2x2xbf16>, %y: tensor<2x2xbf16>) -> tensor<2x2xbf16> {
  %0 = "jaxpr.add"(%x, %y) : (tensor<2x2xbf16>, tensor<2x2xbf16>) -> tensor<2x2xbf16>
  return %0 : tensor<2x2xbf16>
}

// -----

// CHECK-LABEL: func.func @div_i32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = stablehlo.divide %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @div_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.div"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @rem_unsigned
// CHECK-SAME:    (%[[X:.*]]: tensor<4xui8>, %[[Y:.*]]: tensor<4xui8>)
// CHECK:         %[[R:.*]] = stablehlo.remainder %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @rem_unsigned(%x: tensor<4xui8>, %y: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "jaxpr.rem"(%x, %y) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK-LABEL: func.func @max_bool
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi1>, %[[Y:.*]]: tensor<4xi1>)
// CHECK:         %[[R:.*]] = stablehlo.maximum %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @max_bool(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %0 = "jaxpr.max"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @pow_int_exponent
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[YF:.*]] = stablehlo.convert %[[Y]] : (tensor<4xi32>) -> tensor<4xf32>
// CHECK:         %[[R:.*]] = stablehlo.power %[[X]], %[[YF]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @pow_int_exponent(%x: tensor<4xf32>, %y: tensor<4xi32>) -> tensor<4xf32> {
  %0 = "jaxpr.pow"(%x, %y) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @max_complex
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>, %[[Y:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[RX:.*]] = stablehlo.real %[[X]]
// CHECK:         %[[RY:.*]] = stablehlo.real %[[Y]]
// CHECK:         %[[REQ:.*]] = stablehlo.compare EQ, %[[RX]], %[[RY]], FLOAT
// CHECK:         %[[IX:.*]] = stablehlo.imag %[[X]]
// CHECK:         %[[IY:.*]] = stablehlo.imag %[[Y]]
// CHECK:         %[[ICMP:.*]] = stablehlo.compare GT, %[[IX]], %[[IY]], FLOAT
// CHECK:         %[[RCMP:.*]] = stablehlo.compare GT, %[[RX]], %[[RY]], FLOAT
// CHECK:         %[[PICK:.*]] = stablehlo.select %[[REQ]], %[[ICMP]], %[[RCMP]]
// CHECK:         %[[R:.*]] = stablehlo.select %[[PICK]], %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @max_complex(%x: tensor<4xcomplex<f32>>, %y: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = "jaxpr.max"(%x, %y) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @min_complex
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>, %[[Y:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[RX:.*]] = stablehlo.real %[[X]]
// CHECK:         %[[RY:.*]] = stablehlo.real %[[Y]]
// CHECK:         %[[REQ:.*]] = stablehlo.compare EQ, %[[RX]], %[[RY]], FLOAT
// CHECK:         %[[IX:.*]] = stablehlo.imag %[[X]]
// CHECK:         %[[IY:.*]] = stablehlo.imag %[[Y]]
// CHECK:         %[[ICMP:.*]] = stablehlo.compare LT, %[[IX]], %[[IY]], FLOAT
// CHECK:         %[[RCMP:.*]] = stablehlo.compare LT, %[[RX]], %[[RY]], FLOAT
// CHECK:         %[[PICK:.*]] = stablehlo.select %[[REQ]], %[[ICMP]], %[[RCMP]]
// CHECK:         %[[R:.*]] = stablehlo.select %[[PICK]], %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @min_complex(%x: tensor<4xcomplex<f32>>, %y: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = "jaxpr.min"(%x, %y) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @and
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi1>, %[[Y:.*]]: tensor<4xi1>)
// CHECK:         %[[R:.*]] = stablehlo.and %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @and(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %0 = "jaxpr.and"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @and_i32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = stablehlo.and %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @and_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.and"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @or
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi1>, %[[Y:.*]]: tensor<4xi1>)
// CHECK:         %[[R:.*]] = stablehlo.or %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @or(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %0 = "jaxpr.or"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @or_i32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = stablehlo.or %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @or_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.or"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @xor
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi1>, %[[Y:.*]]: tensor<4xi1>)
// CHECK:         %[[R:.*]] = stablehlo.xor %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @xor(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %0 = "jaxpr.xor"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @xor_i32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = stablehlo.xor %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @xor_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.xor"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @shift_left
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = stablehlo.shift_left %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @shift_left(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.shift_left"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @shift_right_arithmetic
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = stablehlo.shift_right_arithmetic %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @shift_right_arithmetic(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.shift_right_arithmetic"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @shift_right_logical
// CHECK-SAME:    (%[[X:.*]]: tensor<4xui8>, %[[Y:.*]]: tensor<4xui8>)
// CHECK:         %[[R:.*]] = stablehlo.shift_right_logical %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @shift_right_logical(%x: tensor<4xui8>, %y: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "jaxpr.shift_right_logical"(%x, %y) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK-LABEL: func.func @complex
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.complex %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @complex(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xcomplex<f32>> {
  %0 = "jaxpr.complex"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @complex_f64
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf64>, %[[Y:.*]]: tensor<4xf64>)
// CHECK:         %[[R:.*]] = stablehlo.complex %[[X]], %[[Y]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @complex_f64(%x: tensor<4xf64>, %y: tensor<4xf64>) -> tensor<4xcomplex<f64>> {
  %0 = "jaxpr.complex"(%x, %y) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xcomplex<f64>>
  return %0 : tensor<4xcomplex<f64>>
}

// -----

// CHECK-LABEL: func.func @eq
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.compare EQ, %[[X]], %[[Y]], FLOAT
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @eq(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.eq"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @ne
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.compare NE, %[[X]], %[[Y]], FLOAT
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @ne(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.ne"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @lt
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.compare LT, %[[X]], %[[Y]], FLOAT
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @lt(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.lt"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @le
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.compare LE, %[[X]], %[[Y]], FLOAT
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @le(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.le"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @gt
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.compare GT, %[[X]], %[[Y]], FLOAT
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @gt(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.gt"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @ge
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.compare GE, %[[X]], %[[Y]], FLOAT
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @ge(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.ge"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @lt_i32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = stablehlo.compare LT, %[[X]], %[[Y]], SIGNED
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @lt_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi1> {
  %0 = "jaxpr.lt"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @lt_unsigned
// CHECK-SAME:    (%[[X:.*]]: tensor<4xui8>, %[[Y:.*]]: tensor<4xui8>)
// CHECK:         %[[R:.*]] = stablehlo.compare LT, %[[X]], %[[Y]], UNSIGNED
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @lt_unsigned(%x: tensor<4xui8>, %y: tensor<4xui8>) -> tensor<4xi1> {
  %0 = "jaxpr.lt"(%x, %y) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @eq_bool
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi1>, %[[Y:.*]]: tensor<4xi1>)
// CHECK:         %[[R:.*]] = stablehlo.compare EQ, %[[X]], %[[Y]], UNSIGNED
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @eq_bool(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %0 = "jaxpr.eq"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @ne_complex
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>, %[[Y:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = stablehlo.compare NE, %[[X]], %[[Y]], FLOAT
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @ne_complex(%x: tensor<4xcomplex<f32>>, %y: tensor<4xcomplex<f32>>) -> tensor<4xi1> {
  %0 = "jaxpr.ne"(%x, %y) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// square of a float is chlo.square (JAX's lowering); of an integer, x * x.
// CHECK-LABEL: func.func @square
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = chlo.square %[[X]] : tensor<4xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @square(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.square"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @square_int
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = stablehlo.multiply %[[X]], %[[X]] : tensor<4xi32>
// CHECK:         return %[[R]]
func.func @square_int(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.square"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}
