"""Mosaic lowering rules of the Pallas ref ops and grid queries.

A ref access reads or writes a window of a kernel memref: each start becomes an `index`
(a constant for a static start, `arith.index_cast` of a traced one). VMEM refs use
`vector.load` / `tpu.vector_store` (a swap loads the old value first, as JAX does; masked
ones pass the mask to `tpu.vector_store`), SMEM refs `memref.load` / `memref.store` of
scalars. Squeezed dims are loaded with size 1 and dropped by `vector.shape_cast`. An
access through chained views (the op's `mjax.chained_view` windows) slices each window
but the last, as JAX does (`tpu.memref_slice`, `tpu.memref_squeeze`), then indexes the
last in that view; where views' starts meet on a dim, the op's start is the frontend's
add of them, which lowers to its terms (types.ViewStart) that each window takes. A read
whose value is unused emits nothing (JAX DCEs the kernel). `ref_addupdate` is refused,
as JAX's lowering has no rule for it.

    %v = "jaxpr.ref_get"(%x, %c0, %c0) {sizes = array<i64: 8, 128>, squeezed = array<i64>}
  ==>
    %v = vector.load %x[%c0, %c0_0] : memref<8x128xf32, #tpu.memory_space<vmem>>,
                                       vector<8x128xf32>
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import arith, memref, vector
from jaxlib.mosaic.python import tpu

from mjax.dialect.ops import pallas_tpu as PT
from mjax.dialect.ops import state as S
from mjax.dialect.values import attr
from mjax.passes.mosaic.memory import ref_view
from mjax.passes.mosaic.table import MOSAIC
from mjax.passes.mosaic.random import key_load, loads_keys
from mjax.passes.mosaic.types import (BlockRef, Const, MosaicLoweringError, ViewStart, aval_out,
                                      avals_in, elt_type, expand_ref, full, index,
                                      materialize, ref_space, ref_type, vtype)


@MOSAIC.register(S.ProgramIdOp)
def _program_id(kl, op, *, axis, **params):
    return [kl.program_id(axis)]


@MOSAIC.register(S.NumProgramsOp)
def _num_programs(kl, op, *, axis, **params):
    if not 0 <= axis < len(kl.grid):
        raise MosaicLoweringError(f"num_programs axis {axis} is out of range for a grid "
                                  f"of rank {len(kl.grid)}")
    if kl.grid[axis] < 0:       # a dynamic grid dimension (JAX: tpu.iteration_bound)
        return [tpu.iteration_bound(axis)]
    return [Const(np.asarray(kl.grid[axis], np.int32))]


def _indices(starts) -> list[ir.Value]:
    out = []
    for s in starts:
        if isinstance(s, Const):
            out.append(index(int(s.value)))
        else:
            out.append(arith.index_cast(ir.IndexType.get(), materialize(s)))
    return out


def _window(op, ref, starts, sizes, squeezed):
    """The memref and the full-rank window a ref op names (types.expand_ref)."""
    ref, starts, sizes, squeezed = expand_ref(ref, starts, sizes, squeezed)
    if not isinstance(getattr(ref, "type", None), ir.MemRefType):
        raise MosaicLoweringError(f"{op.name}: operand 0 is not a kernel ref")
    return ref, _indices(starts), sizes, squeezed


def _dtype_of_ref(op):
    return avals_in(op)[0].dtype


def _memory_dtype(dtype):
    """The dtype a ref of `dtype` holds in memory (booleans as i32, as JAX stores them)."""
    return np.int32 if np.dtype(dtype) == np.bool_ else dtype


def _to_bool(v: ir.Value, dtype, shape) -> ir.Value:
    """A loaded i32 as the bool it stands for (!= 0); other dtypes unchanged."""
    if np.dtype(dtype) != np.bool_:
        return v
    return arith.cmpi(arith.CmpIPredicate.ne, v, full(0, np.int32, shape))


def _from_bool(v: ir.Value, dtype, shape) -> ir.Value:
    if np.dtype(dtype) != np.bool_:
        return v
    return arith.extui(vtype(shape, np.int32), v)


def _check_space(ref) -> str:
    space = ref_space(ref)
    if space not in ("vmem", "smem"):
        raise MosaicLoweringError(
            f"loads and stores are only allowed on VMEM and SMEM refs, not {space}"
            + (" (ANY refs are accessed with async copies)" if space == "any" else ""))
    return space


def load(ref, idx, sizes, squeezed, dtype, cast: bool = False) -> ir.Value:
    """The window `sizes` at `idx` of `ref`, without its squeezed dims (`cast`: reshaped
    even when the shape stays, as JAX reshapes a key's data to its physical shape)."""
    out_shape = [s for k, s in enumerate(sizes) if k not in squeezed]
    if _check_space(ref) == "smem":
        if out_shape:
            raise MosaicLoweringError("only scalars can be read from SMEM refs "
                                      f"(read of shape {tuple(out_shape)})")
        return _to_bool(memref.load(ref, idx), dtype, ())
    mem = _memory_dtype(dtype)
    v = vector.load(vtype(list(sizes), mem), ref, idx)
    if list(sizes) != out_shape or cast:
        if not out_shape:
            v = vector.extract(v, [], [0] * len(sizes))
        else:
            v = vector.shape_cast(vtype(out_shape, mem), v)
    return _to_bool(v, dtype, out_shape)


def swap(ref, idx, val, sizes, squeezed, dtype, mask=None, want_old=True):
    """Stores `val` into the window, returning the old value (JAX's swap order: load the
    old value, cast the new one to its memory type, reshape both, store)."""
    shape = [s for k, s in enumerate(sizes) if k not in squeezed]
    if _check_space(ref) == "smem":
        if mask is not None:
            raise MosaicLoweringError("masked stores to SMEM refs are not supported")
        if shape:
            raise MosaicLoweringError(f"only scalars can be stored to SMEM refs (store of "
                                      f"shape {tuple(shape)})")
        old = _to_bool(memref.load(ref, idx), dtype, ())
        memref.store(_from_bool(val, dtype, ()), ref, idx)
        return old
    if not shape:
        raise MosaicLoweringError("scalars cannot be stored to VMEM refs")
    mem = _memory_dtype(dtype)
    old = vector.load(vtype(list(sizes), mem), ref, idx)
    val = _from_bool(val, dtype, shape)
    if list(sizes) != shape:
        old = vector.shape_cast(vtype(shape, mem), old)
        val = vector.shape_cast(vtype(list(sizes), mem), val)
        if mask is not None:
            mask = vector.shape_cast(vtype(list(sizes), np.bool_), mask)
    old = _to_bool(old, dtype, shape)
    tpu.VectorStoreOp(val, ref, idx, [], mask=mask)
    return old


CHAINED_VIEW = "mjax.chained_view"     # (frontend/experimental/pallas/primitives.py)


def _chain(kl, op, ref, starts, sizes, squeezed):
    """The window of an access through chained views, as JAX makes it: the views but
    the last sliced one by one (`tpu.memref_slice`/`memref_squeeze`, memory.ref_view),
    the last the access's own indices into that; (memref, starts, sizes, squeezed), or
    None when the op has no chain or its chain does not fold to the op's window (a pass
    rewrote the op: its own starts and sizes are the truth)."""
    chain = attr(op, CHAINED_VIEW)
    if not isinstance(chain, dict):
        return None
    try:
        levels, lsizes, lsq, lstarts, traced = (
            [int(x) for x in chain[k]]
            for k in ("levels", "sizes", "squeezed", "starts", "traced"))
    except (KeyError, TypeError, ValueError):
        return None
    shape = tuple(avals_in(op)[0].shape)
    try:
        folded = PT.fold_view(shape, levels, lsizes, lsq)
    except TypeError:
        return None
    level_starts = [Const(np.asarray(v, np.int32)) for v in lstarts]
    for d, (at, size, sq, _) in enumerate(folded):
        if size != int(sizes[d]) or sq != (d in tuple(squeezed)):
            return None
        values = _split_start(starts[d], [None if p in traced else lstarts[p] for p in at])
        if values is None:
            return None
        for p, v in zip([p for p in at if p in traced], values):
            level_starts[p] = v
    view, at = ref, 0
    windows = PT.view_levels(shape, levels, lsizes, lsq)
    for _, lv_sizes, lv_sq in windows[:-1]:
        view = ref_view(kl, view, level_starts[at:at + len(lv_sizes)], list(lv_sizes),
                        tuple(lv_sq), always=True)
        at += len(lv_sizes)
    _, lv_sizes, lv_sq = windows[-1]
    return view, level_starts[at:], list(lv_sizes), tuple(lv_sq)


def _split_start(start, parts):
    """The traced views' starts (in order) on one dim of an access whose op start
    `start` the frontend folded from the views' `parts` (each a static start, or None
    where traced), or None if it does not fold them. Ref.resolve folds static starts in
    Python until a traced one; from there each nonzero static start is one more term of
    its add (a ViewStart: types.py), zeros none."""
    pattern, acc, seen = [], 0, False
    for v in parts:
        if v is None:
            if not seen and acc:
                pattern.append(acc)
            pattern.append(None)
            seen = True
        elif not seen:
            acc += v
        elif v:
            pattern.append(v)
    if not seen:
        pattern = [acc]
    terms = start.terms if isinstance(start, ViewStart) else [start]
    if len(terms) != len(pattern):
        return None
    values = []
    for want, term in zip(pattern, terms):
        if want is None:
            values.append(term)
        elif not isinstance(term, Const) or int(term.value) != want:
            return None
    return values


def _access(kl, op, ref, starts, sizes, squeezed):
    """(memref, indices, sizes, squeezed) of a ref op's window: its chain's last window
    when it has one, else the whole window on the ref (_window)."""
    chain = _chain(kl, op, ref, list(starts), sizes, squeezed)
    if chain is None:
        return _window(op, ref, starts, sizes, squeezed)
    view, starts, sizes, squeezed = chain
    return view, _indices(starts), sizes, squeezed


@MOSAIC.register(S.RefGetOp)
def _ref_get(kl, op, ref, *starts, sizes, squeezed=(), **params):
    if loads_keys(op):          # (a Pallas key's words, read as scalars: random.py)
        return [key_load(ref, list(starts), sizes, squeezed)]
    if unused(op):
        return [None]
    # (the data of a key array's block: JAX loads the key, then casts to its data's shape)
    base = ref.value if isinstance(ref, BlockRef) else ref
    keys = any(base == r for r in kl.key_refs)
    ref, idx, sizes, squeezed = _access(kl, op, ref, starts, sizes, squeezed)
    return [load(ref, idx, sizes, squeezed, _dtype_of_ref(op),
                 cast=keys or under_shard_map(kl))]


def under_shard_map(kl) -> bool:
    """Whether the kernel was traced in a shard_map: JAX's load rule then casts each
    loaded block to its own shape (the value's aval, carrying the shard_map's mesh, is
    not the load's)."""
    return bool(kl.mesh[0])


def _strided_view(kl, op, ref, starts, sizes, squeezed, shape, reshaped, bitcast):
    """(the memref an access through a reshaped and/or bitcast view indexes, its dtype,
    the access's starts), as JAX's _transform_ref makes it: the view sliced
    (tpu.memref_slice/memref_squeeze: memory.ref_view), `tpu.memref_reshape` to its new
    shape (for any `.reshape`, as JAX's), `tpu.memref_bitcast` to the bitcast view's
    type; with JAX's refusals of a reshape of a rank-1 view or of one squeezed (None in
    the BlockSpec) in its last two dims."""
    n = len(sizes)
    squeezed_block = isinstance(ref, BlockRef) and ref.squeezed
    if bitcast is not None and squeezed_block:
        raise MosaicLoweringError(
            "a bitcast view of a block with squeezed dims (None in its BlockSpec) is not "
            "supported: JAX bitcasts the block's memref, squeezed dims and all")
    if reshaped:
        # (JAX's block shape: the block's squeezed dims count where no window is taken)
        rank = n + len(ref.squeezed) if squeezed_block and not squeezed else \
            n - len(squeezed)
        if rank < 2:
            raise MosaicLoweringError("Reshape 1D ref is not supported.")
        if squeezed_block and not squeezed and any(
                d in tuple(ref.squeezed) for d in (rank - 2, rank - 1)):
            raise MosaicLoweringError("Reshape a ref with squeezed dimension on last two "
                                      "dimensions.")
    whole = squeezed_block and not squeezed and tuple(sizes) == tuple(
        avals_in(op)[0].shape) and all(isinstance(s, Const) and int(s.value) == 0
                                       for s in starts[:n])
    # (a whole block with squeezed dims: JAX reshapes its memref, squeezed dims and all)
    view = ref.value if whole and reshaped else ref_view(
        kl, ref, list(starts[:n]), list(sizes), tuple(squeezed))
    if _check_space(view) != "vmem":
        raise MosaicLoweringError("strided, reshaped and bitcast reads and writes are only "
                                  "supported on VMEM refs")
    t = ir.MemRefType(view.type)
    if reshaped or tuple(t.shape) != tuple(shape):
        view = tpu.memref_reshape(ir.MemRefType.get(list(shape), t.element_type,
                                                    memory_space=t.memory_space), view)
    dtype = _dtype_of_ref(op)
    if bitcast is not None:
        dtype = np.dtype(bitcast)
        read = S.bitcast_shape(shape, _dtype_of_ref(op), dtype)
        view = tpu.memref_bitcast(ir.MemRefType.get(list(read), elt_type(dtype),
                                                    memory_space=t.memory_space), view)
    return view, dtype, _indices(starts[n:])


@MOSAIC.register(S.StridedGetOp)
def _strided_get(kl, op, ref, *starts, sizes, squeezed=(), shape, access_sizes,
                 access_strides, access_squeezed=(), reshaped=False, bitcast=None,
                 **params):
    """A read through a reshaped and/or bitcast view and/or with strides, as JAX lowers
    it: the view (_strided_view), then `tpu.strided_load` (`vector.load` where every
    stride is 1); squeezed dims dropped by `vector.shape_cast`."""
    if unused(op):
        return [None]
    view, dtype, idx = _strided_view(kl, op, ref, starts, sizes, squeezed, shape,
                                     reshaped, bitcast)
    if all(int(st) == 1 for st in access_strides):
        return [load(view, idx, list(access_sizes), tuple(access_squeezed), dtype,
                     cast=under_shard_map(kl))]
    mem = _memory_dtype(dtype)
    v = tpu.strided_load(vtype(list(access_sizes), mem), view, idx,
                         [int(st) for st in access_strides])
    out = [k for d, k in enumerate(access_sizes) if d not in access_squeezed]
    if out != list(access_sizes) or under_shard_map(kl):
        v = vector.shape_cast(vtype(out, mem), v)
    return [_to_bool(v, dtype, out)]


@MOSAIC.register(S.StridedSwapOp)
def _strided_swap(kl, op, ref, val, *starts, sizes, squeezed=(), shape, access_sizes,
                  access_strides, access_squeezed=(), reshaped=False, bitcast=None,
                  **params):
    """A write through a reshaped and/or bitcast view and/or with strides, as JAX's swap
    rule: the view (_strided_view), the old value loaded (`tpu.strided_load`, or
    `vector.load` where every stride is 1), the new one cast to its memory type, both
    reshaped where dims are squeezed, then `tpu.strided_store` (`tpu.vector_store`)."""
    view, dtype, idx = _strided_view(kl, op, ref, starts, sizes, squeezed, shape,
                                     reshaped, bitcast)
    val = kl.value(val, dtype)
    strides = [int(st) for st in access_strides]
    if all(st == 1 for st in strides):
        return [swap(view, idx, val, list(access_sizes), tuple(access_squeezed), dtype)]
    out = [k for d, k in enumerate(access_sizes) if d not in access_squeezed]
    if not out:
        raise MosaicLoweringError("scalars cannot be stored to VMEM refs")
    mem = _memory_dtype(dtype)
    old = tpu.strided_load(vtype(list(access_sizes), mem), view, idx, strides)
    val = _from_bool(val, dtype, out)
    if out != list(access_sizes):
        old = vector.shape_cast(vtype(out, mem), old)
        val = vector.shape_cast(vtype(list(access_sizes), mem), val)
    old = _to_bool(old, dtype, out)
    tpu.strided_store(val, view, idx, strides)
    return [old]


def unused(op) -> bool:
    """Whether a read's value is unused: JAX's lowering never sees it (the kernel's jaxpr
    is DCE'd, and reads do not count as effects there)."""
    return not any(True for _ in op.results[0].uses)


@MOSAIC.register(S.MaskedLoadOp)
def _masked_load(kl, op, ref, mask, other, *starts, sizes, squeezed=(), **params):
    if unused(op):
        return [None]
    ref, idx, sizes, squeezed = _access(kl, op, ref, starts, sizes, squeezed)
    dtype = _dtype_of_ref(op)
    v = load(ref, idx, sizes, squeezed, dtype)
    return [arith.select(kl.value(mask, np.bool_), v, kl.value(other, dtype))]


def _swap(kl, op, ref, val, mask, starts, sizes, squeezed):
    dtype = _dtype_of_ref(op)
    val = kl.value(val, dtype)
    ref, idx, sizes, squeezed = _access(kl, op, ref, starts, sizes, squeezed)
    return [swap(ref, idx, val, sizes, squeezed, dtype,
                 None if mask is None else kl.value(mask, np.bool_))]


@MOSAIC.register(S.RefSwapOp)
def _ref_swap(kl, op, ref, val, *starts, sizes, squeezed=(), **params):
    return _swap(kl, op, ref, val, None, starts, sizes, squeezed)


@MOSAIC.register(S.MaskedSwapOp)
def _masked_swap(kl, op, ref, val, mask, *starts, sizes, squeezed=(), **params):
    return _swap(kl, op, ref, val, mask, starts, sizes, squeezed)


MOSAIC.unsupported(S.RefAddUpdateOp, "JAX's Pallas TPU lowering has no rule for "
                                     "addupdate ('Unimplemented primitive in Pallas TPU "
                                     "lowering for tc: addupdate'): write x_ref[idx] += v "
                                     "(a load and a store)")
MOSAIC.unsupported(S.AtomicRmwOp, "atomics are a GPU feature; TPU kernels own their "
                                  "output blocks (use semaphores and DMAs to share)")
def _erase_unused(v) -> None:
    """Erases the ops that computed `v` (empty_ref's zero fill, already lowered as the
    ref's `init`) while nothing else uses them: JAX's kernel has no fill."""
    while isinstance(v, ir.Value) and not any(True for _ in v.uses):
        owner = getattr(v.owner, "operation", None)
        if owner is None or owner.name not in ("vector.broadcast", "arith.constant"):
            return
        operands = list(owner.operands)
        owner.erase()
        if not operands:
            return
        v = operands[0]


@MOSAIC.register(S.RefNewOp)
def _new_ref(kl, op, init, *, memory_space=None):
    # jax.empty_ref(ty, memory_space=...): a memref.alloca where it is made, its contents
    # unspecified (JAX's empty_ref rule); `init` (zeros, for interpret mode) is not stored
    if memory_space is None:
        raise MosaicLoweringError("a kernel's refs are its arguments and scratch buffers: "
                                  "allocate more with pl.run_scoped or "
                                  "jax.empty_ref(ty, memory_space=pltpu.VMEM)")
    if sum(1 for _ in op.operands[0].uses) == 1:     # (the fill is no other op's)
        _erase_unused(init)
    a = aval_out(op)
    return [memref.alloca(ref_type(a.shape, a.dtype, memory_space), [], [])]

__all__ = ["load", "swap"]
