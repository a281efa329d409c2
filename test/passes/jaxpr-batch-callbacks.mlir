// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// expand_dims: the batched operand keeps its axis in front; the unbatched one gains a
// unit axis; results gain the batch axis.
// CHECK-LABEL: func.func private @expand_dims_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<4x3xf32>, %[[Y:.*]]: tensor<3xf32>) -> tensor<4x3xf32>
// CHECK:         %[[E:.*]] = "jaxpr.broadcast_in_dim"(%[[Y]]) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 1, 3>} : (tensor<3xf32>) -> tensor<1x3xf32>
// CHECK:         %[[R:.*]] = "jaxpr.callback"(%[[X]], %[[E]]) {callback_id = 2 : i64, effect = "pure", result_dtypes = [f32], result_shapes = [array<i64: 4, 3>], vmap_method = "expand_dims"} : (tensor<4x3xf32>, tensor<1x3xf32>) -> tensor<4x3xf32>
// CHECK:         return %[[R]]
func.func private @expand_dims(%x: tensor<3xf32>, %y: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.callback"(%x, %y) {callback_id = 2 : i64, effect = "pure", result_shapes = [array<i64: 3>], result_dtypes = [f32], vmap_method = "expand_dims"} : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func @callback_expand_dims(%xs: tensor<4x3xf32>, %y: tensor<3xf32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.vmap"(%xs, %y) {callee = @expand_dims, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 4 : i64} : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// broadcast_all: the unbatched operand is broadcast to the batch size; a batch axis
// elsewhere is moved to the front.
// CHECK-LABEL: func.func private @broadcast_all_batched
// CHECK:         "jaxpr.transpose"
// CHECK:         "jaxpr.broadcast_in_dim"(%{{.*}}) {broadcast_dimensions = array<i64>, shape = array<i64: 4>} : (tensor<f32>) -> tensor<4xf32>
// CHECK:         "jaxpr.callback"(%{{.*}}, %{{.*}}) {{.*}}result_shapes = [array<i64: 4, 2>]{{.*}} : (tensor<4x2xf32>, tensor<4xf32>) -> tensor<4x2xf32>
func.func private @broadcast_all(%x: tensor<2xf32>, %y: tensor<f32>) -> tensor<2xf32> {
  %0 = "jaxpr.callback"(%x, %y) {callback_id = 3 : i64, effect = "pure", result_shapes = [array<i64: 2>], result_dtypes = [f32], vmap_method = "broadcast_all"} : (tensor<2xf32>, tensor<f32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}
func.func @callback_broadcast_all(%xs: tensor<2x4xf32>, %y: tensor<f32>) -> tensor<4x2xf32> {
  %0 = "jaxpr.vmap"(%xs, %y) {callee = @broadcast_all, in_axes = array<i64: 1, -1>, out_axes = array<i64: 0>, axis_size = 4 : i64} : (tensor<2x4xf32>, tensor<f32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// sequential (and io/debug callbacks): a scan over the batch calls the unbatched
// callback once per element; unbatched operands are the scan's consts.
// CHECK-LABEL: func.func private @sequential_batched
// CHECK-SAME:    (%[[X:.*]]: tensor<5x3xf32>, %[[C:.*]]: tensor<f32>)
// CHECK:         "jaxpr.scan"(%[[C]], %[[X]]) ({
// CHECK-NEXT:    ^bb0(%[[CA:.*]]: tensor<f32>, %[[XA:.*]]: tensor<3xf32>):
// CHECK-NEXT:      "jaxpr.callback"(%[[XA]], %[[CA]]) {callback_id = 4 : i64, effect = "debug"} : (tensor<3xf32>, tensor<f32>) -> ()
// CHECK-NEXT:      "jaxpr.yield"() : () -> ()
// CHECK:         }) {length = 5 : i64, num_carry = 0 : i64, num_consts = 1 : i64, reverse = false, unroll = 1 : i64} : (tensor<f32>, tensor<5x3xf32>) -> ()
// CHECK:         %[[S:.*]] = "jaxpr.scan"(%[[C]], %[[X]]) ({
// CHECK-NEXT:    ^bb0(%[[CB:.*]]: tensor<f32>, %[[XB:.*]]: tensor<3xf32>):
// CHECK-NEXT:      %[[Y:.*]] = "jaxpr.callback"(%[[XB]], %[[CB]]) {callback_id = 5 : i64, effect = "pure", {{.*}}vmap_method = "sequential"} : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
// CHECK-NEXT:      "jaxpr.yield"(%[[Y]])
// CHECK:         }) {length = 5 : i64, num_carry = 0 : i64, num_consts = 1 : i64, reverse = false, unroll = 1 : i64} : (tensor<f32>, tensor<5x3xf32>) -> tensor<5xf32>
// CHECK:         return %[[S]]
func.func private @sequential(%x: tensor<3xf32>, %c: tensor<f32>) -> tensor<f32> {
  "jaxpr.callback"(%x, %c) {callback_id = 4 : i64, effect = "debug"} : (tensor<3xf32>, tensor<f32>) -> ()
  %0 = "jaxpr.callback"(%x, %c) {callback_id = 5 : i64, effect = "pure", result_shapes = [array<i64>], result_dtypes = [f32], vmap_method = "sequential"} : (tensor<3xf32>, tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @callback_sequential(%xs: tensor<5x3xf32>, %c: tensor<f32>) -> tensor<5xf32> {
  %0 = "jaxpr.vmap"(%xs, %c) {callee = @sequential, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 5 : i64} : (tensor<5x3xf32>, tensor<f32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}
