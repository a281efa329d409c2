// RUN: mjax-opt %s --jaxpr-verify --split-input-file | filecheck %s

// CHECK-LABEL: func.func @psum_pmax_pmin
// CHECK:         "jaxpr.psum"(%{{.*}}) {axes = ["i", "j"]} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:         "jaxpr.pmax"(%{{.*}}) {axes = ["i"]}
// CHECK:         "jaxpr.pmin"(%{{.*}}) {axes = ["i"]}
func.func @psum_pmax_pmin(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.psum"(%x) {axes = ["i", "j"]} : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.pmax"(%0) {axes = ["i"]} : (tensor<3xf32>) -> tensor<3xf32>
  %2 = "jaxpr.pmin"(%1) {axes = ["i"]} : (tensor<3xf32>) -> tensor<3xf32>
  return %2 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @all_gather
// CHECK:         "jaxpr.all_gather"(%{{.*}}) {axes = ["i"], axis = 1 : i64, axis_size = 4 : i64, tiled = false} : (tensor<2x3xf32>) -> tensor<2x4x3xf32>
// CHECK:         "jaxpr.all_gather"(%{{.*}}) {axes = ["i"], axis = 0 : i64, axis_size = 4 : i64, tiled = true} : (tensor<2x3xf32>) -> tensor<8x3xf32>
func.func @all_gather(%x: tensor<2x3xf32>) -> (tensor<2x4x3xf32>, tensor<8x3xf32>) {
  %0 = "jaxpr.all_gather"(%x) {axes = ["i"], axis = 1 : i64, axis_size = 4 : i64, tiled = false} : (tensor<2x3xf32>) -> tensor<2x4x3xf32>
  %1 = "jaxpr.all_gather"(%x) {axes = ["i"], axis = 0 : i64, axis_size = 4 : i64, tiled = true} : (tensor<2x3xf32>) -> tensor<8x3xf32>
  return %0, %1 : tensor<2x4x3xf32>, tensor<8x3xf32>
}

// -----

// CHECK-LABEL: func.func @psum_scatter
// CHECK:         "jaxpr.psum_scatter"(%{{.*}}) {axes = ["i"], axis_size = 4 : i64, scatter_dimension = 0 : i64, tiled = false} : (tensor<4x3xf32>) -> tensor<3xf32>
// CHECK:         "jaxpr.psum_scatter"(%{{.*}}) {axes = ["i"], axis_size = 2 : i64, scatter_dimension = 0 : i64, tiled = true} : (tensor<4x3xf32>) -> tensor<2x3xf32>
func.func @psum_scatter(%x: tensor<4x3xf32>) -> (tensor<3xf32>, tensor<2x3xf32>) {
  %0 = "jaxpr.psum_scatter"(%x) {axes = ["i"], axis_size = 4 : i64, scatter_dimension = 0 : i64, tiled = false} : (tensor<4x3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.psum_scatter"(%x) {axes = ["i"], axis_size = 2 : i64, scatter_dimension = 0 : i64, tiled = true} : (tensor<4x3xf32>) -> tensor<2x3xf32>
  return %0, %1 : tensor<3xf32>, tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @all_to_all
// CHECK:         "jaxpr.all_to_all"(%{{.*}}) {axes = ["i"], axis_size = 4 : i64, concat_axis = 1 : i64, split_axis = 0 : i64, tiled = false} : (tensor<4x2xf32>) -> tensor<2x4xf32>
// CHECK:         "jaxpr.all_to_all"(%{{.*}}) {axes = ["i"], axis_size = 2 : i64, concat_axis = 1 : i64, split_axis = 0 : i64, tiled = true} : (tensor<4x2xf32>) -> tensor<2x4xf32>
func.func @all_to_all(%x: tensor<4x2xf32>) -> (tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = "jaxpr.all_to_all"(%x) {axes = ["i"], axis_size = 4 : i64, concat_axis = 1 : i64, split_axis = 0 : i64, tiled = false} : (tensor<4x2xf32>) -> tensor<2x4xf32>
  %1 = "jaxpr.all_to_all"(%x) {axes = ["i"], axis_size = 2 : i64, concat_axis = 1 : i64, split_axis = 0 : i64, tiled = true} : (tensor<4x2xf32>) -> tensor<2x4xf32>
  return %0, %1 : tensor<2x4xf32>, tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @ppermute_axis_index
// CHECK:         "jaxpr.ppermute"(%{{.*}}) {axes = ["i"], perm = [array<i64: 0, 1>, array<i64: 1, 0>]} : (tensor<3xf32>) -> tensor<3xf32>
// CHECK:         "jaxpr.axis_index"() {axes = ["i"]} : () -> tensor<i32>
func.func @ppermute_axis_index(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<i32>) {
  %0 = "jaxpr.ppermute"(%x) {axes = ["i"], perm = [array<i64: 0, 1>, array<i64: 1, 0>]} : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.axis_index"() {axes = ["i"]} : () -> tensor<i32>
  return %0, %1 : tensor<3xf32>, tensor<i32>
}
