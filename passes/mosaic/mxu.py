"""Mosaic rules of the explicit MXU ops (dialect/ops/pallas_tpu_mxu.py): each is its
Mosaic op, the indices attributes, as JAX's lowering emits them."""
from __future__ import annotations

from jaxlib.mosaic.python import tpu

from mjax.dialect.ops import pallas_tpu_mxu as MX
from mjax.passes.mosaic.table import MOSAIC
from mjax.passes.mosaic.types import avals_in, vtype


@MOSAIC.register(MX.MatmulPushRhsOp)
def _matmul_push_rhs(kl, op, rhs, *, staging_register, mxu_index, transpose=False,
                     **params):
    rhs = kl.value(rhs, avals_in(op)[0].dtype)
    tpu.matmul_push_rhs(rhs, mxu_index, staging_register=staging_register,
                        transpose=bool(transpose))
    return []


@MOSAIC.register(MX.MatmulAccLhsOp)
def _matmul_acc_lhs(kl, op, lhs, *, acc_addr, mxu_index, load_staged_rhs=None,
                    **params):
    lhs = kl.value(lhs, avals_in(op)[0].dtype)
    staged = {} if load_staged_rhs is None else {"load_staged_rhs": load_staged_rhs}
    tpu.matmul_acc_lhs(acc_addr, lhs, mxu_index, **staged)
    return []


@MOSAIC.register(MX.MatmulPopOp)
def _matmul_pop(kl, op, *, acc_addr, mxu_index, shape, dtype, **params):
    return [tpu.matmul_pop(vtype(shape, dtype), acc_addr, mxu_index)]


__all__: list[str] = []
