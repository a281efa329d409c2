// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// Key ops map over every key dimension: the batch axis of the key data stays in front.
// CHECK-LABEL: func.func private @bits_batched
// CHECK-SAME:    (%[[D:.*]]: tensor<4x2xui32>) -> tensor<4x3xui32>
// CHECK:         %[[K:.*]] = "jaxpr.random_wrap"(%[[D]]) {impl = "threefry2x32"} : (tensor<4x2xui32>) -> tensor<4x!jaxpr.key<threefry2x32>>
// CHECK:         %[[B:.*]] = "jaxpr.random_bits"(%[[K]]) {bit_width = 32 : i64, shape = array<i64: 3>} : (tensor<4x!jaxpr.key<threefry2x32>>) -> tensor<4x3xui32>
// CHECK:         return %[[B]]
func.func private @bits(%d: tensor<2xui32>) -> tensor<3xui32> {
  %k = "jaxpr.random_wrap"(%d) {impl = "threefry2x32"} : (tensor<2xui32>) -> tensor<!jaxpr.key<threefry2x32>>
  %b = "jaxpr.random_bits"(%k) {bit_width = 32 : i64, shape = array<i64: 3>} : (tensor<!jaxpr.key<threefry2x32>>) -> tensor<3xui32>
  return %b : tensor<3xui32>
}
func.func @random_bits_batched(%ds: tensor<4x2xui32>) -> tensor<4x3xui32> {
  %0 = "jaxpr.vmap"(%ds) {callee = @bits, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 4 : i64} : (tensor<4x2xui32>) -> tensor<4x3xui32>
  return %0 : tensor<4x3xui32>
}

// -----

// An unbatched key folded with batched messages: its data is broadcast first.
// CHECK-LABEL: func.func private @fold_batched
// CHECK:         %[[U:.*]] = "jaxpr.random_unwrap"(%{{.*}}) : (tensor<!jaxpr.key<threefry2x32>>) -> tensor<2xui32>
// CHECK:         %[[BD:.*]] = "jaxpr.broadcast_in_dim"(%[[U]]) {{.*}} : (tensor<2xui32>) -> tensor<5x2xui32>
// CHECK:         %[[W:.*]] = "jaxpr.random_wrap"(%[[BD]]) {impl = "threefry2x32"} : (tensor<5x2xui32>) -> tensor<5x!jaxpr.key<threefry2x32>>
// CHECK:         "jaxpr.random_fold_in"(%[[W]], %{{.*}}) : (tensor<5x!jaxpr.key<threefry2x32>>, tensor<5xui32>) -> tensor<5x!jaxpr.key<threefry2x32>>
func.func private @fold(%d: tensor<2xui32>, %m: tensor<ui32>) -> tensor<2xui32> {
  %k = "jaxpr.random_wrap"(%d) {impl = "threefry2x32"} : (tensor<2xui32>) -> tensor<!jaxpr.key<threefry2x32>>
  %0 = "jaxpr.random_fold_in"(%k, %m) : (tensor<!jaxpr.key<threefry2x32>>, tensor<ui32>) -> tensor<!jaxpr.key<threefry2x32>>
  %1 = "jaxpr.random_unwrap"(%0) : (tensor<!jaxpr.key<threefry2x32>>) -> tensor<2xui32>
  return %1 : tensor<2xui32>
}
func.func @random_fold_in_batched_msgs(%d: tensor<2xui32>, %ms: tensor<5xui32>) -> tensor<5x2xui32> {
  %0 = "jaxpr.vmap"(%d, %ms) {callee = @fold, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 5 : i64} : (tensor<2xui32>, tensor<5xui32>) -> tensor<5x2xui32>
  return %0 : tensor<5x2xui32>
}

// -----

// threefry2x32 batches as JAX's broadcast_batcher: an unbatched array gains a leading
// axis of size 1, which the op broadcasts.
// CHECK-LABEL: func.func private @hash_batched
// CHECK:         "jaxpr.broadcast_in_dim"(%{{.*}}) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 1, 3>}
// CHECK:         "jaxpr.threefry2x32"({{.*}}) : (tensor<1x3xui32>, tensor<1x3xui32>, tensor<6x3xui32>, tensor<6x3xui32>) -> (tensor<6x3xui32>, tensor<6x3xui32>)
func.func private @hash(%k: tensor<3xui32>, %x: tensor<3xui32>) -> tensor<3xui32> {
  %0:2 = "jaxpr.threefry2x32"(%k, %k, %x, %x) : (tensor<3xui32>, tensor<3xui32>, tensor<3xui32>, tensor<3xui32>) -> (tensor<3xui32>, tensor<3xui32>)
  return %0#0 : tensor<3xui32>
}
func.func @threefry2x32_batched(%k: tensor<3xui32>, %xs: tensor<6x3xui32>) -> tensor<6x3xui32> {
  %0 = "jaxpr.vmap"(%k, %xs) {callee = @hash, in_axes = array<i64: -1, 0>, out_axes = array<i64: 0>, axis_size = 6 : i64} : (tensor<3xui32>, tensor<6x3xui32>) -> tensor<6x3xui32>
  return %0 : tensor<6x3xui32>
}
