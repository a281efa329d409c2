"""Triton lowering rules of the Pallas ops: grid queries and ref accesses.

A ref indexer becomes a scalar `tt.addptr` of the block and indexer starts plus a tensor
of offsets from `tt.make_range`/`tt.expand_dims`/`tt.broadcast`; `ref_get`/`masked_load`
are `tt.load` (mask, other), `ref_swap`/`masked_swap` a `tt.store` (the old value is
loaded only when used), `atomic_rmw` and `ref_addupdate` `tt.atomic_rmw`.

    %v = "jaxpr.ref_get"(%x, %c0) {sizes = array<i64: 128>, squeezed = array<i64>}
  ==>
    %p = tt.addptr %x, %block_start        ; scalar start of the block
    %r = tt.make_range {start = 0, end = 128} : tensor<128xi32>
    %v = tt.load (tt.addptr (tt.splat %p), %r)
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.triton import dialect as tt

from mjax.dialect.ops import state as S
from mjax.passes.rules.tables import TRITON
from mjax.passes.triton.builders import (binary, broadcast_to, convert, expand_to, full, i32,
                                         make_range)
from mjax.passes.triton.types import (RefBlock, TritonLoweringError, check_pow2, is_float,
                                      is_unsigned)


@TRITON.register(S.ProgramIdOp)
def _program_id(kl, op, *, axis, **params):
    return [kl.program_id(axis)]


@TRITON.register(S.NumProgramsOp)
def _num_programs(kl, op, *, axis, **params):
    return [i32(kl.grid[axis])]   # the grid is static


def _int_dtype(v: ir.Value):
    """The signed dtype of an integer scalar (indexer starts are i32; i64 tolerated)."""
    return np.int64 if ir.IntegerType(v.type).width == 64 else np.int32


def ref_pointers(ref: RefBlock, starts: list, sizes, squeezed) -> tuple[ir.Value, tuple]:
    """The pointers a ref indexer reads: (pointer scalar or tensor, value shape).

    Scalar parts (block start + indexer start) fold into one `tt.addptr` on the base;
    each sliced dim adds a `tt.make_range` laid along its own axis of the value."""
    dims = ref.ref_dims
    if len(starts) != len(dims) or len(sizes) != len(dims):
        raise TritonLoweringError(f"ref indexer has {len(starts)} starts and {len(sizes)} "
                                  f"sizes for a ref of rank {len(dims)}")
    strides = [int(np.prod(ref.array_shape[d + 1:], dtype=np.int64))
               for d in range(len(ref.array_shape))]
    n_elems = int(np.prod(ref.array_shape, dtype=np.int64))
    off_dt = np.int64 if n_elems >= 2 ** 31 else np.int32
    value_shape = tuple(s for k, s in enumerate(sizes) if k not in squeezed)
    check_pow2(value_shape, "a ref access")
    base = None
    ref_dim_of = {d: k for k, d in enumerate(dims)}
    for d, start in enumerate(ref.starts):
        s = convert(start, _int_dtype(start), off_dt)
        if d in ref_dim_of:
            k = starts[ref_dim_of[d]]
            s = binary("add", s, convert(k, _int_dtype(k), off_dt), off_dt)
        if strides[d] != 1:
            s = binary("mul", s, full(strides[d], off_dt), off_dt)
        base = s if base is None else binary("add", base, s, off_dt)
    ptr = ref.ptr if base is None else tt.addptr(ref.ptr.type, ref.ptr, base)
    if not value_shape:
        return ptr, value_shape
    ptrs = broadcast_to(ptr, value_shape)
    offsets = None
    pos = 0
    for k, size in enumerate(sizes):
        if k in squeezed:
            continue
        r = convert(make_range(size), np.int32, off_dt)
        stride = strides[dims[k]]
        if stride != 1:
            r = binary("mul", r, full(stride, off_dt, (size,)), off_dt)
        r = broadcast_to(expand_to(r, pos, len(value_shape)), value_shape)
        offsets = r if offsets is None else binary("add", offsets, r, off_dt)
        pos += 1
    return tt.addptr(ptrs.type, ptrs, offsets), value_shape


def load(ref: RefBlock, ptrs, mask=None, other=None) -> ir.Value:
    if ref.dtype == np.bool_ and other is not None:
        other = convert(other, np.bool_, np.int8)
    v = tt.load(ptrs, mask=mask, other=other, cache=tt.CacheModifier.NONE,
                evict=tt.EvictionPolicy.NORMAL, is_volatile=False)
    return convert(v, np.int8, np.bool_) if ref.dtype == np.bool_ else v


def store(ref: RefBlock, ptrs, value, mask=None) -> None:
    if ref.dtype == np.bool_:
        value = convert(value, np.bool_, np.uint8)
    tt.store(ptrs, value, mask=mask, cache=tt.CacheModifier.NONE,
             evict=tt.EvictionPolicy.NORMAL)


def _ref_operand(op, ref) -> RefBlock:
    if not isinstance(ref, RefBlock):
        raise TritonLoweringError(f"{op.name}: operand 0 is not a kernel ref (scratch "
                                  f"buffers and refs made inside kernels are not "
                                  f"supported by the Triton lowering)")
    return ref


@TRITON.register(S.RefGetOp)
def _ref_get(kl, op, ref, *starts, sizes, squeezed=(), **params):
    ref = _ref_operand(op, ref)
    ptrs, _ = ref_pointers(ref, list(starts), sizes, squeezed)
    return [load(ref, ptrs)]


@TRITON.register(S.MaskedLoadOp)
def _masked_load(kl, op, ref, mask, other, *starts, sizes, squeezed=(), **params):
    ref = _ref_operand(op, ref)
    ptrs, shape = ref_pointers(ref, list(starts), sizes, squeezed)
    return [load(ref, ptrs, broadcast_to(mask, shape), broadcast_to(other, shape))]


def _swap(op, ref, val, mask, starts, sizes, squeezed) -> list:
    ref = _ref_operand(op, ref)
    ptrs, shape = ref_pointers(ref, list(starts), sizes, squeezed)
    val = broadcast_to(val, shape)
    if mask is not None:
        mask = broadcast_to(mask, shape)
    # The old value is read only when the kernel uses it (most stores ignore it).
    old = load(ref, ptrs, mask, val if mask is not None else None) if list(
        op.results[0].uses) else val
    store(ref, ptrs, val, mask)
    return [old]


@TRITON.register(S.RefSwapOp)
def _ref_swap(kl, op, ref, val, *starts, sizes, squeezed=(), **params):
    return _swap(op, ref, val, None, starts, sizes, squeezed)


@TRITON.register(S.MaskedSwapOp)
def _masked_swap(kl, op, ref, val, mask, *starts, sizes, squeezed=(), **params):
    return _swap(op, ref, val, mask, starts, sizes, squeezed)


_RMW_INT = {"add": "ADD", "max": "MAX", "min": "MIN", "and": "AND", "or": "OR",
            "xor": "XOR", "xchg": "XCHG"}
_RMW_UINT = {**_RMW_INT, "max": "UMAX", "min": "UMIN"}
_RMW_FLOAT = {"add": "FADD", "xchg": "XCHG"}


def atomic(ref: RefBlock, ptrs, val, mask, kind: str) -> ir.Value:
    dtype = np.dtype(ref.dtype)
    table = _RMW_FLOAT if is_float(dtype) else _RMW_UINT if is_unsigned(dtype) else _RMW_INT
    if kind not in table or dtype == np.bool_:
        raise TritonLoweringError(f"atomic {kind!r} on {dtype.name} is not supported by "
                                  f"Triton (kinds: {', '.join(sorted(table))})")
    return tt.atomic_rmw(val.type, getattr(tt.RMWOp, table[kind]), ptrs, val,
                         tt.MemSemantic.ACQUIRE_RELEASE, tt.MemSyncScope.GPU, mask=mask)


@TRITON.register(S.AtomicRmwOp)
def _atomic_rmw(kl, op, ref, val, mask, *starts, kind="add", sizes, squeezed=(), **params):
    ref = _ref_operand(op, ref)
    ptrs, shape = ref_pointers(ref, list(starts), sizes, squeezed)
    return [atomic(ref, ptrs, broadcast_to(val, shape), broadcast_to(mask, shape), kind)]


@TRITON.register(S.RefAddUpdateOp)
def _ref_addupdate(kl, op, ref, val, *starts, sizes, squeezed=(), **params):
    # Atomic, as in JAX: programs of a grid may add into the same block.
    ref = _ref_operand(op, ref)
    ptrs, shape = ref_pointers(ref, list(starts), sizes, squeezed)
    atomic(ref, ptrs, broadcast_to(val, shape), None, "add")
    return []


TRITON.unsupported(S.RefNewOp, "a kernel's refs are its arguments (and scratch); "
                               "jax.new_ref inside a kernel is not supported")
TRITON.unsupported(S.StridedGetOp, "strided and reshaped ref reads (ref[s::k], "
                                   "ref.reshape(...)[...]) are lowered for the TPU only "
                                   "(tpu.strided_load, tpu.memref_reshape)")
TRITON.unsupported(S.StridedSwapOp, "strided and reshaped ref writes (ref[s::k] = v, "
                                    "ref.reshape(...)[...] = v) are lowered for the TPU "
                                    "only (tpu.strided_store, tpu.memref_reshape)")
