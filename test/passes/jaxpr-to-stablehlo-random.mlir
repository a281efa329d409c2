// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// Twenty unrolled rounds (rotations 13,15,26,6 / 17,29,16,24), five key injections.
// CHECK-LABEL: func.func @threefry2x32_rounds
// CHECK:         %[[KX:.*]] = stablehlo.xor %arg0, %arg1 : tensor<4xui32>
// CHECK:         %[[PARITY:.*]] = stablehlo.constant dense<466688986> : tensor<4xui32>
// CHECK:         stablehlo.xor %[[KX]], %[[PARITY]] : tensor<4xui32>
// CHECK:         stablehlo.add %arg2, %arg0 : tensor<4xui32>
// CHECK:         stablehlo.add %arg3, %arg1 : tensor<4xui32>
// CHECK-COUNT-20: stablehlo.shift_left
// CHECK-NOT:     stablehlo.shift_left
// CHECK-NOT:     jaxpr.
func.func @threefry2x32_rounds(%k1: tensor<4xui32>, %k2: tensor<4xui32>, %x1: tensor<4xui32>, %x2: tensor<4xui32>) -> (tensor<4xui32>, tensor<4xui32>) {
  %0:2 = "jaxpr.threefry2x32"(%k1, %k2, %x1, %x2) : (tensor<4xui32>, tensor<4xui32>, tensor<4xui32>, tensor<4xui32>) -> (tensor<4xui32>, tensor<4xui32>)
  return %0#0, %0#1 : tensor<4xui32>, tensor<4xui32>
}

// -----

// Operands of other shapes are broadcast to the hash's shape first: size-1 dimensions
// along the same dimensions, scalars along none.
// CHECK-LABEL: func.func @threefry2x32_broadcasts
// CHECK:         %[[K1:.*]] = stablehlo.broadcast_in_dim %arg0, dims = [0, 1] : (tensor<1x4xui32>) -> tensor<3x4xui32>
// CHECK:         %[[K2:.*]] = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<ui32>) -> tensor<3x4xui32>
// CHECK:         %[[X1:.*]] = stablehlo.broadcast_in_dim %arg2, dims = [0, 1] : (tensor<3x1xui32>) -> tensor<3x4xui32>
// CHECK:         stablehlo.xor %[[K1]], %[[K2]] : tensor<3x4xui32>
// CHECK:         stablehlo.add %[[X1]], %[[K1]] : tensor<3x4xui32>
// CHECK:         stablehlo.add %arg3, %[[K2]] : tensor<3x4xui32>
// CHECK-COUNT-20: stablehlo.shift_left {{.*}} : tensor<3x4xui32>
func.func @threefry2x32_broadcasts(%k1: tensor<1x4xui32>, %k2: tensor<ui32>, %x1: tensor<3x1xui32>, %x2: tensor<3x4xui32>) -> (tensor<3x4xui32>, tensor<3x4xui32>) {
  %0:2 = "jaxpr.threefry2x32"(%k1, %k2, %x1, %x2) : (tensor<1x4xui32>, tensor<ui32>, tensor<3x1xui32>, tensor<3x4xui32>) -> (tensor<3x4xui32>, tensor<3x4xui32>)
  return %0#0, %0#1 : tensor<3x4xui32>, tensor<3x4xui32>
}

// -----

// Partitionable counters: a uint64 iota over the request shape, split into words.
// CHECK-LABEL: func.func @random_bits_threefry
// CHECK:         stablehlo.iota dim = 0 : tensor<2x3xui64>
// CHECK:         stablehlo.iota dim = 1 : tensor<2x3xui64>
// CHECK:         stablehlo.shift_right_logical {{.*}} : tensor<2x3xui64>
// CHECK:         stablehlo.convert {{.*}} : (tensor<2x3xui64>) -> tensor<2x3xui32>
// CHECK-COUNT-20: stablehlo.shift_left {{.*}} : tensor<2x3xui32>
// CHECK:         return %{{.*}} : tensor<2x3xui32>
// CHECK-NOT:     jaxpr.
func.func @random_bits_threefry(%d: tensor<2xui32>) -> tensor<2x3xui32> {
  %k = "jaxpr.random_wrap"(%d) {impl = "threefry2x32"} : (tensor<2xui32>) -> tensor<!jaxpr.key<threefry2x32>>
  %b = "jaxpr.random_bits"(%k) {bit_width = 32 : i64, shape = array<i64: 2, 3>} : (tensor<!jaxpr.key<threefry2x32>>) -> tensor<2x3xui32>
  return %b : tensor<2x3xui32>
}

// -----

// A 32-bit seed gives the key (0, seed); split stacks both hash words.
// CHECK-LABEL: func.func @random_seed_split
// CHECK:         stablehlo.convert %{{.*}} : (tensor<i32>) -> tensor<ui32>
// CHECK:         stablehlo.concatenate {{.*}} dim = 0 : (tensor<1xui32>, tensor<1xui32>) -> tensor<2xui32>
// CHECK:         %[[S:[^ ]+]] = stablehlo.concatenate {{.*}} dim = 1 : (tensor<3x1xui32>, tensor<3x1xui32>) -> tensor<3x2xui32>
// CHECK:         return %[[S]] : tensor<3x2xui32>
// CHECK-NOT:     jaxpr.
func.func @random_seed_split(%s: tensor<i32>) -> tensor<3x2xui32> {
  %k = "jaxpr.random_seed"(%s) {impl = "threefry2x32"} : (tensor<i32>) -> tensor<!jaxpr.key<threefry2x32>>
  %0 = "jaxpr.random_split"(%k) {shape = array<i64: 3>} : (tensor<!jaxpr.key<threefry2x32>>) -> tensor<3x!jaxpr.key<threefry2x32>>
  %1 = "jaxpr.random_unwrap"(%0) : (tensor<3x!jaxpr.key<threefry2x32>>) -> tensor<3x2xui32>
  return %1 : tensor<3x2xui32>
}

// -----

// rbg draws bits with stablehlo.rng_bit_generator on the key as uint64[2].
// CHECK-LABEL: func.func @random_bits_rbg
// CHECK:         stablehlo.bitcast_convert {{.*}} : (tensor<2x2xui32>) -> tensor<2xui64>
// CHECK:         stablehlo.rng_bit_generator {{.*}} algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<5xui8>)
// CHECK-NOT:     jaxpr.
func.func @random_bits_rbg(%d: tensor<4xui32>) -> tensor<5xui8> {
  %k = "jaxpr.random_wrap"(%d) {impl = "rbg"} : (tensor<4xui32>) -> tensor<!jaxpr.key<rbg>>
  %b = "jaxpr.random_bits"(%k) {bit_width = 8 : i64, shape = array<i64: 5>} : (tensor<!jaxpr.key<rbg>>) -> tensor<5xui8>
  return %b : tensor<5xui8>
}

// -----

// lax.rng_bit_generator is one op: a uint32[4] key goes in as uint64[2] and comes back
// as uint32[4]; a uint64[2] key is passed as it is.
// CHECK-LABEL: func.func @rng_bit_generator
// CHECK:         stablehlo.bitcast_convert {{.*}} : (tensor<2x2xui32>) -> tensor<2xui64>
// CHECK:         stablehlo.rng_bit_generator {{.*}} algorithm = PHILOX : (tensor<2xui64>) -> (tensor<2xui64>, tensor<2x3xui16>)
// CHECK:         stablehlo.bitcast_convert {{.*}} : (tensor<2xui64>) -> tensor<2x2xui32>
// CHECK:         stablehlo.rng_bit_generator {{.*}} algorithm = DEFAULT : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
// CHECK-NOT:     jaxpr.
func.func @rng_bit_generator(%k: tensor<4xui32>, %k64: tensor<2xui64>) -> (tensor<4xui32>, tensor<2x3xui16>, tensor<4xui32>) {
  %0:2 = "jaxpr.rng_bit_generator"(%k) {shape = array<i64: 2, 3>, dtype = "uint16", algorithm = "RNG_PHILOX"} : (tensor<4xui32>) -> (tensor<4xui32>, tensor<2x3xui16>)
  %1:2 = "jaxpr.rng_bit_generator"(%k64) {shape = array<i64: 4>, dtype = "uint32"} : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
  return %0#0, %0#1, %1#1 : tensor<4xui32>, tensor<2x3xui16>, tensor<4xui32>
}

// -----

// CHECK-LABEL: func.func @random_fold_in
// CHECK:         stablehlo.constant dense<0> : tensor<ui32>
// CHECK:         stablehlo.concatenate {{.*}} -> tensor<2xui32>
// CHECK-NOT:     jaxpr.
func.func @random_fold_in(%d: tensor<2xui32>, %m: tensor<ui32>) -> tensor<2xui32> {
  %k = "jaxpr.random_wrap"(%d) {impl = "threefry2x32"} : (tensor<2xui32>) -> tensor<!jaxpr.key<threefry2x32>>
  %0 = "jaxpr.random_fold_in"(%k, %m) : (tensor<!jaxpr.key<threefry2x32>>, tensor<ui32>) -> tensor<!jaxpr.key<threefry2x32>>
  %1 = "jaxpr.random_unwrap"(%0) : (tensor<!jaxpr.key<threefry2x32>>) -> tensor<2xui32>
  return %1 : tensor<2xui32>
}
