// RUN: mjax-opt %s --stablehlo-host-callbacks="target=xla_ffi_python_gpu_callback" | filecheck %s
// RUN: mjax-opt %s --stablehlo-host-callbacks="target=send-recv" | filecheck %s --check-prefix=TPU

// Calls are numbered 0..k-1 in order, for the platform's call target.
// CHECK-LABEL: func.func @main
// CHECK:         stablehlo.custom_call @xla_ffi_python_gpu_callback(%{{.*}}) {{.*}}backend_config = {index = 0 : ui64}
// CHECK:         stablehlo.custom_call @xla_ffi_python_gpu_callback(%{{.*}}) {{.*}}backend_config = {index = 1 : ui64}

// On a TPU each call is a send per operand and a recv per result, each on its channel.
// TPU-LABEL: func.func @main
// TPU-NOT:     custom_call
// TPU:         "stablehlo.send"{{.*}}handle = 1, type = 2
// TPU:         "stablehlo.recv"{{.*}}handle = 2, type = 3
// TPU:         "stablehlo.send"{{.*}}handle = 3, type = 2
// TPU:         "stablehlo.recv"{{.*}}handle = 4, type = 3
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%x) {api_version = 4 : i32, backend_config = {index = 7 : ui64}, has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  %1 = stablehlo.custom_call @xla_ffi_python_cpu_callback(%0) {api_version = 4 : i32, backend_config = {index = 3 : ui64}, has_side_effect = true} : (tensor<4xf32>) -> tensor<4xf32>
  return %1 : tensor<4xf32>
}
