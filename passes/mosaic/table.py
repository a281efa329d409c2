"""The `MOSAIC` RuleTable: op class -> Mosaic lowering rule (or the reason there is none).

    rule(kl: KernelLowering, op, *operands, **params) -> [values]

Operands are Mosaic values (types.py: scalars, vectors, `Const`s for jaxpr constants,
memrefs for refs); `kl` is the kernel lowering (kernel.py): grid indices, the grid,
`lower_block` for regions, `value(x, dtype)` to materialize a constant.
"""
from __future__ import annotations

from mjax.passes.rules.tables import MOSAIC   # (beside the other tables: ALL_TABLES)

__all__ = ["MOSAIC"]
