// Round trip of every op in dialect/ops/elementwise.py: parse, verify, print.
// RUN: mjax-opt %s --split-input-file | filecheck %s
// RUN: mjax-opt %s --split-input-file | mjax-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @exp
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.exp"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @exp(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @expm1
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.expm1"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @expm1(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.expm1"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @log
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.log"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @log(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.log"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @log1p
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.log1p"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @log1p(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.log1p"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sqrt
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.sqrt"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @sqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.sqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @rsqrt
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.rsqrt"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @rsqrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.rsqrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// square keeps its operand's type (integers and complex too).
// CHECK-LABEL: func.func @square
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Z:.*]]: tensor<2xcomplex<f32>>)
// CHECK:         %[[R:.*]] = "jaxpr.square"(%[[X]]) : (tensor<4xi32>) -> tensor<4xi32>
// CHECK:         %[[C:.*]] = "jaxpr.square"(%[[Z]]) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
// CHECK:         return %[[R]], %[[C]]
func.func @square(%x: tensor<4xi32>, %z: tensor<2xcomplex<f32>>) -> (tensor<4xi32>, tensor<2xcomplex<f32>>) {
  %0 = "jaxpr.square"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  %1 = "jaxpr.square"(%z) : (tensor<2xcomplex<f32>>) -> tensor<2xcomplex<f32>>
  return %0, %1 : tensor<4xi32>, tensor<2xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @cbrt
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.cbrt"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @cbrt(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.cbrt"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sin
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.sin"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @sin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cos
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.cos"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @cos(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.cos"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @tan
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.tan"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @tan(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.tan"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @tanh
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.tanh"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @tanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @logistic
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.logistic"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @logistic(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.logistic"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @asin
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.asin"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @asin(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.asin"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @acos
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.acos"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @acos(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.acos"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @atan
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.atan"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @atan(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.atan"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sinh
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.sinh"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @sinh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.sinh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @cosh
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.cosh"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @cosh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.cosh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @asinh
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.asinh"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @asinh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.asinh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @acosh
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.acosh"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @acosh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.acosh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @atanh
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.atanh"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @atanh(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.atanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @erf
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.erf"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @erf(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.erf"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @erfc
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.erfc"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @erfc(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.erfc"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @erf_inv
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.erf_inv"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @erf_inv(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.erf_inv"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @lgamma
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.lgamma"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @lgamma(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.lgamma"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @bessel_i0e
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.bessel_i0e"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @bessel_i0e(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.bessel_i0e"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @bessel_i1e
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.bessel_i1e"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @bessel_i1e(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.bessel_i1e"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @digamma
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.digamma"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @digamma(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.digamma"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @polygamma
// CHECK-SAME:    (%[[M:.*]]: tensor<4xf32>, %[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.polygamma"(%[[M]], %[[X]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @polygamma(%m: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.polygamma"(%m, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @zeta
// CHECK-SAME:    (%[[S:.*]]: tensor<4xf32>, %[[Q:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.zeta"(%[[S]], %[[Q]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @zeta(%s: tensor<4xf32>, %q: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.zeta"(%s, %q) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @floor
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.floor"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @floor(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.floor"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @ceil
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.ceil"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @ceil(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.ceil"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @neg
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.neg"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @neg(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.neg"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sin_complex
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = "jaxpr.sin"(%[[X]]) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
// CHECK:         return %[[R]]
func.func @sin_complex(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = "jaxpr.sin"(%x) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @exp_bf16
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xbf16>)
// CHECK:         %[[R:.*]] = "jaxpr.exp"(%[[X]]) : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
// CHECK:         return %[[R]]
func.func @exp_bf16(%x: tensor<2x3xbf16>) -> tensor<2x3xbf16> {
  %0 = "jaxpr.exp"(%x) : (tensor<2x3xbf16>) -> tensor<2x3xbf16>
  return %0 : tensor<2x3xbf16>
}

// -----

// CHECK-LABEL: func.func @sqrt_f64
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf64>)
// CHECK:         %[[R:.*]] = "jaxpr.sqrt"(%[[X]]) : (tensor<4xf64>) -> tensor<4xf64>
// CHECK:         return %[[R]]
func.func @sqrt_f64(%x: tensor<4xf64>) -> tensor<4xf64> {
  %0 = "jaxpr.sqrt"(%x) : (tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

// CHECK-LABEL: func.func @neg_i32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.neg"(%[[X]]) : (tensor<4xi32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @neg_i32(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.neg"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @is_finite
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.is_finite"(%[[X]]) : (tensor<4xf32>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @is_finite(%x: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.is_finite"(%x) : (tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @abs
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.abs"(%[[X]]) : (tensor<4xi32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @abs(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.abs"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @abs_complex
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = "jaxpr.abs"(%[[X]]) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @abs_complex(%x: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  %0 = "jaxpr.abs"(%x) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sign
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.sign"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @sign(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.sign"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sign_i8
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi8>)
// CHECK:         %[[R:.*]] = "jaxpr.sign"(%[[X]]) : (tensor<4xi8>) -> tensor<4xi8>
// CHECK:         return %[[R]]
func.func @sign_i8(%x: tensor<4xi8>) -> tensor<4xi8> {
  %0 = "jaxpr.sign"(%x) : (tensor<4xi8>) -> tensor<4xi8>
  return %0 : tensor<4xi8>
}

// -----

// CHECK-LABEL: func.func @sign_unsigned
// CHECK-SAME:    (%[[X:.*]]: tensor<4xui8>)
// CHECK:         %[[R:.*]] = "jaxpr.sign"(%[[X]]) : (tensor<4xui8>) -> tensor<4xui8>
// CHECK:         return %[[R]]
func.func @sign_unsigned(%x: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "jaxpr.sign"(%x) : (tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK-LABEL: func.func @round
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.round"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @round(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.round"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @round_away_from_zero
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.round"(%[[X]]) {rounding_method = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @round_away_from_zero(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.round"(%x) {rounding_method = 0 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @round_to_nearest_even
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.round"(%[[X]]) {rounding_method = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @round_to_nearest_even(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.round"(%x) {rounding_method = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @exp2
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.exp2"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @exp2(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.exp2"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @integer_pow
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.integer_pow"(%[[X]]) {y = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @integer_pow(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.integer_pow"(%x) {y = 3 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @integer_pow_zero
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.integer_pow"(%[[X]]) {y = 0 : i64} : (tensor<4xi32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @integer_pow_zero(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.integer_pow"(%x) {y = 0 : i64} : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @integer_pow_negative
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.integer_pow"(%[[X]]) {y = -2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @integer_pow_negative(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.integer_pow"(%x) {y = -2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @not
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi1>)
// CHECK:         %[[R:.*]] = "jaxpr.not"(%[[X]]) : (tensor<4xi1>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @not(%x: tensor<4xi1>) -> tensor<4xi1> {
  %0 = "jaxpr.not"(%x) : (tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @not_i32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.not"(%[[X]]) : (tensor<4xi32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @not_i32(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.not"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @population_count
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.population_count"(%[[X]]) : (tensor<4xi32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @population_count(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.population_count"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @clz
// CHECK-SAME:    (%[[X:.*]]: tensor<4xui8>)
// CHECK:         %[[R:.*]] = "jaxpr.clz"(%[[X]]) : (tensor<4xui8>) -> tensor<4xui8>
// CHECK:         return %[[R]]
func.func @clz(%x: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "jaxpr.clz"(%x) : (tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK-LABEL: func.func @real
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = "jaxpr.real"(%[[X]]) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @real(%x: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  %0 = "jaxpr.real"(%x) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @imag
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = "jaxpr.imag"(%[[X]]) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @imag(%x: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  %0 = "jaxpr.imag"(%x) : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @conj
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = "jaxpr.conj"(%[[X]]) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
// CHECK:         return %[[R]]
func.func @conj(%x: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = "jaxpr.conj"(%x) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @conj_real
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.conj"(%[[X]]) {input_dtype = f32} : (tensor<4xf32>) -> tensor<4xcomplex<f32>>
// CHECK:         return %[[R]]
func.func @conj_real(%x: tensor<4xf32>) -> tensor<4xcomplex<f32>> {
  %0 = "jaxpr.conj"(%x) {input_dtype = f32} : (tensor<4xf32>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @add
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.add"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @add(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.add"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @sub
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.sub"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @sub(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.sub"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @mul
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.mul"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @mul(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.mul"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @div
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.div"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @div(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.div"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @rem
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.rem"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @rem(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.rem"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @max
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.max"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @max(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.max"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @min
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.min"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @min(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.min"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @atan2
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.atan2"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @atan2(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.atan2"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @pow
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.pow"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @pow(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.pow"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @add_complex
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>, %[[Y:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = "jaxpr.add"(%[[X]], %[[Y]]) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
// CHECK:         return %[[R]]
func.func @add_complex(%x: tensor<4xcomplex<f32>>, %y: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = "jaxpr.add"(%x, %y) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @add_bf16
// CHECK-SAME:    (%[[X:.*]]: tensor<2x2xbf16>, %[[Y:.*]]: tensor<2x2xbf16>)
// CHECK:         %[[R:.*]] = "jaxpr.add"(%[[X]], %[[Y]]) : (tensor<2x2xbf16>, tensor<2x2xbf16>) -> tensor<2x2xbf16>
// CHECK:         return %[[R]]
func.func @add_bf16(%x: tensor<2x2xbf16>, %y: tensor<2x2xbf16>) -> tensor<2x2xbf16> {
  %0 = "jaxpr.add"(%x, %y) : (tensor<2x2xbf16>, tensor<2x2xbf16>) -> tensor<2x2xbf16>
  return %0 : tensor<2x2xbf16>
}

// -----

// CHECK-LABEL: func.func @div_i32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.div"(%[[X]], %[[Y]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @div_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.div"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @rem_unsigned
// CHECK-SAME:    (%[[X:.*]]: tensor<4xui8>, %[[Y:.*]]: tensor<4xui8>)
// CHECK:         %[[R:.*]] = "jaxpr.rem"(%[[X]], %[[Y]]) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
// CHECK:         return %[[R]]
func.func @rem_unsigned(%x: tensor<4xui8>, %y: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "jaxpr.rem"(%x, %y) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK-LABEL: func.func @max_bool
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi1>, %[[Y:.*]]: tensor<4xi1>)
// CHECK:         %[[R:.*]] = "jaxpr.max"(%[[X]], %[[Y]]) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @max_bool(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %0 = "jaxpr.max"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @pow_int_exponent
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.pow"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @pow_int_exponent(%x: tensor<4xf32>, %y: tensor<4xi32>) -> tensor<4xf32> {
  %0 = "jaxpr.pow"(%x, %y) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @max_complex
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>, %[[Y:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = "jaxpr.max"(%[[X]], %[[Y]]) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
// CHECK:         return %[[R]]
func.func @max_complex(%x: tensor<4xcomplex<f32>>, %y: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = "jaxpr.max"(%x, %y) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @min_complex
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>, %[[Y:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = "jaxpr.min"(%[[X]], %[[Y]]) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
// CHECK:         return %[[R]]
func.func @min_complex(%x: tensor<4xcomplex<f32>>, %y: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  %0 = "jaxpr.min"(%x, %y) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @and
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi1>, %[[Y:.*]]: tensor<4xi1>)
// CHECK:         %[[R:.*]] = "jaxpr.and"(%[[X]], %[[Y]]) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @and(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %0 = "jaxpr.and"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @and_i32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.and"(%[[X]], %[[Y]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @and_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.and"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @or
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi1>, %[[Y:.*]]: tensor<4xi1>)
// CHECK:         %[[R:.*]] = "jaxpr.or"(%[[X]], %[[Y]]) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @or(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %0 = "jaxpr.or"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @or_i32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.or"(%[[X]], %[[Y]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @or_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.or"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @xor
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi1>, %[[Y:.*]]: tensor<4xi1>)
// CHECK:         %[[R:.*]] = "jaxpr.xor"(%[[X]], %[[Y]]) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @xor(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %0 = "jaxpr.xor"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @xor_i32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.xor"(%[[X]], %[[Y]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @xor_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.xor"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @shift_left
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.shift_left"(%[[X]], %[[Y]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @shift_left(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.shift_left"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @shift_right_arithmetic
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.shift_right_arithmetic"(%[[X]], %[[Y]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @shift_right_arithmetic(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.shift_right_arithmetic"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @shift_right_logical
// CHECK-SAME:    (%[[X:.*]]: tensor<4xui8>, %[[Y:.*]]: tensor<4xui8>)
// CHECK:         %[[R:.*]] = "jaxpr.shift_right_logical"(%[[X]], %[[Y]]) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
// CHECK:         return %[[R]]
func.func @shift_right_logical(%x: tensor<4xui8>, %y: tensor<4xui8>) -> tensor<4xui8> {
  %0 = "jaxpr.shift_right_logical"(%x, %y) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

// CHECK-LABEL: func.func @complex
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.complex"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xcomplex<f32>>
// CHECK:         return %[[R]]
func.func @complex(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xcomplex<f32>> {
  %0 = "jaxpr.complex"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @complex_f64
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf64>, %[[Y:.*]]: tensor<4xf64>)
// CHECK:         %[[R:.*]] = "jaxpr.complex"(%[[X]], %[[Y]]) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xcomplex<f64>>
// CHECK:         return %[[R]]
func.func @complex_f64(%x: tensor<4xf64>, %y: tensor<4xf64>) -> tensor<4xcomplex<f64>> {
  %0 = "jaxpr.complex"(%x, %y) : (tensor<4xf64>, tensor<4xf64>) -> tensor<4xcomplex<f64>>
  return %0 : tensor<4xcomplex<f64>>
}

// -----

// CHECK-LABEL: func.func @eq
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.eq"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @eq(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.eq"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @ne
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.ne"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @ne(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.ne"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @lt
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.lt"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @lt(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.lt"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @le
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.le"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @le(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.le"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @gt
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.gt"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @gt(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.gt"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @ge
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.ge"(%[[X]], %[[Y]]) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @ge(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.ge"(%x, %y) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @lt_i32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.lt"(%[[X]], %[[Y]]) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @lt_i32(%x: tensor<4xi32>, %y: tensor<4xi32>) -> tensor<4xi1> {
  %0 = "jaxpr.lt"(%x, %y) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @lt_unsigned
// CHECK-SAME:    (%[[X:.*]]: tensor<4xui8>, %[[Y:.*]]: tensor<4xui8>)
// CHECK:         %[[R:.*]] = "jaxpr.lt"(%[[X]], %[[Y]]) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @lt_unsigned(%x: tensor<4xui8>, %y: tensor<4xui8>) -> tensor<4xi1> {
  %0 = "jaxpr.lt"(%x, %y) : (tensor<4xui8>, tensor<4xui8>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @eq_bool
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi1>, %[[Y:.*]]: tensor<4xi1>)
// CHECK:         %[[R:.*]] = "jaxpr.eq"(%[[X]], %[[Y]]) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @eq_bool(%x: tensor<4xi1>, %y: tensor<4xi1>) -> tensor<4xi1> {
  %0 = "jaxpr.eq"(%x, %y) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @ne_complex
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>, %[[Y:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = "jaxpr.ne"(%[[X]], %[[Y]]) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @ne_complex(%x: tensor<4xcomplex<f32>>, %y: tensor<4xcomplex<f32>>) -> tensor<4xi1> {
  %0 = "jaxpr.ne"(%x, %y) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}
