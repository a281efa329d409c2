"""`jnp.ufunc`: NumPy's ufunc methods (reduce, accumulate, reduceat, outer, at), and the
ufunc objects JAX exposes them on (add, multiply, subtract, maximum, minimum, logaddexp,
logaddexp2, the bitwise and logical ops, negative: elementwise.py's functions with these
methods). JAX: jax.numpy.ufunc.

A ufunc may name a fast implementation of a method (add.reduce is sum); the others run as
JAX runs them: a loop (lax.fori_loop / lax.scan) applying the function one slice at a time.
"""
from __future__ import annotations

import math
import operator

import numpy as _onp

from mjax import lax
from mjax.tracing.registration import PURE_OF_AVALS, pure_of_avals
from mjax.tracing.staging import eval_shape, jit_eagerly
from mjax.numpy import elementwise, reductions
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import full, zeros
from mjax.numpy.elementwise import exp, isfinite, log, where_xy
from mjax.numpy.indexing import take
from mjax.numpy.promotion import broadcast_to, result_type
from mjax.numpy.scalar_types import issubdtype
from mjax.numpy.shaping import concatenate, expand_dims, moveaxis, ravel, reshape, squeeze
from mjax.numpy.vectorize import vectorize


_AT_INPLACE = ("jax.numpy.ufunc.at: JAX arrays are immutable, so ufunc.at cannot update "
               "in place; pass inplace=False to get the updated copy")


class ufunc:  # noqa: N801 (NumPy's spelling)
    """A function with NumPy's ufunc methods. JAX: jax.numpy.ufunc.

    Its properties are read-only and it hashes by them (not by its method implementations),
    so equal ufuncs share the compiled programs of their methods: each method runs as one
    program cached per ufunc and static arguments, as JAX jits its methods with the ufunc
    static."""

    def __init__(self, func, /, nin, nout, *, name=None, nargs=None, identity=None,
                 call=None, reduce=None, accumulate=None, at=None, reduceat=None):
        self.__name__ = name or getattr(func, "__name__", "ufunc")
        self.__doc__ = getattr(func, "__doc__", None)
        nin, nout = operator.index(nin), operator.index(nout)
        self.__props = {"func": func, "nin": nin, "nout": nout,
                        "nargs": nin if nargs is None else operator.index(nargs),
                        "identity": identity, "call": call or func, "reduce": reduce,
                        "accumulate": accumulate, "at": at, "reduceat": reduceat}

    _func = property(lambda self: self.__props["func"])
    nin = property(lambda self: self.__props["nin"])
    nout = property(lambda self: self.__props["nout"])
    nargs = property(lambda self: self.__props["nargs"])
    identity = property(lambda self: self.__props["identity"])
    _call = property(lambda self: self.__props["call"])
    _reduce = property(lambda self: self.__props["reduce"])
    _accumulate = property(lambda self: self.__props["accumulate"])
    _at = property(lambda self: self.__props["at"])
    _reduceat = property(lambda self: self.__props["reduceat"])

    def _identity_key(self):
        return (self._func, self.__name__, self.identity, self.nin, self.nout, self.nargs)

    def __hash__(self):
        return hash(self._identity_key())

    def __eq__(self, other):
        return isinstance(other, ufunc) and self._identity_key() == other._identity_key()

    def __repr__(self):
        return f"<jnp.ufunc '{self.__name__}'>"

    def __call__(self, *args, out=None, where=None):
        if out is not None:
            raise NotImplementedError(f"out argument of {self}")
        if where is not None:
            raise NotImplementedError(f"where argument of {self}")
        return self._call(*args)

    # ---- reduce ----------------------------------------------------------------------------
    def reduce(self, a, axis=0, dtype=None, out=None, keepdims=False, initial=None,
               where=None):
        """Reduces `a` along axis by applying the function pairwise. JAX: ufunc.reduce."""
        if self.nin != 2:
            raise ValueError("reduce only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError("reduce only supported for functions returning a single value")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduce()")
        if where is not None:
            if self.identity is None and initial is None:
                raise ValueError(f"reduction operation {self.__name__!r} does not have an "
                                 f"identity, so to use a where mask one has to specify "
                                 f"'initial'.")
            if asarray(where).dtype != _onp.bool_:
                raise ValueError(f"where argument must have dtype=bool; got "
                                 f"dtype={asarray(where).dtype}")
        return _reduce_program(self, a, axis, dtype, keepdims, initial, where)

    def _reduce_now(self, a, axis, dtype, keepdims, initial, where):
        if self._reduce is not None:
            kw = {}
            if initial is not None:
                kw["initial"] = initial
            if where is not None:
                kw["where"] = where
            return self._reduce(a, axis=axis, dtype=dtype, keepdims=keepdims, **kw)
        return self._reduce_by_loop(a, axis, dtype, keepdims, initial, where)

    def _out_dtype(self, *arrays):
        ones = [_onp.ones((), asarray(x).dtype) for x in arrays]
        return eval_shape(self._func, *ones).dtype

    def _reduce_by_loop(self, a, axis, dtype, keepdims, initial, where):
        a = asarray(a)
        initial = self.identity if initial is None else initial
        dtype = self._out_dtype(a, a) if dtype is None else dtype
        if where is not None:
            where = broadcast_to(where, a.shape)
        if isinstance(axis, tuple):
            raise NotImplementedError(f"{self.__name__}.reduce over a tuple of axes")
        if axis is None:
            final = (1,) * a.ndim if keepdims else ()
            a, axis = ravel(a), 0
            where = None if where is None else ravel(where)
        else:
            axis = axis % a.ndim if a.ndim else axis
            final = a.shape[:axis] + ((1,) if keepdims else ()) + a.shape[axis + 1:]
        a = moveaxis(a, axis, 0)
        where = None if where is None else moveaxis(where, axis, 0)
        if a.shape[0] == 0:
            if initial is None:
                raise ValueError(f"zero-size array to reduction operation {self.__name__} "
                                 f"which has no identity")
            return full(final, initial, dtype)

        def body(i, acc):
            y = self(acc, a[i].astype(dtype))
            return y if where is None else where_xy(where[i], y, acc)
        if initial is None:
            start, acc = 1, a[0].astype(dtype)
        else:
            start, acc = 0, broadcast_to(asarray(initial).astype(dtype), a.shape[1:])
        result = lax.fori_loop(start, a.shape[0], body, acc)
        return reshape(result, final)

    # ---- accumulate ------------------------------------------------------------------------
    def accumulate(self, a, axis=0, dtype=None, out=None):
        """Running reduction along axis. JAX: ufunc.accumulate."""
        if self.nin != 2:
            raise ValueError("accumulate only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError("accumulate only supported for functions returning a single "
                             "value")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.accumulate()")
        return _accumulate_program(self, a, axis, dtype)

    def _accumulate_now(self, a, axis, dtype):
        if self._accumulate is not None:
            return self._accumulate(a, axis=axis, dtype=dtype)
        a = asarray(a)
        dtype = self._out_dtype(a, a) if dtype is None else dtype
        if axis is None or isinstance(axis, tuple):
            raise ValueError("accumulate does not allow multiple axes")
        axis = axis % a.ndim
        if a.size == 0:
            return zeros(a.shape, dtype)
        moved = moveaxis(a, axis, 0).astype(dtype)

        def step(acc, x):
            y = self(acc, x).astype(dtype)
            return y, y
        _, rest = lax.scan(step, moved[0], moved[1:])
        return moveaxis(concatenate([moved[:1], rest]), 0, axis)

    # ---- at --------------------------------------------------------------------------------
    def at(self, a, indices, b=None, /, *, inplace=True):
        """a with the function applied at `indices` (with b for binary ufuncs), repeated
        indices applied one after the other. JAX: ufunc.at (inplace=False required)."""
        if inplace:
            raise NotImplementedError(_AT_INPLACE)
        return _at_program(self, a, indices, b)

    def _at_now(self, a, indices, b):
        if self._at is not None:
            return self._at(a, indices) if b is None else self._at(a, indices, b)
        args = () if b is None else (b,)
        dtype = self._out_dtype(a, *args)
        a = asarray(a).astype(dtype)
        args = tuple(asarray(x).astype(dtype) for x in args)
        idx = indices if isinstance(indices, tuple) else (indices,)
        shapes = [_onp.shape(i) for i in idx if not isinstance(i, slice) and i is not None
                  and i is not Ellipsis]
        shape = _onp.broadcast_shapes(*shapes) if shapes else ()
        if not shape:
            return a.at[indices].set(self(a.at[indices].get(), *args))
        # One update per index, in order, so repeated indices compound as in NumPy.
        flat = [i if isinstance(i, slice) or i is None or i is Ellipsis
                else ravel(broadcast_to(asarray(i), shape)) for i in idx]
        if args:
            arg = broadcast_to(args[0], shape + args[0].shape[len(shape):])
            args = (reshape(arg, (math.prod(shape),) + args[0].shape[len(shape):]),)

        def body(k, x):
            where = tuple(i if isinstance(i, slice) or i is None or i is Ellipsis else i[k]
                          for i in flat)
            return x.at[where].set(self(x.at[where].get(), *(arg[k] for arg in args)))
        return lax.fori_loop(0, math.prod(shape), body, a)

    # ---- reduceat --------------------------------------------------------------------------
    def reduceat(self, a, indices, axis=0, dtype=None, out=None):
        """Reductions over the slices indices[i]:indices[i+1] (just a[indices[i]] when the
        next index is not larger). JAX: ufunc.reduceat."""
        if self.nin != 2:
            raise ValueError("reduceat only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError("reduceat only supported for functions returning a single "
                             "value")
        if out is not None:
            raise NotImplementedError(f"out argument of {self.__name__}.reduceat()")
        return _reduceat_program(self, a, indices, axis, dtype)

    def _reduceat_now(self, a, indices, axis, dtype):
        if self._reduceat is not None:
            return self._reduceat(a, indices, axis=axis, dtype=dtype)
        a, indices = asarray(a), asarray(indices)
        if a.ndim == 0:
            raise ValueError(f"reduceat: a must have 1 or more dimension, got a.shape="
                             f"{a.shape}")
        if indices.ndim != 1:
            raise ValueError(f"reduceat: indices must be one-dimensional, got "
                             f"indices.shape={indices.shape}")
        if axis is None or isinstance(axis, (tuple, list)):
            raise ValueError("reduceat requires a single integer axis.")
        axis = axis % a.ndim
        dtype = a.dtype if dtype is None else dtype
        out = take(a, indices, axis=axis).astype(dtype)
        bounds = concatenate([indices, asarray([a.shape[axis]], indices.dtype)])
        shape = [1] * out.ndim
        shape[axis] = indices.shape[0]
        start = reshape(bounds[:-1], shape)
        end = reshape(bounds[1:], shape)

        def body(i, acc):
            row = take(a, expand_dims(i, 0), axis=axis).astype(dtype)
            inside = elementwise.logical_and(i > start, i < end)
            return where_xy(inside, self(acc, row), acc)
        return lax.fori_loop(0, a.shape[axis], body, out)

    # ---- outer -----------------------------------------------------------------------------
    def outer(self, A, B, /):
        """The function applied to every pair (A[i...], B[j...]). JAX: ufunc.outer."""
        if self.nin != 2:
            raise ValueError("outer only supported for binary ufuncs")
        if self.nout != 1:
            raise ValueError("outer only supported for functions returning a single value")
        return _outer_program(self, A, B)


# The methods' programs, compiled once per ufunc (hashed by its properties) and static
# arguments when called outside a trace, inlined under one.
@jit_eagerly("a", "initial", "where")
def _reduce_program(self, a, axis, dtype, keepdims, initial, where):
    return self._reduce_now(a, axis, dtype, keepdims, initial, where)


@jit_eagerly("a")
def _accumulate_program(self, a, axis, dtype):
    return self._accumulate_now(a, axis, dtype)


@jit_eagerly("a", "indices")
def _reduceat_program(self, a, indices, axis, dtype):
    return self._reduceat_now(a, indices, axis, dtype)


@jit_eagerly("A", "B")
def _outer_program(self, A, B):
    # (both operands reshaped to one rank, so jax_numpy_rank_promotion does not object)
    A, B = asarray(A), asarray(B)
    return self(reshape(A, A.shape + (1,) * B.ndim), reshape(B, (1,) * A.ndim + B.shape))


def _at_program(self, a, indices, b):
    """ufunc.at with its array indices traced and its slices, None and Ellipsis static (a
    boolean mask, whose shape depends on its values, runs op by op)."""
    items = indices if isinstance(indices, tuple) else (indices,)
    pattern, arrays = [], []
    for i in items:
        if isinstance(i, slice):
            pattern.append(("slice", i.start, i.stop, i.step))
        elif i is None or i is Ellipsis:
            pattern.append(("const", i))
        else:
            i = asarray(i)
            if i.dtype == _onp.bool_:
                return self._at_now(a, indices, b)
            pattern.append(("array",))
            arrays.append(i)
    return _at_traced(self, a, tuple(arrays), b, tuple(pattern), isinstance(indices, tuple))


@jit_eagerly("a", "arrays", "b")
def _at_traced(self, a, arrays, b, pattern, is_tuple):
    arrays, items = list(arrays), []
    for p in pattern:
        items.append(slice(*p[1:]) if p[0] == "slice" else p[1] if p[0] == "const"
                     else arrays.pop(0))
    return self._at_now(a, tuple(items) if is_tuple else items[0], b)


def _add_at(a, indices, b):
    return asarray(a).at[indices].add(b)


def _multiply_at(a, indices, b):
    return asarray(a).at[indices].multiply(b)


def _subtract_at(a, indices, b):
    return asarray(a).at[indices].subtract(b)


def _reduction(fn):
    """A jnp reduction as ufunc.reduce (whose axis defaults to 0, not None)."""
    def reduce(a, axis=0, dtype=None, keepdims=False, **kw):
        return fn(a, axis=axis, dtype=dtype, keepdims=keepdims, **kw)
    return reduce


def _reduction_no_dtype(fn):
    def reduce(a, axis=0, dtype=None, keepdims=False, **kw):
        out = fn(a, axis=axis, keepdims=keepdims, **kw)
        return out if dtype is None else out.astype(dtype)
    return reduce


def _cumulative(fn):
    def accumulate(a, axis=0, dtype=None):
        return fn(a, axis=axis, dtype=dtype)
    return accumulate


def _logsumexp(base: float):
    """logaddexp.reduce (base e) or logaddexp2.reduce (base 2): the max plus the log of a
    sum of shifted exponentials, so large values do not overflow."""
    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        a = asarray(a)
        if not issubdtype(a.dtype, _onp.inexact):
            a = a.astype(result_type(a, float))
        if initial is not None:
            raise NotImplementedError("initial argument of logaddexp.reduce")
        if where is not None:
            a = where_xy(where, a, -_onp.inf)
        top = reductions.max(a, axis=axis, keepdims=True)
        top = where_xy(isfinite(top), top, 0)
        log_base = _onp.log(base).astype(a.dtype)
        total = reductions.sum(exp((a - top) * log_base), axis=axis, keepdims=True)
        out = log(total) / log_base + top
        if not keepdims:
            out = squeeze(out, axis=axis)
        return out if dtype is None else out.astype(dtype)
    return reduce


def _bitwise_reduce(fn, identity):
    def reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
        a = asarray(a)
        if where is not None:
            a = where_xy(where, a, _onp.array(identity).astype(a.dtype))
        axes = tuple(range(a.ndim)) if axis is None else tuple(
            d % a.ndim for d in ((axis,) if isinstance(axis, int) else axis))
        out = lax.reduce(a, _onp.array(identity).astype(a.dtype), fn, axes)
        if initial is not None:
            out = fn(out, asarray(initial).astype(a.dtype))
        if keepdims:
            out = expand_dims(out, axes)
        return out if dtype is None else out.astype(dtype)
    return reduce


def _logical_xor_reduce(a, axis=0, dtype=None, keepdims=False, initial=None, where=None):
    a = asarray(a) != 0
    out = _bitwise_reduce(lax.bitwise_xor, False)(a, axis, None, keepdims, initial, where)
    return out if dtype is None else out.astype(dtype)


def frompyfunc(func, /, nin, nout, *, identity=None):
    """A jnp.ufunc from a scalar function of `nin` arguments and `nout` results: calls
    broadcast it over arrays (jnp.vectorize), and it has reduce/accumulate/outer/at.
    JAX: jnp.frompyfunc."""
    return ufunc(func, nin, nout, identity=identity, call=vectorize(func))


# The binary functions JAX exposes as ufuncs, and negative; a method left out runs by the
# loops of the ufunc class.
add = ufunc(elementwise.add, 2, 1, name="add", identity=0,
            reduce=_reduction(reductions.sum), accumulate=_cumulative(reductions.cumsum),
            at=_add_at)
multiply = ufunc(elementwise.multiply, 2, 1, name="multiply", identity=1,
                 reduce=_reduction(reductions.prod),
                 accumulate=_cumulative(reductions.cumprod), at=_multiply_at)
subtract = ufunc(elementwise.subtract, 2, 1, name="subtract", identity=None, at=_subtract_at)
maximum = ufunc(elementwise.maximum, 2, 1, name="maximum", identity=None,
                reduce=_reduction_no_dtype(reductions.max))
minimum = ufunc(elementwise.minimum, 2, 1, name="minimum", identity=None,
                reduce=_reduction_no_dtype(reductions.min))
bitwise_and = ufunc(elementwise.bitwise_and, 2, 1, name="bitwise_and", identity=-1,
                    reduce=_bitwise_reduce(lax.bitwise_and, -1))
bitwise_or = ufunc(elementwise.bitwise_or, 2, 1, name="bitwise_or", identity=0,
                   reduce=_bitwise_reduce(lax.bitwise_or, 0))
bitwise_xor = ufunc(elementwise.bitwise_xor, 2, 1, name="bitwise_xor", identity=0,
                    reduce=_bitwise_reduce(lax.bitwise_xor, 0))
logical_and = ufunc(elementwise.logical_and, 2, 1, name="logical_and", identity=True,
                    reduce=_reduction_no_dtype(reductions.all))
logical_or = ufunc(elementwise.logical_or, 2, 1, name="logical_or", identity=False,
                   reduce=_reduction_no_dtype(reductions.any))
logical_xor = ufunc(elementwise.logical_xor, 2, 1, name="logical_xor", identity=False,
                    reduce=_logical_xor_reduce)
logaddexp = ufunc(elementwise.logaddexp, 2, 1, name="logaddexp", identity=-_onp.inf,
                  reduce=_logsumexp(_onp.e))
logaddexp2 = ufunc(elementwise.logaddexp2, 2, 1, name="logaddexp2", identity=-_onp.inf,
                   reduce=_logsumexp(2.0))
negative = ufunc(elementwise.negative, 1, 1, name="negative")
# (a ufunc calling a function that is pure of its avals is one too: eager vmap keeps its
# program, mjax.tracing.registration.PURE_OF_AVALS)
for _u in (add, multiply, subtract, maximum, minimum, bitwise_and, bitwise_or, bitwise_xor):
    if PURE_OF_AVALS.get(id(_u._func)) is _u._func and _u._call is _u._func:
        pure_of_avals(_u)
del _u
