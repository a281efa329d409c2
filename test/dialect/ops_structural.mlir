// Round trip of every op in dialect/ops/structural.py: parse, verify, print.
// RUN: mjax-opt %s --split-input-file | filecheck %s
// RUN: mjax-opt %s --split-input-file | mjax-opt --split-input-file | filecheck %s

// CHECK-LABEL: func.func @convert_element_type
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.convert_element_type"(%[[X]]) {new_dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @convert_element_type(%x: tensor<4xf32>) -> tensor<4xi32> {
  %0 = "jaxpr.convert_element_type"(%x) {new_dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @convert_element_type_to_bool
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.convert_element_type"(%[[X]]) {new_dtype = i1} : (tensor<4xf32>) -> tensor<4xi1>
// CHECK:         return %[[R]]
func.func @convert_element_type_to_bool(%x: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.convert_element_type"(%x) {new_dtype = i1} : (tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @convert_element_type_complex_to_real
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = "jaxpr.convert_element_type"(%[[X]]) {new_dtype = f32} : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @convert_element_type_complex_to_real(%x: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  %0 = "jaxpr.convert_element_type"(%x) {new_dtype = f32} : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @convert_element_type_complex_to_int
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = "jaxpr.convert_element_type"(%[[X]]) {new_dtype = i32} : (tensor<4xcomplex<f32>>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @convert_element_type_complex_to_int(%x: tensor<4xcomplex<f32>>) -> tensor<4xi32> {
  %0 = "jaxpr.convert_element_type"(%x) {new_dtype = i32} : (tensor<4xcomplex<f32>>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @convert_element_type_bf16
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.convert_element_type"(%[[X]]) {new_dtype = bf16} : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK:         return %[[R]]
func.func @convert_element_type_bf16(%x: tensor<4xf32>) -> tensor<4xbf16> {
  %0 = "jaxpr.convert_element_type"(%x) {new_dtype = bf16} : (tensor<4xf32>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// CHECK-LABEL: func.func @bitcast_convert_type
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.bitcast_convert_type"(%[[X]]) {new_dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @bitcast_convert_type(%x: tensor<4xf32>) -> tensor<4xi32> {
  %0 = "jaxpr.bitcast_convert_type"(%x) {new_dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @bitcast_convert_type_narrow
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.bitcast_convert_type"(%[[X]]) {new_dtype = ui8} : (tensor<4xf32>) -> tensor<4x4xui8>
// CHECK:         return %[[R]]
func.func @bitcast_convert_type_narrow(%x: tensor<4xf32>) -> tensor<4x4xui8> {
  %0 = "jaxpr.bitcast_convert_type"(%x) {new_dtype = ui8} : (tensor<4xf32>) -> tensor<4x4xui8>
  return %0 : tensor<4x4xui8>
}

// -----

// CHECK-LABEL: func.func @bitcast_convert_type_wide
// CHECK-SAME:    (%[[X:.*]]: tensor<3x2xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.bitcast_convert_type"(%[[X]]) {new_dtype = f64} : (tensor<3x2xi32>) -> tensor<3xf64>
// CHECK:         return %[[R]]
func.func @bitcast_convert_type_wide(%x: tensor<3x2xi32>) -> tensor<3xf64> {
  %0 = "jaxpr.bitcast_convert_type"(%x) {new_dtype = f64} : (tensor<3x2xi32>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// -----

// CHECK-LABEL: func.func @reduce_precision
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.reduce_precision"(%[[X]]) {exponent_bits = 5 : i64, mantissa_bits = 10 : i64} : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @reduce_precision(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.reduce_precision"(%x) {exponent_bits = 5 : i64, mantissa_bits = 10 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @stop_gradient
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.stop_gradient"(%[[X]]) : (tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @stop_gradient(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.stop_gradient"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @layout_constraint
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.layout_constraint"(%[[X]]) {major_to_minor = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:         return %[[R]]
func.func @layout_constraint(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.layout_constraint"(%x) {major_to_minor = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @device_put
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.device_put"(%[[X]]) {memory_kind = "pinned_host", src = "device"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:         return %[[R]]
func.func @device_put(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.device_put"(%x) {memory_kind = "pinned_host", src = "device"} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @copy
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.copy"(%[[X]]) : (tensor<4xi32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @copy(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.copy"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @optimization_barrier
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[N:.*]]: tensor<i32>)
// CHECK:         %[[R:.*]]:2 = "jaxpr.optimization_barrier"(%[[X]], %[[N]]) : (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<i32>)
// CHECK:         return %[[R]]#0, %[[R]]#1
func.func @optimization_barrier(%x: tensor<4xf32>, %n: tensor<i32>) -> (tensor<4xf32>, tensor<i32>) {
  %0:2 = "jaxpr.optimization_barrier"(%x, %n) : (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<i32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<i32>
}

// -----

// CHECK-LABEL: func.func @constant
// CHECK-SAME:    ()
// CHECK:         %[[R:.*]] = "jaxpr.constant"() {value = dense<[1.000000e+00, 2.500000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
// CHECK:         return %[[R]]
func.func @constant() -> tensor<2xf32> {
  %0 = "jaxpr.constant"() {value = dense<[1.000000e+00, 2.500000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @constant_splat_i64
// CHECK-SAME:    ()
// CHECK:         %[[R:.*]] = "jaxpr.constant"() {value = dense<7> : tensor<2x3xi64>} : () -> tensor<2x3xi64>
// CHECK:         return %[[R]]
func.func @constant_splat_i64() -> tensor<2x3xi64> {
  %0 = "jaxpr.constant"() {value = dense<7> : tensor<2x3xi64>} : () -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

// CHECK-LABEL: func.func @constant_complex
// CHECK-SAME:    ()
// CHECK:         %[[R:.*]] = "jaxpr.constant"() {value = dense<[(1.000000e+00,2.000000e+00), (0.000000e+00,-1.000000e+00)]> : tensor<2xcomplex<f32>>} : () -> tensor<2xcomplex<f32>>
// CHECK:         return %[[R]]
func.func @constant_complex() -> tensor<2xcomplex<f32>> {
  %0 = "jaxpr.constant"() {value = dense<[(1.000000e+00,2.000000e+00), (0.000000e+00,-1.000000e+00)]> : tensor<2xcomplex<f32>>} : () -> tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @constant_bool
// CHECK-SAME:    ()
// CHECK:         %[[R:.*]] = "jaxpr.constant"() {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
// CHECK:         return %[[R]]
func.func @constant_bool() -> tensor<2xi1> {
  %0 = "jaxpr.constant"() {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// CHECK-LABEL: func.func @iota
// CHECK-SAME:    ()
// CHECK:         %[[R:.*]] = "jaxpr.iota"() {dimension = 1 : i64, dtype = i32, shape = array<i64: 2, 3>} : () -> tensor<2x3xi32>
// CHECK:         return %[[R]]
func.func @iota() -> tensor<2x3xi32> {
  %0 = "jaxpr.iota"() {dimension = 1 : i64, dtype = i32, shape = array<i64: 2, 3>} : () -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func.func @iota_default_dimension
// CHECK-SAME:    ()
// CHECK:         %[[R:.*]] = "jaxpr.iota"() {dtype = f32, shape = array<i64: 5>} : () -> tensor<5xf32>
// CHECK:         return %[[R]]
func.func @iota_default_dimension() -> tensor<5xf32> {
  %0 = "jaxpr.iota"() {dtype = f32, shape = array<i64: 5>} : () -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// CHECK-LABEL: func.func @dim_as_value
// CHECK-SAME:    (%[[X:.*]]: tensor<?x4xf32, "b, 4">)
// CHECK:         %[[R:.*]] = "jaxpr.dim_as_value"() {dim = "b", dtype = i32} : () -> tensor<i32>
// CHECK:         return %[[R]]
func.func @dim_as_value(%x: tensor<?x4xf32, "b, 4">) -> tensor<i32> {
  %0 = "jaxpr.dim_as_value"() {dim = "b", dtype = i32} : () -> tensor<i32>
  return %0 : tensor<i32>
}

// -----

// CHECK-LABEL: func.func @broadcast_in_dim
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.broadcast_in_dim"(%[[X]]) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 2, 3>} : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         return %[[R]]
func.func @broadcast_in_dim(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.broadcast_in_dim"(%x) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 2, 3>} : (tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_in_dim_scalar
// CHECK-SAME:    (%[[X:.*]]: tensor<i32>)
// CHECK:         %[[R:.*]] = "jaxpr.broadcast_in_dim"(%[[X]]) {broadcast_dimensions = array<i64>, shape = array<i64: 4>} : (tensor<i32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @broadcast_in_dim_scalar(%x: tensor<i32>) -> tensor<4xi32> {
  %0 = "jaxpr.broadcast_in_dim"(%x) {broadcast_dimensions = array<i64>, shape = array<i64: 4>} : (tensor<i32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @reshape
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.reshape"(%[[X]]) {new_sizes = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK:         return %[[R]]
func.func @reshape(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "jaxpr.reshape"(%x) {new_sizes = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_dimensions
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.reshape"(%[[X]]) {dimensions = array<i64: 1, 0>, new_sizes = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
// CHECK:         return %[[R]]
func.func @reshape_dimensions(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %0 = "jaxpr.reshape"(%x) {dimensions = array<i64: 1, 0>, new_sizes = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// CHECK-LABEL: func.func @squeeze
// CHECK-SAME:    (%[[X:.*]]: tensor<1x3x1xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.squeeze"(%[[X]]) {dimensions = array<i64: 0, 2>} : (tensor<1x3x1xf32>) -> tensor<3xf32>
// CHECK:         return %[[R]]
func.func @squeeze(%x: tensor<1x3x1xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.squeeze"(%x) {dimensions = array<i64: 0, 2>} : (tensor<1x3x1xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @expand_dims
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.expand_dims"(%[[X]]) {dimensions = array<i64: 0, 2>} : (tensor<3xf32>) -> tensor<1x3x1xf32>
// CHECK:         return %[[R]]
func.func @expand_dims(%x: tensor<3xf32>) -> tensor<1x3x1xf32> {
  %0 = "jaxpr.expand_dims"(%x) {dimensions = array<i64: 0, 2>} : (tensor<3xf32>) -> tensor<1x3x1xf32>
  return %0 : tensor<1x3x1xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.transpose"(%[[X]]) {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK:         return %[[R]]
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = "jaxpr.transpose"(%x) {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @rev
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.rev"(%[[X]]) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
// CHECK:         return %[[R]]
func.func @rev(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.rev"(%x) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @tile
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.tile"(%[[X]]) {reps = array<i64: 2, 1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
// CHECK:         return %[[R]]
func.func @tile(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.tile"(%x) {reps = array<i64: 2, 1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @concatenate
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<1x3xf32>, %[[Z:.*]]: tensor<4x3xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.concatenate"(%[[X]], %[[Y]], %[[Z]]) {dimension = 0 : i64} : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<4x3xf32>) -> tensor<7x3xf32>
// CHECK:         return %[[R]]
func.func @concatenate(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>, %z: tensor<4x3xf32>) -> tensor<7x3xf32> {
  %0 = "jaxpr.concatenate"(%x, %y, %z) {dimension = 0 : i64} : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<4x3xf32>) -> tensor<7x3xf32>
  return %0 : tensor<7x3xf32>
}

// -----

// CHECK-LABEL: func.func @concatenate_single
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.concatenate"(%[[X]]) {dimension = 1 : i64} : (tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK:         return %[[R]]
func.func @concatenate_single(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = "jaxpr.concatenate"(%x) {dimension = 1 : i64} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func.func @pad
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<f32>)
// CHECK:         %[[R:.*]] = "jaxpr.pad"(%[[X]], %[[Y]]) {padding_config = [array<i64: 1, 2, 0>]} : (tensor<4xf32>, tensor<f32>) -> tensor<7xf32>
// CHECK:         return %[[R]]
func.func @pad(%x: tensor<4xf32>, %y: tensor<f32>) -> tensor<7xf32> {
  %0 = "jaxpr.pad"(%x, %y) {padding_config = [array<i64: 1, 2, 0>]} : (tensor<4xf32>, tensor<f32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

// CHECK-LABEL: func.func @pad_negative_interior
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xi32>, %[[Y:.*]]: tensor<i32>)
// CHECK:         %[[R:.*]] = "jaxpr.pad"(%[[X]], %[[Y]]) {padding_config = [array<i64: -1, 0, 1>, array<i64: 0, 2, 1>]} : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x7xi32>
// CHECK:         return %[[R]]
func.func @pad_negative_interior(%x: tensor<2x3xi32>, %y: tensor<i32>) -> tensor<2x7xi32> {
  %0 = "jaxpr.pad"(%x, %y) {padding_config = [array<i64: -1, 0, 1>, array<i64: 0, 2, 1>]} : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x7xi32>
  return %0 : tensor<2x7xi32>
}

// -----

// CHECK-LABEL: func.func @slice
// CHECK-SAME:    (%[[X:.*]]: tensor<3x4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.slice"(%[[X]]) {limit_indices = array<i64: 3, 3>, start_indices = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<2x3xf32>
// CHECK:         return %[[R]]
func.func @slice(%x: tensor<3x4xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.slice"(%x) {limit_indices = array<i64: 3, 3>, start_indices = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @slice_strides
// CHECK-SAME:    (%[[X:.*]]: tensor<3x8xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.slice"(%[[X]]) {limit_indices = array<i64: 3, 8>, start_indices = array<i64: 0, 1>, strides = array<i64: 2, 3>} : (tensor<3x8xf32>) -> tensor<2x3xf32>
// CHECK:         return %[[R]]
func.func @slice_strides(%x: tensor<3x8xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.slice"(%x) {limit_indices = array<i64: 3, 8>, start_indices = array<i64: 0, 1>, strides = array<i64: 2, 3>} : (tensor<3x8xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @select_n
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi1>, %[[Y:.*]]: tensor<4xf32>, %[[Z:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.select_n"(%[[X]], %[[Y]], %[[Z]]) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @select_n(%x: tensor<4xi1>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.select_n"(%x, %y, %z) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @select_n_scalar_predicate
// CHECK-SAME:    (%[[X:.*]]: tensor<i1>, %[[Y:.*]]: tensor<4xf32>, %[[Z:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.select_n"(%[[X]], %[[Y]], %[[Z]]) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @select_n_scalar_predicate(%x: tensor<i1>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.select_n"(%x, %y, %z) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @select_n_int32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xf32>, %[[Z:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.select_n"(%[[X]], %[[Y]], %[[Z]], %[[W]]) : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @select_n_int32(%x: tensor<4xi32>, %y: tensor<4xf32>, %z: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.select_n"(%x, %y, %z, %w) : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @clamp
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>, %[[Y:.*]]: tensor<4xf32>, %[[Z:.*]]: tensor<f32>)
// CHECK:         %[[R:.*]] = "jaxpr.clamp"(%[[X]], %[[Y]], %[[Z]]) : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
func.func @clamp(%x: tensor<f32>, %y: tensor<4xf32>, %z: tensor<f32>) -> tensor<4xf32> {
  %0 = "jaxpr.clamp"(%x, %y, %z) : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @clamp_elementwise
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>, %[[Z:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = "jaxpr.clamp"(%[[X]], %[[Y]], %[[Z]]) : (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
func.func @clamp_elementwise(%x: tensor<4xi32>, %y: tensor<4xi32>, %z: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.clamp"(%x, %y, %z) : (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @dot_general
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<3x4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.dot_general"(%[[X]], %[[Y]]) {dimension_numbers = {{\[\[}}array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>{{\]\]}}} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK:         return %[[R]]
func.func @dot_general(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @dot_general_batch
// CHECK-SAME:    (%[[X:.*]]: tensor<5x2x3xf32>, %[[Y:.*]]: tensor<5x3x4xf32>)
// CHECK:         %[[R:.*]] = "jaxpr.dot_general"(%[[X]], %[[Y]]) {dimension_numbers = {{\[\[}}array<i64: 2>, array<i64: 1>], [array<i64: 0>, array<i64: 0>{{\]\]}}} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
// CHECK:         return %[[R]]
func.func @dot_general_batch(%x: tensor<5x2x3xf32>, %y: tensor<5x3x4xf32>) -> tensor<5x2x4xf32> {
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 2>, array<i64: 1>], [array<i64: 0>, array<i64: 0>]]} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}

// -----

// CHECK-LABEL: func.func @dot_general_preferred_element_type
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xi8>, %[[Y:.*]]: tensor<3xi8>)
// CHECK:         %[[R:.*]] = "jaxpr.dot_general"(%[[X]], %[[Y]]) {dimension_numbers = {{\[\[}}array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>{{\]\]}}, preferred_element_type = i32} : (tensor<2x3xi8>, tensor<3xi8>) -> tensor<2xi32>
// CHECK:         return %[[R]]
func.func @dot_general_preferred_element_type(%x: tensor<2x3xi8>, %y: tensor<3xi8>) -> tensor<2xi32> {
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]], preferred_element_type = i32} : (tensor<2x3xi8>, tensor<3xi8>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
