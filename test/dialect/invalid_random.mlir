// RUN: mjax-opt %s --jaxpr-verify --split-input-file --verify-diagnostics

func.func @random_seed_float_seed(%s: tensor<f32>) -> tensor<!jaxpr.key<threefry2x32>> {
  // expected-error @+1 {{random_seed does not accept dtype f32 (seed must be integer)}}
  %0 = "jaxpr.random_seed"(%s) {impl = "threefry2x32"} : (tensor<f32>) -> tensor<!jaxpr.key<threefry2x32>>
  return %0 : tensor<!jaxpr.key<threefry2x32>>
}

// -----

func.func @random_wrap_key_shape(%d: tensor<3xui32>) -> tensor<!jaxpr.key<threefry2x32>> {
  // expected-error @+1 {{random_wrap: key data of impl threefry2x32 must have trailing shape (2,), got shape (3,)}}
  %0 = "jaxpr.random_wrap"(%d) {impl = "threefry2x32"} : (tensor<3xui32>) -> tensor<!jaxpr.key<threefry2x32>>
  return %0 : tensor<!jaxpr.key<threefry2x32>>
}

// -----

func.func @random_wrap_unknown_impl(%d: tensor<2xui32>) -> tensor<!jaxpr.key<philox>> {
  // expected-error @+1 {{attribute 'impl' must be one of 'threefry2x32', 'rbg', 'unsafe_rbg'}}
  %0 = "jaxpr.random_wrap"(%d) {impl = "philox"} : (tensor<2xui32>) -> tensor<!jaxpr.key<philox>>
  return %0 : tensor<!jaxpr.key<philox>>
}

// -----

func.func @random_unwrap_not_a_key(%d: tensor<2xui32>) -> tensor<2xui32> {
  // expected-error @+1 {{random_unwrap expects a PRNG key array, got dtype u32}}
  %0 = "jaxpr.random_unwrap"(%d) : (tensor<2xui32>) -> tensor<2xui32>
  return %0 : tensor<2xui32>
}

// -----

func.func @random_bits_width(%k: tensor<!jaxpr.key<threefry2x32>>) -> tensor<3xui32> {
  // expected-error @+1 {{random_bits: bit_width must be 8, 16, 32 or 64, got 12}}
  %0 = "jaxpr.random_bits"(%k) {bit_width = 12 : i64, shape = array<i64: 3>} : (tensor<!jaxpr.key<threefry2x32>>) -> tensor<3xui32>
  return %0 : tensor<3xui32>
}

// -----

func.func @random_bits_result_type(%k: tensor<!jaxpr.key<threefry2x32>>) -> tensor<3xui16> {
  // expected-error @+1 {{result 0 has type tensor<3xui16>, but the operands give tensor<3xui32>}}
  %0 = "jaxpr.random_bits"(%k) {bit_width = 32 : i64, shape = array<i64: 3>} : (tensor<!jaxpr.key<threefry2x32>>) -> tensor<3xui16>
  return %0 : tensor<3xui16>
}

// -----

func.func @random_fold_in_shapes(%k: tensor<2x!jaxpr.key<threefry2x32>>, %m: tensor<3xui32>) -> tensor<2x!jaxpr.key<threefry2x32>> {
  // expected-error @+1 {{random_fold_in got incompatible shapes for broadcasting: (2,), (3,)}}
  %0 = "jaxpr.random_fold_in"(%k, %m) : (tensor<2x!jaxpr.key<threefry2x32>>, tensor<3xui32>) -> tensor<2x!jaxpr.key<threefry2x32>>
  return %0 : tensor<2x!jaxpr.key<threefry2x32>>
}

// -----

func.func @threefry2x32_dtype(%a: tensor<3xui32>, %b: tensor<3xi32>) -> tensor<3xui32> {
  // expected-error @+1 {{Arguments to threefry2x32 must have uint32 type, got (ShapedArray(uint32[3]), ShapedArray(uint32[3]), ShapedArray(uint32[3]), ShapedArray(int32[3]))}}
  %0:2 = "jaxpr.threefry2x32"(%a, %a, %a, %b) : (tensor<3xui32>, tensor<3xui32>, tensor<3xui32>, tensor<3xi32>) -> (tensor<3xui32>, tensor<3xui32>)
  return %0#0 : tensor<3xui32>
}

// -----

// (JAX's broadcasting_shape_rule: scalars aside, one rank)
func.func @threefry2x32_ranks(%a: tensor<1x3xui32>, %b: tensor<3xui32>, %s: tensor<ui32>) -> tensor<1x3xui32> {
  // expected-error @+1 {{threefry2x32: arrays must have the same number of dimensions, got {1, 2}}}
  %0:2 = "jaxpr.threefry2x32"(%a, %s, %b, %b) : (tensor<1x3xui32>, tensor<ui32>, tensor<3xui32>, tensor<3xui32>) -> (tensor<1x3xui32>, tensor<1x3xui32>)
  return %0#0 : tensor<1x3xui32>
}

// -----

// (dimensions equal or 1)
func.func @threefry2x32_shapes(%a: tensor<2x1xui32>, %b: tensor<3x4xui32>) -> tensor<3x4xui32> {
  // expected-error @+1 {{threefry2x32 got incompatible shapes for broadcasting: (2, 1), (3, 4), (3, 4), (3, 4).}}
  %0:2 = "jaxpr.threefry2x32"(%a, %b, %b, %b) : (tensor<2x1xui32>, tensor<3x4xui32>, tensor<3x4xui32>, tensor<3x4xui32>) -> (tensor<3x4xui32>, tensor<3x4xui32>)
  return %0#0 : tensor<3x4xui32>
}

// -----

// (the results are the broadcast shape)
func.func @threefry2x32_result_shape(%a: tensor<1x4xui32>, %b: tensor<3x1xui32>) -> tensor<1x4xui32> {
  // expected-error @+1 {{'jaxpr.threefry2x32' op result 0 has type tensor<1x4xui32>, but the operands give tensor<3x4xui32>}}
  %0:2 = "jaxpr.threefry2x32"(%a, %b, %a, %b) : (tensor<1x4xui32>, tensor<3x1xui32>, tensor<1x4xui32>, tensor<3x1xui32>) -> (tensor<1x4xui32>, tensor<1x4xui32>)
  return %0#0 : tensor<1x4xui32>
}

// -----

func.func @rng_bit_generator_key(%k: tensor<3xui32>) -> tensor<2xui32> {
  // expected-error @+1 {{rng_bit_generator: the key must be uint32[4] or uint64[2], got u32[3]}}
  %0:2 = "jaxpr.rng_bit_generator"(%k) {dtype = "uint32", shape = array<i64: 2>} : (tensor<3xui32>) -> (tensor<3xui32>, tensor<2xui32>)
  return %0#1 : tensor<2xui32>
}

// -----

func.func @rng_uniform_dtypes(%a: tensor<f32>, %b: tensor<i32>) -> tensor<2xf32> {
  // expected-error @+1 {{Arguments to rng_uniform must have identical dtypes, got float32 and int32.}}
  %0 = "jaxpr.rng_uniform"(%a, %b) {shape = array<i64: 2>} : (tensor<f32>, tensor<i32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
