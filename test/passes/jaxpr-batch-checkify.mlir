// RUN: mjax-opt %s --jaxpr-batch --split-input-file | filecheck %s

// A batched check is one check over the batch (JAX: check_batching_rule with
// _reduce_any_error): it holds when every element's predicate does, and is formatted
// with the last failing element's values (unbatched values are broadcast first).
// CHECK-LABEL: func.func private @f_batched
// CHECK-SAME:    (%[[X:[^:]*]]: tensor<4xf32>, %[[Y:[^:]*]]: tensor<f32>)
// CHECK:         %[[OK:.*]] = "jaxpr.gt"(%[[X]], %{{.*}}) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
// CHECK:         %[[YB:.*]] = "jaxpr.broadcast_in_dim"(%[[Y]]) {{.*}} -> tensor<4xf32>
// CHECK:         %[[BAD:.*]] = "jaxpr.not"(%[[OK]])
// CHECK:         %[[IOTA:.*]] = "jaxpr.iota"()
// CHECK:         %[[LAST:.*]] = "jaxpr.reduce_max"(%{{.*}}) {axes = array<i64: 0>}
// CHECK:         %[[AT:.*]] = "jaxpr.max"(%[[LAST]], %{{.*}})
// CHECK:         %[[XS:.*]] = "jaxpr.dynamic_slice"(%[[X]], %[[AT]]) {slice_sizes = array<i64: 1>}
// CHECK:         %[[XL:.*]] = "jaxpr.reshape"(%[[XS]]) {{.*}} -> tensor<f32>
// CHECK:         %[[YS:.*]] = "jaxpr.dynamic_slice"(%[[YB]], %[[AT]]) {slice_sizes = array<i64: 1>}
// CHECK:         %[[YL:.*]] = "jaxpr.reshape"(%[[YS]]) {{.*}} -> tensor<f32>
// CHECK:         %[[ALL:.*]] = "jaxpr.reduce_and"(%[[OK]]) {axes = array<i64: 0>}
// CHECK:         "jaxpr.check"(%[[ALL]], %[[XL]], %[[YL]]) {debug = false, msg = "{} > {}"} : (tensor<i1>, tensor<f32>, tensor<f32>) -> ()
func.func private @f(%x: tensor<f32>, %y: tensor<f32>) -> tensor<f32> {
  %ok = "jaxpr.gt"(%x, %y) : (tensor<f32>, tensor<f32>) -> tensor<i1>
  "jaxpr.check"(%ok, %x, %y) {msg = "{} > {}"} : (tensor<i1>, tensor<f32>, tensor<f32>) -> ()
  return %x : tensor<f32>
}
func.func @check_batched(%xs: tensor<4xf32>, %y: tensor<f32>) -> tensor<4xf32> {
  %0 = "jaxpr.vmap"(%xs, %y) {callee = @f, in_axes = array<i64: 0, -1>, out_axes = array<i64: 0>, axis_size = 4 : i64} : (tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
