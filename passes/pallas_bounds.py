"""Bounds checks of JAX's TPU interpreter (pltpu.InterpretParams), for kernels the
--jaxpr-pallas-interpret pass expands: a block index past an input's or output's
(padded) end, and a read, write or swap of a kernel ref (or a DMA's window) outside
the buffer. With out_of_bounds_reads='raise' (JAX's default) each raises JAX's error
from a host callback run only where the access is out of bounds (a jaxpr.cond around
it: nothing is called otherwise); with 'uninitialized' an out-of-bounds read gives the
uninitialized value where it falls outside (writes still raise, as in JAX).

The frontend registers the callback (CHECKS["id"]); windows whose starts are constants
inside the buffer get no check.

JAX: pallas/mosaic/interpret/interpret_pallas_call.py (get, store, swap).
"""
from __future__ import annotations

import contextlib
import contextvars

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.builder import Builder
from mjax.dialect.dtype_rules import is_complex, is_float
from mjax.dialect.ops import control_flow as C
from mjax.dialect.ops.callbacks import CallbackOp
from mjax.dialect.types import aval_of

# {"id": the host callback raising JAX's error}, set by the frontend
CHECKS: dict = {}
READ, WRITE, SWAP, MASKED_SWAP, IN_BLOCK, OUT_BLOCK = range(6)
# (out_of_bounds_reads, uninitialized_memory) while a TPU-interpreted kernel is
# discharged; None otherwise
_MODE: contextvars.ContextVar = contextvars.ContextVar("pallas_bounds", default=None)


@contextlib.contextmanager
def bounds_checked(mode):
    token = _MODE.set(mode)
    try:
        yield
    finally:
        _MODE.reset(token)


def mode():
    return _MODE.get()


def uninitialized(dtype, mode: str = "") -> np.ndarray:
    """The scalar Pallas fills padding, unwritten outputs and scratch with in interpret
    mode: `mode` "" is interpret=True's (NaN, the integer minimum, false: JAX's
    hlo_interpreter), "nan" and "zero" pltpu.InterpretParams' uninitialized_memory
    (NaN, the integer maximum, true; or zeros: JAX's TPU interpreter)."""
    dtype = np.dtype(dtype)
    if mode == "zero":
        return np.zeros((), dtype)
    if is_float(dtype) or is_complex(dtype):
        return np.array(np.nan, dtype)
    if dtype.kind in "iu":
        return np.array(np.iinfo(dtype).max if mode else np.iinfo(dtype).min, dtype)
    if dtype == np.bool_ and mode:
        return np.ones((), dtype)
    return np.zeros((), dtype)


def _const(v: ir.Value) -> int | None:
    owner = v.owner
    if isinstance(owner, ir.Block) or owner.name != "jaxpr.constant":
        return None
    attr = owner.attributes["value"]
    try:
        return int(np.asarray(ir.DenseElementsAttr(attr).get_splat_value().value))
    except (ValueError, TypeError, AttributeError):
        return None


def as_i32(b, v: ir.Value) -> ir.Value:
    return v if str(aval_of(v.type).dtype) == "int32" else \
        b.convert_element_type(v, new_dtype=np.dtype(np.int32))


def outside(b, starts, sizes, shape):
    """An i1 scalar: whether the window of `sizes` at `starts` leaves `shape` (None
    where constant starts keep it inside)."""
    bad = None
    for st, z, n in zip(starts, sizes, shape):
        c = _const(st)
        if c is not None and 0 <= c and c + z <= n:
            continue
        st = as_i32(b, st)
        out = b.emit("or", b.lt(st, b.constant(np.int32(0))),
                     b.gt(b.add(st, b.constant(np.int32(z))), b.constant(np.int32(n))))[0]
        bad = out if bad is None else b.emit("or", bad, out)[0]
    return bad


def raise_if(b, bad, kind: int, starts, sizes, shape, extra=()):
    """Calls the check callback, only where `bad` (an i1 scalar) holds, with the window
    and `extra` (i32 scalars: the operand's index and the grid point, for a block)."""
    if bad is None or "id" not in CHECKS:
        return
    index = b.convert_element_type(bad, new_dtype=np.dtype(np.int32))
    const = [b.constant(np.int32(v)) for v in (kind, len(starts), *sizes, *shape)]
    # (the flag too: a batched cond, e.g. over a shard_map's devices, may run the call
    # for every member)
    args = [index, *const, *(as_i32(b, s) for s in starts), *extra]
    loc = b.loc
    with loc:
        holder = ir.Operation.create("mjax.region_holder", regions=2, ip=b.ip)
    blocks = []
    for r, call in enumerate((False, True)):
        block = ir.Block.create_at_start(holder.regions[r], [a.type for a in args])
        if call:
            Builder(ir.InsertionPoint(block), loc).emit(
                CallbackOp, *block.arguments, callback_id=CHECKS["id"],
                effect="unordered", result_shapes=None, result_dtypes=None,
                vmap_method=None)
        with loc:
            ir.Operation.create("jaxpr.yield", operands=[], ip=ir.InsertionPoint(block))
        blocks.append(block)
    C.CondOp.build([index, *args], [], {}, blocks, loc=loc, ip=b.ip)
    holder.erase()


def check_access(b, x, starts, sizes, kind: int) -> None:
    """The check of a kernel ref access (get, swap, a DMA's read or write) in a
    TPU-interpreted kernel; reads are not checked with out_of_bounds_reads set to
    'uninitialized' (see `read_padded`)."""
    m = mode()
    if m is None or (kind == READ and m[0] != "raise"):
        return
    shape = aval_of(x.type).shape
    raise_if(b, outside(b, starts, sizes, shape), kind, starts, sizes, shape)


def check_masked_swap(b, x, starts, sizes, squeezed, mask) -> None:
    """JAX's TPU interpreter's check of a masked swap: an element the mask selects
    outside the buffer raises."""
    if mode() is None:
        return
    shape = aval_of(x.type).shape
    if outside(b, starts, sizes, shape) is None:
        return
    kept = [d for d in range(len(sizes)) if d not in squeezed]
    window = tuple(sizes[d] for d in kept)
    bad = None
    for pos, d in enumerate(kept):
        at = b.add(b.iota(dtype=np.dtype(np.int32), shape=window, dimension=pos),
                   b.broadcast_in_dim(as_i32(b, starts[d]), shape=window,
                                      broadcast_dimensions=()))
        out = b.ge(at, b.constant(np.int32(shape[d]), shape=window))
        bad = out if bad is None else b.emit("or", bad, out)[0]
    bad = b.emit("and", bad, mask)[0]
    any_bad = b.reduce_or(bad, axes=tuple(range(len(window))))
    raise_if(b, any_bad, MASKED_SWAP, starts, sizes, shape)


def uninitialized_reads() -> str | None:
    """The uninitialized_memory fill when out-of-bounds reads give it, else None."""
    m = mode()
    return m[1] if m is not None and m[0] == "uninitialized" else None


def read_padded(b, x, sizes, fill: str):
    """`x` padded past its end by `sizes` with the uninitialized value: a window read
    from it at a start past the end gets that value where it falls outside."""
    a = aval_of(x.type)
    value = b.constant(uninitialized(a.dtype, fill))
    return b.pad(x, value, padding_config=tuple((0, int(z), 0) for z in sizes))


__all__ = ["CHECKS", "bounds_checked", "check_access", "outside", "raise_if",
           "read_padded", "uninitialized", "uninitialized_reads"]
