"""Pallas TPU explicit MXU ops: a matmul driven step by step on one of the core's matrix
units (Mosaic's tpu.matmul_push_rhs / matmul_acc_lhs / matmul_pop).

    "jaxpr.matmul_push_rhs"(%rhs: T[k, n]) {staging_register, mxu_index, transpose}
        stages `rhs` (transposed if asked) in a staging register of MXU `mxu_index`.
    "jaxpr.matmul_acc_lhs"(%lhs: T[m, k]) {acc_addr, mxu_index, load_staged_rhs?}
        loads the staged rhs from register `load_staged_rhs` (when given), then adds
        lhs @ rhs into the accumulator slice at `acc_addr`.
    %r = "jaxpr.matmul_pop"() {acc_addr, mxu_index, shape, dtype} -> f32|i32[shape]
        the accumulator slice at `acc_addr`, zeroing it.

They act on the MXU's state (not pure), so only a kernel compiled for a TPU runs them:
JAX's TPU interpret mode has no rule for them either. JAX: pallas/mosaic/primitives.py
(matmul_push_rhs_p, matmul_acc_lhs_p, matmul_pop_p).
"""
from __future__ import annotations

import numpy as np

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.types import RefAval, ShapedArray

ACCUMULATOR_DTYPES = (np.dtype(np.float32), np.dtype(np.int32))


def _matrix(name, x):
    if isinstance(x, RefAval) or x.ndim != 2:
        raise TypeError(f"jaxpr.{name} takes a matrix (a rank-2 array), got "
                        f"{x.str_short()}")


class MatmulPushRhsOp(JaxprOp, name="matmul_push_rhs"):
    """Stages the rhs matrix in an MXU's staging register. JAX: pltpu.matmul_push_rhs."""

    num_operands = 1
    pure = False
    attributes = {"staging_register": A.Int(), "mxu_index": A.Int(),
                  "transpose": A.Bool(default=False)}

    @classmethod
    def infer(cls, rhs, *, staging_register, mxu_index, transpose=False):
        _matrix("matmul_push_rhs", rhs)
        return ()


class MatmulAccLhsOp(JaxprOp, name="matmul_acc_lhs"):
    """lhs @ (the MXU's rhs) added into an accumulator slice, after loading a staged rhs
    when `load_staged_rhs` names its register. JAX: pltpu.matmul_acc_lhs."""

    num_operands = 1
    pure = False
    attributes = {"acc_addr": A.Int(), "mxu_index": A.Int(),
                  "load_staged_rhs": A.Int(default=None)}

    @classmethod
    def infer(cls, lhs, *, acc_addr, mxu_index, load_staged_rhs=None):
        _matrix("matmul_acc_lhs", lhs)
        return ()


class MatmulPopOp(JaxprOp, name="matmul_pop"):
    """An accumulator slice of an MXU (f32 or i32), zeroing it. JAX: pltpu.matmul_pop."""

    num_operands = 0
    pure = False
    attributes = {"acc_addr": A.Int(), "mxu_index": A.Int(), "shape": A.Shape(),
                  "dtype": A.DType()}

    @classmethod
    def infer(cls, *, acc_addr, mxu_index, shape, dtype):
        if np.dtype(dtype) not in ACCUMULATOR_DTYPES:
            raise ValueError(f"Only float32 and int32 accumulators are supported, got "
                             f"{np.dtype(dtype)}")
        return (ShapedArray(tuple(shape), np.dtype(dtype)),)


MXU_OPS = (MatmulPushRhsOp, MatmulAccLhsOp, MatmulPopOp)

__all__ = ["ACCUMULATOR_DTYPES", "MXU_OPS", "MatmulAccLhsOp", "MatmulPopOp",
           "MatmulPushRhsOp"]
