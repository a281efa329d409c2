"""The host callback raising JAX's TPU interpreter's out-of-bounds errors for kernels
interpreted with pltpu.InterpretParams (passes/pallas_bounds.py emits it, run only
where an access or a block falls outside its buffer). The error is raised in the
caller: JAX's IndexError or ValueError that is also a JaxRuntimeError (JAX's interpreter
raises it inside one)."""
from __future__ import annotations

import numpy as np

from mjax.arrays.host_callbacks import raise_in_caller, register
from mjax.base.errors import JaxRuntimeError
from mjax.passes.pallas_bounds import (CHECKS, IN_BLOCK, MASKED_SWAP, OUT_BLOCK, READ,
                                       SWAP, WRITE)


class OutOfBoundsReadError(IndexError, JaxRuntimeError):
    """JAX's IndexError for an out-of-bounds read or block index, which its interpreter
    raises inside a JaxRuntimeError: this is both."""

    def __init__(self, message: str):
        super().__init__(message)
        self._error_message = message       # (what JaxRuntimeError's str() shows)


class OutOfBoundsWriteError(ValueError, JaxRuntimeError):
    """JAX's ValueError for an out-of-bounds write or swap (inside a JaxRuntimeError)."""

    def __init__(self, message: str):
        super().__init__(message)
        self._error_message = message


def _range(starts, sizes) -> str:
    return ", ".join(f"{s}:{s + z}" for s, z in zip(starts, sizes))


def _check(bad, kind, rank, *vals):
    bad = np.asarray(bad)
    if not np.any(bad):
        return ()
    lane = np.unravel_index(int(np.argmax(bad)), bad.shape) if bad.ndim else ()
    kind, rank = int(np.ravel(kind)[0]), int(np.ravel(rank)[0])
    vals = [int(np.asarray(v)[lane] if np.ndim(v) else v) for v in vals]
    sizes, shape = tuple(vals[:rank]), tuple(vals[rank:2 * rank])
    starts, extra = vals[2 * rank:3 * rank], vals[3 * rank:]
    window = _range(starts, sizes)
    if kind in (IN_BLOCK, OUT_BLOCK):
        what = "input" if kind == IN_BLOCK else "output"
        index = tuple(s // z if z else s for s, z in zip(starts, sizes))
        raise_in_caller(OutOfBoundsReadError(
            f"Out-of-bounds block index {index} for {what} {extra[0]} in iteration "
            f"{tuple(extra[1:])}: {'reading' if kind == IN_BLOCK else 'writing'} "
            f"[{window}] but {what} has shape {shape}."))
    if kind == READ:
        raise_in_caller(OutOfBoundsReadError(
            f"Out-of-bounds read of a kernel buffer: reading [{window}] but buffer has "
            f"shape {shape}."))
    verb = {WRITE: "write", SWAP: "swap", MASKED_SWAP: "masked swap"}[kind]
    raise_in_caller(OutOfBoundsWriteError(
        f"Out-of-bounds {verb} of a kernel buffer: "
        f"{'writing' if kind == WRITE else 'swapping'} [{window}] but buffer has shape "
        f"{shape}."))


CHECKS["id"] = register(_check, "io_callback", key=("pallas_interpret_bounds",))

__all__ = ["OutOfBoundsReadError", "OutOfBoundsWriteError"]
