"""Mosaic lowering of Pallas TPU kernels (`--jaxpr-pallas-to-mosaic`), one module per op
family; importing the package fills the `MOSAIC` RuleTable (table.py).

A rule is `rule(kl, op, *operands, **params) -> [values]`: operands are Mosaic values
(types.py: scalars for rank-0 tensors, vectors, `Const`s for jaxpr constants, memrefs for
refs) and `kl` is the kernel lowering (kernel.py): grid indices, the grid, the target
serde version, and `lower_block` for regions. An op without a rule is an error naming
the op at its line, with the reason its family states. custom_call.py serializes the
module into the `tpu_custom_call` libtpu compiles.
"""
from mjax.passes.mosaic import (control_flow, debug, elementwise, gather,  # noqa: F401
                                memory, random, reductions, state, structural,
                                unsupported)
from mjax.passes.mosaic import mxu  # noqa: F401  (explicit MXU matmul ops)
