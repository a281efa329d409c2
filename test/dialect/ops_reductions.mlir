// RUN: mjax-opt %s --split-input-file | filecheck %s

// CHECK-LABEL: func.func @reduce_sum
// CHECK:         "jaxpr.reduce_sum"(%{{.*}}) {axes = array<i64: 0>}
func.func @reduce_sum(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.reduce_sum"(%x) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_prod
// CHECK:         "jaxpr.reduce_prod"(%{{.*}}) {axes = array<i64: 0>}
func.func @reduce_prod(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.reduce_prod"(%x) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_max
// CHECK:         "jaxpr.reduce_max"(%{{.*}}) {axes = array<i64: 0>}
func.func @reduce_max(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.reduce_max"(%x) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_min
// CHECK:         "jaxpr.reduce_min"(%{{.*}}) {axes = array<i64: 0>}
func.func @reduce_min(%x: tensor<2x3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.reduce_min"(%x) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @reduce_and
// CHECK:         "jaxpr.reduce_and"(%{{.*}}) {axes = array<i64: 0, 1>}
func.func @reduce_and(%x: tensor<2x3xi1>) -> tensor<i1> {
  %0 = "jaxpr.reduce_and"(%x) {axes = array<i64: 0, 1>} : (tensor<2x3xi1>) -> tensor<i1>
  return %0 : tensor<i1>
}

// -----

// CHECK-LABEL: func.func @reduce_or
// CHECK:         "jaxpr.reduce_or"(%{{.*}}) {axes = array<i64: 0, 1>}
func.func @reduce_or(%x: tensor<2x3xi1>) -> tensor<i1> {
  %0 = "jaxpr.reduce_or"(%x) {axes = array<i64: 0, 1>} : (tensor<2x3xi1>) -> tensor<i1>
  return %0 : tensor<i1>
}

// -----

// CHECK-LABEL: func.func @reduce_xor
// CHECK:         "jaxpr.reduce_xor"(%{{.*}}) {axes = array<i64: 0, 1>}
func.func @reduce_xor(%x: tensor<2x3xi1>) -> tensor<i1> {
  %0 = "jaxpr.reduce_xor"(%x) {axes = array<i64: 0, 1>} : (tensor<2x3xi1>) -> tensor<i1>
  return %0 : tensor<i1>
}

// -----

// CHECK-LABEL: func.func @argmax
// CHECK:         "jaxpr.argmax"(%{{.*}}) {axes = array<i64: 1>, index_dtype = i32}
func.func @argmax(%x: tensor<2x3xf32>) -> tensor<2xi32> {
  %0 = "jaxpr.argmax"(%x) {axes = array<i64: 1>, index_dtype = i32} : (tensor<2x3xf32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @argmin
// CHECK:         "jaxpr.argmin"(%{{.*}}) {axes = array<i64: 1>, index_dtype = i32}
func.func @argmin(%x: tensor<2x3xf32>) -> tensor<2xi32> {
  %0 = "jaxpr.argmin"(%x) {axes = array<i64: 1>, index_dtype = i32} : (tensor<2x3xf32>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @cumsum
// CHECK:         "jaxpr.cumsum"(%{{.*}}) {axis = 1 : i64, reverse = true}
func.func @cumsum(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.cumsum"(%x) {axis = 1 : i64, reverse = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @cumprod
// CHECK:         "jaxpr.cumprod"(%{{.*}}) {axis = 1 : i64, reverse = true}
func.func @cumprod(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.cumprod"(%x) {axis = 1 : i64, reverse = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @cummax
// CHECK:         "jaxpr.cummax"(%{{.*}}) {axis = 1 : i64, reverse = true}
func.func @cummax(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.cummax"(%x) {axis = 1 : i64, reverse = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @cummin
// CHECK:         "jaxpr.cummin"(%{{.*}}) {axis = 1 : i64, reverse = true}
func.func @cummin(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.cummin"(%x) {axis = 1 : i64, reverse = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @cumlogsumexp
// CHECK:         "jaxpr.cumlogsumexp"(%{{.*}}) {axis = 1 : i64, reverse = true}
func.func @cumlogsumexp(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.cumlogsumexp"(%x) {axis = 1 : i64, reverse = true} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @sort
// CHECK:         "jaxpr.sort"(%{{.*}}, %{{.*}}) {dimension = 0 : i64, is_stable = true, num_keys = 1 : i64}
func.func @sort(%k: tensor<5xf32>, %v: tensor<5xi32>) -> (tensor<5xf32>, tensor<5xi32>) {
  %0:2 = "jaxpr.sort"(%k, %v) {dimension = 0 : i64, is_stable = true, num_keys = 1 : i64} : (tensor<5xf32>, tensor<5xi32>) -> (tensor<5xf32>, tensor<5xi32>)
  return %0#0, %0#1 : tensor<5xf32>, tensor<5xi32>
}
