// RUN: mjax-opt %s --split-input-file --verify-diagnostics

func.func @dynamic_slice_c1_num_indices(%a0: tensor<4x5xf32>, %a1: tensor<i32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{dynamic_slice start_indices must have length equal to the number of dimensions of the operand, got 1 indices for operand shape (4, 5)}}
  %0 = "jaxpr.dynamic_slice"(%a0, %a1) {slice_sizes = array<i64: 2, 2>} : (tensor<4x5xf32>, tensor<i32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @dynamic_slice_c2_scalar_index(%a0: tensor<4x5xf32>, %a1: tensor<i32>, %a2: tensor<1xi32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{dynamic_slice start index 1 must be a scalar, got shape (1,)}}
  %0 = "jaxpr.dynamic_slice"(%a0, %a1, %a2) {slice_sizes = array<i64: 2, 2>} : (tensor<4x5xf32>, tensor<i32>, tensor<1xi32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @dynamic_slice_c3_int_index(%a0: tensor<4x5xf32>, %a1: tensor<i32>, %a2: tensor<f32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{dynamic_slice start indices must have an integer dtype, got f32}}
  %0 = "jaxpr.dynamic_slice"(%a0, %a1, %a2) {slice_sizes = array<i64: 2, 2>} : (tensor<4x5xf32>, tensor<i32>, tensor<f32>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @dynamic_slice_c4_same_index_dtype(%a0: tensor<4x5xf32>, %a1: tensor<i32>, %a2: tensor<i64>) -> tensor<2x2xf32> {
  // expected-error @+1 {{dynamic_slice start indices must all have the same dtype, got i32, i64}}
  %0 = "jaxpr.dynamic_slice"(%a0, %a1, %a2) {slice_sizes = array<i64: 2, 2>} : (tensor<4x5xf32>, tensor<i32>, tensor<i64>) -> tensor<2x2xf32>
  return %0 : tensor<2x2xf32>
}

// -----

func.func @dynamic_slice_c5_slice_sizes_rank(%a0: tensor<4x5xf32>, %a1: tensor<i32>, %a2: tensor<i32>) -> tensor<2xf32> {
  // expected-error @+1 {{dynamic_slice slice_sizes must have one entry per operand dimension, got slice_sizes (2,) for operand shape (4, 5)}}
  %0 = "jaxpr.dynamic_slice"(%a0, %a1, %a2) {slice_sizes = array<i64: 2>} : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

func.func @dynamic_slice_c6_slice_too_big(%a0: tensor<4x5xf32>, %a1: tensor<i32>, %a2: tensor<i32>) -> tensor<2x6xf32> {
  // expected-error @+1 {{dynamic_slice slice_sizes must be less than or equal to operand shape, got slice_sizes (2, 6) for operand shape (4, 5)}}
  %0 = "jaxpr.dynamic_slice"(%a0, %a1, %a2) {slice_sizes = array<i64: 2, 6>} : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<2x6xf32>
  return %0 : tensor<2x6xf32>
}

// -----

func.func @dynamic_slice_c7_negative_size(%a0: tensor<4x5xf32>, %a1: tensor<i32>, %a2: tensor<i32>) -> tensor<2x1xf32> {
  // expected-error @+1 {{dynamic_slice slice_sizes must be greater than or equal to zero, got slice_sizes (2, -1)}}
  %0 = "jaxpr.dynamic_slice"(%a0, %a1, %a2) {slice_sizes = array<i64: 2, -1>} : (tensor<4x5xf32>, tensor<i32>, tensor<i32>) -> tensor<2x1xf32>
  return %0 : tensor<2x1xf32>
}

// -----

func.func @dynamic_update_slice_c1_dtype(%a0: tensor<4x5xf32>, %a1: tensor<2x2xi32>, %a2: tensor<i32>, %a3: tensor<i32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{dynamic_update_slice requires operand and update to have the same dtypes, got f32, i32}}
  %0 = "jaxpr.dynamic_update_slice"(%a0, %a1, %a2, %a3) : (tensor<4x5xf32>, tensor<2x2xi32>, tensor<i32>, tensor<i32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @dynamic_update_slice_c2_rank(%a0: tensor<4x5xf32>, %a1: tensor<2xf32>, %a2: tensor<i32>, %a3: tensor<i32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{dynamic_update_slice update must have the same rank as operand, got update shape (2,) for operand shape (4, 5)}}
  %0 = "jaxpr.dynamic_update_slice"(%a0, %a1, %a2, %a3) : (tensor<4x5xf32>, tensor<2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @dynamic_update_slice_c3_update_too_big(%a0: tensor<4x5xf32>, %a1: tensor<5x2xf32>, %a2: tensor<i32>, %a3: tensor<i32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{dynamic_update_slice update shape must be smaller than operand shape, got update shape (5, 2) for operand shape (4, 5)}}
  %0 = "jaxpr.dynamic_update_slice"(%a0, %a1, %a2, %a3) : (tensor<4x5xf32>, tensor<5x2xf32>, tensor<i32>, tensor<i32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @dynamic_update_slice_c4_num_indices(%a0: tensor<4x5xf32>, %a1: tensor<2x2xf32>, %a2: tensor<i32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{dynamic_update_slice start_indices must have length equal to the number of dimensions of the operand, got 1 indices}}
  %0 = "jaxpr.dynamic_update_slice"(%a0, %a1, %a2) : (tensor<4x5xf32>, tensor<2x2xf32>, tensor<i32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @gather_index_dtype(%a0: tensor<4x5xf32>, %a1: tensor<3x1xf32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{gather indices must have an integer dtype, got f32}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1, 5>} : (tensor<4x5xf32>, tensor<3x1xf32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @gather_index_rank0(%a0: tensor<4x5xf32>, %a1: tensor<i32>) -> tensor<5xf32> {
  // expected-error @+1 {{gather indices must have rank >= 1}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1, 5>} : (tensor<4x5xf32>, tensor<i32>) -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

func.func @gather_c7_offset_dims_sorted(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>) -> tensor<3x1x5xf32> {
  // expected-error @+1 {{gather: offset_dims must be sorted, got (1, 0)}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64>, offset_dims = array<i64: 1, 0>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1, 5>} : (tensor<4x5xf32>, tensor<3x1xi32>) -> tensor<3x1x5xf32>
  return %0 : tensor<3x1x5xf32>
}

// -----

func.func @gather_c7_offset_dims_range(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{gather: offset_dims (2,) has dimension 2 out of range [0, 2) for an output of rank 2}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 2>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1, 5>} : (tensor<4x5xf32>, tensor<3x1xi32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @gather_c13_start_index_map_size(%a0: tensor<4x5xf32>, %a1: tensor<3x2xi32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{gather: start_index_map (0,) has 1 entries but the index vector dimension of indices shape (3, 2) has size 2; they must be equal}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1, 5>} : (tensor<4x5xf32>, tensor<3x2xi32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @gather_c14_start_index_map_range(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{gather: start_index_map (2,) has dimension 2 out of range [0, 2) for operand rank 2}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 2>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1, 5>} : (tensor<4x5xf32>, tensor<3x1xi32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @gather_c15_start_index_map_unique(%a0: tensor<4x5xf32>, %a1: tensor<3x2xi32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{gather: start_index_map must not repeat, got (0, 0)}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0, 0>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1, 5>} : (tensor<4x5xf32>, tensor<3x2xi32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @gather_c9_collapsed_sorted(%a0: tensor<4x5x6xf32>, %a1: tensor<3x1xi32>) -> tensor<3x6xf32> {
  // expected-error @+1 {{gather: collapsed_slice_dims must be sorted, got (1, 0)}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 1, 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1, 1, 6>} : (tensor<4x5x6xf32>, tensor<3x1xi32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

func.func @gather_c10_collapsed_range(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{gather: collapsed_slice_dims (2,) has dimension 2 out of range [0, 2)}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 2>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1, 5>} : (tensor<4x5xf32>, tensor<3x1xi32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @gather_batching_disjoint(%a0: tensor<4x5xf32>, %a1: tensor<4x1xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{gather: collapsed_slice_dims (0, 1) and operand_batching_dims (0,) must be disjoint}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0, 1>, offset_dims = array<i64>, operand_batching_dims = array<i64: 0>, start_index_map = array<i64: 1>, start_indices_batching_dims = array<i64: 0>}, slice_sizes = array<i64: 1, 1>} : (tensor<4x5xf32>, tensor<4x1xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_batching_count(%a0: tensor<4x5xf32>, %a1: tensor<4x1xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{gather requires equal numbers of operand_batching_dims and start_indices_batching_dims, got (0,) and ()}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 1>, offset_dims = array<i64>, operand_batching_dims = array<i64: 0>, start_index_map = array<i64: 1>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1, 1>} : (tensor<4x5xf32>, tensor<4x1xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_batching_shape(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>) -> tensor<3xf32> {
  // expected-error @+1 {{gather requires operand batching dimensions and indices batching dimensions to have the same shape, got (4,) and (3,)}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 1>, offset_dims = array<i64>, operand_batching_dims = array<i64: 0>, start_index_map = array<i64: 1>, start_indices_batching_dims = array<i64: 0>}, slice_sizes = array<i64: 1, 1>} : (tensor<4x5xf32>, tensor<3x1xi32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

func.func @gather_batching_index_vector_dim(%a0: tensor<4x5xf32>, %a1: tensor<4x1xi32>) -> tensor<4xf32> {
  // expected-error @+1 {{gather: start_indices_batching_dims (1,) must not contain the index vector dimension 1}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 1>, offset_dims = array<i64>, operand_batching_dims = array<i64: 0>, start_index_map = array<i64: 1>, start_indices_batching_dims = array<i64: 1>}, slice_sizes = array<i64: 1, 1>} : (tensor<4x5xf32>, tensor<4x1xi32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

func.func @gather_c8_slice_sizes_rank(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{gather slice_sizes must have one entry per operand dimension, got slice_sizes (1,) for operand shape (4, 5)}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1>} : (tensor<4x5xf32>, tensor<3x1xi32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @gather_c1_dims_cover_operand(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{gather: every operand dimension must be an offset, collapsed or batching dimension, got operand rank 2}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1, 5>} : (tensor<4x5xf32>, tensor<3x1xi32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @gather_c11_slice_size_range(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>) -> tensor<3x6xf32> {
  // expected-error @+1 {{gather slice size 6 at index 1 is out of range [0, 5] for operand shape (4, 5)}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1, 6>} : (tensor<4x5xf32>, tensor<3x1xi32>) -> tensor<3x6xf32>
  return %0 : tensor<3x6xf32>
}

// -----

func.func @gather_c12_collapsed_size_one(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{gather can only collapse slice dims of size 1, got slice size 2 for collapsed dimension 0}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 2, 5>} : (tensor<4x5xf32>, tensor<3x1xi32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @gather_result_shape(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>) -> tensor<5x3xf32> {
  // expected-error @+1 {{result 0 has type tensor<5x3xf32>, but the operands give tensor<3x5xf32>}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1, 5>} : (tensor<4x5xf32>, tensor<3x1xi32>) -> tensor<5x3xf32>
  return %0 : tensor<5x3xf32>
}

// -----

func.func @gather_mode_choice(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{attribute 'mode' must be one of 'clip', 'fill', 'promise_in_bounds', got 'wrap'}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {collapsed_slice_dims = array<i64: 0>, offset_dims = array<i64: 1>, operand_batching_dims = array<i64>, start_index_map = array<i64: 0>, start_indices_batching_dims = array<i64>}, slice_sizes = array<i64: 1, 5>, mode = "wrap"} : (tensor<4x5xf32>, tensor<3x1xi32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @gather_dimension_numbers_fields(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>) -> tensor<3x5xf32> {
  // expected-error @+1 {{attribute 'dimension_numbers' must be a dictionary with integer-sequence fields offset_dims, collapsed_slice_dims, start_index_map, operand_batching_dims, start_indices_batching_dims}}
  %0 = "jaxpr.gather"(%a0, %a1) {dimension_numbers = {offset_dims = array<i64: 1>}, slice_sizes = array<i64: 1, 5>} : (tensor<4x5xf32>, tensor<3x1xi32>) -> tensor<3x5xf32>
  return %0 : tensor<3x5xf32>
}

// -----

func.func @scatter_dtype(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>, %a2: tensor<3x5xi32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{scatter requires operand and updates to have the same dtypes, got f32, i32}}
  %0 = "jaxpr.scatter"(%a0, %a1, %a2) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}} : (tensor<4x5xf32>, tensor<3x1xi32>, tensor<3x5xi32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @scatter_index_dtype(%a0: tensor<4x5xf32>, %a1: tensor<3x1xf32>, %a2: tensor<3x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{scatter indices must have an integer dtype, got f32}}
  %0 = "jaxpr.scatter"(%a0, %a1, %a2) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}} : (tensor<4x5xf32>, tensor<3x1xf32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @scatter_add_bool(%a0: tensor<4x5xi1>, %a1: tensor<3x1xi32>, %a2: tensor<3x5xi1>) -> tensor<4x5xi1> {
  // expected-error @+1 {{scatter_add does not accept dtype bool (operand must be numeric)}}
  %0 = "jaxpr.scatter_add"(%a0, %a1, %a2) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}} : (tensor<4x5xi1>, tensor<3x1xi32>, tensor<3x5xi1>) -> tensor<4x5xi1>
  return %0 : tensor<4x5xi1>
}

// -----

func.func @scatter_mul_bool(%a0: tensor<4x5xi1>, %a1: tensor<3x1xi32>, %a2: tensor<3x5xi1>) -> tensor<4x5xi1> {
  // expected-error @+1 {{scatter_mul does not accept dtype bool}}
  %0 = "jaxpr.scatter_mul"(%a0, %a1, %a2) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}} : (tensor<4x5xi1>, tensor<3x1xi32>, tensor<3x5xi1>) -> tensor<4x5xi1>
  return %0 : tensor<4x5xi1>
}

// -----

func.func @scatter_c4_updates_rank(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>, %a2: tensor<3x5x1xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{scatter: updates must have rank 2 (indices batch rank 1 + 1 update_window_dims), got updates shape (3, 5, 1)}}
  %0 = "jaxpr.scatter"(%a0, %a1, %a2) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}} : (tensor<4x5xf32>, tensor<3x1xi32>, tensor<3x5x1xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @scatter_c7_update_window_dims_sorted(%a0: tensor<4x5x6xf32>, %a1: tensor<3x1xi32>, %a2: tensor<3x6x5xf32>) -> tensor<4x5x6xf32> {
  // expected-error @+1 {{scatter: update_window_dims must be sorted, got (2, 1)}}
  %0 = "jaxpr.scatter"(%a0, %a1, %a2) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 2, 1>}} : (tensor<4x5x6xf32>, tensor<3x1xi32>, tensor<3x6x5xf32>) -> tensor<4x5x6xf32>
  return %0 : tensor<4x5x6xf32>
}

// -----

func.func @scatter_c10_inserted_range(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>, %a2: tensor<3x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{scatter_add: inserted_window_dims (2,) has dimension 2 out of range [0, 2) for operand rank 2}}
  %0 = "jaxpr.scatter_add"(%a0, %a1, %a2) {dimension_numbers = {inserted_window_dims = array<i64: 2>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}} : (tensor<4x5xf32>, tensor<3x1xi32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @scatter_c5_window_covers_operand(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>, %a2: tensor<3x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{scatter_mul: every operand dimension must be an update window, inserted or batching dimension}}
  %0 = "jaxpr.scatter_mul"(%a0, %a1, %a2) {dimension_numbers = {inserted_window_dims = array<i64>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}} : (tensor<4x5xf32>, tensor<3x1xi32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @scatter_c14_to_operand_size(%a0: tensor<4x5xf32>, %a1: tensor<3x2xi32>, %a2: tensor<3x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{scatter_min: scatter_dims_to_operand_dims (0,) has 1 entries but the index vector dimension of indices shape (3, 2) has size 2}}
  %0 = "jaxpr.scatter_min"(%a0, %a1, %a2) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}} : (tensor<4x5xf32>, tensor<3x2xi32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @scatter_c15_to_operand_range(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>, %a2: tensor<3x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{scatter_max: scatter_dims_to_operand_dims (3,) has dimension 3 out of range [0, 2) for operand rank 2}}
  %0 = "jaxpr.scatter_max"(%a0, %a1, %a2) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 3>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}} : (tensor<4x5xf32>, tensor<3x1xi32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @scatter_c16_to_operand_unique(%a0: tensor<4x5xf32>, %a1: tensor<3x2xi32>, %a2: tensor<3x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{scatter: scatter_dims_to_operand_dims must not repeat, got (0, 0)}}
  %0 = "jaxpr.scatter"(%a0, %a1, %a2) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0, 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}} : (tensor<4x5xf32>, tensor<3x2xi32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @scatter_c6_window_too_big(%a0: tensor<4x3xf32>, %a1: tensor<3x1xi32>, %a2: tensor<3x5xf32>) -> tensor<4x3xf32> {
  // expected-error @+1 {{scatter: update window dimension 1 of updates shape (3, 5) has size 5, larger than operand dimension 1 of size 3}}
  %0 = "jaxpr.scatter"(%a0, %a1, %a2) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}} : (tensor<4x3xf32>, tensor<3x1xi32>, tensor<3x5xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

func.func @scatter_c3_scatter_dims_match_indices(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>, %a2: tensor<2x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{scatter_add: scatter dimension 0 of updates shape (2, 5) must match the indices batch shape (3,), got 2 and 3}}
  %0 = "jaxpr.scatter_add"(%a0, %a1, %a2) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}} : (tensor<4x5xf32>, tensor<3x1xi32>, tensor<2x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @scatter_batching_count(%a0: tensor<4x5xf32>, %a1: tensor<4x1xi32>, %a2: tensor<4xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{scatter requires equal numbers of operand_batching_dims and scatter_indices_batching_dims, got (0,) and ()}}
  %0 = "jaxpr.scatter"(%a0, %a1, %a2) {dimension_numbers = {inserted_window_dims = array<i64: 1>, operand_batching_dims = array<i64: 0>, scatter_dims_to_operand_dims = array<i64: 1>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64>}} : (tensor<4x5xf32>, tensor<4x1xi32>, tensor<4xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}

// -----

func.func @scatter_mode_choice(%a0: tensor<4x5xf32>, %a1: tensor<3x1xi32>, %a2: tensor<3x5xf32>) -> tensor<4x5xf32> {
  // expected-error @+1 {{attribute 'mode' must be one of 'clip', 'fill', 'promise_in_bounds', got 'drop'}}
  %0 = "jaxpr.scatter"(%a0, %a1, %a2) {dimension_numbers = {inserted_window_dims = array<i64: 0>, operand_batching_dims = array<i64>, scatter_dims_to_operand_dims = array<i64: 0>, scatter_indices_batching_dims = array<i64>, update_window_dims = array<i64: 1>}, mode = "drop"} : (tensor<4x5xf32>, tensor<3x1xi32>, tensor<3x5xf32>) -> tensor<4x5xf32>
  return %0 : tensor<4x5xf32>
}
