// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// CHECK-LABEL: func.func @dynamic_slice
// CHECK-SAME:    (%[[X:.*]]: tensor<4x5xf32>, %[[I:.*]]: tensor<i32>, %[[J:.*]]: tensor<i32>)
// CHECK:         %[[S:.*]] = stablehlo.dynamic_slice %[[X]], %[[I]], %[[J]], sizes = [2, 3]
// CHECK:         return %[[S]]
// CHECK-NOT:     jaxpr.
func.func @dynamic_slice(%x: tensor<4x5xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.dynamic_slice"(%x, %i, %j) {slice_sizes = array<i64: 2, 3>} : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_update_slice
// CHECK-SAME:    (%[[X:.*]]: tensor<4x5xf32>, %[[U:.*]]: tensor<2x2xf32>, %[[I:.*]]: tensor<i64>, %[[J:.*]]: tensor<i64>)
// CHECK:         %[[R:.*]] = stablehlo.dynamic_update_slice %[[X]], %[[U]], %[[I]], %[[J]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @dynamic_update_slice(%x: tensor<4x5xf32>, %u: tensor<2x2xf32>, %i: tensor<i64>, %j: tensor<i64>) -> tensor<4x5xf32> {
  %0 = "jaxpr.dynamic_update_slice"(%x, %u, %i, %j) : (tensor<4x5xf32>, tensor<2x2xf32>, tensor<i64>, tensor<i64>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// "promise_in_bounds" is a plain stablehlo.gather, index_vector_dim = last dim of indices.
// CHECK-LABEL: func.func @gather_promise_in_bounds
// CHECK-SAME:    (%[[X:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<4x1xi32>)
// CHECK:         %[[G:.*]] = "stablehlo.gather"(%[[X]], %[[I]]) <{dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = true, slice_sizes = array<i64: 1, 3>}>
// CHECK:         return %[[G]]
// CHECK-NOT:     jaxpr.
func.func @gather_promise_in_bounds(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.gather"(%x, %i) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, indices_are_sorted = true, mode = "promise_in_bounds", slice_sizes = array<i64: 1, 3>} : (tensor<5x3xf32>, tensor<4x1xi32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// "clip" clamps each index component into [0, dim - slice_size].
// CHECK-LABEL: func.func @gather_clip
// CHECK-SAME:    (%[[X:.*]]: tensor<5x7xf32>, %[[I:.*]]: tensor<4x2xi32>)
// CHECK:         %[[UB:.*]] = stablehlo.constant dense<[4, 5]> : tensor<2xi32>
// CHECK:         %[[UBB:.*]] = stablehlo.broadcast_in_dim %[[UB]], dims = [1]
// CHECK:         %[[LB:.*]] = stablehlo.constant dense<0> : tensor<i32>
// CHECK:         %[[C:.*]] = stablehlo.clamp %[[LB]], %[[I]], %[[UBB]]
// CHECK:         %[[G:.*]] = "stablehlo.gather"(%[[X]], %[[C]])
// CHECK-SAME:      offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0, 1], index_vector_dim = 1
// CHECK:         return %[[G]]
// CHECK-NOT:     jaxpr.
func.func @gather_clip(%x: tensor<5x7xf32>, %i: tensor<4x2xi32>) -> tensor<4x2xf32> {
  %0 = "jaxpr.gather"(%x, %i) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0, 1>, start_indices_batching_dims = array<i64>}, mode = "clip", slice_sizes = array<i64: 1, 2>} : (tensor<5x7xf32>, tensor<4x2xi32>) -> tensor<4x2xf32>
  return %0 : tensor<4x2xf32>
}

// -----

// "fill" (the default) masks slices that are not wholly in bounds and fills them (NaN),
// as JAX's _gather_fill: the indices compared in the operand's index type (int32 here),
// with the bounds lifted by expand_dims and broadcast to the indices' shape.
// CHECK-LABEL: func.func @gather_fill
// CHECK-SAME:    (%[[X:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<4x1xi32>)
// CHECK-NOT:     stablehlo.convert
// CHECK:         stablehlo.compare GE, %[[I]]
// CHECK:         %[[U:.*]] = stablehlo.constant dense<4> : tensor<1xi32>
// CHECK:         %[[U1:.*]] = stablehlo.broadcast_in_dim %[[U]], dims = [1] : (tensor<1xi32>) -> tensor<1x1xi32>
// CHECK:         %[[U2:.*]] = stablehlo.broadcast_in_dim %[[U1]], dims = [0, 1] : (tensor<1x1xi32>) -> tensor<4x1xi32>
// CHECK:         stablehlo.compare LE, %[[I]], %[[U2]]
// CHECK:         %[[OK:.*]] = stablehlo.reduce({{.*}}) applies stablehlo.and across dimensions = [1] : (tensor<4x1xi1>, tensor<i1>) -> tensor<4xi1>
// CHECK:         %[[G:.*]] = "stablehlo.gather"(%[[X]], %[[I]])
// CHECK:         %[[M:.*]] = stablehlo.broadcast_in_dim %[[OK]], dims = [0] : (tensor<4xi1>) -> tensor<4x3xi1>
// CHECK:         %[[F:.*]] = stablehlo.constant dense<0x7FC00000> : tensor<4x3xf32>
// CHECK:         %[[R:.*]] = stablehlo.select %[[M]], %[[G]], %[[F]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @gather_fill(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.gather"(%x, %i) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1, 3>} : (tensor<5x3xf32>, tensor<4x1xi32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// An explicit fill_value; integers.
// CHECK-LABEL: func.func @gather_fill_value
// CHECK:         %[[F:.*]] = stablehlo.constant dense<-7> : tensor<3xi32>
// CHECK:         stablehlo.select %{{.*}}, %{{.*}}, %[[F]]
// CHECK-NOT:     jaxpr.
func.func @gather_fill_value(%x: tensor<5xi32>, %i: tensor<3x1xi32>) -> tensor<3xi32> {
  %0 = "jaxpr.gather"(%x, %i) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, fill_value = -7.0 : f64, mode = "fill", slice_sizes = array<i64: 1>} : (tensor<5xi32>, tensor<3x1xi32>) -> tensor<3xi32>
  return %0 : tensor<3xi32>
}

// -----

// Batching dims pass through to the StableHLO gather.
// CHECK-LABEL: func.func @gather_batching
// CHECK:         "stablehlo.gather"
// CHECK-SAME:      offset_dims = [2], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], start_index_map = [1], index_vector_dim = 2
// CHECK-NOT:     jaxpr.
func.func @gather_batching(%x: tensor<3x5x2xf32>, %i: tensor<3x4x1xi32>) -> tensor<3x4x2xf32> {
  %0 = "jaxpr.gather"(%x, %i) {dimension_numbers = {collapsed_slice_dims = array<i64: 1>, offset_dims = array<i64: 2>, operand_batching_dims = array<i64: 0>, start_index_map = array<i64: 1>, start_indices_batching_dims = array<i64: 0>}, mode = "promise_in_bounds", slice_sizes = array<i64: 1, 1, 2>} : (tensor<3x5x2xf32>, tensor<3x4x1xi32>) -> tensor<3x4x2xf32>
  return %0 : tensor<3x4x2xf32>
}

// -----

// scatter overwrites: the update region returns the new value.
// CHECK-LABEL: func.func @scatter
// CHECK-SAME:    (%[[X:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<4x1xi32>, %[[U:.*]]: tensor<4x3xf32>)
// CHECK:         %[[S:.*]] = "stablehlo.scatter"(%[[X]], %[[I]], %[[U]]) <{indices_are_sorted = false, scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1], inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = true}>
// CHECK:         ^bb0(%{{.*}}: tensor<f32>, %[[NEW:.*]]: tensor<f32>):
// CHECK-NEXT:      stablehlo.return %[[NEW]]
// CHECK:         return %[[S]]
// CHECK-NOT:     jaxpr.
func.func @scatter(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>, %u: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %0 = "jaxpr.scatter"(%x, %i, %u) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}, unique_indices = true} : (tensor<5x3xf32>, tensor<4x1xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// "clip" clamps scatter indices first.
// CHECK-LABEL: func.func @scatter_add_clip
// CHECK-SAME:    (%[[X:.*]]: tensor<5x3xf32>, %[[I:.*]]: tensor<4x1xi32>, %[[U:.*]]: tensor<4x3xf32>)
// CHECK:         %[[C:.*]] = stablehlo.clamp %{{.*}}, %[[I]], %{{.*}}
// CHECK:         "stablehlo.scatter"(%[[X]], %[[C]], %[[U]])
// CHECK:         ^bb0(%[[OLD:.*]]: tensor<f32>, %[[NEW:.*]]: tensor<f32>):
// CHECK-NEXT:      %[[SUM:.*]] = stablehlo.add %[[OLD]], %[[NEW]]
// CHECK-NEXT:      stablehlo.return %[[SUM]]
// CHECK-NOT:     jaxpr.
func.func @scatter_add_clip(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>, %u: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %0 = "jaxpr.scatter_add"(%x, %i, %u) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}, mode = "clip"} : (tensor<5x3xf32>, tensor<4x1xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_mul
// CHECK:         "stablehlo.scatter"
// CHECK:           stablehlo.multiply
// CHECK-NOT:     jaxpr.
func.func @scatter_mul(%x: tensor<5xi32>, %i: tensor<2x1xi32>, %u: tensor<2xi32>) -> tensor<5xi32> {
  %0 = "jaxpr.scatter_mul"(%x, %i, %u) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64>}} : (tensor<5xi32>, tensor<2x1xi32>, tensor<2xi32>) -> tensor<5xi32>
  return %0 : tensor<5xi32>
}

// -----

// CHECK-LABEL: func.func @scatter_min
// CHECK:         "stablehlo.scatter"
// CHECK:           stablehlo.minimum
// CHECK-NOT:     jaxpr.
func.func @scatter_min(%x: tensor<5xf32>, %i: tensor<2x1xi32>, %u: tensor<2xf32>) -> tensor<5xf32> {
  %0 = "jaxpr.scatter_min"(%x, %i, %u) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64>}} : (tensor<5xf32>, tensor<2x1xi32>, tensor<2xf32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_max
// CHECK:         "stablehlo.scatter"
// CHECK-SAME:      input_batching_dims = [0], scatter_indices_batching_dims = [0]
// CHECK:           stablehlo.maximum
// CHECK-NOT:     jaxpr.
func.func @scatter_max(%x: tensor<3x5xf32>, %i: tensor<3x2x1xi32>, %u: tensor<3x2xf32>) -> tensor<3x5xf32> {
  %0 = "jaxpr.scatter_max"(%x, %i, %u) {dimension_numbers = {inserted_window_dims = array<i64: 1>, operand_batching_dims = array<i64: 0>, scatter_dims_to_operand_dims = array<i64: 1>, scatter_indices_batching_dims = array<i64: 0>, update_window_dims = array<i64>}} : (tensor<3x5xf32>, tensor<3x2x1xi32>, tensor<3x2xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}
