// RUN: mjax-opt %s --stablehlo-memory-kinds="arg-kinds=pinned_host keep-puts=true" | filecheck %s

// With keep-puts (JAX's TPU and GPU lowering of device_put, where a memory is a host
// one) a marked device_put stays XLA's placement call, unmarked and with a side effect;
// the kinds of @main's arguments and results are written as without it.
// CHECK-LABEL: func.func @main
// CHECK-SAME:    {mhlo.memory_kind = "pinned_host"}
// CHECK-SAME:    -> (tensor<4xf32> {mhlo.memory_kind = "device"})
// CHECK:         %[[D:.*]] = stablehlo.custom_call @annotate_device_placement(%arg0) {has_side_effect = true, mhlo.frontend_attributes = {_xla_buffer_placement = "device"}}
// CHECK:         %[[S:.*]] = stablehlo.multiply %[[D]], %[[D]]
// CHECK:         return %[[S]]
func.func @main(%h: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @annotate_device_placement(%h) {has_side_effect = false, mjax.device_put, mhlo.frontend_attributes = {_xla_buffer_placement = "device"}} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = stablehlo.multiply %0, %0 : tensor<4xf32>
  return %1 : tensor<4xf32>
}
