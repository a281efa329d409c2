"""A pass plugin for production builds: removes `debug.print` / `debug.callback` calls
(`jaxpr.callback` ops with a debug effect, and `jaxpr.debug_print`: a print inside a
Pallas kernel); pure and io callbacks stay. docs/passes.md walks through it.

    mjax-opt model.mlir --load-pass-plugin=examples/passes/strip_debug_prints.py \\
        --strip-debug-prints
    mjax.config.update("mjax_extra_passes", [StripDebugPrints()])   # every jit
"""
from __future__ import annotations

from mjax.dialect.ops.callbacks import CallbackOp
from mjax.dialect.ops.pallas_tpu import DebugPrintOp
from mjax.passes import Pass, Pattern, erase, register_pass

DEBUG_CALLBACK = Pattern(CallbackOp, effect=lambda e: e in ("debug", "debug_ordered"))
KERNEL_PRINT = Pattern(DebugPrintOp)      # pl.debug_print / debug.print in a Pallas kernel


@register_pass("strip-debug-prints")
class StripDebugPrints(Pass):
    """Remove debug.print and debug.callback calls."""

    point = "after-tracing"     # before grad/vmap copy them into derived functions

    def run(self, module):
        for op in [*DEBUG_CALLBACK.matches(module), *KERNEL_PRINT.matches(module)]:
            erase(op)
