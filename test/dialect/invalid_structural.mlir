// RUN: mjax-opt %s --split-input-file --verify-diagnostics
// One verifier error per chunk: structural op constraints (dtype categories, shapes,
// attributes, result types), plus the generic checks every jaxpr op gets.

func.func @convert_element_type_missing_new_dtype(%a0: tensor<4xf32>) -> tensor<4xi32> {
  // expected-error @+1 {{'jaxpr.convert_element_type' op requires attribute 'new_dtype'}}
  %0 = "jaxpr.convert_element_type"(%a0) : (tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @convert_element_type_string_dtype(%a0: tensor<4xf32>) -> tensor<4xi32> {
  // expected-error @+1 {{attribute 'new_dtype' must be a dtype, got 3}}
  %0 = "jaxpr.convert_element_type"(%a0) {new_dtype = 3 : i64} : (tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @convert_element_type_wrong_result(%a0: tensor<4xf32>) -> tensor<4xi64> {
  // expected-error @+1 {{result 0 has type tensor<4xi64>, but the operands give tensor<4xi32>}}
  %0 = "jaxpr.convert_element_type"(%a0) {new_dtype = i32} : (tensor<4xf32>) -> tensor<4xi64>
  return %0 : tensor<4xi64>
}

// -----

func.func @convert_element_type_to_key(%a0: tensor<4xi32>) -> tensor<4x!jaxpr.key<threefry2x32>> {
  // expected-error @+1 {{convert_element_type does not accept dtype key<fry> (new_dtype must be array)}}
  %0 = "jaxpr.convert_element_type"(%a0) {new_dtype = !jaxpr.key<threefry2x32>} : (tensor<4xi32>) -> tensor<4x!jaxpr.key<threefry2x32>>
  return %0 : tensor<4x!jaxpr.key<threefry2x32>>
}

// -----

func.func @bitcast_convert_type_bool(%a0: tensor<4xi1>) -> tensor<4xui8> {
  // expected-error @+1 {{bitcast_convert_type does not support bool or complex values unless the operand and result dtypes match, got bool to u8}}
  %0 = "jaxpr.bitcast_convert_type"(%a0) {new_dtype = ui8} : (tensor<4xi1>) -> tensor<4xui8>
  return %0 : tensor<4xui8>
}

// -----

func.func @bitcast_convert_type_complex(%a0: tensor<4xcomplex<f32>>) -> tensor<4xf64> {
  // expected-error @+1 {{bitcast_convert_type does not support bool or complex values unless the operand and result dtypes match, got c64 to f64}}
  %0 = "jaxpr.bitcast_convert_type"(%a0) {new_dtype = f64} : (tensor<4xcomplex<f32>>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @bitcast_convert_type_minor_dim(%a0: tensor<4x3xi32>) -> tensor<4xf64> {
  // expected-error @+1 {{bitcast_convert_type from i32 to f64 needs a minor dimension of size 2, got shape (4, 3)}}
  %0 = "jaxpr.bitcast_convert_type"(%a0) {new_dtype = f64} : (tensor<4x3xi32>) -> tensor<4xf64>
  return %0 : tensor<4xf64>
}

// -----

func.func @reduce_precision_int(%a0: tensor<4xi32>) -> tensor<4xi32> {
  // expected-error @+1 {{reduce_precision does not accept dtype i32 (operand must be floating-point)}}
  %0 = "jaxpr.reduce_precision"(%a0) {exponent_bits = 5 : i64, mantissa_bits = 10 : i64} : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @reduce_precision_c1_exponent_bits(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{reduce_precision: exponent_bits must be >= 1 and mantissa_bits >= 0, got 0 and 10}}
  %0 = "jaxpr.reduce_precision"(%a0) {exponent_bits = 0 : i64, mantissa_bits = 10 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @reduce_precision_missing_mantissa_bits(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{requires attribute 'mantissa_bits'}}
  %0 = "jaxpr.reduce_precision"(%a0) {exponent_bits = 5 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @stop_gradient_wrong_result(%a0: tensor<4xf32>) -> tensor<4xi32> {
  // expected-error @+1 {{result 0 has type tensor<4xi32>, but the operands give tensor<4xf32>}}
  %0 = "jaxpr.stop_gradient"(%a0) : (tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @copy_no_operand() -> tensor<4xf32> {
  // expected-error @+1 {{'jaxpr.copy' op expects 1 operand, got 0}}
  %0 = "jaxpr.copy"() : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @optimization_barrier_no_operand() {
  // expected-error @+1 {{'jaxpr.optimization_barrier' op expects at least 1 operands, got 0}}
  "jaxpr.optimization_barrier"() : () -> ()
  return
}

// -----

func.func @optimization_barrier_result_type(%x: tensor<4xf32>, %n: tensor<i32>) -> (tensor<4xf32>, tensor<f32>) {
  // expected-error @+1 {{'jaxpr.optimization_barrier' op result 1 has type tensor<f32>, but the operands give tensor<i32>}}
  %0:2 = "jaxpr.optimization_barrier"(%x, %n) : (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<f32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<f32>
}

// -----

func.func @optimization_barrier_result_count(%x: tensor<4xf32>, %n: tensor<i32>) -> tensor<4xf32> {
  // expected-error @+1 {{'jaxpr.optimization_barrier' op expects 2 results, got 1}}
  %0 = "jaxpr.optimization_barrier"(%x, %n) : (tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @constant_not_dense() -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'value' must be a dense elements attribute, got 1}}
  %0 = "jaxpr.constant"() {value = 1 : i64} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @constant_wrong_result() -> tensor<4xf32> {
  // expected-error @+1 {{result 0 has type tensor<4xf32>, but the operands give tensor<3xf32>}}
  %0 = "jaxpr.constant"() {value = dense<1.0> : tensor<3xf32>} : () -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @constant_operand(%a0: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{'jaxpr.constant' op expects 0 operands, got 1}}
  %0 = "jaxpr.constant"(%a0) {value = dense<1.0> : tensor<4xf32>} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @iota_c1_dimension() -> tensor<2x3xi32> {
  // expected-error @+1 {{iota: dimension 2 is out of range for shape (2, 3)}}
  %0 = "jaxpr.iota"() {dimension = 2 : i64, dtype = i32, shape = array<i64: 2, 3>} : () -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

func.func @iota_negative_shape() -> tensor<2xi32> {
  // expected-error @+1 {{iota: shape (-2,) has a negative dimension}}
  %0 = "jaxpr.iota"() {dtype = i32, shape = array<i64: -2>} : () -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

func.func @iota_bool() -> tensor<4xi1> {
  // expected-error @+1 {{iota does not accept dtype bool}}
  %0 = "jaxpr.iota"() {dtype = i1, shape = array<i64: 4>} : () -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

func.func @iota_shape_not_ints() -> tensor<4xi32> {
  // expected-error @+1 {{attribute 'shape' must be a shape (integers or symbolic dimensions), got '4'}}
  %0 = "jaxpr.iota"() {dtype = i32, shape = "4"} : () -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @broadcast_in_dim_c1_length(%a0: tensor<3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{broadcast_in_dim broadcast_dimensions must have length equal to operand ndim; got broadcast_dimensions (0, 1) for operand ndim 1}}
  %0 = "jaxpr.broadcast_in_dim"(%a0) {broadcast_dimensions = array<i64: 0, 1>, shape = array<i64: 2, 3>} : (tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @broadcast_in_dim_c2_rank(%a0: tensor<2x3xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{broadcast_in_dim target broadcast shape must have equal or higher rank to the operand shape; got operand shape (2, 3) and target shape (6,)}}
  %0 = "jaxpr.broadcast_in_dim"(%a0) {broadcast_dimensions = array<i64: 0, 1>, shape = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @broadcast_in_dim_c3_increasing(%a0: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{broadcast_in_dim broadcast_dimensions must be strictly increasing in the jaxpr dialect; got (1, 0)}}
  %0 = "jaxpr.broadcast_in_dim"(%a0) {broadcast_dimensions = array<i64: 1, 0>, shape = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @broadcast_in_dim_c3_range(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{broadcast_in_dim broadcast_dimensions must be a subset of output dimensions, got (0, 2) for operand ndim 2 and shape (2, 3).}}
  %0 = "jaxpr.broadcast_in_dim"(%a0) {broadcast_dimensions = array<i64: 0, 2>, shape = array<i64: 2, 3>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @broadcast_in_dim_c3_unique(%a0: tensor<3x3xf32>) -> tensor<3x3xf32> {
  // expected-error @+1 {{broadcast_in_dim broadcast_dimensions must not contain duplicates, got broadcast_dimensions (0, 0)}}
  %0 = "jaxpr.broadcast_in_dim"(%a0) {broadcast_dimensions = array<i64: 0, 0>, shape = array<i64: 3, 3>} : (tensor<3x3xf32>) -> tensor<3x3xf32>
  return %0 : tensor<3x3xf32>
}

// -----

func.func @broadcast_in_dim_c4_sizes(%a0: tensor<3xf32>) -> tensor<3x4xf32> {
  // expected-error @+1 {{broadcast_in_dim operand dimension sizes must either be 1, or be equal to their corresponding dimensions in the target broadcast shape; got operand shape (3,), target broadcast shape (3, 4), broadcast_dimensions (1,)}}
  %0 = "jaxpr.broadcast_in_dim"(%a0) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 3, 4>} : (tensor<3xf32>) -> tensor<3x4xf32>
  return %0 : tensor<3x4xf32>
}

// -----

func.func @reshape_c1_size(%a0: tensor<2x3xf32>) -> tensor<5xf32> {
  // expected-error @+1 {{reshape total size must be unchanged, got new_sizes (5,) (size 5) for shape (2, 3) (size 6)}}
  %0 = "jaxpr.reshape"(%a0) {new_sizes = array<i64: 5>} : (tensor<2x3xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @reshape_c2_dimensions(%a0: tensor<2x3xf32>) -> tensor<6xf32> {
  // expected-error @+1 {{reshape dimensions (0, 0) is not a permutation of (0, ..., 1) for operand of rank 2}}
  %0 = "jaxpr.reshape"(%a0) {dimensions = array<i64: 0, 0>, new_sizes = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

func.func @reshape_wrong_result(%a0: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // expected-error @+1 {{result 0 has type tensor<3x2xf32>, but the operands give tensor<6xf32>}}
  %0 = "jaxpr.reshape"(%a0) {new_sizes = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

func.func @squeeze_c1_size(%a0: tensor<2x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{cannot select an axis to squeeze out which has size not equal to one, got shape=(2, 3) and dimensions=(0,)}}
  %0 = "jaxpr.squeeze"(%a0) {dimensions = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @squeeze_c2_range(%a0: tensor<1x3xf32>) -> tensor<3xf32> {
  // expected-error @+1 {{squeeze: axis 2 in dimensions is out of range for rank 2}}
  %0 = "jaxpr.squeeze"(%a0) {dimensions = array<i64: 2>} : (tensor<1x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @expand_dims_duplicates(%a0: tensor<4xf32>) -> tensor<1x1x4xf32> {
  // expected-error @+1 {{expand_dims: dimensions (0, 0) has duplicates}}
  %0 = "jaxpr.expand_dims"(%a0) {dimensions = array<i64: 0, 0>} : (tensor<4xf32>) -> tensor<1x1x4xf32>
  return %0 : tensor<1x1x4xf32>
}

// -----

func.func @expand_dims_range(%a0: tensor<4xf32>) -> tensor<4x1xf32> {
  // expected-error @+1 {{expand_dims: axis 3 in dimensions is out of range for rank 2}}
  %0 = "jaxpr.expand_dims"(%a0) {dimensions = array<i64: 3>} : (tensor<4xf32>) -> tensor<4x1xf32>
  return %0 : tensor<4x1xf32>
}

// -----

func.func @transpose_c1_permutation(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{transpose permutation isn't a permutation of operand dimensions, got permutation (0, 2) for operand shape (2, 3).}}
  %0 = "jaxpr.transpose"(%a0) {permutation = array<i64: 0, 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @rev_c1_range(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{rev: axis 2 in dimensions is out of range for rank 2}}
  %0 = "jaxpr.rev"(%a0) {dimensions = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @rev_c2_duplicates(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{rev: dimensions (1, 1) has duplicates}}
  %0 = "jaxpr.rev"(%a0) {dimensions = array<i64: 1, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @tile_reps_rank(%a0: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{reps length must be equal to the ndim of x, got len(reps)=1 and x.ndim=2.}}
  %0 = "jaxpr.tile"(%a0) {reps = array<i64: 2>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @concatenate_c1_dtypes(%a0: tensor<2x3xf32>, %a1: tensor<2x3xi32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{concatenate requires operands to have the same dtypes, got f32, i32}}
  %0 = "jaxpr.concatenate"(%a0, %a1) {dimension = 0 : i64} : (tensor<2x3xf32>, tensor<2x3xi32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @concatenate_c2_dimension(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{concatenate dimension out of bounds: dimension 2 for shapes (2, 3), (2, 3)}}
  %0 = "jaxpr.concatenate"(%a0, %a1) {dimension = 2 : i64} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @concatenate_c3_shapes(%a0: tensor<2x3xf32>, %a1: tensor<2x4xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{Cannot concatenate arrays with shapes that differ in dimensions other than the one being concatenated: concatenating along dimension 0 for shapes (2, 3), (2, 4).}}
  %0 = "jaxpr.concatenate"(%a0, %a1) {dimension = 0 : i64} : (tensor<2x3xf32>, tensor<2x4xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @concatenate_no_operands() -> tensor<2x3xf32> {
  // expected-error @+1 {{'jaxpr.concatenate' op expects at least 1 operands, got 0}}
  %0 = "jaxpr.concatenate"() {dimension = 0 : i64} : () -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @pad_c1_scalar(%a0: tensor<4xf32>, %a1: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{pad padding_value must be a scalar, got shape (4,)}}
  %0 = "jaxpr.pad"(%a0, %a1) {padding_config = [array<i64: 0, 0, 0>]} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pad_c2_dtypes(%a0: tensor<4xf32>, %a1: tensor<i32>) -> tensor<4xf32> {
  // expected-error @+1 {{pad requires operand and padding value to have the same dtypes, got f32, i32}}
  %0 = "jaxpr.pad"(%a0, %a1) {padding_config = [array<i64: 0, 0, 0>]} : (tensor<4xf32>, tensor<i32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pad_c3_config_length(%a0: tensor<2x3xf32>, %a1: tensor<f32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{pad: padding_config must have one (low, high, interior) triple per operand dimension; got ((0, 0, 0),) for shape (2, 3)}}
  %0 = "jaxpr.pad"(%a0, %a1) {padding_config = [array<i64: 0, 0, 0>]} : (tensor<2x3xf32>, tensor<f32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @pad_c4_interior(%a0: tensor<4xf32>, %a1: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{pad: interior padding must be nonnegative, got ((0, 0, -1),)}}
  %0 = "jaxpr.pad"(%a0, %a1) {padding_config = [array<i64: 0, 0, -1>]} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pad_c5_negative_size(%a0: tensor<4xf32>, %a1: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{pad: dimension size would be negative (-2) for shape (4,) and padding_config ((-3, -3, 0),)}}
  %0 = "jaxpr.pad"(%a0, %a1) {padding_config = [array<i64: -3, -3, 0>]} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @pad_config_not_nested(%a0: tensor<4xf32>, %a1: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{attribute 'padding_config' must be nested integer sequences, got (0, 0, 0)}}
  %0 = "jaxpr.pad"(%a0, %a1) {padding_config = array<i64: 0, 0, 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @slice_c1_lengths(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{slice start_indices, limit_indices and strides must have length 2 for operand shape (2, 3)}}
  %0 = "jaxpr.slice"(%a0) {limit_indices = array<i64: 2>, start_indices = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @slice_c2_range(%a0: tensor<2x3xf32>) -> tensor<2x4xf32> {
  // expected-error @+1 {{slice indices out of range: start_indices (0, 0), limit_indices (2, 4), strides (1, 1) for operand shape (2, 3)}}
  %0 = "jaxpr.slice"(%a0) {limit_indices = array<i64: 2, 4>, start_indices = array<i64: 0, 0>} : (tensor<2x3xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

func.func @slice_c3_stride(%a0: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{slice indices out of range}}
  %0 = "jaxpr.slice"(%a0) {limit_indices = array<i64: 2, 3>, start_indices = array<i64: 0, 0>, strides = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @select_n_c1_which_dtype(%a0: tensor<4xf32>, %a1: tensor<4xf32>, %a2: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{select_n does not accept dtype f32 (`which` must be bool or integer)}}
  %0 = "jaxpr.select_n"(%a0, %a1, %a2) : (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @select_n_c2_bool_cases(%a0: tensor<4xi1>, %a1: tensor<4xf32>, %a2: tensor<4xf32>, %a3: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{select_n with a bool predicate takes at most 2 cases, got 3}}
  %0 = "jaxpr.select_n"(%a0, %a1, %a2, %a3) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @select_n_c3_cases(%a0: tensor<4xi1>, %a1: tensor<4xf32>, %a2: tensor<4xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{select_n cases must have the same shapes and dtypes, got f32[4], i32[4]}}
  %0 = "jaxpr.select_n"(%a0, %a1, %a2) : (tensor<4xi1>, tensor<4xf32>, tensor<4xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @select_n_c4_which_shape(%a0: tensor<2xi1>, %a1: tensor<4xf32>, %a2: tensor<4xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{select_n `which` must be scalar or have the same shape as cases, got `which` shape (2,) but case shape (4,)}}
  %0 = "jaxpr.select_n"(%a0, %a1, %a2) : (tensor<2xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @select_n_no_cases(%a0: tensor<4xi1>) -> tensor<4xf32> {
  // expected-error @+1 {{'jaxpr.select_n' op expects at least 2 operands, got 1}}
  %0 = "jaxpr.select_n"(%a0) : (tensor<4xi1>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clamp_c1_dtypes(%a0: tensor<f32>, %a1: tensor<4xi32>, %a2: tensor<f32>) -> tensor<4xi32> {
  // expected-error @+1 {{clamp requires operands to have the same dtypes, got f32, i32, f32}}
  %0 = "jaxpr.clamp"(%a0, %a1, %a2) : (tensor<f32>, tensor<4xi32>, tensor<f32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

func.func @clamp_c2_shapes(%a0: tensor<2xf32>, %a1: tensor<4xf32>, %a2: tensor<f32>) -> tensor<4xf32> {
  // expected-error @+1 {{clamp requires min shape to be either a scalar or equal to operand shape, got min shape (2,) and operand shape (4,)}}
  %0 = "jaxpr.clamp"(%a0, %a1, %a2) : (tensor<2xf32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @clamp_complex(%a0: tensor<complex<f32>>, %a1: tensor<4xcomplex<f32>>, %a2: tensor<complex<f32>>) -> tensor<4xcomplex<f32>> {
  // expected-error @+1 {{clamp does not accept dtype c64}}
  %0 = "jaxpr.clamp"(%a0, %a1, %a2) : (tensor<complex<f32>>, tensor<4xcomplex<f32>>, tensor<complex<f32>>) -> tensor<4xcomplex<f32>>
  return %0 : tensor<4xcomplex<f32>>
}

// -----

func.func @dot_general_c1_contracting_sizes(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{dot_general requires contracting dimensions to have the same shape, got (3,) and (2,) (lhs shape (2, 3), rhs shape (2, 3))}}
  %0 = "jaxpr.dot_general"(%a0, %a1) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

func.func @dot_general_bad_precision(%a0: tensor<2x3xf32>, %a1: tensor<3x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{dot_general precision must be absent, a pair of DEFAULT/HIGH/HIGHEST or a dot algorithm, got ('FAST', 'HIGH')}}
  %0 = "jaxpr.dot_general"(%a0, %a1) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]], precision = ["FAST", "HIGH"]} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @dot_general_unknown_algorithm(%a0: tensor<2x3xf32>, %a1: tensor<3x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{dot_general precision names no dot algorithm preset: 'F17_F17_F17'}}
  %0 = "jaxpr.dot_general"(%a0, %a1) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]], precision = "F17_F17_F17"} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @dot_general_c2_overlap(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{dot_general requires contracting and batch dimensions to be disjoint}}
  %0 = "jaxpr.dot_general"(%a0, %a1) {dimension_numbers = [[array<i64: 0>, array<i64: 0>], [array<i64: 0>, array<i64: 0>]]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @dot_general_c3_range(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{dot_general: axis 2 in lhs contracting dimensions is out of range for rank 2}}
  %0 = "jaxpr.dot_general"(%a0, %a1) {dimension_numbers = [[array<i64: 2>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @dot_general_c4_count(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{dot_general requires equal numbers of lhs and rhs contracting and batch dimensions}}
  %0 = "jaxpr.dot_general"(%a0, %a1) {dimension_numbers = [[array<i64: 1>, array<i64>], [array<i64>, array<i64>]]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @dot_general_c5_dtypes(%a0: tensor<2x3xf32>, %a1: tensor<3x2xi32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{dot_general requires operands of the same dtype, got f32 and i32}}
  %0 = "jaxpr.dot_general"(%a0, %a1) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<2x3xf32>, tensor<3x2xi32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @dot_general_malformed(%a0: tensor<2x3xf32>, %a1: tensor<2x3xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{attribute 'dimension_numbers' must be nested integer sequences}}
  %0 = "jaxpr.dot_general"(%a0, %a1) {dimension_numbers = [array<i64: 1>, array<i64: 0>]} : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}
