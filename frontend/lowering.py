"""The compile pipeline from a traced `jaxpr` module to StableHLO text."""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.config import config
from mjax.dialect import context
from mjax.passes import run_pipeline

# Expand transformations, inline calls, lower, then let upstream MLIR clean up.
PIPELINE = [(name, "") for name in ("jaxpr-expand-transforms", "jaxpr-inline", "jaxpr-dce",
                                    "jaxpr-to-stablehlo", "canonicalize", "cse",
                                    "symbol-dce")]


def lower_module(module: ir.Module) -> None:
    """Runs the pipeline in place (verifying after each pass when configured)."""
    after = None
    if config.read("mjax_verify_each_pass"):
        def after(name, m):
            run_pipeline(m, "jaxpr-verify")
    with context(), ir.Location.unknown(context()):
        run_pipeline(module, PIPELINE, after_each=after)


def lower_to_stablehlo(module: ir.Module) -> str:
    """The StableHLO text XLA compiles. It keeps locations: XLA turns them into each HLO
    op's metadata (source line, and `named_scope` names as op_name), which profiles and
    HLO dumps show."""
    lower_module(module)
    return module.operation.get_asm(enable_debug_info=True)
