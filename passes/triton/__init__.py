"""Triton lowering rules for the ops of a Pallas kernel (`--jaxpr-pallas-to-triton`), one
module per op family; importing the package fills the `TRITON` RuleTable
(passes/rules/tables.py).

A rule is `rule(kl, op, *operands, **params) -> [values]`: operands are Triton values
(types.py: scalars for rank-0 tensors, power-of-2 tensors, `RefBlock`s for refs) and `kl`
is the kernel lowering (passes/triton/kernel.py): program ids, the grid, the platform,
and `lower_block` / `lower_function` for regions and callees. An op without a rule is an
error naming the op at its line, with the reason its family states.
"""
from mjax.passes.triton import (control_flow, elementwise, prints,  # noqa: F401
                                reductions, state, structural, unsupported)
