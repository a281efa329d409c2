"""`--jaxpr-to-stablehlo`: replace every `jaxpr` op with StableHLO/CHLO ops.

    %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  ==>
    %0 = stablehlo.sine %x : tensor<3xf32>

Rules live in `passes/rules/<family>.py` (table `LOWER`). An op without a rule, or an
unexpanded transformation op (`jaxpr.jvp`, ...), is an error naming the op and its line.
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir

from mjax.dialect.core import JaxprOp
from mjax.passes.registry import Pass, PassError, op_error, register_pass
from mjax.passes.rules import LOWER, NOT_SUPPORTED, LowerCtx


def lower_op(op: ir.Operation, backend: str = "xla") -> None:
    view = op.opview
    if not isinstance(view, JaxprOp):
        raise op_error(op, "is not a known jaxpr op")
    cls = type(view)
    rule = LOWER.get(cls)
    if rule is None:
        why = NOT_SUPPORTED.get(("lower", cls), "no StableHLO lowering rule for this op")
        raise op_error(op, f"jaxpr-to-stablehlo: {why}")
    ctx = LowerCtx(op=op, backend=backend, loc=op.location)   # avals read when asked
    try:
        with op.location, ir.InsertionPoint(op):
            results = rule(ctx, *op.operands, **view.params)
    except (PassError, NotImplementedError):
        raise
    except (TypeError, ValueError, ir.MLIRError) as e:
        raise op_error(op, f"jaxpr-to-stablehlo: lowering failed: {e}") from None
    if isinstance(results, ir.Value):
        results = [results]
    results = list(results)
    if len(results) != len(op.results):
        raise op_error(op, f"lowering rule returned {len(results)} values for "
                           f"{len(op.results)} results")
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()


@register_pass("jaxpr-to-stablehlo")
@dataclass
class JaxprToStablehloPass(Pass):
    """Lower every jaxpr op to StableHLO/CHLO (fails on ops it cannot lower)."""

    backend: str = "xla"

    def run(self, module: ir.Module) -> None:
        lower_nested(module.operation, self.backend)
        # Ordered host callbacks: one token chain per function, through control flow.
        from mjax.passes.rules.callbacks import thread_tokens
        thread_tokens(module)


def lower_nested(root: ir.Operation, backend: str = "xla") -> None:
    """Lowers the jaxpr ops nested under `root`. The bodies of jaxpr ops with regions
    (cond/while/scan) are left to those ops' rules, which lower them recursively."""
    for region in root.regions:
        for block in region.blocks:
            for op in list(block.operations):
                op = op.operation
                if op.name.startswith("jaxpr."):
                    lower_op(op, backend)
                elif len(op.regions):
                    lower_nested(op, backend)
