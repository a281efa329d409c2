"""Array refs: mutable arrays (`mjax.new_ref`, `ref[idx]`, `ref[idx] = v`, `mjax.freeze`).
JAX: jax.new_ref / jax.Ref / jax.ref.

Outside a trace a Ref holds an Array and each read or write runs at once (a write makes a
new Array: `x.at[idx].set(v)`). Inside a trace (jit, and lax's control flow, which runs
as a jit of itself) a Ref is a value of ref type (`memref<...>`) and its reads and writes
are the ref ops Pallas kernels use (dialect/ops/state.py):

    r = mjax.new_ref(x)             (outside jit: the Ref holds x)
    @jit
    def f(v): r[...] += v           %old = "jaxpr.ref_get"(%r, %c0)
                                    %new = "jaxpr.add"(%old, %v)
                                    "jaxpr.ref_swap"(%r, %new, %c0)

`--jaxpr-discharge-state` (after inlining, before lowering) turns the function into one
over values whose extra results are the refs' final values; jit writes those back into
the Refs it was given or closed over. A ref made inside a trace is `jaxpr.ref_new`.

Under transformations refs behave as JAX's: a ref holds no tangent (what is read from
it has none; writing a differentiated value into it is JAX's error), `vjp(...)`'s
`with_refs` adds cotangents into refs, and vmap batches the ref ops of refs passed with
an in_axis (passes/rules/state.py). A strided slice (`r[1::2]`, `jax.ds(s, k, 2)` with
a static start) reads its window (first to last element) and slices it; a strided write
writes the window back with the old elements between, a strided addupdate adds the value
spread with zeros. Integer array indices and a strided `jax.ds` with a traced start
gather from (scatter into) the whole value, as JAX's discharge does. Not implemented
(NotImplementedError or a PassError naming it): a traced-start `jax.ds` next to array
indices, None in an index, Ref.at outside Pallas kernels, vmap at an index that differs
across the batch, empty_ref outside a trace (as in JAX).
"""
from __future__ import annotations

import numpy as np

from mjax import lax
from mjax.tracing import registration
from mjax.base import trace_trees
from mjax.arrays.array import Array
from mjax.tracing.core import Tracer, bind, current_trace
from mjax.dialect.ops import random as R
from mjax.dialect.ops import state as S
from mjax.dialect.types import KeyType, RefAval
from mjax.specs.dtypes import aval_of_value
from mjax.numpy.conversion import asarray
from mjax.numpy.conversion import copy as _copy
from mjax.lax.prng import PRNGKeyArray
from mjax.specs.ref_slice import Slice

AbstractRef = RefAval


class Ref:
    """A mutable array. JAX: jax.Ref."""

    __slots__ = ("_value", "_tracer", "_weak", "__weakref__")

    def __init__(self, value=None, tracer=None):
        self._value = value           # an Array (outside traces)
        self._tracer = tracer         # a traced memref value (a Ref of a trace)
        # A ref made from a weakly typed value reads weak for its whole life, as JAX's
        # (its type, RefAval.weak_type, is fixed at creation), while the value it holds
        # becomes strong when written.
        self._weak = value.aval.weak_type if value is not None else \
            tracer is not None and tracer.aval.weak_type

    # -- what the ref holds ----------------------------------------------------------
    @property
    def aval(self) -> RefAval:
        if self._tracer is not None:
            return self._tracer.aval
        return RefAval(self._value.shape, self._value.dtype, self._weak)

    shape = property(lambda self: self.aval.shape)
    dtype = property(lambda self: self.aval.dtype)
    ndim = property(lambda self: len(self.aval.shape))
    size = property(lambda self: int(np.prod(self.aval.shape, dtype=np.int64)))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __repr__(self):
        if self._tracer is not None:
            return f"Ref{{{self.aval.inner_aval.str_short()}}}"
        return "Ref" + repr(self._value)[len("Array"):]

    def __bool__(self):
        raise TypeError(f"{self!r} is a ref, not an array: read it with ref[...] first")

    def __array__(self, *args, **kwargs):
        raise TypeError(f"{self!r} is a ref, not an array: read it with ref[...] first")

    __hash__ = object.__hash__

    @property
    def at(self):
        if (view := _kernel_ref(self)) is not None:
            return view.at
        return _At(self)

    # -- reading and writing --------------------------------------------------------------
    def __getitem__(self, idx):
        return get(self, idx)

    def __setitem__(self, idx, value):
        swap(self, idx, value, _function_name="swap")

    def unsafe_buffer_pointer(self) -> int:
        """The address of the buffer holding the ref's current value (a jit updates that
        buffer in place; a write outside a trace replaces it)."""
        if self._tracer is not None:
            raise TypeError("unsafe_buffer_pointer of a Ref inside a traced function")
        return self._value.unsafe_buffer_pointer()

    def _traced(self):
        """The ref as a value of the current trace (captured when it comes from outside)."""
        return self._tracer if self._tracer is not None else self

    @property
    def _sharding(self):
        """Its value's layout (None while traced): a jit over a mesh keeps it."""
        return self._value._sharding if self._tracer is None else None

    def _buffer_value(self) -> Array:
        """The Array an outer jit passes for this ref (see Jitted)."""
        return self._value

    def _write_back(self, buf, sharding=None, strong=True) -> None:
        """Takes the buffer a jit computed as the ref's new value (same type), laid out as
        `sharding` (a program compiled for a mesh) or on one device. A weakly typed ref's
        value becomes strong, as a jit's write makes it in JAX (mjax writes back every
        ref a jit was given, so one it only read does too); an eager vjp or linearize
        (`strong=False`) leaves the ref's own weak type, as JAX's do."""
        aval = self._value.aval.update(weak_type=self._weak and not strong)
        self._value = Array(buf, aval, sharding)


class KeyRef(Ref):
    """A Ref of typed PRNG keys (JAX: a Ref of a key array): a Ref of the keys' uint32
    data, read and written as keys. mjax's transformations see it as that data Ref (a
    node of mjax/base/trace_trees.py), users as one ref."""

    __slots__ = ("impl", "_data")

    def __init__(self, impl: str, data: Ref):
        super().__init__()
        self.impl, self._data = impl, data

    @property
    def _n_key(self) -> int:
        return len(R.KEY_SHAPES[self.impl])

    @property
    def aval(self) -> RefAval:
        shape = self._data.shape
        return RefAval(shape[:len(shape) - self._n_key], KeyType(self.impl))

    def __repr__(self):
        if self._data._tracer is not None:
            return f"Ref{{{self.aval.inner_aval.str_short()}}}"
        return "Ref" + repr(self[...])[len("Array"):]

    def _data_index(self, idx):
        """`idx` over the keys as an index of their data (an ellipsis spans key dims)."""
        idx = idx if isinstance(idx, tuple) else (idx,)
        if any(i is Ellipsis for i in idx):
            k = next(n for n, i in enumerate(idx) if i is Ellipsis)
            fill = (slice(None),) * (self.ndim - len(idx) + 1)
            idx = idx[:k] + fill + idx[k + 1:]
        return idx + (slice(None),) * self._n_key

    def __getitem__(self, idx):
        return PRNGKeyArray(self.impl, self._data[self._data_index(idx)])

    def __setitem__(self, idx, value):
        if not (isinstance(value, PRNGKeyArray) and value.impl == self.impl):
            raise TypeError(f"a ref of {KeyType(self.impl)} keys takes key arrays of that "
                            f"implementation, got {type(value).__name__}")
        self._data[self._data_index(idx)] = value._base

    def unsafe_buffer_pointer(self) -> int:
        return self._data.unsafe_buffer_pointer()


trace_trees.registry.register_node(KeyRef, lambda r: ((r._data,), r.impl),
                                   lambda impl, children: KeyRef(impl, children[0]))
registration.REF_OF_TRACER.fill(lambda t: Ref(tracer=t))
registration.ACCUMULATE_INTO_REF.fill(lambda ref, value: addupdate(ref, None, value))


# While pl.core_map traces its kernel (mjax/experimental/pallas/mesh_kernels.py), the Refs
# its body closes over are the kernel's refs: this function (set there) gives the kernel's
# ref for such a Ref.
kernel_view = None


def _kernel_ref(ref):
    """The kernel's ref standing for `ref` inside a pl.core_map kernel, else None."""
    view = kernel_view
    return view(ref) if view is not None and type(ref) is Ref else None


def _state_ops(ref):
    """The get/swap/addupdate of a ref this module does not make (a Pallas kernel's,
    whose class names them `_state_ops`: jax.ref's functions bind the same state
    primitives on a kernel's refs), else None."""
    return None if isinstance(ref, Ref) else getattr(type(ref), "_state_ops", None)


def _check_ref(ref, what: str) -> Ref:
    if not isinstance(ref, Ref):
        raise TypeError(f"{what} expects a Ref (made by mjax.new_ref), got "
                        f"{type(ref).__name__}")
    return ref


def new_ref(init_val, *, memory_space=None, kind=None) -> Ref:
    """A new Ref holding (a copy of) `init_val`. JAX: jax.new_ref."""
    if memory_space is not None:
        raise NotImplementedError("new_ref(memory_space=...): mjax has no memory spaces")
    if isinstance(init_val, Ref):
        raise TypeError("new_ref takes an array, got a Ref (read it with ref[...] first)")
    if isinstance(init_val, PRNGKeyArray):       # (a ref of the keys' data)
        return KeyRef(init_val.impl, new_ref(init_val._base))
    if not isinstance(init_val, (Array, Tracer, np.ndarray, np.generic, bool, int, float,
                                 complex)):
        raise TypeError(f"Error interpreting argument to new_ref as a JAX value. The "
                        f"problematic value is of type {type(init_val)} and was passed to "
                        f"new_ref at position 0.")
    if current_trace() is not None:
        return Ref(tracer=bind(S.RefNewOp, init_val))
    # (a copy: a jit updates the ref's buffer in place)
    return Ref(value=_copy(asarray(init_val)))


def empty_ref(ty, memory_space=None):
    """A new Ref of type `ty` (an aval: jax.typeof(x)) whose contents are unspecified
    (mjax: zeros), inside a traced function; outside one JAX has no evaluation rule
    either. With `memory_space` (inside a Pallas TPU kernel) a buffer of that memory.
    JAX: jax.empty_ref."""
    if current_trace() is None:
        raise NotImplementedError("Evaluation rule for 'empty_ref' not implemented")
    if memory_space is None:
        return Ref(tracer=bind(S.RefNewOp, lax.full(ty.shape, 0, ty.dtype)))
    # A buffer of a Pallas TPU kernel's memory (pltpu.VMEM, ...): Mosaic allocates it
    # uninitialized (and drops the zero fill)
    space = getattr(memory_space, "value", memory_space)
    if space not in S.RefNewOp.attributes["memory_space"].choices:
        raise NotImplementedError(f"empty_ref(memory_space={memory_space!r}): mjax knows "
                                  f"the TPU's memory spaces only (pltpu.VMEM, pltpu.SMEM, "
                                  f"pl.ANY, pltpu.HBM)")
    return Ref(tracer=bind(S.RefNewOp, lax.full(ty.shape, 0, ty.dtype), memory_space=space))


def free_ref(ref) -> tuple:
    """Ends the ref's life (JAX: jax.free_ref); mjax's Refs are garbage collected."""
    _check_ref(ref, "free_ref")
    return ()


def freeze(ref) -> Array:
    """The ref's current value as an immutable Array. JAX: jax.freeze."""
    return get(_check_ref(ref, "freeze"), None)


# ---- the helpers of jax.ref ------------------------------------------------------------
def get(ref, idx=None):
    """ref[idx] (idx None: the whole value). JAX: jax.ref.get."""
    ref = ref if (view := _kernel_ref(ref)) is None else view
    if (ops := _state_ops(ref)) is not None:
        return ops.get(ref, idx)
    _check_ref(ref, "ref_get")
    if isinstance(ref, KeyRef):
        return ref[... if idx is None or idx == () else idx]
    idx = _static_slices(ref, ... if idx is None or idx == () else idx)
    if current_trace() is None and ref._tracer is None:
        out = ref._value[idx]
        if out is ref._value:    # (a copy: a jit updates the ref's buffer in place)
            out = _copy(out)
        if out.aval.weak_type != ref._weak:
            out = lax.convert_element_type(out, ref.dtype, weak_type=ref._weak)
        return out
    if (index := _gather_index(ref, idx)) is not None:
        out = _whole(ref)[index]
    else:
        starts, params, strides = _ref_index(ref, idx)
        out = _strided(bind(S.RefGetOp, ref._traced(), *starts, **params), params,
                       strides)
    if ref._weak:
        out.aval = out.aval.update(weak_type=True)
    return out


def swap(ref, idx, value, _function_name: str = "ref_swap"):
    """Writes `value` into ref[idx]; returns the old value. JAX: jax.ref.swap."""
    ref = ref if (view := _kernel_ref(ref)) is None else view
    if (ops := _state_ops(ref)) is not None:
        return ops.swap(ref, idx, value)
    _check_ref(ref, _function_name)
    idx = ... if idx is None or idx == () else idx
    if isinstance(ref, KeyRef):
        old = ref[idx]
        ref[idx] = value
        return old
    idx = _static_slices(ref, idx)
    if current_trace() is None and ref._tracer is None:
        old = get(ref, idx)
        value = _coerce(_function_name, ref, value, old.shape)
        new = ref._value.at[idx].set(value)    # (strong, as a write makes it in JAX)
        ref._value = lax.convert_element_type(new, ref.dtype, weak_type=False)
        return old
    if (index := _gather_index(ref, idx)) is not None:
        whole = _whole(ref)
        old = whole[index]
        value = _coerce(_function_name, ref, value, old.shape)
        bind(S.RefSwapOp, ref._traced(), whole.at[index].set(value), *_zeros(ref),
             sizes=ref.shape, squeezed=())
        return old
    starts, params, strides = _ref_index(ref, idx)
    value = _coerce(_function_name, ref, value, _indexed_shape(params, strides))
    if all(st == 1 for st in strides):
        return bind(S.RefSwapOp, ref._traced(), value, *starts, **params)
    # A strided write: the window's old elements between the written ones are written
    # back as they were (JAX discharges it as a scatter into the ref's value)
    window = bind(S.RefGetOp, ref._traced(), *starts, **params)
    kept = _kept_strides(params, strides)
    new = lax.select(_on_stride(window.shape, kept), _spread(value, kept), window)
    bind(S.RefSwapOp, ref._traced(), new, *starts, **params)
    return _strided(window, params, strides)


def set(ref, idx, value) -> None:  # noqa: A001  (JAX's name)
    """ref[idx] = value. JAX: jax.ref.set."""
    swap(ref, idx, value, _function_name="ref_set")


def addupdate(ref, idx, x) -> None:
    """ref[idx] += x. JAX: jax.ref.addupdate."""
    ref = ref if (view := _kernel_ref(ref)) is None else view
    if (ops := _state_ops(ref)) is not None:
        return ops.addupdate(ref, idx, x)
    _check_ref(ref, "addupdate")
    if isinstance(ref, KeyRef):
        raise TypeError("addupdate of a ref of PRNG keys: keys have no addition")
    idx = _static_slices(ref, ... if idx is None or idx == () else idx)
    if current_trace() is None and ref._tracer is None:
        x = _coerce("addupdate", ref, x, ref._value[idx].shape)
        ref._value = ref._value.at[idx].add(x)
        return
    if (index := _gather_index(ref, idx)) is not None:
        zeros = lax.full(ref.shape, 0, ref.dtype)
        x = _coerce("addupdate", ref, x, zeros[index].shape)
        bind(S.RefAddUpdateOp, ref._traced(), zeros.at[index].add(x), *_zeros(ref),
             sizes=ref.shape, squeezed=())
        return
    starts, params, strides = _ref_index(ref, idx)
    x = _coerce("addupdate", ref, x, _indexed_shape(params, strides))
    # (strided: zeros between the added elements, so it stays one linear addupdate)
    x = _spread(x, _kept_strides(params, strides))
    bind(S.RefAddUpdateOp, ref._traced(), x, *starts, **params)


def _coerce(fn: str, ref: Ref, value, shape):
    """JAX's checks of a value written into a ref: the indexed shape exactly, the ref's
    dtype (a weakly typed value takes it)."""
    aval = aval_of_value(value)
    if type(aval) is RefAval:
        raise TypeError(f"{fn} of a Ref into a Ref: read it with ref[...] first")
    if tuple(aval.shape) != tuple(shape):
        raise ValueError(f"Invalid shape for `{fn}`. Ref shape: {ref.shape}. Expected "
                         f"shape: {tuple(shape)}. Value shape: {tuple(aval.shape)}. "
                         f"Transforms: (). ")
    if aval.dtype != ref.dtype:
        if not aval.weak_type:
            raise ValueError(f"Invalid dtype for `{fn}`. Ref dtype: {np.dtype(ref.dtype)}. "
                             f"Value dtype: {np.dtype(aval.dtype)}. ")
        value = lax.convert_element_type(value, ref.dtype)
    elif aval.weak_type:
        value = lax.convert_element_type(value, ref.dtype, weak_type=False)
    return value


def _static_slices(ref: Ref, idx):
    """`idx` with each `jax.ds(start, size)` whose start is known made a Python slice (its
    start clamped into the dimension, as dynamic_slice clamps); ones with a traced start
    stay for `_ref_index`."""
    entries = idx if isinstance(idx, tuple) else (idx,)
    _check_steps(ref, entries)
    if not any(type(i) is Slice for i in entries):
        return idx
    for i in entries:
        if type(i) is Slice and i.is_dynamic_size:
            raise TypeError(f"jax.ds with a traced size ({i.size!r}) cannot index a Ref "
                            f"outside a Pallas kernel: its shape would not be static")
    out = []
    for d, i in enumerate(entries):
        if type(i) is Slice and not isinstance(i.start, Tracer):
            n = ref.shape[d] if d < ref.ndim else 0
            value = int(i.start)
            if value >= n:       # (JAX's checks of a known start)
                raise ValueError(f"Out of bound slice: start={value}, dim={n}.")
            if value and i.size and value + (i.size - 1) * i.stride >= n:
                raise ValueError(f"Out of bound slice: start={value}, size={i.size}, "
                                 f"stride={i.stride}, dim={n}.")
            span = (i.size - 1) * i.stride + 1 if i.size else 0
            start = min(max(value, 0), max(n - span, 0))
            i = slice(start, start + span, i.stride) if i.size else slice(start, start)
        out.append(i)
    return tuple(out)


def _zeros(ref: Ref) -> list:
    return [np.int32(0)] * ref.ndim


def _whole(ref: Ref):
    return bind(S.RefGetOp, ref._traced(), *_zeros(ref), sizes=ref.shape, squeezed=())


def _is_array_index(i) -> bool:
    return not isinstance(i, (slice, Slice)) and i is not Ellipsis and \
        getattr(i, "ndim", 0) > 0


def _gather_index(ref: Ref, idx):
    """The NumPy-style index of the ref's whole value that JAX gathers (and scatters)
    for `idx`, or None where `_ref_index`'s window does: integer arrays (NumPy's
    placement of their dims, as JAX's), or a strided `jax.ds` with a traced start (each
    element at start + k * stride, negative ones from the end, reads of ones past the
    end clamped and writes dropped, as JAX's gather and scatter do)."""
    entries = idx if isinstance(idx, tuple) else (idx,)
    dynamic = [type(i) is Slice and i.stride != 1 for i in entries]
    arrays = [_is_array_index(i) for i in entries]
    if not any(dynamic) and not any(arrays):
        return None
    if any(i is None for i in entries):
        raise NotImplementedError("None (newaxis) in a Ref index")
    if any(arrays):
        if any(type(i) is Slice for i in entries):
            raise NotImplementedError("a jax.ds with a traced start next to array "
                                      "indices of a Ref (JAX gathers it element by "
                                      "element; read ref[...] and index the value)")
        return tuple(asarray(i) if _is_array_index(i) else i for i in entries)
    # (JAX's gather arrays: each slice an iota along its own dim of the result)
    if sum(1 for i in entries if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if any(i is Ellipsis for i in entries):
        k = next(n for n, i in enumerate(entries) if i is Ellipsis)
        entries = entries[:k] + (slice(None),) * (ref.ndim - len(entries) + 1) + \
            entries[k + 1:]
    entries = tuple(entries) + (slice(None),) * (ref.ndim - len(entries))
    parts = []
    for i, n in zip(entries, ref.shape):
        if isinstance(i, slice):
            s, e, st = i.indices(n)
            parts.append((s, len(range(s, e, st)), st))
        elif type(i) is Slice:
            parts.append((lax.convert_element_type(i.start, np.int32), i.size, i.stride))
        else:
            parts.append(i)
    out, rank = [], sum(1 for p in parts if isinstance(p, tuple))
    pos = 0
    for p in parts:
        if isinstance(p, tuple):
            start, size, stride = p
            at = lax.iota(np.int32, size) * np.int32(stride) + start
            out.append(lax.reshape(at, (size,) + (1,) * (rank - pos - 1)))
            pos += 1
        else:
            out.append(p)
    return tuple(out)


def _extent(k: int, stride: int) -> int:
    """How many elements k elements `stride` apart span."""
    return (k - 1) * stride + 1 if k else 0


def _check_steps(ref: Ref, entries):
    """JAX's refusals of a Python slice into a ref: a step below 1, a start past the end
    (JAX makes each slice a `Slice` and checks it, eagerly and traced alike)."""
    if any(i is Ellipsis for i in entries):
        k = next(n for n, i in enumerate(entries) if i is Ellipsis)
        entries = entries[:k] + (slice(None),) * (ref.ndim - len(entries) + 1) + \
            entries[k + 1:]
    for i, n in zip(entries, ref.shape):
        if isinstance(i, slice):
            if isinstance(i.step, (int, np.integer)) and i.step < 1:
                raise ValueError(f"slice must have a step >= 1 (found: {i.step})")
            if all(p is None or isinstance(p, (int, np.integer))
                   for p in (i.start, i.stop, i.step)) and n:
                start = i.indices(n)[0]
                if start >= n:
                    raise ValueError(f"Out of bound slice: start={start}, dim={n}.")


def _indexed_shape(params, strides) -> tuple:
    """The shape of what a ref op of `_ref_index`'s (params, strides) reads or writes."""
    return tuple(-(-s // st) for d, (s, st) in enumerate(zip(params["sizes"], strides))
                 if d not in params["squeezed"])


def _kept_strides(params, strides) -> tuple:
    return tuple(st for d, st in enumerate(strides) if d not in params["squeezed"])


def _strided(window, params, strides):
    """Every stride-th element of a strided index's window (as read)."""
    kept = _kept_strides(params, strides)
    if all(st == 1 for st in kept):
        return window
    return lax.slice(window, (0,) * len(kept), tuple(window.shape), kept)


def _spread(value, kept):
    """`value` spread over its window: stride - 1 zeros between its elements."""
    if all(st == 1 for st in kept):
        return value
    zero = lax.convert_element_type(0, value.dtype)
    return lax.pad(value, zero, tuple((0, 0, st - 1) for st in kept))


def _on_stride(shape, kept):
    """Where a window's index is a multiple of the strides (the elements written)."""
    on = None
    for d, st in enumerate(kept):
        if st != 1:
            at = lax.rem(lax.broadcasted_iota(np.int32, shape, d), np.int32(st)) == 0
            on = at if on is None else lax.bitwise_and(on, at)
    return on


def _ref_index(ref: Ref, idx):
    """(starts, params, strides) of a ref op for `idx` (ints, traced integer scalars,
    static slices, `jax.ds`, `...`), as dialect/ops/state.py's ref ops take them. A
    strided slice's window is its extent (first to last element), `strides[d]` the step
    `_strided` takes in it."""
    shape = ref.shape
    idx = idx if isinstance(idx, tuple) else (idx,)
    if sum(1 for i in idx if i is Ellipsis) > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    if any(i is Ellipsis for i in idx):
        k = next(n for n, i in enumerate(idx) if i is Ellipsis)
        idx = idx[:k] + (slice(None),) * (len(shape) - len(idx) + 1) + idx[k + 1:]
    if len(idx) > len(shape):
        raise IndexError(f"Too many indices: ref is {len(shape)}-dimensional, but "
                         f"{len(idx)} were indexed")
    idx = tuple(idx) + (slice(None),) * (len(shape) - len(idx))
    starts, sizes, squeezed, strides = [], [], [], [1] * len(shape)
    for d, (i, n) in enumerate(zip(idx, shape)):
        if isinstance(i, slice):
            if any(p is not None and not isinstance(p, (int, np.integer))
                   for p in (i.start, i.stop, i.step)):
                raise NotImplementedError("a slice with traced bounds into a Ref inside a "
                                          "traced function (use lax.dynamic_slice on "
                                          "ref[...])")
            if i.step is not None and i.step < 1:     # (JAX's refusal)
                raise ValueError(f"slice must have a step >= 1 (found: {i.step})")
            s, e, st = i.indices(n)
            k = len(range(s, e, st))
            starts.append(np.int32(s)), sizes.append(_extent(k, st))
            strides[d] = st
        elif type(i) is Slice:            # (jax.ds with a traced start)
            if i.stride != 1:
                raise NotImplementedError("a strided jax.ds with a traced start into a Ref "
                                          "outside a Pallas kernel (JAX gathers it "
                                          "element by element; read ref[...] and slice)")
            start = lax.convert_element_type(i.start, np.int32)
            starts.append(lax.clamp(np.int32(0), start, np.int32(max(n - i.size, 0))))
            sizes.append(i.size)
        elif isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)):
            if not -n <= i < n:
                raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
            starts.append(np.int32(int(i) % n)), sizes.append(1), squeezed.append(d)
        elif getattr(i, "shape", None) == () and np.dtype(i.dtype).kind in "iu":
            i = lax.convert_element_type(i, np.int32) if i.dtype != np.int32 else i
            starts.append(lax.select(i < 0, i + np.int32(n), i))
            sizes.append(1), squeezed.append(d)
        else:
            raise NotImplementedError(f"indexing a Ref with {type(i).__name__} inside a "
                                      f"traced function (array or None indices; read "
                                      f"ref[...] and index the value)")
    return starts, {"sizes": tuple(sizes), "squeezed": tuple(squeezed)}, tuple(strides)


def _raise_index(i, k):
    raise IndexError(f"index {i} is out of bounds for a Ref.at view's axis of size {k}")


def _whole_index(shape, idx) -> list:
    """`idx` with one entry per dim of `shape`: static ints, and (start, count, step)
    for slices; NotImplementedError for other entries."""
    entries = idx if isinstance(idx, tuple) else (idx,)
    if any(i is Ellipsis for i in entries):
        k = next(n for n, i in enumerate(entries) if i is Ellipsis)
        entries = entries[:k] + (slice(None),) * (len(shape) - len(entries) + 1) + \
            entries[k + 1:]
    if len(entries) > len(shape):
        raise IndexError(f"Too many indices: ref is {len(shape)}-dimensional, but "
                         f"{len(entries)} were indexed")
    entries = tuple(entries) + (slice(None),) * (len(shape) - len(entries))
    out = []
    for i, n in zip(entries, shape):
        if isinstance(i, (int, np.integer)) and not isinstance(i, (bool, np.bool_)):
            out.append(int(i))
        elif isinstance(i, slice) and all(p is None or isinstance(p, (int, np.integer))
                                          for p in (i.start, i.stop, i.step)):
            s, e, st = i.indices(n)
            out.append((s, len(range(s, e, st)), st))
        else:
            raise NotImplementedError(f"indexing a Ref.at view with {type(i).__name__} "
                                      f"(static ints and slices only; index the ref)")
    return out


class _At:
    """`ref.at`: `ref.at[idx]` is a view of part of a ref inside a traced function (JAX:
    a TransformedRef; eagerly JAX has none)."""

    __slots__ = ("ref",)

    def __init__(self, ref: Ref):
        self.ref = ref

    def __getitem__(self, idx) -> "RefView":
        ref = self.ref
        if isinstance(ref, RefView):        # (a view of a view: one index of the ref)
            ref, idx = ref.ref, ref._compose(idx)
        if current_trace() is None and ref._tracer is None:
            raise NotImplementedError("Ref.at outside a traced function (as in JAX; index "
                                      "the ref: ref[idx])")
        idx = _static_slices(ref, idx)
        if _gather_index(ref, idx) is not None:
            raise NotImplementedError("a Ref.at view at array indices or a strided "
                                      "jax.ds with a traced start")
        _, params, strides = _ref_index(ref, idx)
        return RefView(ref, idx, _indexed_shape(params, strides))


class _ViewOps:
    """What get/swap/addupdate do with a view: the ref's op at the view's index
    composed with the one into the view."""

    @staticmethod
    def _index(view, idx):
        if idx is None or idx == () or idx is Ellipsis:
            return view.idx
        return view._compose(idx)

    @classmethod
    def get(cls, view, idx):
        return get(view.ref, cls._index(view, idx))

    @classmethod
    def swap(cls, view, idx, value):
        return swap(view.ref, cls._index(view, idx), value)

    @classmethod
    def addupdate(cls, view, idx, value):
        addupdate(view.ref, cls._index(view, idx), value)


class RefView:
    """`ref.at[idx]` of a Ref inside a traced function (JAX: a TransformedRef with one
    NDIndexer): `view[...]` reads, `view[...] = v` writes, `view[...] += v` adds."""

    __slots__ = ("ref", "idx", "shape")
    _state_ops = _ViewOps

    def __init__(self, ref: Ref, idx, shape):
        self.ref, self.idx, self.shape = ref, idx, tuple(shape)

    dtype = property(lambda self: self.ref.dtype)
    ndim = property(lambda self: len(self.shape))

    @property
    def at(self):
        return _At(self)

    def _compose(self, idx):
        """The index of the ref that `idx` into the view is: static ints and slices of
        the view's static ints and slices (NumPy's values; a second index with traced
        or array entries JAX 0.10.2's discharge does not take either)."""
        outer = _whole_index(self.ref.shape, self.idx)
        view_dims = [(d, i) for d, i in enumerate(outer) if not isinstance(i, int)]
        inner = _whole_index(self.shape, _static_slices(self, idx))
        out = list(outer)
        for (d, (start, _, step)), i in zip(view_dims, inner):
            k = self.shape[len([1 for e, _ in view_dims if e < d])]
            if isinstance(i, int):
                out[d] = start + (i % k if -k <= i < k else _raise_index(i, k)) * step
                continue
            s, n, st = i
            first = start + s * step
            out[d] = slice(first, first + ((n - 1) * step * st + 1 if n else 0), step * st)
        return tuple(out)

    def __getitem__(self, idx):
        return get(self, idx)

    def __setitem__(self, idx, value):
        swap(self, idx, value)


Ref.get = lambda self, idx=None: get(self, idx)
Ref.set = lambda self, value, idx=None: set(self, idx, value)
Ref.swap = lambda self, value, idx=None: swap(self, idx, value)
Ref.addupdate = lambda self, x, idx=None: addupdate(self, idx, x)

__all__ = ["AbstractRef", "KeyRef", "Ref", "addupdate", "empty_ref", "free_ref", "freeze", "get",
           "new_ref", "set", "swap"]
