// RUN: mjax-opt %s --jaxpr-verify --split-input-file | filecheck %s

// A hand-written Mosaic kernel (mjax.experimental.mosaic.as_tpu_kernel): the module's
// text and the declared results; every parameter left at its default is absent.
// CHECK-LABEL: func.func @tpu_custom_call_defaults
// CHECK:         "jaxpr.tpu_custom_call"(%{{.*}}) {module = "module {{.*}}", result_dtypes = [f32], result_shapes = [array<i64: 8, 128>]} : (tensor<8x128xf32>) -> tensor<8x128xf32>
func.func @tpu_custom_call_defaults(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %0 = "jaxpr.tpu_custom_call"(%x) {module = "module { func.func @main(%x: memref<8x128xf32, #tpu.memory_space<vmem>>, %o: memref<8x128xf32, #tpu.memory_space<vmem>>) { return } }", result_shapes = [array<i64: 8, 128>], result_dtypes = [f32]} : (tensor<8x128xf32>) -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// Every parameter, two results.
// CHECK-LABEL: func.func @tpu_custom_call_parameters
// CHECK:         "jaxpr.tpu_custom_call"(%{{.*}}, %{{.*}}) {allow_input_fusion = [true, false], collective_id = 3 : i64, cost_estimate = {bytes_accessed = 8192 : i64, flops = 1024 : i64, transcendentals = 0 : i64}, disable_bounds_checks = true, disable_semaphore_checks = true, flags = {{\[\["xla_a", true\], \["xla_b", 3\], \["xla_c", 5.000000e-01\]\]}}, has_side_effects = "dataflow_side_effecting", input_memory_spaces = ["vmem", ""], input_output_aliases = array<i64: 1, 0>, internal_scratch_in_bytes = 4096 : i64, ir_version = 11 : i64, kernel_metadata = "{\0A\22a\22:\22b\22\0A}", kernel_name = "two", module = "module {}", needs_hlo_passes = true, needs_layout_passes = true, output_memory_spaces = ["hbm", ""], result_dtypes = [f32, i32], result_shapes = [array<i64: 8, 128>, array<i64: 4>], serialization_format = 1 : i64, shape_invariant_numerics = true, vmem_limit_bytes = 1048576 : i64}
// CHECK-SAME:    : (tensor<4xi32>, tensor<8x128xf32>) -> (tensor<8x128xf32>, tensor<4xi32>)
func.func @tpu_custom_call_parameters(%i: tensor<4xi32>, %x: tensor<8x128xf32>) -> (tensor<8x128xf32>, tensor<4xi32>) {
  %0:2 = "jaxpr.tpu_custom_call"(%i, %x) {module = "module {}", result_shapes = [array<i64: 8, 128>, array<i64: 4>], result_dtypes = [f32, i32], kernel_name = "two", cost_estimate = {flops = 1024, transcendentals = 0, bytes_accessed = 8192}, vmem_limit_bytes = 1048576, flags = [["xla_a", true], ["xla_b", 3], ["xla_c", 0.5]], allow_input_fusion = [true, false], input_output_aliases = array<i64: 1, 0>, internal_scratch_in_bytes = 4096, collective_id = 3, has_side_effects = "dataflow_side_effecting", serialization_format = 1, output_memory_spaces = ["hbm", ""], input_memory_spaces = ["vmem", ""], disable_bounds_checks = true, disable_semaphore_checks = true, shape_invariant_numerics = true, needs_layout_passes = true, needs_hlo_passes = true, kernel_metadata = "{\0A\22a\22:\22b\22\0A}", ir_version = 11} : (tensor<4xi32>, tensor<8x128xf32>) -> (tensor<8x128xf32>, tensor<4xi32>)
  return %0#0, %0#1 : tensor<8x128xf32>, tensor<4xi32>
}
