"""Ops over refs (Pallas kernels' mutable buffers, typed `memref<...>`): reads, writes,
masked loads and stores, atomics, and the grid queries `program_id` / `num_programs`.

Every ref op indexes its ref the same way: after its other operands come one start index
per ref dimension (integer scalars; static starts are `jaxpr.constant`s), and two
attributes say what is read or written:

    sizes    = array<i64: ...>   the extent along each ref dim (1 for an integer index)
    squeezed = array<i64: ...>   the dims indexed by an integer: dropped from the value

so the value has shape `sizes` without the squeezed dims. `ref[...]` is all starts 0,
sizes = the ref's shape, squeezed = [].

    %v   = "jaxpr.ref_get"(%ref, %s0, %s1) {sizes, squeezed}              -> value
    %old = "jaxpr.ref_swap"(%ref, %val, %s0, %s1) {sizes, squeezed}       -> old value
           "jaxpr.ref_addupdate"(%ref, %val, %s0, %s1) {sizes, squeezed}  -> ()
    %v   = "jaxpr.masked_load"(%ref, %mask, %other, %s0..) {sizes, squeezed}
    %old = "jaxpr.masked_swap"(%ref, %val, %mask, %s0..) {sizes, squeezed}
    %old = "jaxpr.atomic_rmw"(%ref, %val, %mask, %s0..) {kind = "add", sizes, squeezed}
    %i   = "jaxpr.program_id"() {axis = 0}                                 -> i32[]
    %n   = "jaxpr.num_programs"() {axis = 0}                               -> i32[]
    %ref = "jaxpr.ref_new"(%init)                                           -> memref
    %v   = "jaxpr.strided_get"(%ref, %s0.., %t0..) {sizes, squeezed, shape,
                 access_sizes, access_strides, access_squeezed, bitcast?}
                 (a read through a reshaped and/or bitcast view, or a strided one)
    %old = "jaxpr.strided_swap"(%ref, %val, %s0.., %t0..) {strided_get's attributes}
                 (a write through such a view)

Starts are clamped so the slice stays inside the ref (as dynamic_slice does). Ref ops
are never pure: reads must stay ordered with the writes around them (no CSE, no DCE).
`--jaxpr-discharge-state` turns them into value ops. JAX: state/primitives.py (get_p,
swap_p, addupdate_p) and pallas/primitives.py (load_p, swap_p with masks, atomic_rmw_p,
program_id_p, num_programs_p).
"""
from __future__ import annotations

import numpy as np

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.dtype_rules import bitwidth
from mjax.dialect.types import RefAval, ShapedArray

ATOMIC_KINDS = ("add", "max", "min", "and", "or", "xor", "xchg")


def indexed_shape(op: str, ref, sizes, squeezed) -> tuple[int, ...]:
    """The shape of the value `sizes`/`squeezed` select from `ref` (checked)."""
    if len(sizes) != ref.ndim:
        raise TypeError(f"{op} sizes {tuple(sizes)} must have one entry per dimension of "
                        f"the ref {ref.str_short()}")
    for d, (s, n) in enumerate(zip(sizes, ref.shape)):
        if not 0 <= s <= n:
            raise TypeError(f"{op} size {s} along dimension {d} is out of range for the ref "
                            f"{ref.str_short()}")
    if list(squeezed) != sorted(set(squeezed)) or any(not 0 <= d < ref.ndim for d in squeezed):
        raise TypeError(f"{op} squeezed dimensions {tuple(squeezed)} must be increasing "
                        f"dimensions of the ref {ref.str_short()}")
    for d in squeezed:
        if sizes[d] != 1:
            raise TypeError(f"{op} squeezed dimension {d} must have size 1, got "
                            f"{sizes[d]}")
    return tuple(s for d, s in enumerate(sizes) if d not in squeezed)


class RefOp(JaxprOp):
    """Base of ops indexing a ref: operands (ref, *values, *starts)."""

    num_operands = None
    pure = False
    num_values = 0           # operands between the ref and the starts
    attributes = {"sizes": A.Ints(), "squeezed": A.Ints(default=())}

    @classmethod
    def split(cls, avals_or_values):
        """(ref, values, starts) of an operand list."""
        k = 1 + cls.num_values
        return avals_or_values[0], list(avals_or_values[1:k]), list(avals_or_values[k:])

    @classmethod
    def value_aval(cls, avals, sizes, squeezed) -> ShapedArray:
        """Checks the ref and the starts; the aval of the indexed value."""
        name = cls.OPERATION_NAME
        if len(avals) < 1 + cls.num_values:
            raise TypeError(f"{name} expects a ref and {cls.num_values} value operand(s) "
                            f"before its start indices, got {len(avals)} operands")
        ref, _, starts = cls.split(list(avals))
        if not isinstance(ref, RefAval):
            raise TypeError(f"{name} operand 0 must be a ref (memref), got {ref.str_short()}")
        if len(starts) != ref.ndim:
            raise TypeError(f"{name} takes one start index per dimension of the ref "
                            f"{ref.str_short()}, got {len(starts)}")
        for i, s in enumerate(starts):
            if isinstance(s, RefAval) or s.shape != () or np.dtype(s.dtype).kind not in "iu":
                raise TypeError(f"{name} start index {i} must be an integer scalar, got "
                                f"{s.str_short()}")
        return ShapedArray(indexed_shape(name, ref, sizes, squeezed), ref.dtype)

    @classmethod
    def check_value(cls, what: str, got, want: ShapedArray) -> None:
        if isinstance(got, RefAval) or got.shape != want.shape or got.dtype != want.dtype:
            raise TypeError(f"{cls.OPERATION_NAME} {what} has type {got.str_short()}, expected "
                            f"{want.str_short()} (the indexed part of the ref)")

    @classmethod
    def check_mask(cls, got, want: ShapedArray) -> None:
        if isinstance(got, RefAval) or got.shape != want.shape or got.dtype != np.bool_:
            raise TypeError(f"{cls.OPERATION_NAME} mask has type {got.str_short()}, expected "
                            f"bool{list(want.shape)} (one flag per indexed element)")


class RefGetOp(RefOp, name="ref_get"):
    """Reads ref[starts : starts + sizes] (squeezed dims dropped). JAX: state get_p."""

    @classmethod
    def infer(cls, *avals, sizes, squeezed):
        return (cls.value_aval(avals, sizes, squeezed),)


class RefSwapOp(RefOp, name="ref_swap"):
    """Writes `val` into the indexed part of the ref; gives the old value.
    JAX: state swap_p (`ref[idx] = val` is a swap whose result is unused)."""
    num_values = 1

    @classmethod
    def infer(cls, *avals, sizes, squeezed):
        v = cls.value_aval(avals, sizes, squeezed)
        cls.check_value("value", avals[1], v)
        return (v,)


class RefAddUpdateOp(RefOp, name="ref_addupdate"):
    """Adds `val` to the indexed part of the ref. JAX: state addupdate_p."""
    num_values = 1

    @classmethod
    def infer(cls, *avals, sizes, squeezed):
        v = cls.value_aval(avals, sizes, squeezed)
        cls.check_value("value", avals[1], v)
        return ()


class MaskedLoadOp(RefOp, name="masked_load"):
    """Reads the indexed part where `mask` holds, `other` elsewhere (out-of-bounds
    elements a mask hides are never read). JAX: pallas load_p with mask/other."""
    num_values = 2

    @classmethod
    def infer(cls, *avals, sizes, squeezed):
        v = cls.value_aval(avals, sizes, squeezed)
        cls.check_mask(avals[1], v)
        cls.check_value("other", avals[2], v)
        return (v,)


class MaskedSwapOp(RefOp, name="masked_swap"):
    """Writes `val` where `mask` holds; gives the old value. JAX: pallas swap_p with a
    mask (pl.store(..., mask=))."""
    num_values = 2

    @classmethod
    def infer(cls, *avals, sizes, squeezed):
        v = cls.value_aval(avals, sizes, squeezed)
        cls.check_value("value", avals[1], v)
        cls.check_mask(avals[2], v)
        return (v,)


class AtomicRmwOp(RefOp, name="atomic_rmw"):
    """ref[idx] = kind(ref[idx], val) where `mask` holds, atomically; gives the old
    value. JAX: pallas atomic_rmw_p (pl.atomic_add, ...)."""
    num_values = 2
    attributes = {"kind": A.Str(choices=ATOMIC_KINDS), **RefOp.attributes}

    @classmethod
    def infer(cls, *avals, kind, sizes, squeezed):
        v = cls.value_aval(avals, sizes, squeezed)
        cls.check_value("value", avals[1], v)
        cls.check_mask(avals[2], v)
        if kind in ("and", "or", "xor") and np.dtype(v.dtype).kind not in "iub":
            raise TypeError(f"jaxpr.atomic_rmw kind '{kind}' needs an integer ref, got "
                            f"{v.str_short()}")
        return (v,)


def bitcast_shape(shape, src, dst, error=TypeError) -> tuple[int, ...]:
    """The shape of a ref of `shape` and dtype `src` viewed as `dst`, as JAX's TPU rule
    (state/utils.py bitcast): the second-minor dim scaled by the bitwidths' ratio, which
    needs rank >= 2 where they differ (else NotImplementedError in JAX's frontend) and
    a second-minor dim the ratio divides (else ValueError); `error` is raised for both."""
    a, b = bitwidth(src), bitwidth(dst)           # (int4: 4 bits)
    shape = list(shape)
    if a == b:
        return tuple(shape)
    if len(shape) < 2:
        raise error("Bitcast 1D ref with bitwidth change is not supported.")
    if shape[-2] * a % b:
        raise error("Expected input and output shapes are the same after multiplying the "
                    f"second-minor dimension by the bitwidths (a ref of shape {tuple(shape)}"
                    f" and {a}-bit elements viewed as {b}-bit ones)")
    shape[-2] = shape[-2] * a // b
    return tuple(shape)


class StridedAccess(RefOp):
    """Base of strided_get and strided_swap: an access through a reshaped and/or bitcast
    view of the ref, strided or not (attributes: StridedGetOp's)."""
    attributes = {**RefOp.attributes, "shape": A.Shape(), "access_sizes": A.Ints(),
                  "access_strides": A.Ints(), "access_squeezed": A.Ints(default=()),
                  "reshaped": A.Bool(default=False), "bitcast": A.DType(default=None)}

    @classmethod
    def access_aval(cls, avals, *, sizes, squeezed, shape, access_sizes, access_strides,
                    access_squeezed=(), reshaped=False, bitcast=None) -> ShapedArray:
        """Checks the operands and attributes; the aval of what the access reads or
        writes."""
        name = cls.OPERATION_NAME
        ref = avals[0]
        if not isinstance(ref, RefAval):
            raise TypeError(f"{name} operand 0 must be a ref (memref), got {ref.str_short()}")
        k = 1 + cls.num_values + ref.ndim
        view = cls.value_aval(avals[:k], sizes, squeezed).shape
        for i, st in enumerate(avals[k:]):
            if isinstance(st, RefAval) or st.shape != () or np.dtype(st.dtype).kind not in "iu":
                raise TypeError(f"{name} start {i} in the reshaped view must be an integer "
                                f"scalar, got {st.str_short()}")
        if len(avals) != k + len(shape):
            raise TypeError(f"{name} takes one start per dimension of the ref and one per "
                            f"dimension of its view's shape {tuple(shape)}, got "
                            f"{len(avals) - 1 - cls.num_values}")
        if int(np.prod(view, dtype=np.int64)) != int(np.prod(shape, dtype=np.int64)):
            raise TypeError(f"{name} cannot reshape the view of shape {view} to "
                            f"{tuple(shape)}")
        dtype, read = ref.dtype, tuple(shape)
        if bitcast is not None:
            if np.dtype(bitcast) == np.bool_ or np.dtype(dtype) == np.bool_:
                raise TypeError(f"{name} cannot bitcast a view to or from bool")
            try:
                read = bitcast_shape(shape, dtype, bitcast)
            except TypeError as e:
                raise TypeError(f"{name} bitcast to {np.dtype(bitcast).name}: {e}") from None
            dtype = bitcast
        if not len(access_sizes) == len(access_strides) == len(read):
            raise TypeError(f"{name} access_sizes and access_strides need one entry per "
                            f"dimension of {read}")
        for d, (n, size, stride) in enumerate(zip(read, access_sizes, access_strides)):
            if stride < 1 or size < 0 or (size and (size - 1) * stride + 1 > n):
                raise TypeError(f"{name} reads {size} elements {stride} apart along "
                                f"dimension {d} of size {n}")
        out = indexed_shape(name, RefAval(read, dtype), access_sizes, access_squeezed)
        return ShapedArray(out, dtype)


class StridedGetOp(StridedAccess, name="strided_get"):
    """Reads through a reshaped and/or bitcast view of the ref and/or every stride-th
    element (a Pallas TPU kernel's `ref.reshape(...)[idx]`, `ref.bitcast(dtype)[idx]`
    and `ref[start::step]`; JAX: a get through RefReshaper / RefBitcaster transforms or
    with a strided NDIndexer, which Mosaic lowers to tpu.memref_reshape,
    tpu.memref_bitcast and tpu.strided_load). Operands: (ref, one start per ref dim, one
    start per dim of the read view). `sizes`/`squeezed` are the view's window on the ref
    (as the other ref ops'), `shape` the view's shape after its reshape (its own shape
    for none); `bitcast` (if set) the dtype that view is then read as, its
    second-minor dim scaled by the bitwidths' ratio (bitcast_shape: JAX's TPU rule);
    `access_sizes`/`access_strides`/`access_squeezed` what the read takes of the view
    so made: `access_sizes[d]` elements from its start, `access_strides[d]` apart;
    `reshaped` whether the read goes through `.reshape` (JAX's lowering reshapes then,
    even to the view's own shape)."""

    @classmethod
    def infer(cls, *avals, **params):
        return (cls.access_aval(avals, **params),)


class StridedSwapOp(StridedAccess, name="strided_swap"):
    """Writes `val` through a reshaped and/or bitcast view of the ref and/or to every
    stride-th element (`ref.reshape(...)[idx] = v`, `ref.bitcast(dtype)[idx] = v`,
    `ref[start::step] = v`); gives the old value. Operands: (ref, val, the starts of
    strided_get), attributes strided_get's; `val` has the type strided_get would read.
    JAX: a swap through RefReshaper / RefBitcaster transforms or with a strided
    NDIndexer (Mosaic: tpu.memref_reshape, tpu.memref_bitcast, then tpu.strided_store,
    or tpu.vector_store without strides)."""
    num_values = 1

    @classmethod
    def infer(cls, *avals, **params):
        v = cls.access_aval(avals, **params)
        if len(avals) > 1:
            cls.check_value("value", avals[1], v)
        return (v,)


class RefNewOp(JaxprOp, name="ref_new"):
    """A new ref holding `init` (a copy). JAX: core.ref_p (jax.new_ref inside a trace).
    `--jaxpr-discharge-state` makes the ref's value `init`. With `memory_space` ("vmem",
    "smem", ...: jax.empty_ref(ty, memory_space=...) in a Pallas TPU kernel, JAX's
    empty_ref_p) the ref is a buffer of that memory whose contents are unspecified:
    `init` (zeros) gives its type and interpret mode's contents; Mosaic allocates it."""
    num_operands = 1
    pure = False
    attributes = {"memory_space": A.Str(default=None, choices=(
        "any", "vmem", "smem", "hbm", "vmem_shared"))}

    @classmethod
    def infer(cls, init, memory_space=None):
        if isinstance(init, RefAval):
            raise TypeError(f"jaxpr.ref_new takes an array, got the ref {init.str_short()}")
        return (RefAval(init.shape, init.dtype, init.weak_type),)


class GridQueryOp(JaxprOp):
    """Base of program_id / num_programs: an i32 scalar about grid axis `axis`."""
    num_operands = 0
    attributes = {"axis": A.Int()}

    @classmethod
    def infer(cls, *, axis):
        if axis < 0:
            raise TypeError(f"{cls.OPERATION_NAME} axis must be nonnegative, got {axis}")
        return (ShapedArray((), np.int32),)


class ProgramIdOp(GridQueryOp, name="program_id"):
    """This kernel instance's index along grid axis `axis`. JAX: pallas program_id_p."""


class NumProgramsOp(GridQueryOp, name="num_programs"):
    """The grid's size along axis `axis`. JAX: pallas num_programs_p."""


REF_OPS = (RefGetOp, RefSwapOp, RefAddUpdateOp, MaskedLoadOp, MaskedSwapOp, AtomicRmwOp,
           StridedGetOp, StridedSwapOp)

__all__ = ["ATOMIC_KINDS", "AtomicRmwOp", "GridQueryOp", "MaskedLoadOp", "MaskedSwapOp",
           "NumProgramsOp", "ProgramIdOp", "REF_OPS", "RefAddUpdateOp", "RefGetOp", "RefNewOp",
           "RefOp",
           "RefSwapOp", "StridedAccess", "StridedGetOp", "StridedSwapOp", "bitcast_shape", "indexed_shape"]
