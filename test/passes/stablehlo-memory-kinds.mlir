// RUN: not mjax-opt %s --stablehlo-memory-kinds="arg-kinds=pinned_host,device" --split-input-file 2>/dev/null | filecheck %s
// RUN: not mjax-opt %s --stablehlo-memory-kinds="arg-kinds=pinned_host,device" --split-input-file 2>&1 >/dev/null | filecheck %s --check-prefix=ERR

// Kinds follow @main's values from its arguments; a marked device_put is removed and
// moves its value (JAX's CPU lowering of device_put is the identity).
// CHECK-LABEL: func.func @main
// CHECK-SAME:    {mhlo.memory_kind = "pinned_host"}
// CHECK-SAME:    {mhlo.memory_kind = "device"}
// CHECK-SAME:    -> (tensor<4xf32> {mhlo.memory_kind = "pinned_host"}, tensor<4xf32> {mhlo.memory_kind = "device"})
// CHECK-NOT:     mjax.device_put
// CHECK:         return
func.func @main(%h: tensor<4xf32>, %d: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = stablehlo.multiply %h, %h : tensor<4xf32>
  %1 = stablehlo.custom_call @annotate_device_placement(%0) {has_side_effect = true, mjax.device_put, mhlo.frontend_attributes = {_xla_buffer_placement = "device"}} : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %1 : tensor<4xf32>, tensor<4xf32>
}

// -----

// An elementwise op over host and device values is JAX's ValueError.
// ERR: error: memory_space of all inputs passed to `add` must be the same. Got one operand with type: float32<host>[4] and another operand with type: float32[4]
func.func @main(%h: tensor<4xf32>, %d: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %h, %d : tensor<4xf32>
  return %0 : tensor<4xf32>
}
