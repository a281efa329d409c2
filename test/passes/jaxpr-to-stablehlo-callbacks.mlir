// RUN: mjax-opt %s --jaxpr-to-stablehlo --split-input-file | filecheck %s

// A pure callback: a host callback custom call without side effects; `index` is the
// callback id until compilation renumbers it. It runs once, on device 0, when XLA
// partitions the program (JAX's MAXIMAL sharding).
// CHECK-LABEL: func.func @callback_pure
// CHECK-SAME:    (%[[X:.*]]: tensor<3xf32>)
// CHECK:         %[[Y:.*]] = stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[X]])
// CHECK-SAME:      api_version = 4 : i32
// CHECK-SAME:      backend_config = {index = 7 : ui64}
// CHECK-NOT:       has_side_effect
// CHECK-SAME:      mhlo.sharding = "{maximal device=0}"
// CHECK-SAME:      (tensor<3xf32>) -> tensor<3xf32>
// CHECK:         return %[[Y]]
// CHECK-NOT:     jaxpr.
func.func @callback_pure(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.callback"(%x) {callback_id = 7 : i64, effect = "pure", result_shapes = [array<i64: 3>], result_dtypes = [f32]} : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}

// -----

// Effectful callbacks have side effects; a debug callback has no results.
// CHECK-LABEL: func.func @callback_unordered
// CHECK:         stablehlo.custom_call @xla_ffi_python_cpu_callback(%{{.*}}) {{{.*}}backend_config = {index = 1 : ui64}, has_side_effect = true{{.*}}} : (tensor<2xi32>) -> ()
// CHECK:         stablehlo.custom_call @xla_ffi_python_cpu_callback() {{{.*}}backend_config = {index = 2 : ui64}, has_side_effect = true{{.*}}} : () -> tensor<f32>
// CHECK-NOT:     stablehlo.create_token
// CHECK-NOT:     jaxpr.
func.func @callback_unordered(%x: tensor<2xi32>) -> tensor<f32> {
  "jaxpr.callback"(%x) {callback_id = 1 : i64, effect = "debug"} : (tensor<2xi32>) -> ()
  %0 = "jaxpr.callback"() {callback_id = 2 : i64, effect = "unordered", result_shapes = [array<i64>], result_dtypes = [f32]} : () -> tensor<f32>
  return %0 : tensor<f32>
}

// -----

// Ordered callbacks of a block form one token chain in program order.
// CHECK-LABEL: func.func @callback_ordered_chain
// CHECK-SAME:    (%[[X:.*]]: tensor<f32>)
// CHECK:         %[[T0:.*]] = stablehlo.create_token
// CHECK:         %[[T1:.*]] = stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[T0]], %[[X]]) {{{.*}}index = 1 : ui64{{.*}}} : (!stablehlo.token, tensor<f32>) -> !stablehlo.token
// CHECK:         %[[T2:.*]]:2 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[T1]], %[[X]]) {{{.*}}index = 2 : ui64{{.*}}} : (!stablehlo.token, tensor<f32>) -> (!stablehlo.token, tensor<f32>)
// CHECK:         stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[T2]]#0, %[[T2]]#1) {{{.*}}index = 3 : ui64
// CHECK:         return %[[T2]]#1
// CHECK-NOT:     jaxpr.
func.func @callback_ordered_chain(%x: tensor<f32>) -> tensor<f32> {
  "jaxpr.callback"(%x) {callback_id = 1 : i64, effect = "debug_ordered"} : (tensor<f32>) -> ()
  %0 = "jaxpr.callback"(%x) {callback_id = 2 : i64, effect = "ordered", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
  "jaxpr.callback"(%0) {callback_id = 3 : i64, effect = "debug_ordered"} : (tensor<f32>) -> ()
  return %0 : tensor<f32>
}

// -----

// One chain per function, through control flow: a loop carries the token, a branch
// takes it and gives it back, so callbacks before, inside and after run in that order.
// CHECK-LABEL: func.func @callback_ordered_through_regions
// CHECK:         %[[T0:.*]] = stablehlo.create_token
// CHECK:         %[[T1:.*]] = stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[T0]]) {{{.*}}index = 4 : ui64
// CHECK:         %[[W:.*]]:3 = stablehlo.while({{.*}}, %[[IT:.*]] = %[[T1]]) : tensor<i32>, tensor<3xf32>, !stablehlo.token
// CHECK:         } do {
// CHECK-NOT:       stablehlo.create_token
// CHECK:           %[[T2:.*]] = stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[IT]], %{{.*}}) {{{.*}}index = 5 : ui64
// CHECK:           stablehlo.return %{{.*}}, %{{.*}}, %[[T2]] : tensor<i32>, tensor<3xf32>, !stablehlo.token
// CHECK:         %[[C:.*]]:2 = "stablehlo.case"
// CHECK:           %[[T3:.*]] = stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[W]]#2) {{{.*}}index = 8 : ui64
// CHECK:           stablehlo.return %{{.*}}, %[[T3]]
// CHECK:           stablehlo.return %{{.*}}, %[[W]]#2
// CHECK:         stablehlo.custom_call @xla_ffi_python_cpu_callback(%[[C]]#1, %{{.*}}) {{{.*}}index = 7 : ui64
// CHECK-NOT:     jaxpr.
func.func @callback_ordered_through_regions(%xs: tensor<3xf32>, %i: tensor<i32>) -> tensor<3xf32> {
  "jaxpr.callback"() {callback_id = 4 : i64, effect = "ordered"} : () -> ()
  %0 = "jaxpr.scan"(%xs) ({
  ^bb0(%x: tensor<f32>):
    "jaxpr.callback"(%x) {callback_id = 5 : i64, effect = "debug_ordered"} : (tensor<f32>) -> ()
    %y = "jaxpr.callback"(%x) {callback_id = 6 : i64, effect = "pure", result_shapes = [array<i64>], result_dtypes = [f32]} : (tensor<f32>) -> tensor<f32>
    "jaxpr.yield"(%y) : (tensor<f32>) -> ()
  }) {length = 3 : i64, num_carry = 0 : i64, num_consts = 0 : i64} : (tensor<3xf32>) -> tensor<3xf32>
  %1 = "jaxpr.cond"(%i, %0) ({
  ^bb0(%a: tensor<3xf32>):
    "jaxpr.callback"() {callback_id = 8 : i64, effect = "ordered"} : () -> ()
    "jaxpr.yield"(%a) : (tensor<3xf32>) -> ()
  }, {
  ^bb0(%a: tensor<3xf32>):
    "jaxpr.yield"(%a) : (tensor<3xf32>) -> ()
  }) : (tensor<i32>, tensor<3xf32>) -> tensor<3xf32>
  "jaxpr.callback"(%1) {callback_id = 7 : i64, effect = "debug_ordered"} : (tensor<3xf32>) -> ()
  return %1 : tensor<3xf32>
}
