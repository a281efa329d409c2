// RUN: mjax-opt %s --split-input-file | filecheck %s

// CHECK-LABEL: func.func @dynamic_slice
// CHECK:         "jaxpr.dynamic_slice"(%{{.*}}, %{{.*}}, %{{.*}}) {slice_sizes = array<i64: 2, 2>}
func.func @dynamic_slice(%x: tensor<4x5xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<2x2xf32> {
  %0 = "jaxpr.dynamic_slice"(%x, %i, %j) {slice_sizes = array<i64: 2, 2>} : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

// CHECK-LABEL: func.func @dynamic_update_slice
// CHECK:         "jaxpr.dynamic_update_slice"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}})
func.func @dynamic_update_slice(%x: tensor<4x5xf32>, %u: tensor<2x2xf32>, %i: tensor<i32>, %j: tensor<i32>) -> tensor<4x5xf32> {
  %0 = "jaxpr.dynamic_update_slice"(%x, %u, %i, %j) : (tensor<4x5xf32>, tensor<2x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

// CHECK-LABEL: func.func @gather
// CHECK:         "jaxpr.gather"(%{{.*}}, %{{.*}}) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, fill_value = 0.000000e+00 : f64, indices_are_sorted = true, mode = "fill", slice_sizes = array<i64: 1, 3>, unique_indices = false}
func.func @gather(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.gather"(%x, %i) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, fill_value = 0.000000e+00 : f64, indices_are_sorted = true, mode = "fill", slice_sizes = array<i64: 1, 3>, unique_indices = false} : (tensor<5x3xf32>, tensor<4x1xi32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @scatter
// CHECK:         "jaxpr.scatter"(%{{.*}}, %{{.*}}, %{{.*}}) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}, mode = "clip"}
func.func @scatter(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>, %u: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %0 = "jaxpr.scatter"(%x, %i, %u) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}, mode = "clip"} : (tensor<5x3xf32>, tensor<4x1xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_add
// CHECK:         "jaxpr.scatter_add"(%{{.*}}, %{{.*}}, %{{.*}}) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}, mode = "clip"}
func.func @scatter_add(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>, %u: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %0 = "jaxpr.scatter_add"(%x, %i, %u) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}, mode = "clip"} : (tensor<5x3xf32>, tensor<4x1xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_mul
// CHECK:         "jaxpr.scatter_mul"(%{{.*}}, %{{.*}}, %{{.*}}) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}, mode = "clip"}
func.func @scatter_mul(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>, %u: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %0 = "jaxpr.scatter_mul"(%x, %i, %u) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}, mode = "clip"} : (tensor<5x3xf32>, tensor<4x1xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_min
// CHECK:         "jaxpr.scatter_min"(%{{.*}}, %{{.*}}, %{{.*}}) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}, mode = "clip"}
func.func @scatter_min(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>, %u: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %0 = "jaxpr.scatter_min"(%x, %i, %u) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}, mode = "clip"} : (tensor<5x3xf32>, tensor<4x1xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

// CHECK-LABEL: func.func @scatter_max
// CHECK:         "jaxpr.scatter_max"(%{{.*}}, %{{.*}}, %{{.*}}) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}, mode = "clip"}
func.func @scatter_max(%x: tensor<5x3xf32>, %i: tensor<4x1xi32>, %u: tensor<4x3xf32>) -> tensor<5x3xf32> {
  %0 = "jaxpr.scatter_max"(%x, %i, %u) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}, mode = "clip"} : (tensor<5x3xf32>, tensor<4x1xi32>, tensor<4x3xf32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}
