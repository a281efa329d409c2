// --jaxpr-pallas-to-mosaic on hand-written Mosaic kernels (jaxpr.tpu_custom_call, from
// mjax.experimental.mosaic.as_tpu_kernel): the module through mosaic-serde into the
// backend_config, with the op's parameters as JAX's tpu_custom_call lowering writes them.
// RUN: mjax-opt %s --split-input-file --jaxpr-pallas-to-mosaic | filecheck %s

// CHECK-LABEL: func.func @double
// CHECK:         %[[R:.*]] = stablehlo.custom_call @tpu_custom_call(%arg0) {backend_config = "{\22custom_call_config\22: {\22body\22: \22{{[A-Za-z0-9+/=]+}}\22, \22serialization_format\22: 1, \22needs_layout_passes\22: true, \22shape_invariant_numerics\22: false}}", operand_layouts = [dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]} : (tensor<8x128xf32>) -> tensor<8x128xf32>
// CHECK:         return %[[R]]
// CHECK-NOT:     jaxpr.
func.func @double(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %0 = "jaxpr.tpu_custom_call"(%x) {module = "module { func.func @main(%x: memref<8x128xf32, #tpu.memory_space<vmem>>, %o: memref<8x128xf32, #tpu.memory_space<vmem>>) { %c0 = arith.constant 0 : index \0A %v = vector.load %x[%c0, %c0] : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32> \0A %w = arith.addf %v, %v : vector<8x128xf32> \0A vector.store %w, %o[%c0, %c0] : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32> \0A return } }", result_shapes = [array<i64: 8, 128>], result_dtypes = [f32], serialization_format = 1} : (tensor<8x128xf32>) -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// CHECK-LABEL: func.func @parameters
// CHECK:         stablehlo.custom_call @tpu_custom_call(%arg0) {backend_config = "{\22custom_call_config\22: {\22body\22: \22{{[A-Za-z0-9+/=]+}}\22, \22cost_estimate\22: {\0A\22bytes_accessed\22:8192,\0A\22flops\22:1024,\0A\22transcendentals\22:0\0A}, \22serialization_format\22: 1, \22needs_layout_passes\22: true, \22allow_input_fusion\22: [true], \22disable_bounds_checks\22: true}, \22scoped_memory_configs\22: [{\22memory_space\22:1, \22offset\22: 0, \22size\22: 1048576}], \22flag_configs\22: [{\22flag_type\22: \22xla_b\22, \22value\22: {\22integer_value\22: 3}},{\22flag_type\22: \22xla_a\22, \22value\22: {\22boolean_value\22: true}}]}"
// CHECK-SAME:    has_side_effect = true
// CHECK-SAME:    kernel_name = "dbl"
// CHECK-SAME:    mhlo.frontend_attributes = {kernel_metadata = "{\0A\22a\22:\22b\22\0A}", xla_allow_dce_side_effecting_op = "true"}
// CHECK-SAME:    output_operand_aliases = [#stablehlo.output_operand_alias<output_tuple_indices = [], operand_index = 0, operand_tuple_indices = []>]
func.func @parameters(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %0 = "jaxpr.tpu_custom_call"(%x) {module = "module { func.func @main(%x: memref<8x128xf32, #tpu.memory_space<vmem>>, %o: memref<8x128xf32, #tpu.memory_space<vmem>>) { return } }", result_shapes = [array<i64: 8, 128>], result_dtypes = [f32], serialization_format = 1, kernel_name = "dbl", cost_estimate = {flops = 1024, transcendentals = 0, bytes_accessed = 8192}, vmem_limit_bytes = 1048576, flags = [["xla_b", 3], ["xla_a", true]], allow_input_fusion = [true], input_output_aliases = array<i64: 0, 0>, has_side_effects = "dataflow_side_effecting", shape_invariant_numerics = true, disable_bounds_checks = true, kernel_metadata = "{\0A\22a\22:\22b\22\0A}"} : (tensor<8x128xf32>) -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}
