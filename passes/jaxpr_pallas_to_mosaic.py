"""`--jaxpr-pallas-to-mosaic`: compile TPU `jaxpr.pallas_call`s to Mosaic kernels.

For each `jaxpr.pallas_call` with `interpret = false`, the kernel function (over refs) and
its BlockSpec index maps become one Mosaic module (jaxlib's `tpu` dialect with `func`,
`arith`, `math`, `vector`, `scf`, `memref`; passes/mosaic/kernel.py): a kernel function
over (grid indices, scalar prefetch, blocks, scratch) with `window_params`,
`iteration_bounds`, `dimension_semantics`, and one `@transform_<i>` per BlockSpec. Kernel
ops lower by the rules of the `MOSAIC` table (passes/mosaic/, one module per op family).
The module is run through `mosaic-serde` and written as bytecode into the backend_config
of the custom call libtpu compiles, as JAX's Pallas does:

    %o = "jaxpr.pallas_call"(%x, %y) {callee = @add_kernel, grid = array<i64: 2>, ...}
  ==>
    %o = stablehlo.custom_call @tpu_custom_call(%x, %y) {
           backend_config = "{\\"custom_call_config\\": {\\"body\\": \\"TUzvUgFN...\\",
             \\"serialization_format\\": 1, \\"needs_layout_passes\\": true}}",
           kernel_name = "add_kernel", mhlo.frontend_attributes = {kernel_metadata = "{}"}}

Options: `target-version=N` is the serde version (JAX: 11 for export and lowering for
another platform, the default here; 0 is the newest, what JAX uses on the chip);
`dump-mosaic=1` prints each kernel's Mosaic module to stderr, readable and re-parsable
(lit tests check it). To edit a kernel's Mosaic and run it again: `dump-dir=DIR` writes
each module to DIR/<kernel name>.mlir, and `load-dir=DIR` compiles DIR/<kernel
name>.mlir, where that file exists, in place of the kernel's own lowering (from
`mjax-opt`, or in jit with `jit(f, passes=[JaxprPallasToMosaicPass(load_dir=DIR)])`:
the pass runs after transformations are expanded, before the pipeline's own). Kernels
and index maps no other call uses are erased. An op without a Mosaic rule is an error at
its line naming the op. The pass also lowers `jaxpr.tpu_custom_call`s (hand-written
Mosaic kernels: passes/mosaic/tpu_kernel.py) at the same serde version.
"""
from __future__ import annotations

import os
import sys
from dataclasses import dataclass

from jaxlib.mlir import ir

from mjax.dialect.ops.mosaic import TpuCustomCallOp
from mjax.dialect.ops.pallas import PallasCallOp
from mjax.passes import analyses
from mjax.passes.ir_util import is_private, nested_ops
from mjax.passes.jaxpr_pallas_to_triton import live_functions
from mjax.passes.kernel_lowering.interpreter import find_func
from mjax.passes.kernel_lowering.types import op_params
from mjax.passes.registry import Pass, op_error, register_pass

FORWARD_COMPATIBLE_VERSION = 11   # JAX: tpu_custom_call._FWD_COMPAT_VERSION


def _symbols(params: dict) -> set[str]:
    return {str(params["callee"])} | {str(s["index_map"]) for s in list(
        params.get("in_specs", ()) or ()) + list(params.get("out_specs", ()) or ())}


@register_pass("jaxpr-pallas-to-mosaic")
@dataclass
class JaxprPallasToMosaicPass(Pass):
    """Lower pallas_calls with interpret=false to Mosaic kernels in tpu_custom_calls."""

    target_version: int = FORWARD_COMPATIBLE_VERSION
    dump_mosaic: bool = False
    dump_dir: str = ""
    load_dir: str = ""
    # (a user's instance runs before the pipeline's own, which runs before the
    # interpreter: both take the kernels before anything else does)
    point = "after-expansion"

    @staticmethod
    def options_on_device(platform_version: str) -> str:
        """The options jit's pipeline gives this pass when it compiles for the chip it
        runs on (`platform_version`: the TPU client's): the newest serde version that
        chip's libtpu reads, as JAX lowers there."""
        return f"target-version={serde_version_on_chip(platform_version)}"

    def run(self, module: ir.Module) -> None:
        names = analyses.op_names(module)
        if TpuCustomCallOp.OPERATION_NAME in names:
            # hand-written Mosaic kernels (mjax.experimental.mosaic.as_tpu_kernel)
            from mjax.passes.mosaic.tpu_kernel import lower_tpu_custom_calls
            lower_tpu_custom_calls(module, int(self.target_version))
        if PallasCallOp.OPERATION_NAME not in names:
            return      # (the op names the pipeline's passes share: no walk of its own)
        # (jaxlib's Mosaic bindings take ~0.1 s to import: only programs with TPU kernels
        # pay for them)
        from mjax.passes.mosaic.custom_call import (backend_config, kernel_metadata,
                                                    serialize, tpu_custom_call)
        from mjax.passes.mosaic.kernel import lower_pallas_call
        from mjax.passes.mosaic.remote import mesh_axes_used
        lowered, kept = set(), set()
        # Only calls reachable from a public function: transformations leave the
        # untransformed originals behind (dead until symbol-dce).
        calls = [op for fn in live_functions(module) for op in nested_ops(fn)
                 if op.name == PallasCallOp.OPERATION_NAME]
        for call in calls:
            params = op_params(call)
            if params.get("interpret", False):
                continue                         # left for --jaxpr-pallas-interpret
            kmod, name = lower_pallas_call(module, call, int(self.target_version))
            kmod = self._edited(call, name, kmod)
            if self.dump_dir:
                os.makedirs(self.dump_dir, exist_ok=True)
                with open(os.path.join(self.dump_dir, f"{name}.mlir"), "w") as f:
                    f.write(kmod.operation.get_asm(enable_debug_info=False))
            if self.dump_mosaic:
                print(f"// -----// Mosaic module for @{params['callee']} //----- //\n"
                      f"{kmod.operation.get_asm(enable_debug_info=False)}",
                      file=sys.stderr)
            body, has_communication = serialize(kmod, int(self.target_version))
            axes = mesh_axes_used(find_func(module, str(params["callee"])),
                                  params.get("mesh_axes"))
            _, outs = tpu_custom_call(call, backend_config(body, params, has_communication),
                                      name, kernel_metadata(params, axes))
            for old, res in zip(call.results, outs):
                old.replace_all_uses_with(res)
            call.erase()
            lowered |= _symbols(params)
        for op in nested_ops(module):              # kernels other calls still use stay
            if op.name == PallasCallOp.OPERATION_NAME:
                kept |= _symbols(op_params(op))
        for sym in lowered - kept:
            fn = find_func(module, sym)
            if fn is not None and is_private(fn):
                fn.operation.erase()


    def _edited(self, call, name: str, kmod: ir.Module) -> ir.Module:
        """The module of load-dir/<name>.mlir when there is one, else `kmod`."""
        path = os.path.join(self.load_dir, f"{name}.mlir") if self.load_dir else ""
        if not path or not os.path.exists(path):
            return kmod
        with open(path) as f:
            text = f.read()
        try:
            edited = ir.Module.parse(text)
            edited.operation.verify()
        except ir.MLIRError as e:
            raise op_error(call, f"jaxpr-pallas-to-mosaic: {path} is not a valid Mosaic "
                                 f"module: {e}") from None
        return edited


def serde_version_on_chip(platform_version: str) -> int:
    """The `target-version` for kernels compiled on a TPU whose PJRT client reports
    `platform_version` (jaxlib's `client.platform_version`): 0 (the newest) unless the
    chip's libtpu was built before JAX 0.10.2's cut-offs (11 before 2026-05-05, 13 before
    2026-06-08). Export and lowering for another platform use 11, the default. JAX:
    tpu_custom_call.get_ir_version."""
    import datetime
    import re
    if "TFRT TPU" not in platform_version:
        return 0
    stamps = re.findall(r"\((\d+)\)", platform_version.split("\n")[-1])
    if len(stamps) != 1:
        return FORWARD_COMPATIBLE_VERSION        # (no build date: assume the oldest)
    built = datetime.date.fromtimestamp(int(stamps[0]))
    if built.year <= 2010:                       # (test builds' dates mean nothing)
        return 0
    if built < datetime.date(2026, 5, 5):
        return FORWARD_COMPATIBLE_VERSION
    if built < datetime.date(2026, 6, 8):
        return 13
    return 0


def lower_pallas_to_mosaic(module: ir.Module,
                           target_version: int = FORWARD_COMPATIBLE_VERSION) -> None:
    """Runs the pass on `module` in place (for the platform record of the TPU)."""
    JaxprPallasToMosaicPass(target_version=target_version).run(module)


__all__ = ["FORWARD_COMPATIBLE_VERSION", "JaxprPallasToMosaicPass", "lower_pallas_to_mosaic",
           "serde_version_on_chip"]
