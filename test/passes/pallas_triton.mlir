// --jaxpr-pallas-to-triton: the Triton IR of Pallas kernels (dumped with dump-triton=1)
// and the custom call XLA's GPU backend compiles it from.
// RUN: mjax-opt %s --split-input-file --jaxpr-pallas-to-triton=dump-triton=1 -o %t 2>&1 | filecheck %s --check-prefix=TT
// RUN: filecheck %s --check-prefix=CALL --input-file %t

// Elementwise add over a grid of 2 blocks of 128: program id x times the block size is
// where each block starts; each ref access is base + start + make_range.
// TT-LABEL: Triton module for @add_kernel
// TT:       tt.func public @add_kernel(%[[X:.*]]: !tt.ptr<f32> {tt.divisibility = 16 : i32}, %[[Y:.*]]: !tt.ptr<f32> {{.*}}, %[[O:.*]]: !tt.ptr<f32> {{.*}})
// TT-DAG:     %[[C128:.*]] = arith.constant 128 : i32
// TT-DAG:     %[[PID:.*]] = tt.get_program_id x : i32
// TT:         %[[START:.*]] = arith.muli %[[PID]], %[[C128]] : i32
// TT:         %[[XP:.*]] = tt.addptr %[[X]], %[[START]] : !tt.ptr<f32>, i32
// TT:         %[[XS:.*]] = tt.splat %[[XP]] : !tt.ptr<f32> -> tensor<128x!tt.ptr<f32>>
// TT:         %[[R:.*]] = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
// TT:         %[[XPS:.*]] = tt.addptr %[[XS]], %[[R]] : tensor<128x!tt.ptr<f32>>, tensor<128xi32>
// TT:         %[[A:.*]] = tt.load %[[XPS]] : tensor<128x!tt.ptr<f32>>
// TT:         %[[YP:.*]] = tt.addptr %[[Y]], %[[START]]
// TT:         %[[B:.*]] = tt.load
// TT:         %[[S:.*]] = arith.addf %[[A]], %[[B]] : tensor<128xf32>
// TT:         %[[OP:.*]] = tt.addptr %[[O]], %[[START]]
// TT:         %[[OS:.*]] = tt.splat %[[OP]]
// TT:         %[[OPS:.*]] = tt.addptr %[[OS]], %[[R]]
// TT-NOT:     tt.load
// TT:         tt.store %[[OPS]], %[[S]] : tensor<128x!tt.ptr<f32>>
// TT:         tt.return
// CALL-LABEL: func.func @add
// CALL-SAME:    (%[[X:.*]]: tensor<256xf32>, %[[Y:.*]]: tensor<256xf32>)
// CALL:         %[[R:.*]] = stablehlo.custom_call @__gpu$xla.gpu.triton(%[[X]], %[[Y]]) {backend_config = "", mhlo.backend_config = {debug = false, grid_x = 2 : i32, grid_y = 1 : i32, grid_z = 1 : i32, ir = "ML\EFR{{.*}}", name = "add_kernel", num_stages = 3 : i32, num_warps = 4 : i32}, operand_layouts = [dense<0> : tensor<1xindex>, dense<0> : tensor<1xindex>], result_layouts = [dense<0> : tensor<1xindex>]} : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
// CALL:         return %[[R]]
// CALL-NOT:     jaxpr.
// CALL-NOT:     @add_kernel
func.func private @add_kernel(%x: memref<128xf32>, %y: memref<128xf32>, %o: memref<128xf32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %a = "jaxpr.ref_get"(%x, %c0) {sizes = array<i64: 128>, squeezed = array<i64>} : (memref<128xf32>, tensor<i32>) -> tensor<128xf32>
  %b = "jaxpr.ref_get"(%y, %c0) {sizes = array<i64: 128>, squeezed = array<i64>} : (memref<128xf32>, tensor<i32>) -> tensor<128xf32>
  %s = "jaxpr.add"(%a, %b) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  %old = "jaxpr.ref_swap"(%o, %s, %c0) {sizes = array<i64: 128>, squeezed = array<i64>} : (memref<128xf32>, tensor<128xf32>, tensor<i32>) -> tensor<128xf32>
  return
}
func.func private @add_kernel_index_map(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @add(%x: tensor<256xf32>, %y: tensor<256xf32>) -> tensor<256xf32> {
  %0 = "jaxpr.pallas_call"(%x, %y) {callee = @add_kernel, name = "add_kernel", grid = array<i64: 2>,
      in_specs = [{block_shape = array<i64: 128>, index_map = @add_kernel_index_map},
                  {block_shape = array<i64: 128>, index_map = @add_kernel_index_map}],
      out_specs = [{block_shape = array<i64: 128>, index_map = @add_kernel_index_map}],
      interpret = false, compiler_params = {}} : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  return %0 : tensor<256xf32>
}

// -----

// Blocked matmul: (64, 256) x (256, 64) blocks on a 4x4 grid; the kernel's fori_loop
// over K (a scan whose first carry counts up by one) is an scf.for whose induction
// variable is the loop index; the accumulator is its iter_arg; pl.dot is tt.dot (TF32,
// as JAX on GPU); compiler_params set num_warps and num_stages.
// TT-LABEL: Triton module for @matmul_kernel
// TT:       tt.func public @matmul_kernel(%[[X:.*]]: !tt.ptr<f32> {{.*}}, %[[Y:.*]]: !tt.ptr<f32> {{.*}}, %[[O:.*]]: !tt.ptr<f32> {{.*}})
// TT-DAG:     %[[C16384:.*]] = arith.constant 16384 : i32
// TT-DAG:     %[[C8192:.*]] = arith.constant 8192 : i32
// TT-DAG:     %[[ZERO:.*]] = arith.constant dense<0.000000e+00> : tensor<64x64xf32>
// TT-DAG:     %[[ROW:.*]] = arith.constant dense<256> : tensor<64xi32>
// TT-DAG:     %[[C0:.*]] = arith.constant 0 : i32
// TT-DAG:     %[[C8:.*]] = arith.constant 8 : i32
// TT-DAG:     %[[C1:.*]] = arith.constant 1 : i32
// TT-DAG:     %[[C32:.*]] = arith.constant 32 : i32
// TT-DAG:     %[[I:.*]] = tt.get_program_id x : i32
// TT-DAG:     %[[J:.*]] = tt.get_program_id y : i32
// TT:         %[[ACC:.*]] = scf.for %[[K:.*]] = %[[C0]] to %[[C8]] step %[[C1]] iter_args(%[[A:.*]] = %[[ZERO]]) -> (tensor<64x64xf32>)  : i32 {
// TT:           %[[KOFF:.*]] = arith.muli %[[K]], %[[C32]] : i32
// TT:           %[[XROW:.*]] = arith.muli %[[I]], %[[C16384]] : i32
// TT:           %[[XOFF:.*]] = arith.addi %[[XROW]], %[[KOFF]] : i32
// TT:           tt.addptr %[[X]], %[[XOFF]] : !tt.ptr<f32>, i32
// TT:           %[[RM:.*]] = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
// TT:           arith.muli %[[RM]], %[[ROW]] : tensor<64xi32>
// TT:           tt.expand_dims {{.*}} {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
// TT:           tt.broadcast {{.*}} : tensor<64x1xi32> -> tensor<64x32xi32>
// TT:           tt.make_range {end = 32 : i32, start = 0 : i32} : tensor<32xi32>
// TT:           tt.expand_dims {{.*}} {axis = 0 : i32} : tensor<32xi32> -> tensor<1x32xi32>
// TT:           %[[LX:.*]] = tt.load {{.*}} : tensor<64x32x!tt.ptr<f32>>
// TT:           %[[YROW:.*]] = arith.muli %[[K]], %[[C8192]] : i32
// TT:           tt.addptr %[[Y]],
// TT:           %[[LY:.*]] = tt.load {{.*}} : tensor<32x64x!tt.ptr<f32>>
// TT:           %[[D:.*]] = tt.dot %[[LX]], %[[LY]], %[[ZERO]], inputPrecision = tf32 : tensor<64x32xf32> * tensor<32x64xf32> -> tensor<64x64xf32>
// TT:           %[[NEXT:.*]] = arith.addf %[[A]], %[[D]] : tensor<64x64xf32>
// TT:           scf.yield %[[NEXT]] : tensor<64x64xf32>
// TT:         }
// TT:         %[[OROW:.*]] = arith.muli %[[I]], %[[C16384]] : i32
// TT:         tt.addptr %[[O]],
// TT:         tt.store {{.*}}, %[[ACC]] : tensor<64x64x!tt.ptr<f32>>
// CALL-LABEL: func.func @matmul
// CALL:         stablehlo.custom_call @__gpu$xla.gpu.triton(%{{.*}}, %{{.*}}) {backend_config = "", mhlo.backend_config = {debug = false, grid_x = 4 : i32, grid_y = 4 : i32, grid_z = 1 : i32, ir = "{{.*}}", name = "matmul_kernel", num_stages = 2 : i32, num_warps = 8 : i32}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>], result_layouts = [dense<[1, 0]> : tensor<2xindex>]}
func.func private @matmul_kernel(%x: memref<64x256xf32>, %y: memref<256x64xf32>, %o: memref<64x64xf32>) {
  %zero = "jaxpr.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %acc0 = "jaxpr.broadcast_in_dim"(%zero) {shape = array<i64: 64, 64>, broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<64x64xf32>
  %i0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %r:2 = "jaxpr.scan"(%x, %y, %i0, %acc0) ({
  ^bb0(%xr: memref<64x256xf32>, %yr: memref<256x64xf32>, %i: tensor<i32>, %acc: tensor<64x64xf32>):
    %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %c32 = "jaxpr.constant"() {value = dense<32> : tensor<i32>} : () -> tensor<i32>
    %c1 = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %k = "jaxpr.mul"(%i, %c32) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %a = "jaxpr.ref_get"(%xr, %c0, %k) {sizes = array<i64: 64, 32>, squeezed = array<i64>} : (memref<64x256xf32>, tensor<i32>, tensor<i32>) -> tensor<64x32xf32>
    %b = "jaxpr.ref_get"(%yr, %k, %c0) {sizes = array<i64: 32, 64>, squeezed = array<i64>} : (memref<256x64xf32>, tensor<i32>, tensor<i32>) -> tensor<32x64xf32>
    %d = "jaxpr.dot_general"(%a, %b) {dimension_numbers = [[[1], [0]], [[], []]], preferred_element_type = f32} : (tensor<64x32xf32>, tensor<32x64xf32>) -> tensor<64x64xf32>
    %acc2 = "jaxpr.add"(%acc, %d) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
    %i2 = "jaxpr.add"(%i, %c1) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "jaxpr.yield"(%i2, %acc2) : (tensor<i32>, tensor<64x64xf32>) -> ()
  }) {length = 8 : i64, num_consts = 2 : i64, num_carry = 2 : i64} : (memref<64x256xf32>, memref<256x64xf32>, tensor<i32>, tensor<64x64xf32>) -> (tensor<i32>, tensor<64x64xf32>)
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %old = "jaxpr.ref_swap"(%o, %r#1, %c0, %c0) {sizes = array<i64: 64, 64>, squeezed = array<i64>} : (memref<64x64xf32>, tensor<64x64xf32>, tensor<i32>, tensor<i32>) -> tensor<64x64xf32>
  return
}
func.func private @x_map(%i: tensor<i32>, %j: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %i, %c0 : tensor<i32>, tensor<i32>
}
func.func private @y_map(%i: tensor<i32>, %j: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %c0, %j : tensor<i32>, tensor<i32>
}
func.func private @o_map(%i: tensor<i32>, %j: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  return %i, %j : tensor<i32>, tensor<i32>
}
func.func @matmul(%x: tensor<256x256xf32>, %y: tensor<256x256xf32>) -> tensor<256x256xf32> {
  %0 = "jaxpr.pallas_call"(%x, %y) {callee = @matmul_kernel, name = "matmul_kernel", grid = array<i64: 4, 4>,
      in_specs = [{block_shape = array<i64: 64, 256>, index_map = @x_map},
                  {block_shape = array<i64: 256, 64>, index_map = @y_map}],
      out_specs = [{block_shape = array<i64: 64, 64>, index_map = @o_map}],
      interpret = false, compiler_params = {num_warps = 8 : i64, num_stages = 2 : i64}} : (tensor<256x256xf32>, tensor<256x256xf32>) -> tensor<256x256xf32>
  return %0 : tensor<256x256xf32>
}

// -----

// Masked load and store (pl.load/pl.store with mask=): the mask and `other` become
// tt.load's mask and other operands and tt.store's mask; the old value a masked_swap
// gives is unused, so nothing is loaded for the store.
// TT-LABEL: Triton module for @masked_kernel
// TT:         %[[OTHER:.*]] = arith.constant dense<0.000000e+00> : tensor<128xf32>
// TT:         %[[N:.*]] = arith.constant dense<200> : tensor<128xi32>
// TT:         %[[PID:.*]] = tt.get_program_id x : i32
// TT:         %[[START:.*]] = arith.muli %[[PID]]
// TT:         %[[IOTA:.*]] = tt.make_range {end = 128 : i32, start = 0 : i32}
// TT:         %[[SPLAT:.*]] = tt.splat %[[START]] : i32 -> tensor<128xi32>
// TT:         %[[IDX:.*]] = arith.addi %[[SPLAT]], %[[IOTA]] : tensor<128xi32>
// TT:         %[[MASK:.*]] = arith.cmpi slt, %[[IDX]], %[[N]] : tensor<128xi32>
// TT:         %[[PTRS:.*]] = tt.addptr {{.*}}, %[[IOTA]]
// TT:         %[[V:.*]] = tt.load %[[PTRS]], %[[MASK]], %[[OTHER]] : tensor<128x!tt.ptr<f32>>
// TT:         %[[SQ:.*]] = arith.mulf %[[V]], %[[V]]
// TT-NOT:     tt.load
// TT:         tt.store {{.*}}, %[[SQ]], %[[MASK]] : tensor<128x!tt.ptr<f32>>
// CALL-LABEL: func.func @masked
// CALL:         stablehlo.custom_call @__gpu$xla.gpu.triton(%{{.*}}) {{.*}}grid_x = 2 : i32{{.*}}name = "masked_kernel"{{.*}} : (tensor<200xf32>) -> tensor<200xf32>
func.func private @masked_kernel(%x: memref<128xf32>, %o: memref<128xf32>) {
  %pid = "jaxpr.program_id"() {axis = 0 : i64} : () -> tensor<i32>
  %c128 = "jaxpr.constant"() {value = dense<128> : tensor<i32>} : () -> tensor<i32>
  %base = "jaxpr.mul"(%pid, %c128) : (tensor<i32>, tensor<i32>) -> tensor<i32>
  %iota = "jaxpr.iota"() {dtype = i32, shape = array<i64: 128>, dimension = 0 : i64} : () -> tensor<128xi32>
  %b = "jaxpr.broadcast_in_dim"(%base) {shape = array<i64: 128>, broadcast_dimensions = array<i64>} : (tensor<i32>) -> tensor<128xi32>
  %idx = "jaxpr.add"(%b, %iota) : (tensor<128xi32>, tensor<128xi32>) -> tensor<128xi32>
  %c200 = "jaxpr.constant"() {value = dense<200> : tensor<128xi32>} : () -> tensor<128xi32>
  %mask = "jaxpr.lt"(%idx, %c200) : (tensor<128xi32>, tensor<128xi32>) -> tensor<128xi1>
  %zero = "jaxpr.constant"() {value = dense<0.0> : tensor<128xf32>} : () -> tensor<128xf32>
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.masked_load"(%x, %mask, %zero, %c0) {sizes = array<i64: 128>, squeezed = array<i64>} : (memref<128xf32>, tensor<128xi1>, tensor<128xf32>, tensor<i32>) -> tensor<128xf32>
  %two = "jaxpr.mul"(%v, %v) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  %old = "jaxpr.masked_swap"(%o, %two, %mask, %c0) {sizes = array<i64: 128>, squeezed = array<i64>} : (memref<128xf32>, tensor<128xf32>, tensor<128xi1>, tensor<i32>) -> tensor<128xf32>
  return
}
func.func private @masked_map(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func @masked(%x: tensor<200xf32>) -> tensor<200xf32> {
  %0 = "jaxpr.pallas_call"(%x) {callee = @masked_kernel, name = "masked_kernel", grid = array<i64: 2>,
      in_specs = [{block_shape = array<i64: 128>, index_map = @masked_map}],
      out_specs = [{block_shape = array<i64: 128>, index_map = @masked_map}],
      interpret = false} : (tensor<200xf32>) -> tensor<200xf32>
  return %0 : tensor<200xf32>
}

// -----

// Fused softmax over rows: a squeezed (None) block dim makes the kernel's ref 1-D, the
// row index times the row stride is the block start; reductions are tt.reduce, exp is
// libdevice's __nv_expf.
// TT-LABEL: Triton module for @softmax_kernel
// TT:         %[[PID:.*]] = tt.get_program_id x : i32
// TT:         %[[START:.*]] = arith.muli %[[PID]], %{{.*}} : i32
// TT:         %[[V:.*]] = tt.load
// TT:         %[[M:.*]] = "tt.reduce"(%[[V]]) <{axis = 0 : i32}> ({
// TT:           arith.maximumf
// TT:           tt.reduce.return
// TT:         }) : (tensor<128xf32>) -> f32
// TT:         %[[MB:.*]] = tt.splat %[[M]] : f32 -> tensor<128xf32>
// TT:         %[[D:.*]] = arith.subf %[[V]], %[[MB]]
// TT:         %[[E:.*]] = tt.extern_elementwise %[[D]] {libname = "", libpath = "", pure = true, symbol = "__nv_expf"}
// TT:         %[[S:.*]] = "tt.reduce"(%[[E]]) <{axis = 0 : i32}> ({
// TT:           arith.addf
// TT:         %[[SB:.*]] = tt.splat %[[S]]
// TT:         %[[Y:.*]] = arith.divf %[[E]], %[[SB]] : tensor<128xf32>
// TT:         tt.store {{.*}}, %[[Y]]
// CALL-LABEL: func.func @softmax
// CALL:         stablehlo.custom_call @__gpu$xla.gpu.triton(%{{.*}}) {{.*}}grid_x = 8 : i32{{.*}}name = "softmax_kernel", num_stages = 3 : i32, num_warps = 2 : i32}, operand_layouts = [dense<[1, 0]> : tensor<2xindex>]
func.func private @softmax_kernel(%x: memref<128xf32>, %o: memref<128xf32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.ref_get"(%x, %c0) {sizes = array<i64: 128>, squeezed = array<i64>} : (memref<128xf32>, tensor<i32>) -> tensor<128xf32>
  %m = "jaxpr.reduce_max"(%v) {axes = array<i64: 0>} : (tensor<128xf32>) -> tensor<f32>
  %mb = "jaxpr.broadcast_in_dim"(%m) {shape = array<i64: 128>, broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<128xf32>
  %d = "jaxpr.sub"(%v, %mb) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  %e = "jaxpr.exp"(%d) : (tensor<128xf32>) -> tensor<128xf32>
  %s = "jaxpr.reduce_sum"(%e) {axes = array<i64: 0>} : (tensor<128xf32>) -> tensor<f32>
  %sb = "jaxpr.broadcast_in_dim"(%s) {shape = array<i64: 128>, broadcast_dimensions = array<i64>} : (tensor<f32>) -> tensor<128xf32>
  %y = "jaxpr.div"(%e, %sb) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>
  %old = "jaxpr.ref_swap"(%o, %y, %c0) {sizes = array<i64: 128>, squeezed = array<i64>} : (memref<128xf32>, tensor<128xf32>, tensor<i32>) -> tensor<128xf32>
  return
}
func.func private @row_map(%i: tensor<i32>) -> (tensor<i32>, tensor<i32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %i, %c0 : tensor<i32>, tensor<i32>
}
func.func @softmax(%x: tensor<8x128xf32>) -> tensor<8x128xf32> {
  %0 = "jaxpr.pallas_call"(%x) {callee = @softmax_kernel, name = "softmax_kernel", grid = array<i64: 8>,
      in_specs = [{block_shape = array<i64: -1, 128>, index_map = @row_map}],
      out_specs = [{block_shape = array<i64: -1, 128>, index_map = @row_map}],
      interpret = false, compiler_params = {num_warps = 2 : i64}} : (tensor<8x128xf32>) -> tensor<8x128xf32>
  return %0 : tensor<8x128xf32>
}

// -----

// Control flow and atomics: a fori_loop with traced bounds (program_id to num_programs,
// a constant: the grid is static) is an scf.for from the program id; another while
// (a step of 2) is scf.while; pl.when (a cond on pred != 0 with no results) is scf.if
// whose taken branch stores; pl.atomic_add is tt.atomic_rmw fadd with its mask.
// TT-LABEL: Triton module for @control_kernel
// TT-DAG:     %[[ALL:.*]] = arith.constant dense<true> : tensor<16xi1>
// TT-DAG:     %[[C4:.*]] = arith.constant 4 : i32
// TT-DAG:     %[[C0:.*]] = arith.constant 0 : i32
// TT-DAG:     %[[C1:.*]] = arith.constant 1 : i32
// TT:         %[[PID:.*]] = tt.get_program_id x : i32
// TT:         %[[V:.*]] = tt.load
// TT:         %[[F:.*]] = scf.for %{{.*}} = %[[PID]] to %[[C4]] step %[[C1]] iter_args(%[[ACC:.*]] = %[[V]]) -> (tensor<16xf32>)  : i32 {
// TT:           %[[SUM:.*]] = arith.addf %[[ACC]], %[[V]] : tensor<16xf32>
// TT:           scf.yield %[[SUM]]
// TT:         }
// TT:         %[[W:.*]]:2 = scf.while (%[[I:.*]] = %[[PID]], %[[ACC2:.*]] = %[[F]]) : (i32, tensor<16xf32>) -> (i32, tensor<16xf32>) {
// TT:           %[[P:.*]] = arith.cmpi slt, %[[I]], %[[C4]] : i32
// TT:           scf.condition(%[[P]]) %[[I]], %[[ACC2]]
// TT:         } do {
// TT:           arith.mulf
// TT:           scf.yield
// TT:         }
// TT:         %[[FIRST:.*]] = arith.cmpi eq, %[[PID]], %[[C0]] : i32
// TT:         %[[IDX:.*]] = arith.extui %[[FIRST]] : i1 to i32
// TT:         %[[NOT:.*]] = arith.cmpi eq, %[[IDX]], %[[C0]] : i32
// TT:         scf.if %[[NOT]] {
// TT-NEXT:    } else {
// TT:           tt.store %{{.*}}, %[[W]]#1 : tensor<16x!tt.ptr<f32>>
// TT:         }
// TT:         tt.atomic_rmw fadd, acq_rel, gpu, %{{.*}}, %[[V]], %[[ALL]] : (tensor<16x!tt.ptr<f32>>, tensor<16xf32>, tensor<16xi1>) -> tensor<16xf32>
// CALL-LABEL: func.func @control
// CALL:         stablehlo.custom_call @__gpu$xla.gpu.triton(%{{.*}}) {{.*}}name = "control_kernel"{{.*}} : (tensor<64xf32>) -> tensor<16xf32>
func.func private @control_kernel(%x: memref<16xf32>, %o: memref<16xf32>) {
  %pid = "jaxpr.program_id"() {axis = 0 : i64} : () -> tensor<i32>
  %n = "jaxpr.num_programs"() {axis = 0 : i64} : () -> tensor<i32>
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.ref_get"(%x, %c0) {sizes = array<i64: 16>, squeezed = array<i64>} : (memref<16xf32>, tensor<i32>) -> tensor<16xf32>
  %w:3 = "jaxpr.while"(%v, %pid, %n, %v) ({
  ^bb0(%i: tensor<i32>, %hi: tensor<i32>, %acc: tensor<16xf32>):
    %p = "jaxpr.lt"(%i, %hi) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "jaxpr.yield"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%vv: tensor<16xf32>, %i: tensor<i32>, %hi: tensor<i32>, %acc: tensor<16xf32>):
    %one = "jaxpr.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i2 = "jaxpr.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %acc2 = "jaxpr.add"(%acc, %vv) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    "jaxpr.yield"(%i2, %hi, %acc2) : (tensor<i32>, tensor<i32>, tensor<16xf32>) -> ()
  }) {cond_nconsts = 0 : i64, body_nconsts = 1 : i64} : (tensor<16xf32>, tensor<i32>, tensor<i32>, tensor<16xf32>) -> (tensor<i32>, tensor<i32>, tensor<16xf32>)
  %w2:2 = "jaxpr.while"(%n, %pid, %w#2) ({
  ^bb0(%hi: tensor<i32>, %i: tensor<i32>, %acc: tensor<16xf32>):
    %p = "jaxpr.lt"(%i, %hi) : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "jaxpr.yield"(%p) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %acc: tensor<16xf32>):
    %two = "jaxpr.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
    %i2 = "jaxpr.add"(%i, %two) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %acc2 = "jaxpr.mul"(%acc, %acc) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    "jaxpr.yield"(%i2, %acc2) : (tensor<i32>, tensor<16xf32>) -> ()
  }) {cond_nconsts = 1 : i64, body_nconsts = 0 : i64} : (tensor<i32>, tensor<i32>, tensor<16xf32>) -> (tensor<i32>, tensor<16xf32>)
  %first = "jaxpr.eq"(%pid, %c0) : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %idx = "jaxpr.convert_element_type"(%first) {new_dtype = i32} : (tensor<i1>) -> tensor<i32>
  "jaxpr.cond"(%idx, %o, %w2#1) ({
  ^bb0(%oo: memref<16xf32>, %a: tensor<16xf32>):
    "jaxpr.yield"() : () -> ()
  }, {
  ^bb0(%oo: memref<16xf32>, %a: tensor<16xf32>):
    %z = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
    %old = "jaxpr.ref_swap"(%oo, %a, %z) {sizes = array<i64: 16>, squeezed = array<i64>} : (memref<16xf32>, tensor<16xf32>, tensor<i32>) -> tensor<16xf32>
    "jaxpr.yield"() : () -> ()
  }) : (tensor<i32>, memref<16xf32>, tensor<16xf32>) -> ()
  %all = "jaxpr.constant"() {value = dense<true> : tensor<16xi1>} : () -> tensor<16xi1>
  %prev = "jaxpr.atomic_rmw"(%o, %v, %all, %c0) {kind = "add", sizes = array<i64: 16>, squeezed = array<i64>} : (memref<16xf32>, tensor<16xf32>, tensor<16xi1>, tensor<i32>) -> tensor<16xf32>
  return
}
func.func private @x_map(%i: tensor<i32>) -> tensor<i32> {
  return %i : tensor<i32>
}
func.func private @o_map(%i: tensor<i32>) -> tensor<i32> {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  return %c0 : tensor<i32>
}
func.func @control(%x: tensor<64xf32>) -> tensor<16xf32> {
  %0 = "jaxpr.pallas_call"(%x) {callee = @control_kernel, name = "control_kernel", grid = array<i64: 4>,
      in_specs = [{block_shape = array<i64: 16>, index_map = @x_map}],
      out_specs = [{block_shape = array<i64: 16>, index_map = @o_map}],
      interpret = false} : (tensor<64xf32>) -> tensor<16xf32>
  return %0 : tensor<16xf32>
}

// -----

// A grid of rank 4 runs as one x dimension of 48 programs; each grid index is recovered
// row-major (the last dim fastest) by unsigned rem/div, the outermost is the quotient
// left over. Squeezed (None) block dims add index * stride.
// TT-LABEL: Triton module for @fold_kernel
// TT-DAG:     %[[C2:.*]] = arith.constant 2 : i32
// TT-DAG:     %[[C3:.*]] = arith.constant 3 : i32
// TT-DAG:     %[[C4:.*]] = arith.constant 4 : i32
// TT-DAG:     %[[C32:.*]] = arith.constant 32 : i32
// TT-DAG:     %[[C64:.*]] = arith.constant 64 : i32
// TT-DAG:     %[[C256:.*]] = arith.constant 256 : i32
// TT-DAG:     %[[C768:.*]] = arith.constant 768 : i32
// TT:         %[[PID:.*]] = tt.get_program_id x : i32
// TT:         %[[L:.*]] = arith.remui %[[PID]], %[[C2]] : i32
// TT:         %[[Q1:.*]] = arith.divui %[[PID]], %[[C2]] : i32
// TT:         %[[K:.*]] = arith.remui %[[Q1]], %[[C4]] : i32
// TT:         %[[Q2:.*]] = arith.divui %[[Q1]], %[[C4]] : i32
// TT:         %[[J:.*]] = arith.remui %[[Q2]], %[[C3]] : i32
// TT:         %[[I:.*]] = arith.divui %[[Q2]], %[[C3]] : i32
// TT-NOT:     arith.remui
// TT-DAG:     arith.muli %[[L]], %[[C32]] : i32
// TT-DAG:     arith.muli %[[I]], %[[C768]] : i32
// TT-DAG:     arith.muli %[[J]], %[[C256]] : i32
// TT-DAG:     arith.muli %[[K]], %[[C64]] : i32
// TT:         tt.load
// CALL-LABEL: func.func @fold
// CALL:         stablehlo.custom_call @__gpu$xla.gpu.triton(%{{.*}}) {{.*}}grid_x = 48 : i32, grid_y = 1 : i32, grid_z = 1 : i32{{.*}}operand_layouts = [dense<[3, 2, 1, 0]> : tensor<4xindex>]
func.func private @fold_kernel(%x: memref<32xf32>, %o: memref<32xf32>) {
  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %v = "jaxpr.ref_get"(%x, %c0) {sizes = array<i64: 32>, squeezed = array<i64>} : (memref<32xf32>, tensor<i32>) -> tensor<32xf32>
  %old = "jaxpr.ref_swap"(%o, %v, %c0) {sizes = array<i64: 32>, squeezed = array<i64>} : (memref<32xf32>, tensor<32xf32>, tensor<i32>) -> tensor<32xf32>
  return
}
func.func private @fold_map(%a: tensor<i32>, %b: tensor<i32>, %c: tensor<i32>, %d: tensor<i32>) -> (tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>) {
  return %a, %b, %c, %d : tensor<i32>, tensor<i32>, tensor<i32>, tensor<i32>
}
func.func @fold(%x: tensor<2x3x4x64xf32>) -> tensor<2x3x4x64xf32> {
  %0 = "jaxpr.pallas_call"(%x) {callee = @fold_kernel, name = "fold_kernel", grid = array<i64: 2, 3, 4, 2>,
      in_specs = [{block_shape = array<i64: -1, -1, -1, 32>, index_map = @fold_map}],
      out_specs = [{block_shape = array<i64: -1, -1, -1, 32>, index_map = @fold_map}],
      interpret = false} : (tensor<2x3x4x64xf32>) -> tensor<2x3x4x64xf32>
  return %0 : tensor<2x3x4x64xf32>
}
