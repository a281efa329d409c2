"""`--jaxpr-pallas-to-triton`: compile GPU `jaxpr.pallas_call`s to Triton kernels.

For each `jaxpr.pallas_call` with `interpret = false`, the kernel function (over refs) and
its BlockSpec index maps become one Triton module (`jaxlib.triton`'s `tt` dialect): a
public `tt.func` taking one `!tt.ptr` per input and output array, run once per grid point.
The grid maps to `tt.get_program_id` x/y/z (more than three dims, or y/z past CUDA's 65535,
fold into x); each index map is inlined on the program ids, and its block indices times
the block shape give where the program's blocks start (passes/triton/kernel.py). Kernel
ops lower by the rules of the `TRITON` table (passes/triton/, one module per op family).
The module is serialized as MLIR bytecode into the custom call XLA's GPU backend compiles
Triton from, as JAX's Pallas does:

    %o = "jaxpr.pallas_call"(%x, %y) {callee = @add_kernel, grid = array<i64: 2>, ...}
  ==>
    %o = stablehlo.custom_call @__gpu$xla.gpu.triton(%x, %y) {backend_config = "",
           mhlo.backend_config = {name = "add_kernel", ir = "<bytecode>", num_warps = 4,
           num_stages = 3, grid_x = 2, grid_y = 1, grid_z = 1, debug = false}, ...}

`num_warps`/`num_stages` come from `compiler_params` (defaults 4 and 3, 1 stage on ROCm).
Kernels and index maps no other call uses are erased. Options: `platform=cuda|rocm`
(device math library names), `dump-triton=1` prints each Triton module to stderr (lit
tests check it). An op without a Triton rule is an error at its line naming the op.
"""
from __future__ import annotations

import sys
from dataclasses import dataclass

from jaxlib.mlir import ir

from mjax.dialect.ops.pallas import PallasCallOp
from mjax.passes import analyses
from mjax.passes import triton  # noqa: F401  (fills the TRITON table)
from mjax.passes.ir_util import (FunctionTable, is_private, nested_ops,
                                 reachable_functions)
from mjax.passes.kernel_lowering.interpreter import find_func
from mjax.passes.kernel_lowering.types import op_params
from mjax.passes.registry import Pass, register_pass
from mjax.passes.triton.kernel import compiler_params, lower_pallas_call, triton_custom_call


@register_pass("jaxpr-pallas-to-triton")
@dataclass
class JaxprPallasToTritonPass(Pass):
    """Lower pallas_calls with interpret=false to Triton kernels in XLA custom calls."""

    platform: str = "cuda"
    dump_triton: bool = False

    def run(self, module: ir.Module) -> None:
        if PallasCallOp.OPERATION_NAME not in analyses.op_names(module):
            return      # (the op names the pipeline's passes share: no walk of its own)
        lowered, kept = set(), set()
        # Only calls in functions reachable from a public one: transformations leave the
        # untransformed originals behind (dead until symbol-dce), no need to compile them.
        calls = [op for fn in live_functions(module) for op in nested_ops(fn)
                 if op.name == PallasCallOp.OPERATION_NAME]
        for call in calls:
            params = op_params(call)
            symbols = {str(params["callee"])} | {
                str(s["index_map"]) for s in list(params.get("in_specs", ()))
                + list(params.get("out_specs", ()))}
            if params.get("interpret", False):
                continue                         # left for --jaxpr-pallas-interpret
            tmod, launch, name = lower_pallas_call(module, call, self.platform)
            if self.dump_triton:
                print(f"// -----// Triton module for @{params['callee']} //----- //\n"
                      f"{tmod}", file=sys.stderr)
            num_warps, num_stages = compiler_params(params, self.platform)
            new = triton_custom_call(call, tmod, launch, name, num_warps, num_stages)
            for old, res in zip(call.results, new.results):
                old.replace_all_uses_with(res)
            call.erase()
            lowered |= symbols
        for op in nested_ops(module):              # kernels other calls still use stay
            if op.name == PallasCallOp.OPERATION_NAME:
                params = op_params(op)
                kept |= {str(params["callee"])} | {
                    str(s["index_map"]) for s in list(params.get("in_specs", ()))
                    + list(params.get("out_specs", ()))}
        for sym in lowered - kept:
            fn = find_func(module, sym)
            if fn is not None and is_private(fn):
                fn.operation.erase()


def live_functions(module: ir.Module) -> list[ir.Operation]:
    """The module's functions reachable from its public ones, in module order."""
    fns = FunctionTable(module).table
    live = reachable_functions(fns)
    return [fn for name, fn in fns.items() if name in live]


__all__ = ["JaxprPallasToTritonPass", "live_functions"]
