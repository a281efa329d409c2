"""A pass plugin on StableHLO (point "after-lowering"), written as upstream MLIR rewrite
patterns: `x / c` with a constant float `c` becomes `x * (1/c)` (a multiply is cheaper
than a divide; the result may differ from the division in the last bit). docs/passes.md
walks through it.

    mjax-opt model.mlir --jaxpr-to-stablehlo \\
        --load-pass-plugin=examples/passes/reciprocal_divide.py --reciprocal-divide
    jit(f, passes=[ReciprocalDivide()])
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from mjax.passes import Pass, apply_patterns, aval_of, register_pass


def _float_constant(value: ir.Value):
    """The value of an f32/f64 `stablehlo.constant` operand as a NumPy array, else None."""
    owner = value.owner
    if isinstance(owner, ir.Block) or owner.name != "stablehlo.constant":
        return None
    dtype = aval_of(value.type).dtype
    if dtype not in (np.float32, np.float64):
        return None
    attr = ir.DenseFPElementsAttr(owner.attributes["value"])
    if attr.is_splat:
        return np.full(aval_of(value.type).shape, ir.FloatAttr(attr.get_splat_value()).value,
                       dtype)
    return np.array(attr).astype(dtype)


def divide_by_constant(op, rewriter):
    """stablehlo.divide(x, c) -> stablehlo.multiply(x, 1/c); True: does not apply."""
    c = _float_constant(op.operands[1])
    if c is None or not np.all(np.isfinite(1 / c)) or np.any(c == 0):
        return True
    result_type = op.results[0].type
    with rewriter.ip, op.location:
        recip = stablehlo.ConstantOp(ir.DenseElementsAttr.get(
            np.ascontiguousarray(1 / c, dtype=c.dtype), type=op.operands[1].type))
        product = stablehlo.MulOp(op.operands[0], recip.result, results=[result_type])
    rewriter.replace_op(op, [product.result])
    return False


@register_pass("reciprocal-divide")
class ReciprocalDivide(Pass):
    """On StableHLO: divide by a float constant as multiply by its reciprocal."""

    point = "after-lowering"

    def run(self, module):
        apply_patterns(module, {"stablehlo.divide": divide_by_constant})
