"""Typed PRNG key arrays and the key operations (JAX: jax._src.random.prng).

A key array (`mjax.random.key(0)`) is a `PRNGKeyArray`: a PRNG implementation plus its
uint32 key data of shape `(*shape, *key_shape)`. It is a pytree whose one leaf is that
data, so `jit`, `vmap`, `grad`, `lax.scan`, ... carry keys as uint32 arrays; the key
operations wrap the data as a `!jaxpr.key<impl>` value (`jaxpr.random_wrap`), apply
`jaxpr.random_split/fold_in/bits` to it, and unwrap the result.
"""
from __future__ import annotations

import numpy as np

from mjax import lax
from mjax.specs import basearray
from mjax.specs.dtypes import float0
from mjax.tracing import registration
from mjax.base import trace_trees, tree_util
from mjax.arrays.array_methods import selects_all, warn_array_as_dtype
from mjax.config import config
from mjax.tracing.core import Tracer, aval_of_value, bind, current_trace
from mjax.lax.shapes import broadcast_to
from mjax.dialect.ops import random as R
from mjax.dialect.types import KeyType, ShapedArray
from mjax.arrays.array import Shard
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct
from mjax.specs.sharding_impls import NamedSharding, PartitionSpec

IMPLS = tuple(R.KEY_SHAPES)


class PRNGImpl:
    """A PRNG implementation: its name, tag and key data shape. JAX: prng.PRNGImpl.
    A built-in one's key operations are ops of the jaxpr dialect; a user-defined one
    (`define_impl`) has Python functions on one key's data, which the key operations
    apply vmapped over the keys' shape, as JAX's do."""

    __slots__ = ("name", "tag", "key_shape", "label", "seed", "split", "random_bits",
                 "fold_in")

    def __init__(self, name, tag, label=None, functions=None):
        self.name, self.tag, self.key_shape = name, tag, R.KEY_SHAPES[name]
        self.label = label or name
        self.seed, self.split, self.random_bits, self.fold_in = functions or (None,) * 4

    def __repr__(self):
        return f"PRNGImpl({self.label!r})"

    def __str__(self):
        return self.name if self.seed is None else self.tag


_IMPLS = {"threefry2x32": PRNGImpl("threefry2x32", "fry"), "rbg": PRNGImpl("rbg", "rbg"),
          "unsafe_rbg": PRNGImpl("unsafe_rbg", "urbg")}


def resolve_impl(spec) -> str:
    """The impl name for None (the configured default), a name, a PRNGImpl or a key
    dtype. JAX: random.resolve_prng_impl."""
    if spec is None:
        return config.read("jax_default_prng_impl")
    if isinstance(spec, PRNGImpl):
        return spec.name
    if isinstance(spec, KeyType):
        return spec.impl
    if isinstance(spec, str):
        if spec in _IMPLS:
            return spec
        if spec in _NAMES:          # (a user implementation's registered name)
            return _NAMES[spec]
        names = ", ".join(f'"{s}"' for s in _IMPLS)
        raise ValueError(f'unrecognized PRNG implementation "{spec}". Did you mean one '
                         f'of: {names}?')
    raise TypeError(f"unrecognized type {type(spec)} for specifying PRNG implementation.")


def impl_of(name: str) -> PRNGImpl:
    return _IMPLS[name]


def define_impl(key_shape, seed, split, random_bits, fold_in, name="<unnamed>",
                tag="?") -> PRNGImpl:
    """A user-defined PRNG implementation (JAX: jax.extend.random.define_prng_impl):
    `seed(int scalar) -> key`, `split(key, shape) -> keys of that shape`,
    `random_bits(key, bit_width, shape) -> uint<bit_width>[shape]`, `fold_in(key, int
    scalar) -> key`, each on one key's uint32 data of shape `key_shape`. Its keys print
    as key<tag>; each definition is a new implementation, as in JAX."""
    impl = f"user{sum(p.seed is not None for p in _IMPLS.values())}"
    R.register_key_impl(impl, tuple(int(d) for d in key_shape), tag)
    _IMPLS[impl] = PRNGImpl(impl, tag, name, (seed, split, random_bits, fold_in))
    return _IMPLS[impl]


def register_impl(name: str, tag: str) -> PRNGImpl:
    """A built-in implementation a library adds when imported (its key ops are ops of the
    jaxpr dialect, R.KEY_SHAPES has its key shape), as pltpu's pallas_tpu. JAX:
    prng.register_prng."""
    _IMPLS.setdefault(name, PRNGImpl(name, tag))
    return _IMPLS[name]


_NAMES: dict = {}    # registered name -> a user implementation's impl


def register_name(impl: PRNGImpl) -> None:
    """A user implementation's label becomes a valid `impl=` string (JAX:
    prng.register_prng); a taken name raises ValueError, as in JAX."""
    if impl.label in _IMPLS or impl.label in _NAMES:
        raise ValueError(f"PRNG implementation with name {impl.label} already registered")
    _NAMES[impl.label] = impl.name


def _user_impl(impl: str) -> PRNGImpl | None:
    p = _IMPLS.get(impl)
    return p if p is not None and p.seed is not None else None


def _per_key(fun, ndim: int):
    """`fun` of one key (and one message) mapped over `ndim` leading axes."""
    for _ in range(ndim):
        fun = registration.VMAP(fun)
    return fun


# ---- staging the key ops --------------------------------------------------------------
def staged(jitted, *args, **kwargs):
    """Runs a jitted key helper: inline under a trace, compiled otherwise (even under
    disable_jit: a key op on its own has no eager form)."""
    if current_trace() is not None:
        return jitted.fun(*args, **kwargs)
    if config.read("jax_disable_jit"):
        with config.override(jax_disable_jit=False):
            return jitted(*args, **kwargs)
    return jitted(*args, **kwargs)


def wrap(data, impl: str):
    """uint32 key data -> a `key<impl>` traced value (call under a trace)."""
    return bind(R.RandomWrapOp, data, impl=impl)


def unwrap(keys):
    return bind(R.RandomUnwrapOp, keys)


class _Jitted:
    """A key helper as a jit of itself, made when first run outside a trace (jit is floors
    above: registration.JIT)."""

    def __init__(self, fun, static):
        self.fun, self._static, self._jitted = fun, static, None

    def __call__(self, *args, **kwargs):
        if self._jitted is None:
            self._jitted = registration.JIT(self.fun, static_argnames=self._static)
        return self._jitted(*args, **kwargs)


def _jit(fun, static):
    return _Jitted(fun, static)


def _seed(seeds, impl):
    return unwrap(bind(R.RandomSeedOp, seeds, impl=impl))


def _split(data, impl, shape):
    return unwrap(bind(R.RandomSplitOp, wrap(data, impl), shape=shape))


def _fold_in(data, msgs, impl):
    return unwrap(bind(R.RandomFoldInOp, wrap(data, impl), msgs))


def _bits(data, impl, bit_width, shape):
    return bind(R.RandomBitsOp, wrap(data, impl), bit_width=bit_width, shape=shape)


def _clone(data, impl):
    return unwrap(bind(R.RandomCloneOp, wrap(data, impl)))


_seed_jit = _jit(_seed, ("impl",))
_split_jit = _jit(_split, ("impl", "shape"))
_fold_in_jit = _jit(_fold_in, ("impl",))
_bits_jit = _jit(_bits, ("impl", "bit_width", "shape"))
_clone_jit = _jit(_clone, ("impl",))


def random_seed(seeds, impl: str) -> "PRNGKeyArray":
    offset = config.read("jax_random_seed_offset")
    if offset:
        seeds = seeds + offset      # (jax_random_seed_offset: every seed shifted)
    user = _user_impl(impl)
    if user is not None:
        return PRNGKeyArray(impl, _user_data(user, _per_key(user.seed, np.ndim(seeds))(seeds)))
    return PRNGKeyArray(impl, staged(_seed_jit, seeds, impl=impl))


def _user_data(user: PRNGImpl, data):
    """A user implementation's function's result as key data (uint32, trailing key shape)."""
    data = lax.convert_element_type(data, np.uint32) if data.dtype != np.uint32 else data
    if tuple(data.shape[len(data.shape) - len(user.key_shape):]) != user.key_shape:
        raise TypeError(f"PRNG implementation {user.label!r} made key data of shape "
                        f"{tuple(data.shape)}, not ending in its key_shape {user.key_shape}")
    return data


def _partitionable(impl: str, op: str) -> bool:
    """Whether `op` of `impl` keys takes the partitionable layout. As in JAX, the flag
    changes threefry's split and bits and rbg's split (threefry on each half key) only."""
    if config.read("jax_threefry_partitionable") or _user_impl(impl) is not None:
        return True
    if impl == "threefry2x32" or (impl == "rbg" and op == "split"):
        return False
    if impl in ("rbg", "unsafe_rbg"):
        return True
    raise NotImplementedError(f"jax_threefry_partitionable=False is implemented for "
                              f"threefry2x32, rbg and unsafe_rbg keys only, not {impl}")


def random_split(keys: "PRNGKeyArray", shape) -> "PRNGKeyArray":
    if keys.impl == "pallas_tpu":
        raise NotImplementedError("Cannot split a Pallas key. Use fold_in instead to "
                                  "generate new keys.")
    user = _user_impl(keys.impl)
    if user is not None:
        split = _per_key(lambda k: user.split(k, tuple(shape)), keys.ndim)
        return PRNGKeyArray(keys.impl, _user_data(user, split(keys._base)))
    if not _partitionable(keys.impl, "split"):
        split = _split_original_jit if keys.impl == "threefry2x32" else _rbg_split_original_jit
        return PRNGKeyArray(keys.impl, staged(split, keys._base, shape=tuple(shape)))
    return PRNGKeyArray(keys.impl, staged(_split_jit, keys._base, impl=keys.impl,
                                          shape=tuple(shape)))


def random_fold_in(keys: "PRNGKeyArray", msgs) -> "PRNGKeyArray":
    user = _user_impl(keys.impl)
    if user is not None:    # (keys and messages broadcast against each other, as in JAX)
        shape = np.broadcast_shapes(keys.shape, np.shape(msgs))
        data = broadcast_to(keys._base, shape + user.key_shape)
        fold = _per_key(user.fold_in, len(shape))
        return PRNGKeyArray(keys.impl, _user_data(user, fold(data, broadcast_to(msgs, shape))))
    return PRNGKeyArray(keys.impl, staged(_fold_in_jit, keys._base, msgs, impl=keys.impl))


def random_bits(keys: "PRNGKeyArray", bit_width: int, shape):
    user = _user_impl(keys.impl)
    if user is not None:
        return _per_key(lambda k: user.random_bits(k, bit_width, tuple(shape)),
                        keys.ndim)(keys._base)
    if not _partitionable(keys.impl, "bits"):
        return staged(_bits_original_jit, keys._base, bit_width=bit_width,
                      shape=tuple(shape))
    return staged(_bits_jit, keys._base, impl=keys.impl, bit_width=bit_width,
                  shape=tuple(shape))


def random_clone(keys: "PRNGKeyArray") -> "PRNGKeyArray":
    if _user_impl(keys.impl) is not None:
        return keys
    return PRNGKeyArray(keys.impl, staged(_clone_jit, keys._base, impl=keys.impl))


# ---- jax_threefry_partitionable=False: JAX's original counter layout -------------------------
# The counters of a request are one flat iota, hashed in two halves (x1 = first half,
# x2 = second half), as JAX did before the partitionable layout became the default.
def threefry_2x32_words(k1, k2, count):
    """JAX's threefry_2x32((k1, k2), count) on uint32 key words (scalars) and 1-d
    counters: the counters hashed in two halves (a zero appended to an odd count). The
    key words go to the hash as scalars, as JAX binds them (the op broadcasts them: a
    TPU kernel's hash keeps them in scalar registers, as JAX's)."""
    n = count.shape[0]
    if n % 2:       # (JAX's padding: a captured uint32[1] zero; its out[:-1] after)
        count = lax.concatenate([count, np.zeros(1, np.uint32)], 0)
    half = count.shape[0] // 2
    x1, x2 = lax.split(count, (half, half))
    b1, b2 = bind(R.Threefry2x32Op, k1, k2, x1, x2)
    out = lax.concatenate([b1, b2], 0)
    return lax.slice(out, (0,), (n,)) if n % 2 else out


def _threefry_2x32(data, count):
    """JAX's threefry_2x32(key, count) for one key's data uint32[2] and 1-d counters."""
    return threefry_2x32_words(lax.index_in_dim(data, 0, -1, False),
                               lax.index_in_dim(data, 1, -1, False), count)


def _one_key(fun, data, *args):
    """fun on each key of data uint32[*K, 2] (a loop over the keys: K is static)."""
    kshape = data.shape[:-1]
    if not kshape:
        return fun(data, *args)
    n = int(np.prod(kshape, dtype=np.int64))
    flat = lax.reshape(data, (n, 2))
    outs = [fun(lax.index_in_dim(flat, i, 0, False), *args) for i in range(n)]
    out = lax.stack(outs) if outs else None
    return lax.reshape(out, kshape + out.shape[1:])


def _split_original(data, shape):
    def one(d):
        num = int(np.prod(shape, dtype=np.int64))
        counts = lax.iota(np.uint32, num * 2)
        return lax.reshape(_threefry_2x32(d, counts), tuple(shape) + (2,))
    return _one_key(one, data)


def _bits_original(data, bit_width, shape):
    def one(d):
        size = int(np.prod(shape, dtype=np.int64))
        max_count = -(-bit_width * size // 32)
        if max_count >= np.iinfo(np.uint32).max:
            raise NotImplementedError("random bits of more than 2**32 words with "
                                      "jax_threefry_partitionable=False")
        bits = _threefry_2x32(d, lax.iota(np.uint32, max_count))
        dtype = np.dtype(f"uint{bit_width}")
        if bit_width == 64:
            hi, lo = (lax.convert_element_type(b, np.uint64)
                      for b in lax.split(bits, [max_count // 2] * 2))
            bits = lax.or_(lax.shift_left(hi, lax.full(hi.shape, 32, np.uint64)), lo)
        elif bit_width in (8, 16):
            # Each 32-bit word gives 32 // bit_width values, low bits first.
            per = 32 // bit_width
            shifts = lax.mul(lax.broadcasted_iota(np.uint32, (per, max_count), 0),
                             np.uint32(bit_width))
            words = lax.broadcast_in_dim(bits, (per, max_count), (1,))
            pieces = lax.and_(lax.shift_right_logical(words, shifts),
                              np.uint32(2**bit_width - 1))
            bits = lax.reshape(lax.transpose(pieces, (1, 0)), (per * max_count,))
            bits = lax.slice_in_dim(lax.convert_element_type(bits, dtype), 0, size)
        return lax.reshape(bits, tuple(shape))
    return _one_key(one, data)


def _rbg_split_original(data, shape):
    """An rbg key's split: each half key uint32[2] split as threefry's, the halves'
    results side by side (JAX's vmap with out_axes=len(shape))."""
    k = data.ndim - 1
    halves = _split_original(lax.reshape(data, data.shape[:-1] + (2, 2)), shape)
    n = len(shape)      # halves: (*K, 2, *shape, 2) -> (*K, *shape, 2, 2)
    perm = tuple(range(k)) + tuple(range(k + 1, k + 1 + n)) + (k, k + 1 + n)
    return lax.reshape(lax.transpose(halves, perm), data.shape[:-1] + tuple(shape) + (4,))


_split_original_jit = _jit(_split_original, ("shape",))
_rbg_split_original_jit = _jit(_rbg_split_original, ("shape",))
_bits_original_jit = _jit(_bits_original, ("bit_width", "shape"))


# ---- the key array ---------------------------------------------------------------------
def _reshape(x, shape, order):
    """jnp.reshape's C or Fortran order, with lax's reshape."""
    if order == "C":
        return lax.reshape(x, shape)
    if order != "F":
        raise ValueError(f"reshape: order must be 'C' or 'F', got {order!r}")
    reverse_in = tuple(range(np.ndim(x)))[::-1]
    reverse_out = tuple(range(len(shape)))[::-1]
    return lax.transpose(lax.reshape(lax.transpose(x, reverse_in), tuple(shape)[::-1]),
                         reverse_out)


def _no_arith(name):
    def method(self, *args):
        others = [a for a in args]
        names = [str(self.dtype)]
        for o in others:
            try:
                names.append(str(o.dtype) if isinstance(o, PRNGKeyArray) else
                             np.dtype(aval_of_value(o).dtype).name)
            except TypeError:
                names.append(type(o).__name__)
        raise TypeError(f"{name} does not accept dtypes {', '.join(names)}.")
    return method


class PRNGKeyArray:
    """An array of typed PRNG keys (JAX: prng.PRNGKeyArray): array-like in shape
    (index, reshape, transpose, iterate), with no arithmetic."""

    __slots__ = ("impl", "_base", "__weakref__")
    __array_priority__ = 2000

    def __init__(self, impl: str, base):
        self.impl = impl
        self._base = base

    # -- array-like metadata ------------------------------------------------------------
    @property
    def _impl(self) -> PRNGImpl:
        """The keys' implementation object (JAX's key arrays' `_impl`)."""
        return _IMPLS[self.impl]

    @property
    def _base_array(self):
        """The keys' uint32 data (JAX's key arrays' `_base_array`)."""
        return self._base

    @property
    def _nkey(self) -> int:
        return len(R.KEY_SHAPES[self.impl])

    @property
    def shape(self) -> tuple[int, ...]:
        return tuple(self._base.shape[:len(self._base.shape) - self._nkey])

    @property
    def dtype(self) -> KeyType:
        return KeyType(self.impl)

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def __numpy_dtype__(self) -> KeyType:
        """NumPy 2.4's dtype protocol: the key dtype, which NumPy then rejects (ValueError
        'Could not convert ...'), as for JAX's key arrays."""
        warn_array_as_dtype()
        return self.dtype

    @property
    def size(self) -> int:
        return int(np.prod(self.shape, dtype=np.int64))

    @property
    def itemsize(self) -> int:
        return 4 * int(np.prod(R.KEY_SHAPES[self.impl]))

    @property
    def sharding(self):
        """The keys' sharding (their data's, without its trailing key dimensions)."""
        s = self._base.sharding
        if isinstance(s, NamedSharding) and len(s.spec) > self.ndim:
            return NamedSharding(s.mesh, PartitionSpec(*s.spec[:self.ndim]))
        return s

    @property
    def weak_type(self) -> bool:
        return False

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d key array")
        return (self[i] for i in range(self.shape[0]))

    # -- the data's placement and buffers (JAX forwards these to the key data) ----------
    @property
    def aval(self) -> ShapedArray:
        return ShapedArray(self.shape, self.dtype)

    @property
    def nbytes(self) -> int:
        return self.itemsize * self.size

    committed = property(lambda self: self._base.committed)
    device = property(lambda self: self._base.device)
    is_fully_addressable = property(lambda self: self._base.is_fully_addressable)
    is_fully_replicated = property(lambda self: self._base.is_fully_replicated)

    def devices(self):
        return self._base.devices()

    def delete(self) -> None:
        self._base.delete()

    def is_deleted(self) -> bool:
        return self._base.is_deleted()

    def on_device_size_in_bytes(self) -> int:
        return self._base.on_device_size_in_bytes()

    def unsafe_buffer_pointer(self) -> int:
        return self._base.unsafe_buffer_pointer()

    def copy_to_host_async(self) -> None:
        self._base.copy_to_host_async()

    @property
    def addressable_shards(self) -> list:
        # (as JAX's, each shard's index is its data's, trailing key dimensions included)
        return [Shard._placed(s.device, s.index, self._with(s.data), s.replica_id)
                for s in self._base.addressable_shards]

    global_shards = addressable_shards

    def addressable_data(self, index: int) -> "PRNGKeyArray":
        return self._with(self._base.addressable_data(index))

    def pprint(self) -> str:
        return f"PRNGKeyArray:\n  shape = {self.shape}\n  impl = {self.impl}"

    # -- structural operations on the data (trailing key dims kept) -----------------------
    def _with(self, base) -> "PRNGKeyArray":
        return PRNGKeyArray(self.impl, base)

    def __getitem__(self, idx):
        if isinstance(idx, PRNGKeyArray):
            raise TypeError("key arrays cannot be used as indices")
        if selects_all(idx):
            return self  # as for arrays
        return self._with(self._base[self._data_index(idx)])

    def _data_index(self, idx) -> tuple:
        """The index of the data that `idx` of the keys selects (each key's data whole)."""
        idx = idx if isinstance(idx, tuple) else (idx,)
        if any(i is Ellipsis for i in idx):
            return idx + (slice(None),) * self._nkey
        return idx + (Ellipsis,) + (slice(None),) * self._nkey

    @property
    def at(self):
        """keys.at[idx].get() / .set(other_keys), as for arrays; no arithmetic updates."""
        return _KeyIndexUpdate(self)

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        shape = tuple(int(d) for d in shape)
        if -1 in shape:
            known = int(np.prod([d for d in shape if d != -1], dtype=np.int64))
            shape = tuple(self.size // max(known, 1) if d == -1 else d for d in shape)
        if int(np.prod(shape, dtype=np.int64)) != self.size:
            raise TypeError(f"cannot reshape key array of shape {self.shape} (size "
                            f"{self.size}) into shape {shape}")
        return self._with(_reshape(self._base, shape + R.KEY_SHAPES[self.impl], order))

    def ravel(self):
        return self.reshape(self.size)

    flatten = ravel

    def squeeze(self, axis=None):
        if axis is None:
            axis = tuple(i for i, d in enumerate(self.shape) if d == 1)
        axis = (axis,) if isinstance(axis, int) else tuple(axis)
        axis = tuple(a % self.ndim for a in axis)
        return self._with(lax.squeeze(self._base, axis))

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        axes = tuple(a % self.ndim for a in axes) if axes else tuple(
            range(self.ndim))[::-1]
        perm = axes + tuple(range(self.ndim, self.ndim + self._nkey))
        return self._with(lax.transpose(self._base, perm))

    @property
    def T(self):
        return self.transpose()

    def take(self, indices, axis=None, out=None, mode=None, unique_indices=False,
             indices_are_sorted=False, fill_value=None):
        """jnp.take over the keys: their data taken whole (out-of-bounds keys under
        the default "fill" mode are data of all ones bits, as JAX's)."""
        keys = self.ravel() if axis is None else self
        axis = 0 if axis is None else axis
        if not -keys.ndim <= axis < keys.ndim:
            raise ValueError(f"axis {axis} is out of bounds for array of dimension "
                             f"{keys.ndim}")
        return self._with(keys._base.take(
            indices, axis=axis % keys.ndim, out=out, mode=mode,
            unique_indices=unique_indices, indices_are_sorted=indices_are_sorted,
            fill_value=fill_value))

    def swapaxes(self, a, b):
        perm = list(range(self.ndim))
        perm[a], perm[b] = perm[b], perm[a]
        return self.transpose(perm)

    def copy(self):
        return self._with(self._base.copy() if hasattr(self._base, "copy") else self._base)

    def block_until_ready(self):
        if hasattr(self._base, "block_until_ready"):
            self._base.block_until_ready()
        return self

    # -- no arithmetic, like JAX --------------------------------------------------------
    __add__ = __radd__ = _no_arith("add")
    __sub__ = __rsub__ = _no_arith("sub")
    __mul__ = __rmul__ = _no_arith("mul")
    __truediv__ = __rtruediv__ = _no_arith("div")
    __floordiv__ = __rfloordiv__ = _no_arith("floor_divide")
    __mod__ = __rmod__ = _no_arith("rem")
    __pow__ = __rpow__ = _no_arith("pow")
    __matmul__ = __rmatmul__ = _no_arith("dot_general")
    __and__ = __rand__ = _no_arith("and")
    __or__ = __ror__ = _no_arith("or")
    __xor__ = __rxor__ = _no_arith("xor")
    __lshift__ = __rlshift__ = _no_arith("shift_left")
    __rshift__ = __rrshift__ = _no_arith("shift_right_arithmetic")
    __lt__ = _no_arith("lt")
    __le__ = _no_arith("le")
    __gt__ = _no_arith("gt")
    __ge__ = _no_arith("ge")
    __neg__ = _no_arith("neg")
    __pos__ = _no_arith("pos")
    __abs__ = _no_arith("abs")
    __invert__ = _no_arith("not")

    def __eq__(self, other):
        if not isinstance(other, PRNGKeyArray) or other.impl != self.impl:
            return _no_arith("eq")(self, other)
        a, b = self._base, other._base
        shape = np.broadcast_shapes(np.shape(a), np.shape(b))
        same = lax.eq(broadcast_to(a, shape), broadcast_to(b, shape))
        return lax.reduce_and(same, tuple(range(len(shape) - self._nkey, len(shape))))

    def __ne__(self, other):
        return lax.not_(self.__eq__(other))

    def __hash__(self):
        raise TypeError("unhashable type: 'PRNGKeyArray'")

    def __round__(self, ndigits=None):
        raise TypeError(f"Cannot interpret '{self.dtype}' as a data type")

    def astype(self, dtype):
        if isinstance(self._base, Tracer):    # (JAX's traced keys: convert_element_type)
            raise ValueError(f"Cannot convert_element_type from {self.dtype} to "
                             f"{np.dtype(dtype).name if not isinstance(dtype, KeyType) else dtype}")
        raise NotImplementedError("Cannot call abstract method astype")

    def __bool__(self):
        raise TypeError("The truth value of a key array is not defined")

    def __array__(self, *args, **kwargs):
        raise TypeError("JAX array with PRNGKey dtype cannot be converted to a NumPy "
                        "array. Use jax.random.key_data(arr) if you wish to extract the "
                        "underlying integer array.")

    def __repr__(self):
        if isinstance(self._base, Tracer):
            dims = ",".join(map(str, self.shape))
            return f"Traced<{self.dtype}[{dims}]>"
        return f"Array({self.shape}, dtype={self.dtype}) overlaying:\n{self._base}"

    __str__ = __repr__


class _KeyIndexUpdate:
    __slots__ = ("keys", "idx")

    def __init__(self, keys, idx=None):
        self.keys, self.idx = keys, idx

    def __getitem__(self, idx):
        return _KeyIndexUpdate(self.keys, idx)

    def get(self, **kwargs):
        k = self.keys
        return k._with(k._base.at[k._data_index(self.idx)].get(**kwargs))

    def set(self, values, **kwargs):
        k = self.keys
        if not isinstance(values, PRNGKeyArray) or values.impl != k.impl:
            raise TypeError(f"key array .at[].set takes key values of dtype {k.dtype}, got "
                            f"{getattr(values, 'dtype', type(values).__name__)}")
        return k._with(k._base.at[k._data_index(self.idx)].set(values._base, **kwargs))

    def __getattr__(self, name):
        if name in ("add", "multiply", "divide", "power", "min", "max", "apply"):
            raise TypeError(f".at[].{name} does not accept dtype {self.keys.dtype}")
        raise AttributeError(name)


def _abstract(name):
    def method(self, *args, **kwargs):
        raise NotImplementedError(f"Cannot call abstract method {name}")
    method.__name__ = name
    return method


# The array methods JAX's key arrays inherit from jax.Array without an implementation:
# calling one (or reading one of the properties) raises JAX's NotImplementedError.
for _name in ("__array_namespace__", "all", "any", "argmax", "argmin", "argpartition",
              "argsort", "byteswap", "choose", "clip", "compress", "conj",
              "conjugate", "cumprod", "cumsum", "diagonal", "dot", "item", "max", "mean",
              "min", "nonzero", "prod", "ptp", "repeat", "round", "searchsorted", "sort",
              "std", "sum", "to_device", "trace", "var", "view"):
    setattr(PRNGKeyArray, _name, _abstract(_name))
for _name in ("flat", "imag", "mT", "real"):
    setattr(PRNGKeyArray, _name, property(_abstract(_name)))

basearray.Array.register(PRNGKeyArray)   # a key array is a jax.Array, as in JAX


def _unflatten_keys(impl, children):
    base = children[0]
    if not hasattr(base, "shape"):
        # (JAX's key arrays are leaves: mapping a function over one gives what it returned,
        # a None, an axis or a spec, which is no key data)
        return base
    if isinstance(base, np.ndarray) and base.dtype == float0:
        # (a key's tangent or integer gradient: float0 of the keys' shape, as JAX's)
        return np.zeros(base.shape[:base.ndim - len(R.KEY_SHAPES[impl])], float0)
    if isinstance(base, ShapeDtypeStruct):   # eval_shape / out_info: JAX's abstract key
        return ShapeDtypeStruct(base.shape[:len(base.shape) - len(R.KEY_SHAPES[impl])],
                                KeyType(impl))
    return PRNGKeyArray(impl, base)


# mjax's transformations see a key array as its data (mjax/base/trace_trees.py); for users'
# tree_util calls, and the Python-side registry libraries query (tree_util.NODE_TYPES,
# jax._src.tree_util._registry), it is a leaf, as JAX's keys are.
trace_trees.registry.register_node(PRNGKeyArray, lambda k: ((k._base,), k.impl),
                                   _unflatten_keys)


@registration.KEY_ARRAY_OF_ABSTRACT.fill
def _key_array_of_abstract(sds) -> PRNGKeyArray:
    impl = sds.dtype.impl
    return PRNGKeyArray(impl, ShapeDtypeStruct(tuple(sds.shape) + R.KEY_SHAPES[impl],
                                               np.uint32, sharding=sds.sharding))


# ---- jnp.concatenate / jnp.stack of key arrays ---------------------------------------------
def any_keys(arrays) -> bool:
    return any(isinstance(a, PRNGKeyArray) for a in arrays)


def same_impl(arrays, what) -> str:
    """The one key implementation of `arrays`, which must all be key arrays of it."""
    impls = {a.impl if isinstance(a, PRNGKeyArray) else None for a in arrays}
    key = next(a.dtype for a in arrays if isinstance(a, PRNGKeyArray))
    if None in impls:      # keys with other values: as JAX, no type promotion of keys
        raise ValueError(f"dtype={key} is not a valid dtype for JAX type promotion.")
    if len(impls) != 1:
        names = ", ".join(str(a.dtype) for a in arrays)
        raise TypeError(f"{what} requires all key arrays to have one key dtype, got {names}")
    return impls.pop()


def concatenate_keys(arrays, axis=0) -> PRNGKeyArray:
    """jnp.concatenate of key arrays: their data joined along `axis`."""
    impl = same_impl(arrays, "concatenate")
    if axis is None:
        arrays, axis = [a.ravel() for a in arrays], 0
    ndim = arrays[0].ndim
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return PRNGKeyArray(impl, lax.concatenate([a._base for a in arrays], axis % ndim))


def stack_keys(arrays, axis=0) -> PRNGKeyArray:
    """jnp.stack of key arrays: their data stacked along a new `axis`."""
    impl = same_impl(arrays, "stack")
    ndim = arrays[0].ndim + 1
    if not -ndim <= axis < ndim:
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return PRNGKeyArray(impl, lax.stack([a._base for a in arrays], axis % ndim))


def asarray_keys(a, dtype=None) -> PRNGKeyArray:
    """jnp.asarray/jnp.array of a key array (itself) or of a list of key arrays
    (stacked)."""
    if dtype is not None and not (isinstance(dtype, KeyType) and isinstance(
            a, PRNGKeyArray) and dtype.impl == a.impl):
        source = a.dtype if isinstance(a, PRNGKeyArray) else "key"
        target = dtype if isinstance(dtype, KeyType) else np.dtype(dtype).name
        raise ValueError(f"Cannot convert_element_type from {source} to {target}")
    if isinstance(a, PRNGKeyArray):
        return a
    return stack_keys([asarray_keys(v) if isinstance(v, (list, tuple)) else v for v in a])
