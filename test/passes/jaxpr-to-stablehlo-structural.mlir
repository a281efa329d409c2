// --jaxpr-to-stablehlo on every op in dialect/ops/structural.py.
// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// CHECK-LABEL: func.func @convert_element_type
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.convert %[[X]] : (tensor<4xf32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @convert_element_type(%x: tensor<4xf32>) -> tensor<4xi32> {
  %0 = "jaxpr.convert_element_type"(%x) {new_dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @convert_element_type_to_bool
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[ZERO:.*]] = stablehlo.constant dense<0.000000e+00> : tensor<4xf32>
// CHECK:         %[[NE:.*]] = stablehlo.compare NE, %[[X]], %[[ZERO]], FLOAT
// (JAX's convert_hlo converts the comparison to its own type)
// CHECK:         %[[R:.*]] = stablehlo.convert %[[NE]] : tensor<4xi1>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @convert_element_type_to_bool(%x: tensor<4xf32>) -> tensor<4xi1> {
  %0 = "jaxpr.convert_element_type"(%x) {new_dtype = i1} : (tensor<4xf32>) -> tensor<4xi1>
  return %0 : tensor<4xi1>
}

// -----

// CHECK-LABEL: func.func @convert_element_type_complex_to_real
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[R:.*]] = stablehlo.real %[[X]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @convert_element_type_complex_to_real(%x: tensor<4xcomplex<f32>>) -> tensor<4xf32> {
  %0 = "jaxpr.convert_element_type"(%x) {new_dtype = f32} : (tensor<4xcomplex<f32>>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @convert_element_type_complex_to_int
// CHECK-SAME:    (%[[X:.*]]: tensor<4xcomplex<f32>>)
// CHECK:         %[[RE:.*]] = stablehlo.real %[[X]]
// CHECK:         %[[R:.*]] = stablehlo.convert %[[RE]] : (tensor<4xf32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @convert_element_type_complex_to_int(%x: tensor<4xcomplex<f32>>) -> tensor<4xi32> {
  %0 = "jaxpr.convert_element_type"(%x) {new_dtype = i32} : (tensor<4xcomplex<f32>>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @convert_element_type_bf16
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.convert %[[X]] : (tensor<4xf32>) -> tensor<4xbf16>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @convert_element_type_bf16(%x: tensor<4xf32>) -> tensor<4xbf16> {
  %0 = "jaxpr.convert_element_type"(%x) {new_dtype = bf16} : (tensor<4xf32>) -> tensor<4xbf16>
  return %0 : tensor<4xbf16>
}

// -----

// CHECK-LABEL: func.func @bitcast_convert_type
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.bitcast_convert %[[X]] : (tensor<4xf32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @bitcast_convert_type(%x: tensor<4xf32>) -> tensor<4xi32> {
  %0 = "jaxpr.bitcast_convert_type"(%x) {new_dtype = i32} : (tensor<4xf32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @bitcast_convert_type_narrow
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.bitcast_convert %[[X]] : (tensor<4xf32>) -> tensor<4x4xui8>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @bitcast_convert_type_narrow(%x: tensor<4xf32>) -> tensor<4x4xui8> {
  %0 = "jaxpr.bitcast_convert_type"(%x) {new_dtype = ui8} : (tensor<4xf32>) -> tensor<4x4xui8>
  return %0 : tensor<4x4xui8>
}

// -----

// CHECK-LABEL: func.func @bitcast_convert_type_wide
// CHECK-SAME:    (%[[X:.*]]: tensor<3x2xi32>)
// CHECK:         %[[R:.*]] = stablehlo.bitcast_convert %[[X]] : (tensor<3x2xi32>) -> tensor<3xf64>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @bitcast_convert_type_wide(%x: tensor<3x2xi32>) -> tensor<3xf64> {
  %0 = "jaxpr.bitcast_convert_type"(%x) {new_dtype = f64} : (tensor<3x2xi32>) -> tensor<3xf64>
  return %0 : tensor<3xf64>
}

// -----

// CHECK-LABEL: func.func @reduce_precision
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.reduce_precision %[[X]], format = e5m10
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @reduce_precision(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.reduce_precision"(%x) {exponent_bits = 5 : i64, mantissa_bits = 10 : i64} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @stop_gradient
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>)
// CHECK:         return %[[X]]
// CHECK-NOT:     jaxpr.
func.func @stop_gradient(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.stop_gradient"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @optimization_barrier
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[N:.*]]: tensor<i32>)
// CHECK:         %[[R:.*]]:2 = stablehlo.optimization_barrier %[[X]], %[[N]] : tensor<4xf32>, tensor<i32>
// CHECK:         return %[[R]]#0, %[[R]]#1
// CHECK-NOT:     jaxpr.
func.func @optimization_barrier(%x: tensor<4xf32>, %n: tensor<i32>) -> (tensor<4xf32>, tensor<i32>) {
  %0:2 = "jaxpr.optimization_barrier"(%x, %n) : (tensor<4xf32>, tensor<i32>) -> (tensor<4xf32>, tensor<i32>)
  return %0#0, %0#1 : tensor<4xf32>, tensor<i32>
}

// -----

// XLA's LayoutConstraint custom call; its layouts are minor to major (JAX's lowering).
// CHECK-LABEL: func.func @layout_constraint
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.custom_call @LayoutConstraint(%[[X]]) {backend_config = "", operand_layouts = [dense<[0, 1, 2]> : tensor<3xindex>], result_layouts = [dense<[0, 2, 1]> : tensor<3xindex>]}
// CHECK:         return %[[R]]
func.func @layout_constraint(%x: tensor<2x3x4xf32>) -> tensor<2x3x4xf32> {
  %0 = "jaxpr.layout_constraint"(%x) {major_to_minor = array<i64: 1, 2, 0>} : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  return %0 : tensor<2x3x4xf32>
}

// -----

// A device_put inside a program: XLA's annotate_device_placement, marked so the frontend
// reads its memory kind and removes it (frontend/specs/memory_kinds.py).
// CHECK-LABEL: func.func @device_put
// CHECK-SAME:    (%[[X:.*]]: tensor<2xf32>)
// CHECK:         %[[R:.*]] = stablehlo.custom_call @annotate_device_placement(%[[X]]) {backend_config = "", mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"}, mjax.device_put} : (tensor<2xf32>) -> tensor<2xf32>
// CHECK:         return %[[R]]
func.func @device_put(%x: tensor<2xf32>) -> tensor<2xf32> {
  %0 = "jaxpr.device_put"(%x) {memory_kind = "pinned_host"} : (tensor<2xf32>) -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @copy
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>)
// CHECK:         return %[[X]]
// CHECK-NOT:     jaxpr.
func.func @copy(%x: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.copy"(%x) : (tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @constant
// CHECK-SAME:    ()
// CHECK:         %[[R:.*]] = stablehlo.constant dense<[1.000000e+00, 2.500000e+00]> : tensor<2xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @constant() -> tensor<2xf32> {
  %0 = "jaxpr.constant"() {value = dense<[1.000000e+00, 2.500000e+00]> : tensor<2xf32>} : () -> tensor<2xf32>
  return %0 : tensor<2xf32>
}

// -----

// CHECK-LABEL: func.func @constant_splat_i64
// CHECK-SAME:    ()
// CHECK:         %[[R:.*]] = stablehlo.constant dense<7> : tensor<2x3xi64>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @constant_splat_i64() -> tensor<2x3xi64> {
  %0 = "jaxpr.constant"() {value = dense<7> : tensor<2x3xi64>} : () -> tensor<2x3xi64>
  return %0 : tensor<2x3xi64>
}

// -----

// CHECK-LABEL: func.func @constant_complex
// CHECK-SAME:    ()
// CHECK:         %[[R:.*]] = stablehlo.constant dense<[(1.000000e+00,2.000000e+00), (0.000000e+00,-1.000000e+00)]> : tensor<2xcomplex<f32>>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @constant_complex() -> tensor<2xcomplex<f32>> {
  %0 = "jaxpr.constant"() {value = dense<[(1.000000e+00,2.000000e+00), (0.000000e+00,-1.000000e+00)]> : tensor<2xcomplex<f32>>} : () -> tensor<2xcomplex<f32>>
  return %0 : tensor<2xcomplex<f32>>
}

// -----

// CHECK-LABEL: func.func @constant_bool
// CHECK-SAME:    ()
// CHECK:         %[[R:.*]] = stablehlo.constant dense<[true, false]> : tensor<2xi1>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @constant_bool() -> tensor<2xi1> {
  %0 = "jaxpr.constant"() {value = dense<[true, false]> : tensor<2xi1>} : () -> tensor<2xi1>
  return %0 : tensor<2xi1>
}

// -----

// CHECK-LABEL: func.func @iota
// CHECK-SAME:    ()
// CHECK:         %[[R:.*]] = stablehlo.iota dim = 1 : tensor<2x3xi32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @iota() -> tensor<2x3xi32> {
  %0 = "jaxpr.iota"() {dimension = 1 : i64, dtype = i32, shape = array<i64: 2, 3>} : () -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func.func @iota_default_dimension
// CHECK-SAME:    ()
// CHECK:         %[[R:.*]] = stablehlo.iota dim = 0 : tensor<5xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @iota_default_dimension() -> tensor<5xf32> {
  %0 = "jaxpr.iota"() {dtype = f32, shape = array<i64: 5>} : () -> tensor<5xf32>
  return %0 : tensor<5xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_in_dim
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>)
// CHECK:         %[[R:.*]] = stablehlo.broadcast_in_dim %[[X]], dims = [1] : (tensor<3xf32>) -> tensor<2x3xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @broadcast_in_dim(%x: tensor<3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.broadcast_in_dim"(%x) {broadcast_dimensions = array<i64: 1>, shape = array<i64: 2, 3>} : (tensor<3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @broadcast_in_dim_scalar
// CHECK-SAME:    (%[[X:.*]]: tensor<i32>)
// CHECK:         %[[R:.*]] = stablehlo.broadcast_in_dim %[[X]], dims = [] : (tensor<i32>) -> tensor<4xi32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @broadcast_in_dim_scalar(%x: tensor<i32>) -> tensor<4xi32> {
  %0 = "jaxpr.broadcast_in_dim"(%x) {broadcast_dimensions = array<i64>, shape = array<i64: 4>} : (tensor<i32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @reshape
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[R:.*]] = stablehlo.reshape %[[X]] : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @reshape(%x: tensor<2x3xf32>) -> tensor<3x2xf32> {
  %0 = "jaxpr.reshape"(%x) {new_sizes = array<i64: 3, 2>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %0 : tensor<3x2xf32>
}

// -----

// CHECK-LABEL: func.func @reshape_dimensions
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[T:.*]] = stablehlo.transpose %[[X]], dims = [1, 0] : (tensor<2x3xf32>) -> tensor<3x2xf32>
// CHECK:         %[[R:.*]] = stablehlo.reshape %[[T]] : (tensor<3x2xf32>) -> tensor<6xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @reshape_dimensions(%x: tensor<2x3xf32>) -> tensor<6xf32> {
  %0 = "jaxpr.reshape"(%x) {dimensions = array<i64: 1, 0>, new_sizes = array<i64: 6>} : (tensor<2x3xf32>) -> tensor<6xf32>
  return %0 : tensor<6xf32>
}

// -----

// CHECK-LABEL: func.func @squeeze
// CHECK-SAME:    (%[[X:.*]]: tensor<1x3x1xf32>)
// CHECK:         %[[R:.*]] = stablehlo.reshape %[[X]] : (tensor<1x3x1xf32>) -> tensor<3xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @squeeze(%x: tensor<1x3x1xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.squeeze"(%x) {dimensions = array<i64: 0, 2>} : (tensor<1x3x1xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// CHECK-LABEL: func.func @expand_dims
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>)
// CHECK:         %[[R:.*]] = stablehlo.broadcast_in_dim %[[X]], dims = [1] : (tensor<3xf32>) -> tensor<1x3x1xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @expand_dims(%x: tensor<3xf32>) -> tensor<1x3x1xf32> {
  %0 = "jaxpr.expand_dims"(%x) {dimensions = array<i64: 0, 2>} : (tensor<3xf32>) -> tensor<1x3x1xf32>
  return %0 : tensor<1x3x1xf32>
}

// -----

// CHECK-LABEL: func.func @transpose
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3x4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.transpose %[[X]], dims = [2, 0, 1] : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @transpose(%x: tensor<2x3x4xf32>) -> tensor<4x2x3xf32> {
  %0 = "jaxpr.transpose"(%x) {permutation = array<i64: 2, 0, 1>} : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  return %0 : tensor<4x2x3xf32>
}

// -----

// CHECK-LABEL: func.func @rev
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[R:.*]] = stablehlo.reverse %[[X]], dims = [0, 1] : tensor<2x3xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @rev(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.rev"(%x) {dimensions = array<i64: 0, 1>} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// As JAX's: reshape to (1, d0, 1, d1), broadcast to (r0, d0, r1, d1), reshape.
// CHECK-LABEL: func.func @tile
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>)
// CHECK:         %[[A:.*]] = stablehlo.reshape %[[X]] : (tensor<2x3xf32>) -> tensor<1x2x1x3xf32>
// CHECK:         %[[B:.*]] = stablehlo.broadcast_in_dim %[[A]], dims = [0, 1, 2, 3] : (tensor<1x2x1x3xf32>) -> tensor<2x2x1x3xf32>
// CHECK:         %[[R:.*]] = stablehlo.reshape %[[B]] : (tensor<2x2x1x3xf32>) -> tensor<4x3xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @tile(%x: tensor<2x3xf32>) -> tensor<4x3xf32> {
  %0 = "jaxpr.tile"(%x) {reps = array<i64: 2, 1>} : (tensor<2x3xf32>) -> tensor<4x3xf32>
  return %0 : tensor<4x3xf32>
}

// -----

// CHECK-LABEL: func.func @concatenate
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<1x3xf32>, %[[Z:.*]]: tensor<4x3xf32>)
// CHECK:         %[[R:.*]] = stablehlo.concatenate %[[X]], %[[Y]], %[[Z]], dim = 0 : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<4x3xf32>) -> tensor<7x3xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @concatenate(%x: tensor<2x3xf32>, %y: tensor<1x3xf32>, %z: tensor<4x3xf32>) -> tensor<7x3xf32> {
  %0 = "jaxpr.concatenate"(%x, %y, %z) {dimension = 0 : i64} : (tensor<2x3xf32>, tensor<1x3xf32>, tensor<4x3xf32>) -> tensor<7x3xf32>
  return %0 : tensor<7x3xf32>
}

// -----

// CHECK-LABEL: func.func @concatenate_single
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xi32>)
// CHECK:         %[[R:.*]] = stablehlo.concatenate %[[X]], dim = 1 : (tensor<2x3xi32>) -> tensor<2x3xi32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @concatenate_single(%x: tensor<2x3xi32>) -> tensor<2x3xi32> {
  %0 = "jaxpr.concatenate"(%x) {dimension = 1 : i64} : (tensor<2x3xi32>) -> tensor<2x3xi32>
  return %0 : tensor<2x3xi32>
}

// -----

// CHECK-LABEL: func.func @pad
// CHECK-SAME:    (%[[X:.*]]: tensor<4xf32>, %[[Y:.*]]: tensor<f32>)
// CHECK:         %[[R:.*]] = stablehlo.pad %[[X]], %[[Y]], low = [1], high = [2], interior = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<7xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @pad(%x: tensor<4xf32>, %y: tensor<f32>) -> tensor<7xf32> {
  %0 = "jaxpr.pad"(%x, %y) {padding_config = [array<i64: 1, 2, 0>]} : (tensor<4xf32>, tensor<f32>) -> tensor<7xf32>
  return %0 : tensor<7xf32>
}

// -----

// CHECK-LABEL: func.func @pad_negative_interior
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xi32>, %[[Y:.*]]: tensor<i32>)
// CHECK:         %[[R:.*]] = stablehlo.pad %[[X]], %[[Y]], low = [-1, 0], high = [0, 2], interior = [1, 1] : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x7xi32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @pad_negative_interior(%x: tensor<2x3xi32>, %y: tensor<i32>) -> tensor<2x7xi32> {
  %0 = "jaxpr.pad"(%x, %y) {padding_config = [array<i64: -1, 0, 1>, array<i64: 0, 2, 1>]} : (tensor<2x3xi32>, tensor<i32>) -> tensor<2x7xi32>
  return %0 : tensor<2x7xi32>
}

// -----

// CHECK-LABEL: func.func @slice
// CHECK-SAME:    (%[[X:.*]]: tensor<3x4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.slice %[[X]] [1:3, 0:3] : (tensor<3x4xf32>) -> tensor<2x3xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @slice(%x: tensor<3x4xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.slice"(%x) {limit_indices = array<i64: 3, 3>, start_indices = array<i64: 1, 0>} : (tensor<3x4xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @slice_strides
// CHECK-SAME:    (%[[X:.*]]: tensor<3x8xf32>)
// CHECK:         %[[R:.*]] = stablehlo.slice %[[X]] [0:3:2, 1:8:3] : (tensor<3x8xf32>) -> tensor<2x3xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @slice_strides(%x: tensor<3x8xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.slice"(%x) {limit_indices = array<i64: 3, 8>, start_indices = array<i64: 0, 1>, strides = array<i64: 2, 3>} : (tensor<3x8xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}

// -----

// CHECK-LABEL: func.func @select_n
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi1>, %[[Y:.*]]: tensor<4xf32>, %[[Z:.*]]: tensor<4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.select %[[X]], %[[Z]], %[[Y]] : tensor<4xi1>, tensor<4xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @select_n(%x: tensor<4xi1>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.select_n"(%x, %y, %z) : (tensor<4xi1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @select_n_scalar_predicate
// CHECK-SAME:    (%[[X:.*]]: tensor<i1>, %[[Y:.*]]: tensor<4xf32>, %[[Z:.*]]: tensor<4xf32>)
// CHECK:         %[[P:.*]] = stablehlo.broadcast_in_dim %[[X]], dims = [] : (tensor<i1>) -> tensor<4xi1>
// CHECK:         %[[R:.*]] = stablehlo.select %[[P]], %[[Z]], %[[Y]] : tensor<4xi1>, tensor<4xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @select_n_scalar_predicate(%x: tensor<i1>, %y: tensor<4xf32>, %z: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.select_n"(%x, %y, %z) : (tensor<i1>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @select_n_int32
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xf32>, %[[Z:.*]]: tensor<4xf32>, %[[W:.*]]: tensor<4xf32>)
// CHECK:         %[[ONE:.*]] = stablehlo.constant dense<1> : tensor<4xi32>
// CHECK:         %[[LT1:.*]] = stablehlo.compare LT, %[[X]], %[[ONE]], SIGNED
// CHECK:         %[[TWO:.*]] = stablehlo.constant dense<2> : tensor<4xi32>
// CHECK:         %[[LT2:.*]] = stablehlo.compare LT, %[[X]], %[[TWO]], SIGNED
// CHECK:         %[[HI:.*]] = stablehlo.select %[[LT2]], %[[Z]], %[[W]]
// CHECK:         %[[R:.*]] = stablehlo.select %[[LT1]], %[[Y]], %[[HI]]
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @select_n_int32(%x: tensor<4xi32>, %y: tensor<4xf32>, %z: tensor<4xf32>, %w: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.select_n"(%x, %y, %z, %w) : (tensor<4xi32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @clamp
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>, %[[Y:.*]]: tensor<4xf32>, %[[Z:.*]]: tensor<f32>)
// CHECK:         %[[R:.*]] = stablehlo.clamp %[[X]], %[[Y]], %[[Z]] : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @clamp(%x: tensor<f32>, %y: tensor<4xf32>, %z: tensor<f32>) -> tensor<4xf32> {
  %0 = "jaxpr.clamp"(%x, %y, %z) : (tensor<f32>, tensor<4xf32>, tensor<f32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}

// -----

// CHECK-LABEL: func.func @clamp_elementwise
// CHECK-SAME:    (%[[X:.*]]: tensor<4xi32>, %[[Y:.*]]: tensor<4xi32>, %[[Z:.*]]: tensor<4xi32>)
// CHECK:         %[[R:.*]] = stablehlo.clamp %[[X]], %[[Y]], %[[Z]] : tensor<4xi32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @clamp_elementwise(%x: tensor<4xi32>, %y: tensor<4xi32>, %z: tensor<4xi32>) -> tensor<4xi32> {
  %0 = "jaxpr.clamp"(%x, %y, %z) : (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  return %0 : tensor<4xi32>
}

// -----

// CHECK-LABEL: func.func @dot_general
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xf32>, %[[Y:.*]]: tensor<3x4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.dot_general %[[X]], %[[Y]], contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @dot_general(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @dot_general_precision
// CHECK:         stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [1] x [0], precision = [HIGHEST, HIGH] : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
func.func @dot_general_precision(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]], precision = ["HIGHEST", "HIGH"]} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// A dot algorithm: the operands cast to its types (F16_F16_F16: f16), the products
// accumulated in its type, the algorithm attribute given, the result cast back.
// CHECK-LABEL: func.func @dot_general_algorithm
// CHECK:         %[[L:.*]] = stablehlo.convert %{{.*}} : (tensor<2x3xf32>) -> tensor<2x3xf16>
// CHECK:         %[[R:.*]] = stablehlo.convert %{{.*}} : (tensor<3x4xf32>) -> tensor<3x4xf16>
// CHECK:         %[[D:.*]] = stablehlo.dot_general %[[L]], %[[R]], contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT], algorithm = <lhs_precision_type = f16, rhs_precision_type = f16, accumulation_type = f16, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 1, allow_imprecise_accumulation = false> : (tensor<2x3xf16>, tensor<3x4xf16>) -> tensor<2x4xf16>
// CHECK:         stablehlo.convert %[[D]] : (tensor<2x4xf16>) -> tensor<2x4xf32>
func.func @dot_general_algorithm(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]], precision = "F16_F16_F16"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// BF16_BF16_F32 computes f32 operands as they are (f32 is one of its input types), X3 in
// three operations.
// CHECK-LABEL: func.func @dot_general_algorithm_x3
// CHECK-NOT:     stablehlo.convert
// CHECK:         stablehlo.dot_general %{{.*}}, %{{.*}}, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT], algorithm = <lhs_precision_type = bf16, rhs_precision_type = bf16, accumulation_type = f32, lhs_component_count = 1, rhs_component_count = 1, num_primitive_operations = 3, allow_imprecise_accumulation = false> : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
func.func @dot_general_algorithm_x3(%x: tensor<2x3xf32>, %y: tensor<3x4xf32>) -> tensor<2x4xf32> {
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]], precision = "BF16_BF16_F32_X3"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}

// -----

// CHECK-LABEL: func.func @dot_general_batch
// CHECK-SAME:    (%[[X:.*]]: tensor<5x2x3xf32>, %[[Y:.*]]: tensor<5x3x4xf32>)
// CHECK:         %[[R:.*]] = stablehlo.dot_general %[[X]], %[[Y]], batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, DEFAULT] : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @dot_general_batch(%x: tensor<5x2x3xf32>, %y: tensor<5x3x4xf32>) -> tensor<5x2x4xf32> {
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 2>, array<i64: 1>], [array<i64: 0>, array<i64: 0>]]} : (tensor<5x2x3xf32>, tensor<5x3x4xf32>) -> tensor<5x2x4xf32>
  return %0 : tensor<5x2x4xf32>
}

// -----

// Operands of one dtype go to the dot as they are, the preferred type being the result's
// (as JAX's lowering); operands of two dtypes are both converted to the result's first.
// CHECK-LABEL: func.func @dot_general_preferred_element_type
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xi8>, %[[Y:.*]]: tensor<3xi8>)
// CHECK-NOT:     stablehlo.convert
// CHECK:         %[[R:.*]] = stablehlo.dot_general %[[X]], %[[Y]], contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xi8>, tensor<3xi8>) -> tensor<2xi32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @dot_general_preferred_element_type(%x: tensor<2x3xi8>, %y: tensor<3xi8>) -> tensor<2xi32> {
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]], preferred_element_type = i32} : (tensor<2x3xi8>, tensor<3xi8>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}

// -----

// CHECK-LABEL: func.func @dot_general_mixed_operand_dtypes
// CHECK-SAME:    (%[[X:.*]]: tensor<2x3xi8>, %[[Y:.*]]: tensor<3xi16>)
// CHECK:         %[[XC:.*]] = stablehlo.convert %[[X]] : (tensor<2x3xi8>) -> tensor<2x3xi32>
// CHECK:         %[[YC:.*]] = stablehlo.convert %[[Y]] : (tensor<3xi16>) -> tensor<3xi32>
// CHECK:         %[[R:.*]] = stablehlo.dot_general %[[XC]], %[[YC]], contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2xi32>
// CHECK:         return %[[R]]
func.func @dot_general_mixed_operand_dtypes(%x: tensor<2x3xi8>, %y: tensor<3xi16>) -> tensor<2xi32> {
  %0 = "jaxpr.dot_general"(%x, %y) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]], preferred_element_type = i32} : (tensor<2x3xi8>, tensor<3xi16>) -> tensor<2xi32>
  return %0 : tensor<2xi32>
}
