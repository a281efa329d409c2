"""Refs in Pallas kernels: `Ref` (what a kernel's arguments are), indexing with ints,
slices and `pl.ds`, and `.at[...]` views.

A ref's index is normalized to one (start, size, squeezed) triple per dimension of the
underlying buffer, the form every ref op takes (dialect/ops/state.py): starts are Python
ints or traced integer scalars, sizes are static, or traced integer scalars where a
`pl.ds(start, size)` has a traced size: such a view (its `shape` holds the size, as
JAX's) is what DMAs copy; loads and stores need static sizes, as in JAX's Mosaic
lowering. JAX: state/indexing.py (Slice, NDIndexer) and state/types.py (TransformedRef).
"""
from __future__ import annotations

import numpy as np

from mjax import lax
from mjax import ref as array_refs
from mjax.dialect.dtype_rules import bitwidth
from mjax.dialect.ops import state as S
from mjax.tracing.axis_env import AXIS_ENV
from mjax.tracing.core import Tracer, bind
from mjax.dialect.ops.pallas_tpu import DYNAMIC_SIZE, VIEW_START
from mjax.dialect.values import defining_op_of, set_attr
from mjax.dialect.types import RefAval, ShapedArray, short_dtype_name
from mjax.experimental.pallas import primitives
from mjax.specs import dtypes
from mjax.specs.ref_slice import Slice, ds, dslice  # noqa: F401  (pl.ds is jax.ds)




def _int_scalar(x) -> bool:
    aval = getattr(x, "aval", None)
    if aval is not None:
        return aval.shape == () and np.dtype(aval.dtype).kind in "iu"
    return isinstance(x, (int, np.integer)) and not isinstance(x, bool)


def normalize_index(idx, shape) -> list[tuple]:
    """(start, size, squeezed) per dim of `shape` for a NumPy-style index of ints, slices,
    pl.ds and `...` (static ints are bounds-checked and wrapped like NumPy)."""
    if not isinstance(idx, tuple):
        idx = (idx,)
    if sum(1 for i in idx if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if any(i is Ellipsis for i in idx):
        k = next(n for n, i in enumerate(idx) if i is Ellipsis)
        fill = len(shape) - (len(idx) - 1)
        idx = idx[:k] + (slice(None),) * max(fill, 0) + idx[k + 1:]
    if len(idx) > len(shape):
        raise IndexError(f"too many indices for a ref of shape {tuple(shape)}: got "
                         f"{len(idx)}")
    idx = tuple(idx) + (slice(None),) * (len(shape) - len(idx))
    out = []
    for d, (i, n) in enumerate(zip(idx, shape)):
        if not isinstance(n, int):                 # (a dim of traced size)
            if isinstance(i, slice) and i == slice(None):
                out.append((0, n, False))
                continue
            if isinstance(i, slice) or (isinstance(i, (int, np.integer)) and i < 0):
                raise NotImplementedError(f"dimension {d} of the ref has a traced size; "
                                          f"index it with ':', pl.ds or an index >= 0")
            if isinstance(i, (int, np.integer)):
                out.append((int(i), 1, True))
                continue
        if isinstance(i, slice):
            i = Slice.from_slice(i, n)
        if isinstance(i, Slice):
            if i.stride != 1:
                raise NotImplementedError("strided slices of refs (pl.ds with stride > 1) "
                                          "are not supported by mjax's Pallas")
            if i.is_dynamic_size:
                if not _int_scalar(i.size):
                    raise TypeError(f"pl.ds size must be an integer scalar, got "
                                    f"{i.size!r}")
                if not (isinstance(i.start, (int, np.integer)) or _int_scalar(i.start)):
                    raise TypeError(f"pl.ds start must be an integer scalar, got "
                                    f"{i.start!r}")
                if isinstance(i.start, (int, np.integer)) and not 0 <= i.start <= n:
                    raise ValueError(f"slice {i} is out of bounds for dimension {d} of "
                                     f"size {n}")
                out.append((i.start, i.size, False))
                continue
            if not isinstance(n, int):
                out.append((i.start, i.size, False))
                continue
            if isinstance(i.start, (int, np.integer)):
                if not 0 <= i.start or i.size > n or 0 < n <= i.start:
                    raise ValueError(f"slice {i} is out of bounds for dimension {d} of "
                                     f"size {n}")
            elif not _int_scalar(i.start):
                raise TypeError(f"pl.ds start must be an integer scalar, got {i.start!r}")
            out.append((i.start, i.size, False))
        elif i is None:
            raise NotImplementedError("None (newaxis) in a ref index is not supported")
        elif _int_scalar(i):
            if isinstance(i, (int, np.integer)):
                if 0 <= i and not i < n and primitives.tpu_interpreting() and \
                        not AXIS_ENV.meshes:
                    # (JAX's TPU interpreter checks it when it runs: pallas_bounds.py;
                    # on a shard_map's devices it is refused here still, as an error
                    # one device raises at run time leaves the others in a collective)
                    out.append((int(i), 1, True))
                    continue
                if not -n <= i < n:
                    raise IndexError(f"index {i} is out of bounds for dimension {d} of the "
                                     f"ref with size {n}")
                i = int(i) % n if n else 0
            out.append((i, 1, True))
        else:
            raise NotImplementedError(
                f"indexing a ref with {type(i).__name__} (array indices) is not supported; "
                f"use ints, slices and pl.ds")
    return out


def _gathers(idx) -> bool:
    """Whether an interpret-mode kernel indexes a ref with integer arrays (NumPy's
    advanced indexing), with ints and plain slices beside them: the whole ref is read
    and indexed as an array (a gather; a write is a scatter into the whole, written
    back), as JAX's interpreter discharges it. Elsewhere normalize_index refuses them."""
    idx = idx if isinstance(idx, tuple) else (idx,)
    arrays = [i for i in idx if isinstance(i, list) or getattr(i, "shape", ()) != ()]
    return bool(arrays) and primitives.interpreting() and not any(
        isinstance(i, Slice) for i in idx)


def _is_strided(i) -> bool:
    return (isinstance(i, slice) and i.step not in (None, 1)) or (
        isinstance(i, Slice) and i.stride != 1)


def _has_stride(idx) -> bool:
    return any(_is_strided(i) for i in (idx if isinstance(idx, tuple) else (idx,)))


def strided_index(idx, shape) -> tuple[list[tuple], list[int]]:
    """normalize_index's (start, size, squeezed) per dim of `shape`, and each dim's
    stride (a slice's step or pl.ds's stride; 1 elsewhere)."""
    idx = idx if isinstance(idx, tuple) else (idx,)
    if sum(1 for i in idx if i is Ellipsis) == 1:
        k = idx.index(Ellipsis)
        idx = idx[:k] + (slice(None),) * max(len(shape) - (len(idx) - 1), 0) + idx[k + 1:]
    plain, strides = [], []
    for d, i in enumerate(idx):
        if d < len(shape) and _is_strided(i):
            n = shape[d]
            i = Slice.from_slice(i, n) if isinstance(i, slice) else i
            if i.is_dynamic_size:
                raise NotImplementedError("a strided pl.ds needs a static size")
            if isinstance(i.start, (int, np.integer)) and i.size and not (
                    0 <= i.start and i.start + (i.size - 1) * i.stride < n):
                raise ValueError(f"strided slice {i} is out of bounds for dimension {d} of "
                                 f"size {n}")
            plain.append(Slice(i.start, i.size))
            strides.append(i.stride)
        else:
            plain.append(i)
            strides.append(1)
    out = normalize_index(tuple(plain), shape)
    return out, strides + [1] * (len(out) - len(strides))


def _strided_args(ref: "Ref", idx, shape, bitcast):
    """(starts, params, the accessed value's shape and dtype) of a strided_get or
    strided_swap of `idx` through `ref` reshaped to `shape` (None: no reshape), then
    bitcast to `bitcast` (None: none)."""
    view_starts, params = ref.op_args(...)
    params["reshaped"] = shape is not None
    shape = ref.shape if shape is None else tuple(shape)
    read, dtype = shape, ref.dtype
    if bitcast is not None:
        params["bitcast"] = dtype = bitcast
        read = bitcast_view_shape(shape, ref.dtype, bitcast)
    index, strides = strided_index(idx, read)
    if any(not isinstance(n, (int, np.integer)) for _, n, _ in index):
        raise NotImplementedError("a strided or reshaped read or write needs static sizes")
    params.update(shape=shape, access_sizes=tuple(int(n) for _, n, _ in index),
                  access_strides=tuple(strides),
                  access_squeezed=tuple(d for d, (_, _, sq) in enumerate(index) if sq))
    starts = [*view_starts, *[_as_i32(st) for st, _, _ in index]]
    out = tuple(int(n) for _, n, sq in index if not sq)
    return starts, params, out, dtype


def strided_get(ref: "Ref", idx, shape=None, bitcast=None):
    """`ref[idx]` read through the view reshaped to `shape` (None: no reshape), then
    bitcast to `bitcast` (None: none), with the strides `idx` may have: one
    jaxpr.strided_get (JAX: tpu.memref_reshape, tpu.memref_bitcast, then
    tpu.strided_load, or vector.load without strides)."""
    starts, params, _, _ = _strided_args(ref, idx, shape, bitcast)
    return bind(S.StridedGetOp, ref.tracer, *starts, **params)


def strided_swap(ref: "Ref", idx, value, shape=None, bitcast=None):
    """`ref[idx] = value` through the view strided_get reads (the value cast and
    broadcast as a store's); the old value. One jaxpr.strided_swap (JAX: a swap through
    the view's transforms: tpu.memref_reshape, tpu.memref_bitcast, then the old value's
    load and tpu.strided_store, or tpu.vector_store without strides)."""
    starts, params, out, dtype = _strided_args(ref, idx, shape, bitcast)
    value = primitives._coerce("value", value, ShapedArray(out, dtype), "swap")
    return bind(S.StridedSwapOp, ref.tracer, value, *starts, **params)


def bitcast_view_shape(shape, src, dst) -> tuple[int, ...]:
    """The shape of a view of `shape` and dtype `src` bitcast to `dst`, with JAX's errors
    (state/utils.py bitcast): NotImplementedError for a rank-1 view whose bitwidth
    changes, ValueError where the ratio does not divide the second-minor dim, and
    IndexError for a rank-0 or rank-1 view of the same bitwidth (JAX's rule scales the
    second-minor dim whether the bitwidth changes or not)."""
    a, b = bitwidth(src), bitwidth(dst)                   # (int4: 4 bits)
    if a != b and len(shape) < 2:
        raise NotImplementedError("Bitcast 1D ref with bitwidth change is not supported.")
    if len(shape) < 2:
        raise IndexError(f"a bitcast view of a ref of rank {len(shape)}: JAX's shape rule "
                         f"needs a second-minor dimension (rank >= 2)")
    return S.bitcast_shape(shape, src, dst, error=ValueError)


def _view_start(total):
    """`total`, the add of two views' starts on one dim, its op marked VIEW_START: the
    TPU lowering takes the views' starts apart again where an access goes through the
    views (JAX slices once per view; passes/mosaic/types.py), any other reader the sum."""
    op = defining_op_of(getattr(total, "value", None))
    if op is not None:
        set_attr(op, VIEW_START, True)
    return total


def _as_i32(x):
    if isinstance(x, (int, np.integer)):
        return np.int32(x)
    if np.dtype(x.aval.dtype) != np.int32:
        return lax.convert_element_type(x, np.int32)
    return x


class _StateOps:
    """What mjax.ref.get/swap/addupdate do with a kernel's ref (`Ref._state_ops`): the
    ref ops `ref[idx]` binds; an index of None or () is the whole ref."""

    @staticmethod
    def _whole(idx):
        return ... if idx is None or idx == () else idx

    @classmethod
    def get(cls, ref, idx):
        if _has_stride(idx):
            return strided_get(ref, idx)
        return primitives.load(ref, cls._whole(idx))

    @classmethod
    def swap(cls, ref, idx, value):
        if _has_stride(idx):
            return strided_swap(ref, idx, value)
        return primitives.swap(ref, cls._whole(idx), value)

    @classmethod
    def addupdate(cls, ref, idx, value):
        primitives.addupdate(ref, cls._whole(idx), value)


class Ref:
    """A kernel's mutable buffer (or a view of one through `.at[...]`).

    `ref[idx]` reads, `ref[idx] = v` writes; `shape`/`dtype` describe the (view's)
    value. JAX: a Pallas kernel's Ref / TransformedRef."""

    __slots__ = ("tracer", "index", "views")
    _state_ops = _StateOps     # (what mjax.ref.get/swap/addupdate do with a kernel's ref)
    _inline_in_jit = True      # (a jit called on it runs in place: mjax/jit/jitted.py)

    def __init__(self, tracer: Tracer, index=None, views=None):
        self.tracer = tracer          # the buffer: a traced memref value
        base = tracer.aval.shape
        self.index = list(index) if index is not None else [(0, n, False) for n in base]
        # the `.at[...]` windows the view was made by, each over the one before (what
        # DMAs name, as JAX keeps them); `index` is all of them in one
        self.views = list(views) if views is not None else (
            [] if index is None else [self.index])

    # -- what the ref holds ------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(s for _, s, sq in self.index if not sq)

    @property
    def dtype(self):
        return self.tracer.aval.dtype

    @property
    def aval(self) -> RefAval:
        """The (view's) type, as jax.Ref's: what jnp.zeros_like(ref) reads (no load)."""
        return RefAval(self.shape, self.dtype)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized ref")
        return self.shape[0]

    def __repr__(self):
        dims = [str(n) if isinstance(n, int) else "?" for n in self.shape]
        return f"Ref<{short_dtype_name(self.dtype)}[{','.join(dims)}]>"

    @property
    def is_dynamic_size(self) -> bool:
        """Whether a `pl.ds` with a traced size made part of the view's shape."""
        return any(not isinstance(s, (int, np.integer)) for _, s, _ in self.index)

    # -- indexing ------------------------------------------------------------------------
    def resolve(self, idx) -> list[tuple]:
        """(start, size, squeezed) per dim of the buffer for `idx` on this view."""
        inner = iter(normalize_index(idx, self.shape))
        out = []
        for start, size, sq in self.index:
            if sq:
                out.append((start, size, sq))
                continue
            s2, size2, sq2 = next(inner)
            if isinstance(start, (int, np.integer)) and isinstance(s2, (int, np.integer)):
                out.append((int(start) + int(s2), size2, sq2))
            elif isinstance(start, (int, np.integer)) and start == 0:
                out.append((s2, size2, sq2))
            elif isinstance(s2, (int, np.integer)) and s2 == 0:
                out.append((start, size2, sq2))
            else:
                out.append((_view_start(_as_i32(start) + _as_i32(s2)), size2, sq2))
        return out

    def op_args(self, idx):
        """(starts, params) for a ref op reading/writing `idx` of this view."""
        index = self.resolve(idx)
        if any(not isinstance(s, (int, np.integer)) for _, s, _ in index):
            raise NotImplementedError(
                f"reading or writing {self!r} at {idx!r}: a view of traced size (pl.ds "
                f"with a traced size) can only be copied by a DMA (pltpu.make_async_copy),"
                f" as in JAX's Mosaic lowering; copy it into a buffer of static shape first")
        starts = [_as_i32(s) for s, _, _ in index]
        params = {"sizes": tuple(int(s) for _, s, _ in index),
                  "squeezed": tuple(d for d, (_, _, sq) in enumerate(index) if sq)}
        return starts, params

    def chain_args(self, idx):
        """JAX's windows of a read or write of `idx` through this view, where it keeps
        them apart (chained `.at`s, or a `.at` then an index: one NDIndexer each, the
        last the access's own; `ref[...]` adds none): {"levels": each window's rank,
        "sizes", "squeezed" (positions in sizes), "starts" (the static ones; 0 where
        traced), "traced" (positions of traced starts)}, or None for one window. The
        op's own starts stay the folded ones (`resolve`); where traced starts meet
        others on a dim, the add that folds them is marked (`_view_start`), and the TPU
        lowering takes its terms apart again."""
        levels = list(self.views)
        if not (idx is None or idx is Ellipsis or (isinstance(idx, tuple) and not idx)):
            levels.append(normalize_index(idx, self.shape))
        if len(levels) < 2:
            return None
        sizes, squeezed, starts, traced = [], [], [], []
        for level in levels:
            for start, size, sq in level:
                if not isinstance(size, (int, np.integer)):
                    return None
                if sq:
                    squeezed.append(len(sizes))
                if isinstance(start, (int, np.integer)):
                    starts.append(int(start))
                else:
                    traced.append(len(sizes))
                    starts.append(0)
                sizes.append(int(size))
        ranks = tuple(len(level) for level in levels)
        return {"levels": ranks, "sizes": tuple(sizes), "squeezed": tuple(squeezed),
                "starts": tuple(starts), "traced": tuple(traced)}

    def view_args(self):
        """(starts, params, dynamic sizes) naming this view window by window for a DMA
        op: `levels` (each window's rank) where `.at` was chained; a traced size is
        DYNAMIC_SIZE in `sizes`, its value (i32) in the dynamic sizes."""
        levels = self.views if len(self.views) > 1 else [self.index]
        starts, sizes, squeezed, dyn = [], [], [], []
        for level in levels:
            for start, size, sq in level:
                if sq:
                    squeezed.append(len(sizes))
                starts.append(_as_i32(start))
                if isinstance(size, (int, np.integer)):
                    sizes.append(int(size))
                else:
                    sizes.append(DYNAMIC_SIZE)
                    dyn.append(_as_i32(size))
        params = {"sizes": tuple(sizes), "squeezed": tuple(squeezed)}
        if len(levels) > 1:
            params["levels"] = tuple(len(level) for level in levels)
        return starts, params, dyn

    def reshape(self, *shape):
        """A view of the ref's elements (row-major) with another shape, which can be
        read and written (ragged paged attention reads its reshaped KV buffer with
        strided loads).
        JAX: Ref.reshape (a RefReshaper transform; Mosaic's tpu.memref_reshape)."""
        return ReshapedRef(self, _new_shape(shape, self.shape))

    def bitcast(self, dtype):
        """A view of the ref's bits as `dtype`: its second-minor dim scaled by the
        bitwidths' ratio (bf16 (16, 128) -> uint32 (8, 128), two rows in a word's low
        and high halves), which can be read and written (strided too), as ragged
        paged attention reads its packed KV buffer. JAX: Ref.bitcast (a RefBitcaster view;
        tpu.memref_bitcast)."""
        if self.is_dynamic_size:
            raise NotImplementedError("Bitcast ref with dynamic size is not supported.")
        return ReshapedRef(self, None, _bitcast_dtype(self.dtype, dtype))

    @property
    def at(self):
        """`ref.at[idx]`: a view of part of the ref (no data is read). JAX: Ref.at."""
        return _At(self)

    def __getitem__(self, idx):
        if _has_stride(idx):
            return strided_get(self, idx)       # (ref[start::step]: a strided load)
        if _gathers(idx):
            return primitives.load(self, ...)[idx]
        return primitives.load(self, idx)

    def __setitem__(self, idx, value):
        if _has_stride(idx):
            strided_swap(self, idx, value)      # (ref[start::step] = v: a strided store)
            return
        if _gathers(idx):
            whole = primitives.load(self, ...)
            primitives.swap(self, ..., whole.at[idx].set(value))
            return
        primitives.swap(self, idx, value)     # (JAX: ref[idx] = v is a swap)

    def get(self, idx=()):
        return self[idx if idx != () else ...]

    def set(self, value, idx=()):
        self[idx if idx != () else ...] = value

    def __jax_array__(self):
        # jnp functions given a ref (jnp.zeros_like(acc_ref)) see its current value.
        return self[...]

    def __array__(self, *args, **kwargs):
        raise TypeError(f"{self!r} is a ref, not an array: read it with ref[...] first")

    def __bool__(self):
        raise TypeError(f"{self!r} is a ref, not an array: read it with ref[...] first")


def _new_shape(shape, old) -> tuple[int, ...]:
    shape = tuple(shape[0]) if len(shape) == 1 and isinstance(shape[0], (tuple, list)) \
        else tuple(shape)
    size = int(np.prod(old, dtype=np.int64))
    if sum(1 for n in shape if n == -1) == 1:
        rest = int(np.prod([n for n in shape if n != -1], dtype=np.int64))
        shape = tuple(size // rest if n == -1 and rest else n for n in shape)
    if any(not isinstance(n, (int, np.integer)) or n < 0 for n in shape) or \
            int(np.prod(shape, dtype=np.int64)) != size:
        raise ValueError(f"cannot reshape a ref of shape {tuple(old)} to {shape}")
    return tuple(int(n) for n in shape)


def _bitcast_dtype(src, dtype):
    dtype = np.dtype(dtypes.canonicalize_dtype(dtype))
    if np.dtype(src) == np.bool_ or dtype == np.bool_:
        raise NotImplementedError("bitcast views of bool refs are not supported by mjax's "
                                  "Pallas (its TPU lowering stores booleans as int32)")
    return dtype


class ReshapedRef:
    """A ref's view with another shape (`ref.reshape(...)`) and/or its bits read as
    another dtype (`.bitcast(dtype)`, after any reshape), and windows of that view
    (`.at[...]`): reads and writes (strided too) go through it, a window's starts
    folded into the access's (as JAX's lowering folds the indexers after the last
    reshape or bitcast into the load or store); DMAs through it are not supported.
    JAX: a TransformedRef with a RefReshaper and/or a RefBitcaster (and NDIndexers)."""

    __slots__ = ("ref", "reshape_to", "cast", "window", "shape")
    _inline_in_jit = True

    def __init__(self, ref: Ref, shape, cast=None, window=None):
        self.ref, self.cast, self.window = ref, cast, window
        self.reshape_to = None if shape is None else tuple(shape)
        view = ref.shape if shape is None else tuple(shape)
        view = view if cast is None else bitcast_view_shape(view, ref.dtype, cast)
        self.shape = view if window is None else tuple(n for _, n, sq in window if not sq)

    dtype = property(lambda self: self.ref.dtype if self.cast is None else self.cast)
    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))
    aval = property(lambda self: RefAval(self.shape, self.dtype))

    def __repr__(self):
        text = repr(self.ref)
        if self.reshape_to is not None:
            text += f".reshape{self.reshape_to}"
        if self.cast is not None:
            text += f".bitcast({short_dtype_name(self.cast)})"
        if self.window is not None:
            text += f".at[...]<{','.join(str(n) for n in self.shape)}>"
        return text

    def _no_window(self, what):
        if self.window is not None:
            raise NotImplementedError(
                f"{self!r}.{what}: mjax's Pallas takes windows (.at) of a reshaped or "
                f"bitcast view last; reshape or bitcast the ref first")

    def reshape(self, *shape):
        self._no_window("reshape(...)")
        if self.cast is not None:
            raise NotImplementedError(
                f"{self!r}.reshape(...): mjax's Pallas reshapes a ref before bitcasting it "
                f"(ref.reshape(...).bitcast(dtype)), not after")
        return ReshapedRef(self.ref, _new_shape(shape, self.shape))

    def bitcast(self, dtype):
        self._no_window(f"bitcast({dtype})")
        if self.cast is not None:
            raise NotImplementedError(f"{self!r}.bitcast({dtype}): a bitcast view of a "
                                      f"bitcast view is not supported by mjax's Pallas")
        return ReshapedRef(self.ref, self.reshape_to, _bitcast_dtype(self.dtype, dtype))

    def _index(self, idx):
        """`idx` on the window as an index of the whole view (the window's starts
        added to the access's; its strides kept)."""
        if self.window is None:
            return idx
        index, strides = strided_index(idx, self.shape)
        inner = iter(zip(index, strides))
        out = []
        for start, size, sq in self.window:
            if sq:
                out.append(start)
                continue
            (s2, size2, sq2), stride = next(inner)
            if isinstance(start, (int, np.integer)) and isinstance(s2, (int, np.integer)):
                total = int(start) + int(s2)
            elif isinstance(start, (int, np.integer)) and start == 0:
                total = s2
            elif isinstance(s2, (int, np.integer)) and s2 == 0:
                total = start
            else:
                total = _as_i32(start) + _as_i32(s2)
            out.append(total if sq2 else Slice(total, size2, stride))
        return tuple(out)

    def __getitem__(self, idx):
        return strided_get(self.ref, self._index(idx), self.reshape_to, self.cast)

    def get(self, idx=()):
        return self[idx if idx != () else ...]

    def __jax_array__(self):
        return self[...]

    def __setitem__(self, idx, value):
        strided_swap(self.ref, self._index(idx), value, self.reshape_to, self.cast)

    def swap(self, idx, value):
        """Writes `value` to `self[idx]`; the old value."""
        return strided_swap(self.ref, self._index(idx), value, self.reshape_to, self.cast)

    def set(self, value, idx=()):
        self[idx if idx != () else ...] = value

    @property
    def at(self):
        """`view.at[idx]`: a window of the view (its reads and writes index the view)."""
        return _ViewAt(self)


class _ViewAt:
    __slots__ = ("view",)

    def __init__(self, view: ReshapedRef):
        self.view = view

    def __getitem__(self, idx) -> ReshapedRef:
        v = self.view
        if _has_stride(idx):
            raise NotImplementedError(
                f"a strided window (.at) of {v!r}: mjax's Pallas takes strides in the "
                f"access (view[pl.ds(start, size, stride=k)]), not in its windows")
        window = []
        for item in normalize_index(v._index(idx), _view_shape(v)):
            if any(not isinstance(x, (int, np.integer)) for x in item[1:2]):
                raise NotImplementedError(f"a window of {v!r} of traced size")
            window.append(item)
        return ReshapedRef(v.ref, v.reshape_to, v.cast, window)


def _view_shape(v: ReshapedRef) -> tuple[int, ...]:
    """The shape of the reshaped/bitcast view, before its windows."""
    view = v.ref.shape if v.reshape_to is None else v.reshape_to
    return view if v.cast is None else bitcast_view_shape(view, v.ref.dtype, v.cast)


class _At:
    __slots__ = ("ref",)

    def __init__(self, ref: Ref):
        self.ref = ref

    def __getitem__(self, idx) -> Ref:
        ref = self.ref
        return Ref(ref.tracer, ref.resolve(idx),
                   ref.views + [normalize_index(idx, ref.shape)])


def as_ref(x, what: str) -> Ref:
    if not isinstance(x, Ref):
        view = array_refs._kernel_ref(x)     # (a Ref a pl.core_map kernel closes over)
        x = x if view is None else view
    if not isinstance(x, Ref):
        raise TypeError(f"{what} expects a ref (a kernel argument or a view of one), got "
                        f"{type(x).__name__}")
    return x


__all__ = ["Ref", "ReshapedRef", "Slice", "as_ref", "bitcast_view_shape", "ds", "dslice",
           "normalize_index", "strided_get", "strided_swap"]
