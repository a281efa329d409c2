// RUN: mjax-opt %s --jaxpr-verify --split-input-file | filecheck %s

// CHECK-LABEL: func.func @random_seed_wrap_unwrap
// CHECK:         %[[K:.*]] = "jaxpr.random_seed"(%{{.*}}) {impl = "threefry2x32"} : (tensor<i32>) -> tensor<!jaxpr.key<threefry2x32>>
// CHECK:         "jaxpr.random_unwrap"(%[[K]]) : (tensor<!jaxpr.key<threefry2x32>>) -> tensor<2xui32>
// CHECK:         "jaxpr.random_wrap"(%{{.*}}) {impl = "rbg"} : (tensor<3x4xui32>) -> tensor<3x!jaxpr.key<rbg>>
func.func @random_seed_wrap_unwrap(%s: tensor<i32>, %d: tensor<3x4xui32>) -> (tensor<2xui32>, tensor<3x!jaxpr.key<rbg>>) {
  %k = "jaxpr.random_seed"(%s) {impl = "threefry2x32"} : (tensor<i32>) -> tensor<!jaxpr.key<threefry2x32>>
  %0 = "jaxpr.random_unwrap"(%k) : (tensor<!jaxpr.key<threefry2x32>>) -> tensor<2xui32>
  %1 = "jaxpr.random_wrap"(%d) {impl = "rbg"} : (tensor<3x4xui32>) -> tensor<3x!jaxpr.key<rbg>>
  return %0, %1 : tensor<2xui32>, tensor<3x!jaxpr.key<rbg>>
}

// -----

// CHECK-LABEL: func.func @random_split_fold_in_clone
// CHECK:         "jaxpr.random_split"(%{{.*}}) {shape = array<i64: 2, 3>} : (tensor<4x!jaxpr.key<threefry2x32>>) -> tensor<4x2x3x!jaxpr.key<threefry2x32>>
// CHECK:         "jaxpr.random_fold_in"(%{{.*}}, %{{.*}}) : (tensor<4x!jaxpr.key<threefry2x32>>, tensor<4xui32>) -> tensor<4x!jaxpr.key<threefry2x32>>
// CHECK:         "jaxpr.random_clone"(%{{.*}}) : (tensor<4x!jaxpr.key<threefry2x32>>) -> tensor<4x!jaxpr.key<threefry2x32>>
func.func @random_split_fold_in_clone(%k: tensor<4x!jaxpr.key<threefry2x32>>, %m: tensor<4xui32>) -> (tensor<4x2x3x!jaxpr.key<threefry2x32>>, tensor<4x!jaxpr.key<threefry2x32>>, tensor<4x!jaxpr.key<threefry2x32>>) {
  %0 = "jaxpr.random_split"(%k) {shape = array<i64: 2, 3>} : (tensor<4x!jaxpr.key<threefry2x32>>) -> tensor<4x2x3x!jaxpr.key<threefry2x32>>
  %1 = "jaxpr.random_fold_in"(%k, %m) : (tensor<4x!jaxpr.key<threefry2x32>>, tensor<4xui32>) -> tensor<4x!jaxpr.key<threefry2x32>>
  %2 = "jaxpr.random_clone"(%k) : (tensor<4x!jaxpr.key<threefry2x32>>) -> tensor<4x!jaxpr.key<threefry2x32>>
  return %0, %1, %2 : tensor<4x2x3x!jaxpr.key<threefry2x32>>, tensor<4x!jaxpr.key<threefry2x32>>, tensor<4x!jaxpr.key<threefry2x32>>
}

// -----

// CHECK-LABEL: func.func @random_bits_and_threefry
// CHECK:         "jaxpr.random_bits"(%{{.*}}) {bit_width = 16 : i64, shape = array<i64: 5>} : (tensor<2x!jaxpr.key<threefry2x32>>) -> tensor<2x5xui16>
// CHECK:         "jaxpr.threefry2x32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<3xui32>, tensor<3xui32>, tensor<3xui32>, tensor<3xui32>) -> (tensor<3xui32>, tensor<3xui32>)
func.func @random_bits_and_threefry(%k: tensor<2x!jaxpr.key<threefry2x32>>, %a: tensor<3xui32>) -> (tensor<2x5xui16>, tensor<3xui32>) {
  %0 = "jaxpr.random_bits"(%k) {bit_width = 16 : i64, shape = array<i64: 5>} : (tensor<2x!jaxpr.key<threefry2x32>>) -> tensor<2x5xui16>
  %1:2 = "jaxpr.threefry2x32"(%a, %a, %a, %a) : (tensor<3xui32>, tensor<3xui32>, tensor<3xui32>, tensor<3xui32>) -> (tensor<3xui32>, tensor<3xui32>)
  return %0, %1#0 : tensor<2x5xui16>, tensor<3xui32>
}

// The hash broadcasts its operands as JAX's threefry2x32_p: scalars, and 1s of one rank.
// CHECK-LABEL: func.func @threefry_broadcasts
// CHECK:         "jaxpr.threefry2x32"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) : (tensor<1x4xui32>, tensor<ui32>, tensor<3x1xui32>, tensor<3x4xui32>) -> (tensor<3x4xui32>, tensor<3x4xui32>)
func.func @threefry_broadcasts(%a: tensor<1x4xui32>, %s: tensor<ui32>, %b: tensor<3x1xui32>, %c: tensor<3x4xui32>) -> tensor<3x4xui32> {
  %0:2 = "jaxpr.threefry2x32"(%a, %s, %b, %c) : (tensor<1x4xui32>, tensor<ui32>, tensor<3x1xui32>, tensor<3x4xui32>) -> (tensor<3x4xui32>, tensor<3x4xui32>)
  return %0#1 : tensor<3x4xui32>
}

// -----

// CHECK-LABEL: func.func @rng_bit_generator_and_uniform
// CHECK:         "jaxpr.rng_bit_generator"(%{{.*}}) {algorithm = "RNG_PHILOX", dtype = "uint8", shape = array<i64: 2, 3>} : (tensor<4xui32>) -> (tensor<4xui32>, tensor<2x3xui8>)
// CHECK:         "jaxpr.rng_uniform"(%{{.*}}, %{{.*}}) {shape = array<i64: 5>} : (tensor<f32>, tensor<f32>) -> tensor<5xf32>
func.func @rng_bit_generator_and_uniform(%k: tensor<4xui32>, %a: tensor<f32>) -> (tensor<2x3xui8>, tensor<5xf32>) {
  %0:2 = "jaxpr.rng_bit_generator"(%k) {algorithm = "RNG_PHILOX", dtype = "uint8", shape = array<i64: 2, 3>} : (tensor<4xui32>) -> (tensor<4xui32>, tensor<2x3xui8>)
  %1 = "jaxpr.rng_uniform"(%a, %a) {shape = array<i64: 5>} : (tensor<f32>, tensor<f32>) -> tensor<5xf32>
  return %0#1, %1 : tensor<2x3xui8>, tensor<5xf32>
}
