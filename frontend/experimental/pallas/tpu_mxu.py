"""pltpu's explicit MXU ops: a matmul driven step by step on one of the core's matrix
units: stage the rhs, accumulate lhs @ rhs into an accumulator slice, pop the slice.
Only a kernel compiled for a TPU runs them (interpret mode has no MXU model, as JAX's).
JAX: pltpu.matmul_push_rhs / matmul_acc_lhs / matmul_pop."""
from __future__ import annotations

import numpy as np

from mjax.dialect.ops import pallas_tpu_mxu as MX
from mjax.experimental.pallas import primitives as _p
from mjax.tracing.core import bind, current_trace


def _in_kernel(name: str) -> None:
    if current_trace() is None:          # (JAX's: its primitives have no impl)
        raise NotImplementedError(f"Evaluation rule for '{name}' not implemented")
    if getattr(_p.current_kernel(f"pltpu.{name}"), "interpret", False):
        raise NotImplementedError(
            f"pltpu.{name} in interpret mode: mjax's interpreter does not model the "
            f"MXU's staging registers and accumulators (JAX's TPU interpret mode has no "
            f"rule for it either: 'MLIR translation rule for primitive {name!r} not "
            f"found'); it runs only in a kernel compiled for a TPU")


def matmul_push_rhs(rhs, staging_register: int, mxu_index: int, *,
                    transpose: bool = False) -> None:
    """Stages `rhs` (transposed if asked) in staging register `staging_register` of MXU
    `mxu_index`, for a later matmul_acc_lhs(load_staged_rhs=staging_register) to load.
    JAX: pltpu.matmul_push_rhs."""
    _in_kernel("matmul_push_rhs")
    bind(MX.MatmulPushRhsOp, rhs, staging_register=int(staging_register),
         mxu_index=int(mxu_index), transpose=bool(transpose))


def matmul_acc_lhs(acc_addr: int, lhs, mxu_index: int,
                   load_staged_rhs: int | None = None) -> None:
    """Adds lhs @ rhs into the accumulator slice at `acc_addr` of MXU `mxu_index`, first
    loading the rhs staged in register `load_staged_rhs` when given (else the MXU's
    current rhs). JAX: pltpu.matmul_acc_lhs."""
    if isinstance(load_staged_rhs, (bool, np.bool_)):   # (True would mean register 1)
        raise TypeError("load_staged_rhs must be an integer or None.")
    _in_kernel("matmul_acc_lhs")
    bind(MX.MatmulAccLhsOp, lhs, acc_addr=int(acc_addr), mxu_index=int(mxu_index),
         load_staged_rhs=None if load_staged_rhs is None else int(load_staged_rhs))


def matmul_pop(acc_addr: int, shape: tuple[int, int], dtype, mxu_index: int):
    """The accumulator slice at `acc_addr` of MXU `mxu_index` as a `shape` array of
    `dtype` (float32 or int32), zeroing it. JAX: pltpu.matmul_pop."""
    if current_trace() is None:
        _in_kernel("matmul_pop")
    if np.dtype(dtype) not in MX.ACCUMULATOR_DTYPES:
        raise ValueError(f"Only float32 and int32 accumulators are supported, got "
                         f"{np.dtype(dtype)}")
    _in_kernel("matmul_pop")
    return bind(MX.MatmulPopOp, acc_addr=int(acc_addr), mxu_index=int(mxu_index),
                shape=tuple(int(d) for d in shape), dtype=np.dtype(dtype))


__all__ = ["matmul_acc_lhs", "matmul_pop", "matmul_push_rhs"]
