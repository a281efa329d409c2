"""Rules for the explicit MXU ops (dialect/ops/pallas_tpu_mxu.py): none but Mosaic's
(passes/mosaic/mxu.py). They drive the matrix unit's staging registers and accumulators,
state nothing else models; JAX's TPU interpret mode has no rule for them either (its
error: "MLIR translation rule for primitive 'matmul_push_rhs' not found")."""
from __future__ import annotations

from mjax.dialect.ops import pallas_tpu_mxu as MX
from mjax.passes.rules.tables import BATCH, JVP, LOWER, SHARD, TRANSPOSE, TRITON

_WHY = ("the explicit MXU ops (pltpu.matmul_push_rhs / matmul_acc_lhs / matmul_pop) run "
        "only in a kernel compiled for a TPU: interpret mode does not model the MXU's "
        "staging registers and accumulators (JAX's TPU interpret mode has no rule for "
        "them either); use jnp.dot or lax.dot_general in the kernel instead")
for _op in MX.MXU_OPS:
    for _table in (LOWER, BATCH, SHARD, JVP, TRANSPOSE, TRITON):
        _table.unsupported(_op, _WHY)

__all__: list[str] = []
