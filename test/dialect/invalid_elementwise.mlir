// RUN: mjax-opt %s --split-input-file --verify-diagnostics
// One verifier error per chunk: elementwise op constraints (dtype categories, shapes,
// attributes, result types), plus the generic checks every jaxpr op gets.

func.func @add_c1_shapes(%a0: tensor<4xf32>, %a1: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{add got incompatible shapes for broadcasting: (4,), (3,)}}
  %0 = "jaxpr.add"(%a0, %a1) : (tensor<4xf32>, tensor<3xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @add_c2_dtypes(%a0: tensor<4xf32>, %a1: tensor<4xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{add requires arguments to have the same dtypes, got f32, i32}}
  %0 = "jaxpr.add"(%a0, %a1) : (tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @add_key(%a0: tensor<4x!jaxpr.key<threefry2x32>>, %a1: tensor<4x!jaxpr.key<threefry2x32>>) -> tensor<4x!jaxpr.key<threefry2x32>> {
  // expected-error @+1 {{add does not accept dtype key<fry>}}
  %0 = "jaxpr.add"(%a0, %a1) : (tensor<4x!jaxpr.key<threefry2x32>>, tensor<4x!jaxpr.key<threefry2x32>>) -> tensor<4x!jaxpr.key<threefry2x32>>
  return %0 : tensor<4x!jaxpr.key<threefry2x32>>
}

// -----

func.func @sub_bool(%a0: tensor<4xi1>, %a1: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{sub does not accept dtype bool (operand must be numeric)}}
  %0 = "jaxpr.sub"(%a0, %a1) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @sin_int(%a0: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{sin does not accept dtype i32 (operand must be floating-point or complex)}}
  %0 = "jaxpr.sin"(%a0) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @floor_int(%a0: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{floor does not accept dtype i32 (operand must be floating-point)}}
  %0 = "jaxpr.floor"(%a0) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @cbrt_complex(%a0: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{cbrt does not accept dtype c64 (operand must be floating-point)}}
  %0 = "jaxpr.cbrt"(%a0) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @erf_complex(%a0: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{erf does not accept dtype c64}}
  %0 = "jaxpr.erf"(%a0) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @is_finite_int(%a0: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error @+1 {{is_finite does not accept dtype i32}}
  %0 = "jaxpr.is_finite"(%a0) : (tensor<4xi32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @abs_unsigned(%a0: tensor<4xui8>) -> tensor<4xui8> {
  // expected-error @+1 {{abs does not accept dtype u8 (operand must be signed integer or floating-point or complex)}}
  %0 = "jaxpr.abs"(%a0) : (tensor<4xui8>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

func.func @neg_bool(%a0: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{neg does not accept dtype bool}}
  %0 = "jaxpr.neg"(%a0) : (tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @sign_bool(%a0: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{sign does not accept dtype bool}}
  %0 = "jaxpr.sign"(%a0) : (tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @rem_complex(%a0: tensor<4xcomplex<f32>>, %a1: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{rem does not accept dtype c64 (operand must be integer or floating-point)}}
  %0 = "jaxpr.rem"(%a0, %a1) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @atan2_int(%a0: tensor<4xi32>, %a1: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{atan2 does not accept dtype i32}}
  %0 = "jaxpr.atan2"(%a0, %a1) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @polygamma_int(%a0: tensor<4xi32>, %a1: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{polygamma does not accept dtype i32}}
  %0 = "jaxpr.polygamma"(%a0, %a1) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @polygamma_complex(%a0: tensor<4xcomplex<f32>>, %a1: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{polygamma does not accept dtype c64 (operand must be floating-point)}}
  %0 = "jaxpr.polygamma"(%a0, %a1) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @polygamma_dtypes(%a0: tensor<4xf32>, %a1: tensor<4xf64>) -> tensor<4xf64> {
  // expected-error @+1 {{polygamma requires arguments to have the same dtypes, got f32, f64}}
  %0 = "jaxpr.polygamma"(%a0, %a1) : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @polygamma_one_operand(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'jaxpr.polygamma' op expects 2 operands, got 1}}
  %0 = "jaxpr.polygamma"(%a0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pow_int_base(%a0: tensor<4xi32>, %a1: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{pow does not accept dtype i32 (first operand must be floating-point or complex)}}
  %0 = "jaxpr.pow"(%a0, %a1) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @pow_mixed_floats(%a0: tensor<4xf32>, %a1: tensor<4xf64>) -> tensor<4xf32> {
  // expected-error @+1 {{pow does not accept dtype f64 (second operand (when dtypes differ) must be integer)}}
  %0 = "jaxpr.pow"(%a0, %a1) : (tensor<4xf32>, tensor<4xf64>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pow_shapes(%a0: tensor<4xf32>, %a1: tensor<2xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{pow got incompatible shapes}}
  %0 = "jaxpr.pow"(%a0, %a1) : (tensor<4xf32>, tensor<2xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @integer_pow_negative_int(%a0: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{integer_pow: negative exponent -1 is not allowed for integer dtype int32}}
  %0 = "jaxpr.integer_pow"(%a0) {y = -1 : i64} : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @integer_pow_missing_y(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{requires attribute 'y'}}
  %0 = "jaxpr.integer_pow"(%a0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @integer_pow_float_y(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'y' must be an integer, got 2.0}}
  %0 = "jaxpr.integer_pow"(%a0) {y = 2.0 : f32} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @round_c1_method(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{round: rounding_method must be 0 (AWAY_FROM_ZERO) or 1 (TO_NEAREST_EVEN), got 2}}
  %0 = "jaxpr.round"(%a0) {rounding_method = 2 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @round_string_method(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'rounding_method' must be an integer, got 'even'}}
  %0 = "jaxpr.round"(%a0) {rounding_method = "even"} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @round_unsigned_array_method(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'rounding_method': unsupported attribute array<ui32: 1>}}
  %0 = "jaxpr.round"(%a0) {rounding_method = array<ui32: 1>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @round_complex_dense_method(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'rounding_method' must be an integer, got array([1.+2.j, 1.+2.j], dtype=complex64)}}
  %0 = "jaxpr.round"(%a0) {rounding_method = dense<(1.0,2.0)> : tensor<2xcomplex<f32>>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @not_float(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{not does not accept dtype f32 (operand must be bool or integer)}}
  %0 = "jaxpr.not"(%a0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @and_float(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{and does not accept dtype f32}}
  %0 = "jaxpr.and"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @or_complex(%a0: tensor<4xcomplex<f32>>, %a1: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{or does not accept dtype c64}}
  %0 = "jaxpr.or"(%a0, %a1) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @xor_dtypes(%a0: tensor<4xi1>, %a1: tensor<4xi32>) -> tensor<4xi1> {
  // expected-error @+1 {{xor requires arguments to have the same dtypes, got bool, i32}}
  %0 = "jaxpr.xor"(%a0, %a1) : (tensor<4xi1>, tensor<4xi32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @shift_left_float(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{shift_left does not accept dtype f32 (operand must be integer)}}
  %0 = "jaxpr.shift_left"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @shift_right_arithmetic_bool(%a0: tensor<4xi1>, %a1: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{shift_right_arithmetic does not accept dtype bool}}
  %0 = "jaxpr.shift_right_arithmetic"(%a0, %a1) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @shift_right_logical_shapes(%a0: tensor<4xi32>, %a1: tensor<2xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{shift_right_logical got incompatible shapes}}
  %0 = "jaxpr.shift_right_logical"(%a0, %a1) : (tensor<4xi32>, tensor<2xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @population_count_float(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{population_count does not accept dtype f32}}
  %0 = "jaxpr.population_count"(%a0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clz_bool(%a0: tensor<4xi1>) -> tensor<4xi1> {
  // expected-error @+1 {{clz does not accept dtype bool}}
  %0 = "jaxpr.clz"(%a0) : (tensor<4xi1>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @lt_complex(%a0: tensor<4xcomplex<f32>>, %a1: tensor<4xcomplex<f32>>) -> tensor<4xi1> {
  // expected-error @+1 {{lt does not accept dtype c64 (operand must be bool or integer or floating-point)}}
  %0 = "jaxpr.lt"(%a0, %a1) : (tensor<4xcomplex<f32>>, tensor<4xcomplex<f32>>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @eq_result_not_bool(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result 0 has type tensor<4xf32>, but the operands give tensor<4xi1>}}
  %0 = "jaxpr.eq"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @ne_key(%a0: tensor<4x!jaxpr.key<threefry2x32>>, %a1: tensor<4x!jaxpr.key<threefry2x32>>) -> tensor<4xi1> {
  // expected-error @+1 {{ne does not accept dtype key<fry>}}
  %0 = "jaxpr.ne"(%a0, %a1) : (tensor<4x!jaxpr.key<threefry2x32>>, tensor<4x!jaxpr.key<threefry2x32>>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @real_of_real(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{real does not accept dtype f32 (operand must be complex)}}
  %0 = "jaxpr.real"(%a0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @imag_result_complex(%a0: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{result 0 has type tensor<4xcomplex<f32>>, but the operands give tensor<4xf32>}}
  %0 = "jaxpr.imag"(%a0) : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @complex_f16(%a0: tensor<4xf16>, %a1: tensor<4xf16>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{complex requires float32 or float64 operands, got float16}}
  %0 = "jaxpr.complex"(%a0, %a1) : (tensor<4xf16>, tensor<4xf16>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @complex_int(%a0: tensor<4xi32>, %a1: tensor<4xi32>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{complex requires float32 or float64 operands, got int32}}
  %0 = "jaxpr.complex"(%a0, %a1) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @conj_f16(%a0: tensor<4xf16>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{conj requires float32, float64 or complex operands, got float16}}
  %0 = "jaxpr.conj"(%a0) : (tensor<4xf16>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @conj_int(%a0: tensor<4xi32>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{conj does not accept dtype i32}}
  %0 = "jaxpr.conj"(%a0) : (tensor<4xi32>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @conj_input_dtype_not_type(%a0: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{attribute 'input_dtype' must be a dtype, got 'c64'}}
  %0 = "jaxpr.conj"(%a0) {input_dtype = "c64"} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

// A string numpy would parse as a record dtype (and fail on) is not a dtype either.
func.func @conj_input_dtype_unparsable(%a0: tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{attribute 'input_dtype' must be a dtype, got ',c64'}}
  %0 = "jaxpr.conj"(%a0) {input_dtype = ",c64"} : (tensor<4xcomplex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @sin_wrong_result_type(%a0: tensor<4xf32>) -> tensor<4xf64> {
  // expected-error @+1 {{result 0 has type tensor<4xf64>, but the operands give tensor<4xf32>}}
  %0 = "jaxpr.sin"(%a0) : (tensor<4xf32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @sin_wrong_result_shape(%a0: tensor<4xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{result 0 has type tensor<3xf32>, but the operands give tensor<4xf32>}}
  %0 = "jaxpr.sin"(%a0) : (tensor<4xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @sin_two_operands(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'jaxpr.sin' op expects 1 operand, got 2}}
  %0 = "jaxpr.sin"(%a0, %a1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @add_one_operand(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'jaxpr.add' op expects 2 operands, got 1}}
  %0 = "jaxpr.add"(%a0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @sin_two_results(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'jaxpr.sin' op expects 1 results, got 2}}
  %0:2 = "jaxpr.sin"(%a0) : (tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  return %0#0 : tensor<4xf32>
}

// -----

func.func @sin_unknown_attribute(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'jaxpr.sin' op has unknown attribute 'bogus'}}
  %0 = "jaxpr.sin"(%a0) {bogus = 1 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @sin_unranked(%a0: tensor<*xf32>) -> tensor<*xf32> {
  // expected-error @+1 {{'jaxpr.sin' op expected a ranked tensor type, got tensor<*xf32>}}
  %0 = "jaxpr.sin"(%a0) : (tensor<*xf32>) -> tensor<*xf32>
  return %0 : tensor<*xf32>
}

// -----

func.func @sin_dynamic(%a0: tensor<?xf32>) -> tensor<?xf32> {
  // expected-error @+1 {{'jaxpr.sin' op expected a statically shaped tensor, or one whose encoding spells its symbolic dimensions, got tensor<?xf32>}}
  %0 = "jaxpr.sin"(%a0) : (tensor<?xf32>) -> tensor<?xf32>
  return %0 : tensor<?xf32>
}

// -----

func.func @sin_scalar_not_tensor(%a0: f32) -> f32 {
  // expected-error @+1 {{'jaxpr.sin' op expected a ranked tensor type, got f32}}
  %0 = "jaxpr.sin"(%a0) : (f32) -> f32
  return %0 : f32
}

// -----

func.func @unknown_op(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'jaxpr.foo' op is not a known jaxpr op}}
  %0 = "jaxpr.foo"(%a0) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @sin_with_region(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'jaxpr.sin' op expects 0 regions, got 1}}
  %0 = "jaxpr.sin"(%a0) ({
  }) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
