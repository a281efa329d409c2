// --jaxpr-pallas-to-mosaic: the Mosaic module of Pallas TPU kernels (dumped with
// dump-mosaic=1) and the tpu_custom_call libtpu compiles it from.
// RUN: mjax-opt %s --split-input-file --jaxpr-pallas-to-mosaic=dump-mosaic=1 -o %t 2>&1 | filecheck %s --check-prefix=MOSAIC
// RUN: filecheck %s --check-prefix=CALL --input-file %t

// Elementwise add over a grid of 2 row blocks: the kernel takes the grid index and one
// VMEM memref per block; each BlockSpec's index map is a transform function; a swap
// loads the old value and stores with tpu.vector_store.
// MOSAIC-LABEL: Mosaic module for @add_kernel
// MOSAIC:       func.func @add_kernel(%[[I:.*]]: i32, %[[X:.*]]: memref<8x128xf32, #tpu.memory_space<vmem>>, %[[Y:.*]]: memref<8x128xf32, #tpu.memory_space<vmem>>, %[[O:.*]]: memref<8x128xf32, #tpu.memory_space<vmem>>)
// MOSAIC-SAME:    dimension_semantics = [#tpu.dimension_semantics<parallel>]
// MOSAIC-SAME:    iteration_bounds = array<i64: 2>
// MOSAIC-SAME:    scalar_prefetch = 0 : i64, scratch_operands = 0 : i64, tpu.core_type = #tpu.core_type<tc>
// MOSAIC-SAME:    window_params = [{transform_indices = @transform_0, window_bounds = array<i64: 8, 128>}, {transform_indices = @transform_1, window_bounds = array<i64: 8, 128>}, {transform_indices = @transform_2, window_bounds = array<i64: 8, 128>}]
// MOSAIC:         %[[A:.*]] = vector.load %[[X]][%{{.*}}, %{{.*}}] : memref<8x128xf32, #tpu.memory_space<vmem>>, vector<8x128xf32>
// MOSAIC:         %[[B:.*]] = vector.load %[[Y]]
// MOSAIC:         %[[S:.*]] = arith.addf %[[A]], %[[B]] : vector<8x128xf32>
// MOSAIC:         vector.load %[[O]]
// MOSAIC:         tpu.vector_store %[[O]][%{{.*}}, %{{.*}}], %[[S]] {strides = array<i32>}
// MOSAIC:       func.func @transform_0(%[[G:.*]]: i32) -> (i32, i32)
// MOSAIC:         %[[Z:.*]] = arith.constant 0 : i32
// MOSAIC:         return %[[G]], %[[Z]] : i32, i32
// CALL-LABEL: func.func @add
// CALL-SAME:    (%[[X:.*]]: tensor<16x128xf32>, %[[Y:.*]]: tensor<16x128xf32>)
// CALL:         %[[R:.*]] = stablehlo.custom_call @tpu_custom_call(%[[X]], %[[Y]]) {backend_config = "{\22custom_call_config\22: {\22body\22: \22{{[A-Za-z0-9+/=]+}}\22, \22serialization_format\22: 1, \22needs_layout_passes\22: true}}", kernel_name = "add_kernel", mhlo.frontend_attributes = {kernel_metadata = "{}"}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]}
// CALL:         return %[[R]]
// CALL-NOT:     jaxpr.
// CALL-NOT:     @add_kernel
// CALL-NOT:     @row_map
func.func private @add_kernel(%x: memref<8x128xf32>, %y: memref<8x128xf32>, %o: memref<8x128xf32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %a = "jaxpr.ref_get"(%x, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  %b = "jaxpr.ref_get"(%y, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  %s = "jaxpr.add"(%a, %b) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
  %old = "jaxpr.ref_swap"(%o, %s, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  return
}
func.func private @row_map(%i: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %i, %c0 : tensor<i32>, tensor<i32>
}
func.func @add(%x: tensor<16x128xf32>, %y: tensor<16x128xf32>) -> tensor<16x128xf32> {
  %0 = "jaxpr.pallas_call"(%x, %y) {callee = @add_kernel, name = "add_kernel", grid = array<i64: 2>,
      in_specs = [{block_shape = array<i64: 8, 128>, index_map = @row_map},
                  {block_shape = array<i64: 8, 128>, index_map = @row_map}],
      out_specs = [{block_shape = array<i64: 8, 128>, index_map = @row_map}],
      interpret = false, compiler_params = {dimension_semantics = ["parallel"]}} : (tensor<16x128xf32>, tensor<16x128xf32>) -> tensor<16x128xf32>
  return %0 : tensor<16x128xf32>
}

// -----

// The Pallas guide's matmul: a VMEM f32 accumulator (scratch) over the "arbitrary" K axis
// of a (2, 2, 4) grid; pl.when is scf.if on the grid index; the bf16 dot is tpu.matmul
// into a zero tile; the cast back is arith.truncf.
// MOSAIC-LABEL: Mosaic module for @acc_kernel
// MOSAIC:       func.func @acc_kernel(%[[I:.*]]: i32, %[[J:.*]]: i32, %[[K:.*]]: i32, %[[X:.*]]: memref<256x128xbf16, {{.*}}>, %[[Y:.*]]: memref<128x256xbf16, {{.*}}>, %[[O:.*]]: memref<256x256xbf16, {{.*}}>, %[[ACC:.*]]: memref<256x256xf32, #tpu.memory_space<vmem>>)
// MOSAIC-SAME:    dimension_semantics = [#tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<parallel>, #tpu.dimension_semantics<arbitrary>]
// MOSAIC-SAME:    iteration_bounds = array<i64: 2, 2, 4>
// MOSAIC-SAME:    scratch_operands = 1 : i64
// MOSAIC:         %[[FIRST:.*]] = arith.cmpi eq, %[[K]], %{{.*}} : i32
// MOSAIC:         %[[IDX:.*]] = arith.extui %[[FIRST]] : i1 to i32
// MOSAIC:         %[[P:.*]] = arith.cmpi ne, %[[IDX]], %{{.*}} : i32
// MOSAIC:         scf.if %[[P]] {
// MOSAIC:           %[[ZERO:.*]] = vector.broadcast %{{.*}} : f32 to vector<256x256xf32>
// MOSAIC:           tpu.vector_store %[[ACC]][{{.*}}], %[[ZERO]]
// MOSAIC:         } else {
// MOSAIC:         }
// MOSAIC:         %[[A:.*]] = vector.load %[[X]]
// MOSAIC:         %[[B:.*]] = vector.load %[[Y]]
// MOSAIC:         %[[Z:.*]] = arith.constant dense<0.000000e+00> : vector<256x256xf32>
// MOSAIC:         %[[D:.*]] = tpu.matmul %[[A]], %[[B]], %[[Z]] {dimension_numbers = #tpu.dot_dimension_numbers<[1], [0], [0], [1], [0, 0, 1, 1], [], []>, transpose_lhs_hint = false} : vector<256x128xbf16>, vector<128x256xbf16>, vector<256x256xf32> -> vector<256x256xf32>
// MOSAIC:         scf.if
// MOSAIC:           arith.truncf %{{.*}} : vector<256x256xf32> to vector<256x256xbf16>
// MOSAIC:       func.func @transform_0(%[[TI:.*]]: i32, %[[TJ:.*]]: i32, %[[TK:.*]]: i32) -> (i32, i32)
// MOSAIC:         return %[[TI]], %[[TK]] : i32, i32
// CALL-LABEL: func.func @guide_matmul
// CALL:         stablehlo.custom_call @tpu_custom_call({{.*}}kernel_name = "acc_kernel"
func.func private @acc_kernel(%arg0: memref<256x128xbf16>, %arg1: memref<128x256xbf16>, %arg2: memref<256x256xbf16>, %arg3: memref<256x256xf32>) {
  %0 = "jaxpr.program_id"() {axis = 2 : i64} : () -> tensor<i32>
  %1 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %2 = "jaxpr.eq"(%0, %1) : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %3 = "jaxpr.convert_element_type"(%2) {new_dtype = i32} : (tensor<i1>) -> tensor<i32>
  "jaxpr.cond"(%3, %arg3) ({
  ^bb0(%arg4: memref<256x256xf32>):
    "jaxpr.yield"() : () -> ()
  }, {
  ^bb0(%arg4: memref<256x256xf32>):
    %17 = "jaxpr.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
    %18 = "jaxpr.broadcast_in_dim"(%17) {broadcast_dimensions = array<i64>, shape = array<i64: 256, 256>} : (tensor<f32>) -> tensor<256x256xf32>
    %19 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %20 = "jaxpr.ref_swap"(%arg4, %18, %19, %19) {sizes = array<i64: 256, 256>, squeezed = array<i64>} : (memref<256x256xf32>, tensor<256x256xf32>, tensor<i32>, tensor<i32>) -> tensor<256x256xf32>
    "jaxpr.yield"() : () -> ()
  }) : (tensor<i32>, memref<256x256xf32>) -> ()
  %4 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %5 = "jaxpr.ref_get"(%arg3, %4, %4) {sizes = array<i64: 256, 256>, squeezed = array<i64>} : (memref<256x256xf32>, tensor<i32>, tensor<i32>) -> tensor<256x256xf32>
  %7 = "jaxpr.ref_get"(%arg0, %4, %4) {sizes = array<i64: 256, 128>, squeezed = array<i64>} : (memref<256x128xbf16>, tensor<i32>, tensor<i32>) -> tensor<256x128xbf16>
  %9 = "jaxpr.ref_get"(%arg1, %4, %4) {sizes = array<i64: 128, 256>, squeezed = array<i64>} : (memref<128x256xbf16>, tensor<i32>, tensor<i32>) -> tensor<128x256xbf16>
  %10 = "jaxpr.dot_general"(%7, %9) {dimension_numbers = [[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]], preferred_element_type = f32} : (tensor<256x128xbf16>, tensor<128x256xbf16>) -> tensor<256x256xf32>
  %11 = "jaxpr.add"(%5, %10) : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  %13 = "jaxpr.ref_swap"(%arg3, %11, %4, %4) {sizes = array<i64: 256, 256>, squeezed = array<i64>} : (memref<256x256xf32>, tensor<256x256xf32>, tensor<i32>, tensor<i32>) -> tensor<256x256xf32>
  %14 = "jaxpr.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
  %15 = "jaxpr.eq"(%0, %14) : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %16 = "jaxpr.convert_element_type"(%15) {new_dtype = i32} : (tensor<i1>) -> tensor<i32>
  "jaxpr.cond"(%16, %arg3, %arg2) ({
  ^bb0(%arg4: memref<256x256xf32>, %arg5: memref<256x256xbf16>):
    "jaxpr.yield"() : () -> ()
  }, {
  ^bb0(%arg4: memref<256x256xf32>, %arg5: memref<256x256xbf16>):
    %17 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %18 = "jaxpr.ref_get"(%arg4, %17, %17) {sizes = array<i64: 256, 256>, squeezed = array<i64>} : (memref<256x256xf32>, tensor<i32>, tensor<i32>) -> tensor<256x256xf32>
    %19 = "jaxpr.convert_element_type"(%18) {new_dtype = bf16} : (tensor<256x256xf32>) -> tensor<256x256xbf16>
    %21 = "jaxpr.ref_swap"(%arg5, %19, %17, %17) {sizes = array<i64: 256, 256>, squeezed = array<i64>} : (memref<256x256xbf16>, tensor<256x256xbf16>, tensor<i32>, tensor<i32>) -> tensor<256x256xbf16>
    "jaxpr.yield"() : () -> ()
  }) : (tensor<i32>, memref<256x256xf32>, memref<256x256xbf16>) -> ()
  return
}
func.func private @x_map(%i: tensor<i32>, %j: tensor<i32>, %k: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  return %i, %k : tensor<i32>, tensor<i32>
}
func.func private @y_map(%i: tensor<i32>, %j: tensor<i32>, %k: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  return %k, %j : tensor<i32>, tensor<i32>
}
func.func private @o_map(%i: tensor<i32>, %j: tensor<i32>, %k: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  return %i, %j : tensor<i32>, tensor<i32>
}
func.func @guide_matmul(%x: tensor<512x512xbf16>, %y: tensor<512x512xbf16>) -> tensor<512x512xbf16> {
  %0 = "jaxpr.pallas_call"(%x, %y) {callee = @acc_kernel, name = "acc_kernel", grid = array<i64: 2, 2, 4>,
      in_specs = [{block_shape = array<i64: 256, 128>, index_map = @x_map},
                  {block_shape = array<i64: 128, 256>, index_map = @y_map}],
      out_specs = [{block_shape = array<i64: 256, 256>, index_map = @o_map}],
      scratch_shapes = [memref<256x256xf32>], interpret = false,
      compiler_params = {dimension_semantics = ["parallel", "parallel", "arbitrary"]}} : (tensor<512x512xbf16>, tensor<512x512xbf16>) -> tensor<512x512xbf16>
  return %0 : tensor<512x512xbf16>
}

// -----

// A fori_loop (a scan whose first carry counts up by one) is an scf.for over i32 whose
// induction variable is the loop index (the increment is dropped); pl.ds(k * 8, 8) is a
// dynamic start, arith.index_cast to an index; no grid: no window_params.
// MOSAIC-LABEL: Mosaic module for @fori_kernel
// MOSAIC:       func.func @fori_kernel(%[[X:.*]]: memref<32x128xf32, {{.*}}>, %[[O:.*]]: memref<8x128xf32, {{.*}}>) attributes {dimension_semantics = [], scalar_prefetch = 0 : i64, scratch_operands = 0 : i64, tpu.core_type = #tpu.core_type<tc>} {
// MOSAIC:         %[[INIT:.*]] = vector.broadcast %{{.*}} : f32 to vector<8x128xf32>
// MOSAIC:         %[[LB:.*]] = arith.constant 0 : i32
// MOSAIC:         %[[N:.*]] = arith.constant 4 : i32
// MOSAIC:         %[[UB:.*]] = arith.addi %[[LB]], %[[N]] : i32
// MOSAIC:         %[[STEP:.*]] = arith.constant 1 : i32
// MOSAIC:         %[[R:.*]] = scf.for %[[K:.*]] = %[[LB]] to %[[UB]] step %[[STEP]] iter_args(%[[ACC:.*]] = %[[INIT]]) -> (vector<8x128xf32>)  : i32 {
// MOSAIC-NOT:       arith.addi %[[K]]
// MOSAIC:           %[[ROW:.*]] = arith.muli %[[K]], %{{.*}} : i32
// MOSAIC:           %[[START:.*]] = arith.index_cast %[[ROW]] : i32 to index
// MOSAIC:           %[[V:.*]] = vector.load %[[X]][%[[START]], %{{.*}}] : memref<32x128xf32, {{.*}}>, vector<8x128xf32>
// MOSAIC:           %[[NEXT:.*]] = arith.addf %[[ACC]], %[[V]]
// MOSAIC:           scf.yield %[[NEXT]] : vector<8x128xf32>
// MOSAIC:         tpu.vector_store %[[O]][{{.*}}], %[[R]]
// MOSAIC-NOT:   func.func @transform_0
// CALL-LABEL: func.func @fori
func.func private @fori_kernel(%arg0: memref<32x128xf32>, %arg1: memref<8x128xf32>) {
  %0 = "jaxpr.constant"() {value = dense<0.000000e+00> : tensor<f32>} : () -> tensor<f32>
  %1 = "jaxpr.broadcast_in_dim"(%0) {broadcast_dimensions = array<i64>, shape = array<i64: 8, 128>} : (tensor<f32>) -> tensor<8x128xf32>
  %2 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %3:2 = "jaxpr.scan"(%arg0, %2, %1) ({
  ^bb0(%arg2: memref<32x128xf32>, %arg3: tensor<i32>, %arg4: tensor<8x128xf32>):
    %6 = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %7 = "jaxpr.add"(%arg3, %6) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %8 = "jaxpr.constant"() {value = dense<8> : tensor<i32>} : () -> tensor<i32>
    %9 = "jaxpr.mul"(%arg3, %8) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %10 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %11 = "jaxpr.ref_get"(%arg2, %9, %10) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<32x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
    %12 = "jaxpr.add"(%arg4, %11) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
    "jaxpr.yield"(%7, %12) : (tensor<i32>, tensor<8x128xf32>) -> ()
  }) {length = 4 : i64, num_carry = 2 : i64, num_consts = 1 : i64, reverse = false, unroll = 1 : i64} : (memref<32x128xf32>, tensor<i32>, tensor<8x128xf32>) -> (tensor<i32>, tensor<8x128xf32>)
  %4 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %5 = "jaxpr.ref_swap"(%arg1, %3#1, %4, %4) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  return
}
func.func private @zero_map() -> (tensor<i32>, tensor<i32>) {
  %0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %0, %0 : tensor<i32>, tensor<i32>
}
func.func @fori(%x: tensor<32x128xf32>) -> tensor<8x128xf32> {
  %0 = "jaxpr.pallas_call"(%x) {callee = @fori_kernel, name = "fori_kernel", grid = array<i64>,
      in_specs = [{block_shape = array<i64: 32, 128>, index_map = @zero_map}],
      out_specs = [{block_shape = array<i64: 8, 128>, index_map = @zero_map}],
      interpret = false} : (tensor<32x128xf32>) -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// Softmax over rows: reductions are vector.multi_reduction from the kind's identity
// (-inf for max); keepdims is a vector.shape_cast, the implicit broadcast (marked by the
// frontend) a vector.broadcast alone; x @ y.T contracts dim 1 of both operands.
// MOSAIC-LABEL: Mosaic module for @softmax_kernel
// MOSAIC:         %[[V:.*]] = vector.load
// MOSAIC:         %[[NEG_INF:.*]] = arith.constant dense<0xFF800000> : vector<8xf32>
// MOSAIC:         %[[M:.*]] = vector.multi_reduction <maximumf>, %[[V]], %[[NEG_INF]] [1] : vector<8x128xf32> to vector<8xf32>
// MOSAIC:         %[[MK:.*]] = vector.shape_cast %[[M]] : vector<8xf32> to vector<8x1xf32>
// MOSAIC:         %[[MB:.*]] = vector.broadcast %[[MK]] : vector<8x1xf32> to vector<8x128xf32>
// MOSAIC:         %[[E:.*]] = math.exp
// MOSAIC:         vector.multi_reduction <add>, %[[E]], %{{.*}} [1]
// MOSAIC:         arith.divf
// MOSAIC:         tpu.matmul %{{.*}}, %{{.*}}, %{{.*}} {dimension_numbers = #tpu.dot_dimension_numbers<[1], [1], [0], [0], [0, 0, 1, 0], [], []>, transpose_lhs_hint = false}
func.func private @softmax_kernel(%arg0: memref<8x128xf32>, %arg1: memref<8x8xf32>) {
  %0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %1 = "jaxpr.ref_get"(%arg0, %0, %0) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  %2 = "jaxpr.reduce_max"(%1) {axes = array<i64: 1>} : (tensor<8x128xf32>) -> tensor<8xf32>
  %3 = "jaxpr.expand_dims"(%2) {dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<8x1xf32>
  %4 = "jaxpr.broadcast_in_dim"(%3) {broadcast_dimensions = array<i64: 0, 1>, mjax.implicit_broadcast, shape = array<i64: 8, 128>} : (tensor<8x1xf32>) -> tensor<8x128xf32>
  %5 = "jaxpr.sub"(%1, %4) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
  %6 = "jaxpr.exp"(%5) : (tensor<8x128xf32>) -> tensor<8x128xf32>
  %7 = "jaxpr.reduce_sum"(%6) {axes = array<i64: 1>} : (tensor<8x128xf32>) -> tensor<8xf32>
  %8 = "jaxpr.expand_dims"(%7) {dimensions = array<i64: 1>} : (tensor<8xf32>) -> tensor<8x1xf32>
  %9 = "jaxpr.broadcast_in_dim"(%8) {broadcast_dimensions = array<i64: 0, 1>, shape = array<i64: 8, 128>} : (tensor<8x1xf32>) -> tensor<8x128xf32>
  %10 = "jaxpr.div"(%6, %9) : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x128xf32>
  %11 = "jaxpr.dot_general"(%10, %10) {dimension_numbers = [[array<i64: 1>, array<i64: 1>], [array<i64>, array<i64>]], preferred_element_type = f32} : (tensor<8x128xf32>, tensor<8x128xf32>) -> tensor<8x8xf32>
  %12 = "jaxpr.ref_swap"(%arg1, %11, %0, %0) {sizes = array<i64: 8, 8>, squeezed = array<i64>} : (memref<8x8xf32>, tensor<8x8xf32>, tensor<i32>, tensor<i32>) -> tensor<8x8xf32>
  return
}
func.func private @row_map(%i: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %i, %c0 : tensor<i32>, tensor<i32>
}
func.func @softmax(%x: tensor<32x128xf32>) -> tensor<32x8xf32> {
  %0 = "jaxpr.pallas_call"(%x) {callee = @softmax_kernel, name = "softmax_kernel", grid = array<i64: 4>,
      in_specs = [{block_shape = array<i64: 8, 128>, index_map = @row_map}],
      out_specs = [{block_shape = array<i64: 8, 8>, index_map = @row_map}],
      interpret = false} : (tensor<32x128xf32>) -> tensor<32x8xf32>
  return %0 : tensor<32x8xf32>
}

// -----

// interpret = true calls are left for --jaxpr-pallas-interpret.
// CALL-LABEL: func.func @interpreted
// CALL:         "jaxpr.pallas_call"
// CALL-SAME:    interpret = true
func.func private @copy_kernel(%x: memref<8x128xf32>, %o: memref<8x128xf32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %a = "jaxpr.ref_get"(%x, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  %old = "jaxpr.ref_swap"(%o, %a, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  return
}
func.func private @map() -> (tensor<i32>, tensor<i32>) {
  %0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %0, %0 : tensor<i32>, tensor<i32>
}
func.func @interpreted(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %0 = "jaxpr.pallas_call"(%x) {callee = @copy_kernel, name = "copy_kernel", grid = array<i64>,
      in_specs = [{block_shape = array<i64: 8, 128>, index_map = @map}],
      out_specs = [{block_shape = array<i64: 8, 128>, index_map = @map}],
      interpret = true} : (tensor<8x128xf32>) -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// A DMA through chained views (x.at[h].at[p] into buf.at[1]) slices once per window, as
// JAX does; a wait that names the copy's source passes it to tpu.wait_dma2.
// MOSAIC-LABEL: Mosaic module for @paged_kernel
// MOSAIC:       func.func @paged_kernel(%[[H:.*]]: i32, %[[X:.*]]: memref<2x4x8x128xf32, #tpu.memory_space<any>>, %[[O:.*]]: memref<8x128xf32, #tpu.memory_space<vmem>>, %[[BUF:.*]]: memref<2x8x128xf32, #tpu.memory_space<vmem>>, %[[SEMS:.*]]: memref<2x!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
// MOSAIC:         %[[SEM:.*]] = tpu.memref_squeeze %{{.*}} -> memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>
// MOSAIC:         %[[D:.*]] = tpu.memref_slice %[[BUF]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<2x8x128xf32, #tpu.memory_space<vmem>> -> memref<1x8x128xf32, #tpu.memory_space<vmem>>
// MOSAIC:         %[[DV:.*]] = tpu.memref_squeeze %[[D]] : {{.*}} -> memref<8x128xf32, #tpu.memory_space<vmem>>
// MOSAIC:         %[[S1:.*]] = tpu.memref_slice %[[X]][%[[H]], %{{.*}}, %{{.*}}, %{{.*}}] : memref<2x4x8x128xf32, #tpu.memory_space<any>> -> memref<1x4x8x128xf32, #tpu.memory_space<any>>
// MOSAIC:         %[[P:.*]] = tpu.memref_squeeze %[[S1]] : {{.*}} -> memref<4x8x128xf32, #tpu.memory_space<any>>
// MOSAIC:         %[[S2:.*]] = tpu.memref_slice %[[P]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<4x8x128xf32, #tpu.memory_space<any>> -> memref<1x8x128xf32, #tpu.memory_space<any>>
// MOSAIC:         %[[SV:.*]] = tpu.memref_squeeze %[[S2]] : {{.*}} -> memref<8x128xf32, #tpu.memory_space<any>>
// MOSAIC:         tpu.enqueue_dma source(%[[SV]] : {{.*}}) target(%[[DV]] : {{.*}}) target_semaphore(%[[SEM]] : {{.*}})
// MOSAIC:         %[[WS1:.*]] = tpu.memref_slice %[[X]][%[[H]],
// MOSAIC:         %[[WP:.*]] = tpu.memref_squeeze %[[WS1]]
// MOSAIC:         %[[WS2:.*]] = tpu.memref_slice %[[WP]]
// MOSAIC:         %[[WSV:.*]] = tpu.memref_squeeze %[[WS2]]
// MOSAIC:         tpu.wait_dma2 semaphore(%{{.*}} : {{.*}}) src(%[[WSV]] : memref<8x128xf32, #tpu.memory_space<any>>) dst(%{{.*}} : memref<8x128xf32, #tpu.memory_space<vmem>>)
// CALL-LABEL: func.func @paged
// CALL:         stablehlo.custom_call @tpu_custom_call({{.*}}kernel_name = "paged_kernel"
func.func private @paged_kernel(%x: memref<2x4x8x128xf32>, %o: memref<8x128xf32>, %buf: memref<2x8x128xf32>, %sems: memref<2xi32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %one = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %h = "jaxpr.program_id"() {axis = 0} : () -> tensor<i32>
  %p = "jaxpr.add"(%h, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  "jaxpr.dma_start"(%x, %buf, %sems, %h, %z, %z, %z, %p, %z, %z, %one, %z, %z, %one) {src_levels = array<i64: 4, 3>, src_sizes = array<i64: 1, 4, 8, 128, 1, 8, 128>, src_squeezed = array<i64: 0, 4>, dst_sizes = array<i64: 1, 8, 128>, dst_squeezed = array<i64: 0>} : (memref<2x4x8x128xf32>, memref<2x8x128xf32>, memref<2xi32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  "jaxpr.dma_wait"(%sems, %buf, %x, %one, %one, %z, %z, %h, %z, %z, %z, %p, %z, %z) {sizes = array<i64: 1, 8, 128>, squeezed = array<i64: 0>, has_src = true, src_levels = array<i64: 4, 3>, src_sizes = array<i64: 1, 4, 8, 128, 1, 8, 128>, src_squeezed = array<i64: 0, 4>} : (memref<2xi32>, memref<2x8x128xf32>, memref<2x4x8x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  %v = "jaxpr.ref_get"(%buf, %one, %z, %z) {sizes = array<i64: 1, 8, 128>, squeezed = array<i64: 0>} : (memref<2x8x128xf32>, tensor<i32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  %old = "jaxpr.ref_swap"(%o, %v, %z, %z) {sizes = array<i64: 8, 128>, squeezed = array<i64>} : (memref<8x128xf32>, tensor<8x128xf32>, tensor<i32>, tensor<i32>) -> tensor<8x128xf32>
  return
}
func.func private @omap(%h: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %h, %z : tensor<i32>, tensor<i32>
}
func.func private @zmap(%h: tensor<i32>) -> (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %z, %z, %z, %z : tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>
}
func.func @paged(%x: tensor<2x4x8x128xf32>) -> tensor<16x128xf32> {
  %y = "jaxpr.pallas_call"(%x) {callee = @paged_kernel, name = "paged_kernel", grid = array<i64: 2>, in_specs = [{block_shape = array<i64: 2, 4, 8, 128>, index_map = @zmap, memory_space = "any"}], out_specs = [{block_shape = array<i64: 8, 128>, index_map = @omap}], scratch_shapes = [memref<2x8x128xf32>, memref<2xi32>], scratch_memory_spaces = ["vmem", "dma_semaphore"], interpret = false} : (tensor<2x4x8x128xf32>) -> tensor<16x128xf32>
  return %y : tensor<16x128xf32>
}

// -----

// A DMA of a bitcast view (y.bitcast(uint32).at[4:8]) and into a reshaped one
// (o.reshape(4, 1, 512).at[1]): tpu.memref_bitcast / tpu.memref_reshape between the
// windows, as JAX's _transform_ref.
// MOSAIC-LABEL: Mosaic module for @views_kernel
// MOSAIC:       func.func @views_kernel(%[[Y:.*]]: memref<16x128xbf16, #tpu.memory_space<any>>, %[[X:.*]]: memref<16x128xf32, #tpu.memory_space<any>>, %[[P:.*]]: memref<4x128xi32, #tpu.memory_space<vmem>>, %[[O:.*]]: memref<16x128xf32, #tpu.memory_space<vmem>>, %[[SEM:.*]]: memref<!tpu.dma_semaphore, #tpu.memory_space<semaphore_mem>>)
// MOSAIC:         %[[B:.*]] = tpu.memref_bitcast %[[Y]] : memref<16x128xbf16, #tpu.memory_space<any>> -> memref<8x128xi32, #tpu.memory_space<any>>
// MOSAIC:         %[[BW:.*]] = tpu.memref_slice %[[B]][%{{.*}}, %{{.*}}] : memref<8x128xi32, #tpu.memory_space<any>> -> memref<4x128xi32, #tpu.memory_space<any>>
// MOSAIC:         tpu.enqueue_dma source(%[[BW]] : {{.*}}) target(%[[P]] : {{.*}}) target_semaphore(%[[SEM]] : {{.*}})
// MOSAIC:         %[[R:.*]] = tpu.memref_reshape %[[O]] : memref<16x128xf32, #tpu.memory_space<vmem>> -> memref<4x1x512xf32, #tpu.memory_space<vmem>>
// MOSAIC:         %[[RS:.*]] = tpu.memref_slice %[[R]][%{{.*}}, %{{.*}}, %{{.*}}] : memref<4x1x512xf32, #tpu.memory_space<vmem>> -> memref<1x1x512xf32, #tpu.memory_space<vmem>>
// MOSAIC:         %[[RV:.*]] = tpu.memref_squeeze %[[RS]] : {{.*}} -> memref<1x512xf32, #tpu.memory_space<vmem>>
// MOSAIC:         %[[XR:.*]] = tpu.memref_reshape %[[X]] : memref<16x128xf32, #tpu.memory_space<any>> -> memref<4x512xf32, #tpu.memory_space<any>>
// MOSAIC:         %[[XW:.*]] = tpu.memref_slice %[[XR]][%{{.*}}, %{{.*}}] : memref<4x512xf32, #tpu.memory_space<any>> -> memref<1x512xf32, #tpu.memory_space<any>>
// MOSAIC:         tpu.enqueue_dma source(%[[XW]] : {{.*}}) target(%[[RV]] : {{.*}}) target_semaphore(%[[SEM]] : {{.*}})
// CALL-LABEL: func.func @views
// CALL:         stablehlo.custom_call @tpu_custom_call({{.*}}kernel_name = "views_kernel"
func.func private @views_kernel(%y: memref<16x128xbf16>, %x: memref<16x128xf32>, %p: memref<4x128xui32>, %o: memref<16x128xf32>, %sem: memref<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %one = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %four = "jaxpr.constant"() {value = dense<4> : tensor<i32>} : () -> tensor<i32>
  "jaxpr.dma_start"(%y, %p, %sem, %four, %z, %z, %z) {src_levels = array<i64: 2>, src_sizes = array<i64: 4, 128>, src_squeezed = array<i64>, src_view_at = 0, src_bitcast = ui32, dst_sizes = array<i64: 4, 128>, dst_squeezed = array<i64>} : (memref<16x128xbf16>, memref<4x128xui32>, memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  "jaxpr.dma_start"(%x, %o, %sem, %one, %z, %one, %z, %z) {src_levels = array<i64: 2>, src_sizes = array<i64: 1, 512>, src_squeezed = array<i64>, src_view_at = 0, src_reshape = array<i64: 4, 512>, dst_levels = array<i64: 3>, dst_sizes = array<i64: 1, 1, 512>, dst_squeezed = array<i64: 0>, dst_view_at = 0, dst_reshape = array<i64: 4, 1, 512>} : (memref<16x128xf32>, memref<16x128xf32>, memref<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) -> ()
  return
}
func.func private @vmap0() -> (tensor<i32>, tensor<i32>) {
  %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %z, %z : tensor<i32>, tensor<i32>
}
func.func @views(%y: tensor<16x128xbf16>, %x: tensor<16x128xf32>) -> (tensor<4x128xui32>, tensor<16x128xf32>) {
  %p, %o = "jaxpr.pallas_call"(%y, %x) {callee = @views_kernel, name = "views_kernel", grid = array<i64>, in_specs = [{block_shape = array<i64: 16, 128>, index_map = @vmap0, memory_space = "any"}, {block_shape = array<i64: 16, 128>, index_map = @vmap0, memory_space = "any"}], out_specs = [{block_shape = array<i64: 4, 128>, index_map = @vmap0}, {block_shape = array<i64: 16, 128>, index_map = @vmap0}], scratch_shapes = [memref<i32>], scratch_memory_spaces = ["dma_semaphore"], interpret = false} : (tensor<16x128xbf16>, tensor<16x128xf32>) -> (tensor<4x128xui32>, tensor<16x128xf32>)
  return %p, %o : tensor<4x128xui32>, tensor<16x128xf32>
}
