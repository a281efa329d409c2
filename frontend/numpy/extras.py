"""More of jax.numpy, composed from existing functions: insertion and deletion, index
helpers (tril/triu/diag indices, unravel/ravel_multi_index, index tricks), statistics (cov,
corrcoef, trapezoid, gradient), windows, set operations, and small utilities."""
from __future__ import annotations

import math
import operator

import numpy as _onp

from mjax import dtypes as _dt
from mjax import lax
from mjax import numpy as jnp
from mjax.core import Tracer, at_user_line

euler_gamma = _onp.euler_gamma


def _concrete(x, fname, why):
    from mjax.numpy.concrete_values import concrete_or_error
    return concrete_or_error(x, f"jax.numpy.{fname}: {why}")


def _axis(axis, ndim):
    axis = operator.index(axis)
    if not -ndim <= axis < max(ndim, 1):
        raise ValueError(at_user_line(f"axis {axis} is out of bounds for array of dimension "
                                      f"{ndim}"))
    return axis % ndim if ndim else 0


# ---- insertion and deletion ------------------------------------------------------------------
def append(arr, values, axis=None):
    """arr with values appended along axis (both raveled when axis is None). JAX: append."""
    arr, values = jnp.asarray(arr), jnp.asarray(values)
    if axis is None:
        return jnp.concatenate([jnp.ravel(arr), jnp.ravel(values)])
    return jnp.concatenate([arr, values], axis=axis)


def delete(arr, obj, axis=None, *, assume_unique_indices=False):
    """arr without the entries `obj` (an index, slice or index array) along axis.
    JAX: jnp.delete (obj must be static)."""
    arr = jnp.asarray(arr)
    if axis is None:
        arr, axis = jnp.ravel(arr), 0
    axis = _axis(axis, arr.ndim)
    n = arr.shape[axis]
    if isinstance(obj, slice):
        drop = _onp.arange(n)[obj]
    else:
        drop = _concrete(obj, "delete", "the deleted indices must be static")
        if drop.dtype == _onp.bool_:
            if drop.shape != (n,):
                raise ValueError(f"boolean array argument obj to delete must be one "
                                 f"dimensional and match the axis length of {n}")
            drop = _onp.flatnonzero(drop)
        drop = drop.astype(int).ravel()
        if _onp.any((drop < -n) | (drop >= n)):
            raise IndexError(f"index out of bounds for axis {axis} with size {n}")
        drop = drop % n if n else drop
    keep = _onp.setdiff1d(_onp.arange(n), drop)
    return jnp.take(arr, keep.astype(_dt.default_int()), axis=axis)


def insert(arr, obj, values, axis=None):
    """arr with values inserted before the indices `obj` along axis. JAX: jnp.insert."""
    arr = jnp.asarray(arr)
    if axis is None:
        arr, axis = jnp.ravel(arr), 0
    axis = _axis(axis, arr.ndim)
    n = arr.shape[axis]
    values = jnp.asarray(values).astype(arr.dtype)
    if isinstance(obj, slice):
        positions = _onp.arange(n)[obj]
        scalar = False
    else:
        from mjax.numpy.concrete_values import known
        obj = known(obj)
        if isinstance(obj, Tracer):     # under jit: the output size is still static
            return _insert_traced(arr, obj, values, axis)
        positions = _concrete(obj, "insert", "the insertion indices must be static")
        scalar = positions.ndim == 0
        positions = positions.astype(int).ravel()
    # Out-of-range indices are clipped, as in JAX (NumPy raises).
    positions = _onp.clip(_onp.where(positions < 0, positions + n, positions), 0, n)
    # As NumPy: values gain leading unit dims up to arr.ndim; a scalar index inserts them
    # all (their first axis moved to `axis`), an index array one slice per index.
    vals = jnp.reshape(values, (1,) * (arr.ndim - values.ndim) + values.shape)
    shape = list(arr.shape)
    if scalar:
        vals = jnp.moveaxis(vals, 0, axis)
        shape[axis] = vals.shape[axis]
        block = jnp.broadcast_to(vals, shape)
        pos = int(positions[0])
        return jnp.concatenate([lax.slice_in_dim(arr, 0, pos, 1, axis), block,
                                lax.slice_in_dim(arr, pos, n, 1, axis)], axis=axis)
    m = len(positions)
    shape[axis] = m
    block = jnp.broadcast_to(vals, shape)
    order = _onp.argsort(positions, kind="stable")
    # Final layout: old entries shifted right by the number of insertions before them.
    new_pos = positions[order] + _onp.arange(m)
    old_pos = _onp.arange(n) + _onp.searchsorted(positions[order], _onp.arange(n), "right")
    gather = _onp.empty(n + m, int)
    gather[old_pos] = _onp.arange(n)
    gather[new_pos] = n + order
    both = jnp.concatenate([arr, block], axis=axis)
    return jnp.take(both, gather.astype(_dt.default_int()), axis=axis)


def _insert_traced(arr, obj, values, axis):
    """insert with traced indices (JAX: negative ones wrap, the rest are clipped to
    [0, n]); only their number decides the output shape."""
    if obj.ndim > 1:
        raise ValueError(f"jnp.insert(): obj must be a slice, a one-dimensional array, or "
                         f"a scalar; got shape {obj.shape}")
    if not _dt.issubdtype(obj.dtype, _onp.integer):
        raise ValueError(f"jnp.insert(): index array must be integer typed; got {obj.dtype}")
    n, int_t = arr.shape[axis], _dt.default_int()
    vals = jnp.reshape(values, (1,) * (arr.ndim - values.ndim) + values.shape)
    if obj.ndim == 0:
        vals = jnp.moveaxis(vals, 0, axis)
    m = vals.shape[axis] if obj.size == 1 else obj.shape[0]
    idx = jnp.broadcast_to(jnp.ravel(obj).astype(int_t), (m,)) if obj.size == 1 else \
        obj.astype(int_t)
    idx = jnp.clip(jnp.where(idx < 0, idx + n, idx), 0, n)
    shape = list(arr.shape)
    shape[axis] = m
    block = jnp.broadcast_to(vals, shape)
    # The i-th inserted slice lands after the insertions sorted before it (stable order).
    new_pos = idx.at[jnp.argsort(idx, stable=True)].add(jnp.arange(m, dtype=int_t))
    kept = jnp.ones(n + m, bool).at[new_pos].set(False)
    old_pos = jnp.flatnonzero(kept, size=n)
    gather = jnp.zeros(n + m, int_t).at[new_pos].set(n + jnp.arange(m, dtype=int_t))
    gather = gather.at[old_pos].set(jnp.arange(n, dtype=int_t))
    return jnp.take(jnp.concatenate([arr, block], axis=axis), gather, axis=axis)


def resize(a, new_shape):
    """a repeated (or cut) to fill new_shape, in C order. JAX: jnp.resize."""
    a = jnp.ravel(jnp.asarray(a))
    new_shape = (new_shape,) if isinstance(new_shape, int) else tuple(new_shape)
    size = math.prod(new_shape)
    if a.size == 0 or size == 0:
        return jnp.zeros(new_shape, a.dtype)
    reps = -(-size // a.size)
    return jnp.reshape(jnp.tile(a, reps)[:size], new_shape)


def rollaxis(a, axis, start=0):
    """Moves axis to position `start`. JAX: jnp.rollaxis."""
    a = jnp.asarray(a)
    n = a.ndim
    axis = _axis(axis, n)
    if not -n <= start <= n:
        raise ValueError(f"start={start} must satisfy {-n}<=start<={n}")
    start = start + n if start < 0 else start
    if axis < start:
        start -= 1
    return jnp.moveaxis(a, axis, start)


def unstack(x, /, *, axis=0):
    """The slices of x along axis, as a tuple. JAX: jnp.unstack."""
    x = jnp.asarray(x)
    if x.ndim == 0:
        raise ValueError("Unstack requires arrays with rank > 0, however a scalar array was "
                         "passed.")
    axis = _axis(axis, x.ndim)
    return tuple(lax.index_in_dim(x, i, axis, keepdims=False) for i in range(x.shape[axis]))


def trim_zeros(filt, trim="fb", axis=None):
    """filt without leading ('f') and/or trailing ('b') zeros. JAX: jnp.trim_zeros."""
    if axis is not None:
        raise NotImplementedError("mjax.numpy.trim_zeros: only 1-d trimming (axis=None)")
    filt = jnp.asarray(filt)
    host = _concrete(filt, "trim_zeros", "the output size depends on the values")
    nz = _onp.flatnonzero(host)
    if nz.size == 0:
        return filt[:0]
    start = nz[0] if "f" in trim.lower() else 0
    stop = nz[-1] + 1 if "b" in trim.lower() else host.shape[0]
    return filt[start:stop]


# ---- selection --------------------------------------------------------------------------------
def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of a along axis where condition is true. JAX: jnp.compress."""
    if out is not None:
        raise NotImplementedError("mjax.numpy.compress: the `out` argument is not supported")
    a = jnp.asarray(a)
    cond = jnp.asarray(condition)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        a, axis = jnp.ravel(a), 0
    axis = _axis(axis, a.ndim)
    cond = cond[:a.shape[axis]] if cond.shape[0] > a.shape[axis] else cond
    if size is None:
        from mjax.numpy.concrete_values import concrete_or_error
        from mjax.errors import TracerBoolConversionError
        cond = concrete_or_error(cond, "jnp.compress: the condition decides the output "
                                       "size; pass size=", TracerBoolConversionError)
    idx = jnp.flatnonzero(cond, size=size, fill_value=cond.shape[0] if size else None)
    out = jnp.take(a, idx, axis=axis, mode="fill", fill_value=fill_value)
    return out


def extract(condition, arr, *, size=None, fill_value=0):
    """ravel(arr)[ravel(condition) != 0]. JAX: jnp.extract."""
    return compress(jnp.ravel(jnp.asarray(condition) != 0), jnp.ravel(jnp.asarray(arr)),
                    size=size, fill_value=fill_value)


def choose(a, choices, out=None, mode="raise"):
    """choices[a[i]][i] elementwise. JAX: jnp.choose (mode 'raise' needs concrete
    indices: under jit it raises ConcretizationTypeError, as in JAX)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    a = jnp.asarray(a)
    choices = [jnp.asarray(c) for c in choices]
    n = len(choices)
    if mode == "wrap":
        a = a % n
    elif mode in ("clip", "raise"):
        if mode == "raise":     # JAX checks the (concrete) indices; under jit it raises
            host = _concrete(a, "choose", "it was traced with mode='raise'; use "
                                          "mode='wrap' or mode='clip'")
            if host.size and (host.min() < 0 or host.max() >= n):
                raise ValueError("invalid entry in choice array")
        a = jnp.clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    arrays = jnp.broadcast_arrays(a, *choices)
    stacked = jnp.stack(arrays[1:])
    return jnp.take_along_axis(stacked, arrays[0][None].astype(_dt.default_int()), axis=0)[0]


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i](x) where condlist[i] (the last function, if one extra, elsewhere).
    JAX: jnp.piecewise."""
    x = jnp.asarray(x)
    condlist = [jnp.asarray(c) for c in (condlist if isinstance(condlist, (list, tuple))
                                         else [condlist])]
    if x.ndim == 0 and condlist and condlist[0].ndim == 1 and len(condlist) == 1:
        condlist = [c for c in condlist[0]]
    n = len(condlist)
    funclist = list(funclist)
    if len(funclist) == n + 1:
        otherwise = funclist.pop()
        rest = jnp.logical_not(jnp.any(jnp.stack([jnp.broadcast_to(c, x.shape)
                                                  for c in condlist]), axis=0)) if n else \
            jnp.ones(x.shape, bool)
        condlist.append(rest)
        funclist.append(otherwise)
    elif len(funclist) != n:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are "
                         f"expected; got {len(funclist)}")
    out = jnp.zeros_like(x)
    for cond, f in zip(condlist, funclist):
        value = f(x, *args, **kw) if callable(f) else f
        out = jnp.where(cond, jnp.asarray(value).astype(x.dtype), out)
    return out


def _last(a, axis):
    a = jnp.asarray(a)
    if _dt.issubdtype(a.dtype, _onp.complexfloating):
        raise NotImplementedError("jnp.partition for complex dtype is not implemented.")
    axis = _axis(axis, a.ndim)
    return jnp.swapaxes(a, axis, -1), axis


def _kth(kth, n):
    kth = operator.index(kth)
    if not -n <= kth < n:
        raise ValueError(f"kth(={kth}) out of bounds {n}")
    return kth % n


def _neg_for_min(arr):
    # top_k of the negation finds the smallest entries; unsigned values are shifted by one
    # first so that 0 does not wrap onto itself.
    if _dt.issubdtype(arr.dtype, _onp.unsignedinteger):
        return -(arr + 1)
    return -arr


def partition(a, kth, axis=-1):
    """a with its kth smallest entry (along axis) in place: the kth+1 smallest first,
    ascending, then the rest, descending (as JAX computes it). JAX: jnp.partition."""
    arr, axis = _last(a, axis)
    n = arr.shape[-1]
    kth = _kth(kth, n)
    bottom = -lax.top_k(_neg_for_min(arr), kth + 1)[0]
    if _dt.issubdtype(arr.dtype, _onp.unsignedinteger):
        bottom = bottom - 1
    top = lax.top_k(arr, n - kth - 1)[0]
    return jnp.swapaxes(jnp.concatenate([bottom, top], axis=-1), -1, axis)


def argpartition(a, kth, axis=-1):
    """Indices that partition a around its kth entry along axis: those of the kth+1
    smallest entries, then the others in increasing order. JAX: jnp.argpartition."""
    arr, axis = _last(a, axis)
    n = arr.shape[-1]
    kth = _kth(kth, n)
    bottom = lax.top_k(_neg_for_min(arr), kth + 1)[1]
    # The other positions: a 0/1 mask of the chosen ones, whose top_k lists the rest in
    # index order (ties go to the lower index).
    chosen = jnp.any(jnp.arange(n, dtype=bottom.dtype) == bottom[..., :, None], axis=-2)
    top = lax.top_k(jnp.where(chosen, 0.0, 1.0), n - kth - 1)[1]
    return jnp.swapaxes(jnp.concatenate([bottom, top], axis=-1), -1, axis)


def sort_complex(a):
    """a sorted (by real, then imaginary part) as complex. JAX: jnp.sort_complex."""
    a = jnp.sort(jnp.asarray(a), axis=-1)
    return a.astype(jnp.result_type(a.dtype, _onp.complex64))


# ---- index helpers -----------------------------------------------------------------------------
def unravel_index(indices, shape):
    """The multi-index (one array per dim) of flat indices into shape. JAX: unravel_index."""
    indices = jnp.asarray(indices)
    shape = tuple(operator.index(d) for d in shape)
    size = math.prod(shape)
    clipped = jnp.clip(indices, -size, size - 1)
    clipped = jnp.where(clipped < 0, clipped + size, clipped)
    out = []
    for d in reversed(shape):
        out.append(clipped % d if d else clipped)
        clipped = clipped // d if d else clipped
    return tuple(reversed(out))


def ravel_multi_index(multi_index, dims, mode="raise", order="C", *, dtype=None):
    """The flat indices of a multi-index into dims. JAX: ravel_multi_index."""
    if dtype is not None:
        return jnp.asarray(ravel_multi_index(multi_index, dims, mode, order), dtype=dtype)
    dims = tuple(operator.index(d) for d in dims)
    if len(multi_index) != len(dims):
        raise ValueError(f"parameter multi_index must be a sequence of length {len(dims)}")
    idx = [jnp.asarray(i) for i in multi_index]
    for i in idx:
        if not _dt.issubdtype(i.dtype, _onp.integer):
            raise TypeError("only int indices permitted")
    if mode == "raise":
        for i, d in zip(idx, dims):
            host = _concrete(i, "ravel_multi_index", "it was traced with mode='raise'; "
                                                     "use mode='wrap' or mode='clip'")
            if host.size and (host.min() < 0 or host.max() >= d):
                raise ValueError("invalid entry in coordinates array")
    elif mode == "wrap":
        idx = [i % d for i, d in zip(idx, dims)]
    elif mode == "clip":
        idx = [jnp.clip(i, 0, d - 1) for i, d in zip(idx, dims)]
    else:
        raise ValueError(f"invalid mode={mode!r}. Expected 'raise', 'wrap', or 'clip'")
    order_dims = list(zip(idx, dims)) if order == "C" else list(zip(idx, dims))[::-1]
    out = jnp.zeros(jnp.broadcast_shapes(*(i.shape for i in idx)), _dt.default_int())
    for i, d in order_dims:
        out = out * d + i.astype(out.dtype)
    return out


def tril_indices(n, k=0, m=None):
    """Indices of the lower triangle of an (n, m) array. JAX: jnp.tril_indices."""
    r, c = _onp.tril_indices(n, k, m)
    return jnp.asarray(r.astype(_dt.default_int())), jnp.asarray(c.astype(_dt.default_int()))


def triu_indices(n, k=0, m=None):
    """Indices of the upper triangle of an (n, m) array. JAX: jnp.triu_indices."""
    r, c = _onp.triu_indices(n, k, m)
    return jnp.asarray(r.astype(_dt.default_int())), jnp.asarray(c.astype(_dt.default_int()))


def tril_indices_from(arr, k=0):
    shape = jnp.shape(arr)
    if len(shape) != 2:
        raise ValueError("input array must be 2-d")
    return tril_indices(shape[0], k, shape[1])


def triu_indices_from(arr, k=0):
    shape = jnp.shape(arr)
    if len(shape) != 2:
        raise ValueError("input array must be 2-d")
    return triu_indices(shape[0], k, shape[1])


def diag_indices(n, ndim=2):
    """Indices of the main diagonal of an n x ... x n array. JAX: jnp.diag_indices."""
    if n < 0:
        raise ValueError(f"n argument to diag_indices must be nonnegative, got {n}")
    if ndim < 0:
        raise ValueError(f"ndim argument to diag_indices must be nonnegative, got {ndim}")
    return (lax.iota(_dt.default_int(), n),) * ndim


def diag_indices_from(arr):
    shape = jnp.shape(arr)
    if len(shape) < 2:
        raise ValueError("input array must be at least 2-d")
    if len(set(shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    return diag_indices(shape[0], len(shape))


def diagflat(v, k=0):
    """A 2-d array with ravel(v) on diagonal k. JAX: jnp.diagflat."""
    return jnp.diag(jnp.ravel(jnp.asarray(v)), k)


def fill_diagonal(a, val, wrap=False, *, inplace=True):
    """a with val written on its main diagonal (inplace=False required). JAX: fill_diagonal."""
    if inplace:
        raise NotImplementedError("JAX arrays are immutable, must use inplace=False")
    if wrap:
        raise NotImplementedError("wrap=True is not implemented")
    a = jnp.asarray(a)
    if a.ndim < 2:
        raise ValueError("array must be at least 2-d")
    if a.ndim > 2 and len(set(a.shape)) != 1:
        raise ValueError("All dimensions of input must be of equal length")
    n = min(a.shape)
    idx = (lax.iota(_dt.default_int(), n),) * a.ndim
    val = jnp.ravel(jnp.asarray(val)).astype(a.dtype)
    val = resize(val, (n,)) if val.size else val
    return a.at[idx].set(val)


def vander(x, N=None, increasing=False):
    """Columns of powers of x (decreasing unless increasing=True). JAX: jnp.vander."""
    x = jnp.asarray(x)
    if x.ndim != 1:
        raise ValueError("x must be a one-dimensional array")
    N = x.shape[0] if N is None else operator.index(N)
    if N < 0:
        raise ValueError("N must be nonnegative")
    powers = jnp.arange(N, dtype=x.dtype)
    if not increasing:
        powers = powers[::-1]
    return jnp.power(x[:, None], powers)


def array_equiv(a1, a2):
    """Whether a1 and a2 broadcast to each other and are equal. JAX: jnp.array_equiv."""
    a1, a2 = jnp.asarray(a1), jnp.asarray(a2)
    try:
        jnp.broadcast_shapes(a1.shape, a2.shape)
    except (ValueError, TypeError):
        return jnp.asarray(False)
    return jnp.all(a1 == a2)


def isrealobj(x):
    """Whether x is not of a complex dtype. JAX: jnp.isrealobj."""
    return not jnp.iscomplexobj(x)


def iterable(y):
    try:
        iter(y)
    except TypeError:
        return False
    return True


# ---- statistics and calculus ------------------------------------------------------------------
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None,
        dtype=None):
    """Covariance matrix of the variables (rows, unless rowvar=False). JAX: jnp.cov."""
    m = jnp.atleast_2d(jnp.asarray(m))
    dtype = jnp.result_type(m, float) if dtype is None else jnp.dtype(dtype)
    if m.ndim > 2:
        raise ValueError("m has more than 2 dimensions")
    if not rowvar and m.shape[0] != 1:
        m = m.T
    if y is not None:
        y = jnp.atleast_2d(jnp.asarray(y))
        if not rowvar and y.shape[0] != 1:
            y = y.T
        m = jnp.concatenate([m, y], axis=0)
        dtype = jnp.result_type(dtype, y)
    m = m.astype(dtype)
    if ddof is None:
        ddof = 0 if bias else 1
    n = m.shape[1]
    w = None
    if fweights is not None:
        w = jnp.asarray(fweights).astype(dtype)
    if aweights is not None:
        aw = jnp.asarray(aweights).astype(dtype)
        w = aw if w is None else w * aw
    if w is None:
        avg = jnp.mean(m, axis=1)
        w_sum = jnp.asarray(float(n), dtype)
        fact = w_sum - ddof
    else:
        w_sum = jnp.sum(w)
        avg = jnp.sum(m * w, axis=1) / w_sum
        if ddof == 0:
            fact = w_sum
        elif aweights is None:
            fact = w_sum - ddof
        else:
            fact = w_sum - ddof * jnp.sum(w * jnp.asarray(aweights).astype(dtype)) / w_sum
    x = m - avg[:, None]
    xw = x if w is None else x * w
    c = jnp.dot(xw, jnp.conj(x).T) / fact
    return jnp.squeeze(c)


def corrcoef(x, y=None, rowvar=True, dtype=None):
    """Pearson correlation coefficients. JAX: jnp.corrcoef."""
    c = cov(x, y, rowvar, dtype=dtype)
    if c.ndim == 0:
        return c / c
    d = jnp.diag(c)
    stddev = jnp.sqrt(jnp.real(d)).astype(c.dtype)
    c = c / stddev[:, None] / stddev[None, :]
    real = jnp.clip(jnp.real(c), -1, 1)
    if jnp.iscomplexobj(c):
        return lax.complex(real, jnp.clip(jnp.imag(c), -1, 1))
    return real


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of y by the trapezoidal rule along axis. JAX: jnp.trapezoid."""
    y = jnp.asarray(y)
    if not _dt.is_inexact(y.dtype):
        y = y.astype(_dt.default_float())
    axis = _axis(axis, y.ndim)
    y = jnp.moveaxis(y, axis, -1)
    if x is None:
        d = jnp.asarray(dx)
    else:
        x = jnp.asarray(x)
        d = jnp.diff(x) if x.ndim == 1 else jnp.diff(jnp.moveaxis(x, axis, -1), axis=-1)
    return 0.5 * jnp.sum(d * (y[..., 1:] + y[..., :-1]), axis=-1)


def gradient(f, *varargs, axis=None, edge_order=None):
    """Second-order central differences inside, first-order at the edges. JAX: gradient."""
    if edge_order is not None:
        raise NotImplementedError("The 'edge_order' argument to jnp.gradient is not "
                                  "supported.")
    f = jnp.asarray(f)
    if not _dt.is_inexact(f.dtype):
        f = f.astype(_dt.default_float())
    axes = tuple(range(f.ndim)) if axis is None else (
        (_axis(axis, f.ndim),) if isinstance(axis, int) else tuple(_axis(a, f.ndim)
                                                                   for a in axis))
    if not varargs:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and len(axes) > 1 and jnp.ndim(varargs[0]) == 0:
        spacings = list(varargs) * len(axes)
    elif len(varargs) == len(axes):
        spacings = list(varargs)
    else:
        raise TypeError("Invalid number of spacing arguments")
    out = []
    for ax, h in zip(axes, spacings):
        n = f.shape[ax]
        if n < 2:
            raise ValueError("Shape of array too small to calculate a numerical gradient, "
                             "at least (edge_order + 1) elements are required.")
        sl = lambda a, b: lax.slice_in_dim(f, a, b, 1, ax)  # noqa: E731
        if jnp.ndim(h) == 0:
            h = jnp.asarray(h, f.dtype)
            inner = (sl(2, n) - sl(0, n - 2)) / (2 * h)
            first = (sl(1, 2) - sl(0, 1)) / h
            last = (sl(n - 1, n) - sl(n - 2, n - 1)) / h
        else:
            coords = jnp.asarray(h).astype(f.dtype)
            dxs = jnp.diff(coords)
            shape = [1] * f.ndim
            shape[ax] = n - 2
            a_, b_ = jnp.reshape(dxs[:-1], shape), jnp.reshape(dxs[1:], shape)
            inner = (a_ ** 2 * sl(2, n) - b_ ** 2 * sl(0, n - 2) + (b_ ** 2 - a_ ** 2) *
                     sl(1, n - 1)) / (a_ * b_ * (a_ + b_))
            first = (sl(1, 2) - sl(0, 1)) / dxs[0]
            last = (sl(n - 1, n) - sl(n - 2, n - 1)) / dxs[-1]
        out.append(jnp.concatenate([first, inner, last], axis=ax) if n > 2 else
                   jnp.concatenate([first, last], axis=ax))
    return out[0] if len(out) == 1 else out


# ---- windows ---------------------------------------------------------------------------------
def _window(M, fn):
    M = operator.index(M)
    dtype = _dt.default_float()
    if M <= 1:
        return jnp.ones((max(M, 0),), dtype)
    n = jnp.arange(M, dtype=dtype)
    return fn(n, M).astype(dtype)


def bartlett(M):
    """The Bartlett (triangular) window. JAX: jnp.bartlett."""
    return _window(M, lambda n, M: 1 - jnp.abs(2 * n - M + 1) / (M - 1))


def blackman(M):
    """The Blackman window. JAX: jnp.blackman."""
    return _window(M, lambda n, M: 0.42 - 0.5 * jnp.cos(2 * _onp.pi * n / (M - 1)) +
                   0.08 * jnp.cos(4 * _onp.pi * n / (M - 1)))


def hamming(M):
    """The Hamming window. JAX: jnp.hamming."""
    return _window(M, lambda n, M: 0.54 - 0.46 * jnp.cos(2 * _onp.pi * n / (M - 1)))


def hanning(M):
    """The Hann window. JAX: jnp.hanning."""
    return _window(M, lambda n, M: 0.5 - 0.5 * jnp.cos(2 * _onp.pi * n / (M - 1)))


def spacing(x, /):
    """Distance from x to the next representable number away from zero. JAX: spacing."""
    x = jnp.asarray(x)
    if not _dt.is_inexact(x.dtype):
        x = x.astype(_dt.default_float())
    inf = jnp.asarray(_onp.inf, x.dtype)
    return jnp.nextafter(x, jnp.where(x < 0, -inf, inf)) - x


def cumulative_prod(x, /, *, axis=None, dtype=None, include_initial=False):
    """Cumulative product, optionally starting with 1. JAX: jnp.cumulative_prod."""
    x = jnp.asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError(f"The input array has rank {x.ndim}, however axis was not set "
                             f"to an explicit value. The axis argument is only optional for "
                             f"one-dimensional arrays.")
        axis = 0
    axis = _axis(axis, max(x.ndim, 1))
    out = jnp.cumprod(x, axis=axis, dtype=dtype)
    if include_initial:
        shape = list(out.shape)
        shape[axis] = 1
        out = jnp.concatenate([jnp.ones(shape, out.dtype), out], axis=axis)
    return out


def fromfunction(function, shape, *, dtype=float, **kwargs):
    """function(*indices(shape)) evaluated once on index grids. JAX: jnp.fromfunction."""
    shape = tuple(operator.index(d) for d in shape)
    grids = [lax.broadcasted_iota(dtype, shape, i) for i in range(len(shape))]
    return function(*grids, **kwargs)


def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """func1d applied to the 1-d slices of arr along axis (by vmapping it over the other
    axes). JAX: jnp.apply_along_axis."""
    from mjax.batching import vmap
    arr = jnp.asarray(arr)
    axis = _axis(axis, arr.ndim)
    fn = lambda x: func1d(x, *args, **kwargs)  # noqa: E731
    for i in range(1, arr.ndim - axis):
        fn = vmap(fn, in_axes=i, out_axes=-1)
    for _ in range(axis):
        fn = vmap(fn, in_axes=0, out_axes=0)
    return fn(arr)


def apply_over_axes(func, a, axes):
    """func(a, axis) applied for each axis in turn, keeping dims. JAX: apply_over_axes."""
    a = jnp.asarray(a)
    for axis in axes:
        b = func(a, axis)
        a = b if b.ndim == a.ndim else jnp.expand_dims(b, axis)
    return a


def block(arrays):
    """An array assembled from nested lists of blocks. JAX: jnp.block."""
    def depth(x):
        return 1 + max((depth(y) for y in x), default=0) if isinstance(x, list) else 0
    d = depth(arrays)

    def rank(x):
        return max(rank(y) for y in x) if isinstance(x, list) else jnp.ndim(x)
    ndim = max(rank(arrays), d)

    def assemble(x, level):
        if not isinstance(x, list):
            x = jnp.asarray(x)
            return jnp.reshape(x, (1,) * (ndim - x.ndim) + x.shape)
        if not x:
            raise ValueError("Lists cannot be empty")
        return jnp.concatenate([assemble(y, level + 1) for y in x], axis=level - d)
    return assemble(arrays, 0) if isinstance(arrays, list) else jnp.asarray(arrays)


# ---- set operations ---------------------------------------------------------------------------
def _set_result(values, size, fill_value, fname):
    if size is None:
        return jnp.asarray(values)
    values = jnp.asarray(values)
    if values.shape[0] >= size:
        return values[:size]
    fill = values[0] if fill_value is None and values.shape[0] else (
        0 if fill_value is None else fill_value)
    return jnp.concatenate([values, jnp.full((size - values.shape[0],), fill, values.dtype)])


def _host_1d(x, fname):
    return _concrete(jnp.ravel(jnp.asarray(x)), fname, "the output size depends on the "
                     "values; the inputs must be concrete")


def union1d(ar1, ar2, *, size=None, fill_value=None):
    """Sorted unique values in either array. JAX: jnp.union1d."""
    return jnp.unique(jnp.concatenate([jnp.ravel(jnp.asarray(ar1)),
                                       jnp.ravel(jnp.asarray(ar2))]), size=size,
                      fill_value=fill_value)


def setdiff1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted unique values of ar1 not in ar2. JAX: jnp.setdiff1d."""
    flat = jnp.ravel(jnp.asarray(ar1))
    if size is None:
        a = jnp.unique(flat)
        mask = _concrete(jnp.logical_not(jnp.isin(a, ar2)), "setdiff1d",
                         "pass size= for traced inputs")
        return a[_onp.flatnonzero(mask)]
    size = operator.index(size)
    fill = jnp.asarray(0 if fill_value is None else fill_value, flat.dtype)   # (JAX: 0)
    if flat.shape[0] == 0:
        return jnp.full((size,), fill, flat.dtype)
    # Traceable: unique padded to the input's length (with its smallest value), the
    # padding masked out, then the kept values compacted to `size` entries.
    a = jnp.unique(flat, size=flat.shape[0])
    n_unique = flat.shape[0] + 1 - jnp.sum(a == a[0])
    keep = jnp.logical_and(jnp.logical_not(jnp.isin(a, ar2)),
                           jnp.arange(flat.shape[0]) < n_unique)
    idx = jnp.flatnonzero(keep, size=size, fill_value=0)
    return jnp.where(jnp.arange(size) < jnp.sum(keep), a[idx], fill)


def intersect1d(ar1, ar2, assume_unique=False, return_indices=False, *, size=None,
                fill_value=None):
    """Sorted unique values in both arrays (with their first indices). JAX: intersect1d."""
    a1 = _host_1d(ar1, "intersect1d")
    a2 = _host_1d(ar2, "intersect1d")
    common, i1, i2 = _onp.intersect1d(a1, a2, assume_unique=assume_unique,
                                      return_indices=True)
    dtype = jnp.result_type(jnp.asarray(ar1), jnp.asarray(ar2))
    out = _set_result(jnp.asarray(common).astype(dtype), size, fill_value, "intersect1d")
    if not return_indices:
        return out
    int_t = _dt.default_int()
    return (out, _set_result(jnp.asarray(i1.astype(int_t)), size, None, "intersect1d"),
            _set_result(jnp.asarray(i2.astype(int_t)), size, None, "intersect1d"))


def setxor1d(ar1, ar2, assume_unique=False, *, size=None, fill_value=None):
    """Sorted values in exactly one of the arrays. JAX: jnp.setxor1d."""
    a1, a2 = _host_1d(ar1, "setxor1d"), _host_1d(ar2, "setxor1d")
    dtype = jnp.result_type(jnp.asarray(ar1), jnp.asarray(ar2))
    return _set_result(jnp.asarray(_onp.setxor1d(a1, a2, assume_unique)).astype(dtype), size,
                       fill_value, "setxor1d")


def unique_values(x, /, *, size=None, fill_value=None):
    """Sorted distinct values. JAX: jnp.unique_values."""
    return jnp.unique(x, equal_nan=False, size=size, fill_value=fill_value)


def unique_counts(x, /, *, size=None, fill_value=None):
    """(values, counts). JAX: jnp.unique_counts."""
    import collections
    v, c = jnp.unique(x, return_counts=True, equal_nan=False, size=size, fill_value=fill_value)
    return collections.namedtuple("_UniqueCountsResult", ["values", "counts"])(v, c)


def unique_inverse(x, /, *, size=None, fill_value=None):
    """(values, inverse_indices in x's shape). JAX: jnp.unique_inverse."""
    import collections
    v, inv = jnp.unique(x, return_inverse=True, equal_nan=False, size=size,
                        fill_value=fill_value)
    return collections.namedtuple("_UniqueInverseResult", ["values", "inverse_indices"])(
        v, jnp.reshape(inv, jnp.shape(x)))


def unique_all(x, /, *, size=None, fill_value=None):
    """(values, indices, inverse_indices, counts). JAX: jnp.unique_all."""
    import collections
    v, i, inv, c = jnp.unique(x, return_index=True, return_inverse=True, return_counts=True,
                              equal_nan=False, size=size, fill_value=fill_value)
    return collections.namedtuple("_UniqueAllResult", ["values", "indices", "inverse_indices",
                                                       "counts"])(
        v, i, jnp.reshape(inv, jnp.shape(x)), c)


# ---- polynomials ------------------------------------------------------------------------------
def _poly_pad(a1, a2):
    n = max(a1.shape[0], a2.shape[0])
    return (jnp.concatenate([jnp.zeros((n - a1.shape[0],), a1.dtype), a1]),
            jnp.concatenate([jnp.zeros((n - a2.shape[0],), a2.dtype), a2]))


def polyadd(a1, a2):
    """Sum of two polynomials (highest power first). JAX: jnp.polyadd."""
    a1, a2 = jnp.atleast_1d(jnp.asarray(a1)), jnp.atleast_1d(jnp.asarray(a2))
    a1, a2 = _poly_pad(a1, a2)
    return a1 + a2


def polysub(a1, a2):
    """Difference of two polynomials. JAX: jnp.polysub."""
    a1, a2 = jnp.atleast_1d(jnp.asarray(a1)), jnp.atleast_1d(jnp.asarray(a2))
    a1, a2 = _poly_pad(a1, a2)
    return a1 - a2


def polymul(a1, a2, *, trim_leading_zeros=False):
    """Product of two polynomials. JAX: jnp.polymul."""
    a1, a2 = jnp.atleast_1d(jnp.asarray(a1)), jnp.atleast_1d(jnp.asarray(a2))
    if trim_leading_zeros:
        a1, a2 = trim_zeros(a1, "f"), trim_zeros(a2, "f")
    if a1.shape[0] == 0:
        a1 = jnp.asarray([0], a1.dtype)
    if a2.shape[0] == 0:
        a2 = jnp.asarray([0], a2.dtype)
    return jnp.convolve(a1, a2, mode="full")


def polyder(p, m=1):
    """The m-th derivative of a polynomial. JAX: jnp.polyder."""
    p = jnp.asarray(p)
    if m < 0:
        raise ValueError("Order of derivative must be positive")
    if m == 0:
        return p
    n = p.shape[0]
    powers = jnp.arange(n - 1, 0, -1)
    out = p[:-1] * powers.astype(jnp.result_type(p, powers))
    return polyder(out, m - 1)


def polyint(p, m=1, k=None):
    """The m-th antiderivative of a polynomial (integration constants k). JAX: polyint."""
    p = jnp.asarray(p)
    m = operator.index(m)
    if m < 0:
        raise ValueError(f"Order of integral must be positive (see polyder) {m=}")
    if m == 0:
        return p
    k = jnp.zeros((m,), p.dtype) if k is None else jnp.atleast_1d(jnp.asarray(k))
    if k.shape[0] == 1 and m > 1:
        k = jnp.broadcast_to(k, (m,))
    if k.shape[0] != m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or m.")
    dtype = jnp.result_type(p, float)
    out = p.astype(dtype)
    for i in range(m):
        n = out.shape[0]
        out = jnp.concatenate([out / jnp.arange(n, 0, -1, dtype=dtype),
                               jnp.asarray([k[i]], dtype)])
    return out


def poly(seq_of_zeros):
    """Coefficients of the monic polynomial with the given roots (or a matrix's
    characteristic polynomial). JAX: jnp.poly."""
    a = jnp.atleast_1d(jnp.asarray(seq_of_zeros))
    if a.ndim == 2 and a.shape[0] == a.shape[1] and a.shape[0] > 0:
        a = jnp.linalg.eigvals(a)
    elif a.ndim != 1:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    dtype = jnp.result_type(a, float)
    out = jnp.ones((1,), dtype)
    for i in range(a.shape[0]):
        out = jnp.convolve(out, jnp.stack([jnp.ones((), dtype), -a[i].astype(dtype)]),
                           mode="full")
    return out


def histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002
    """The bin edges jnp.histogram would use. JAX: jnp.histogram_bin_edges."""
    if isinstance(bins, str):
        raise NotImplementedError("string values for `bins` not implemented.")
    a = jnp.ravel(jnp.asarray(a))
    dtype = jnp.result_type(a, float)
    if jnp.ndim(bins) == 1:
        return jnp.asarray(bins).astype(dtype)
    if range is None:
        lo, hi = jnp.min(a).astype(dtype), jnp.max(a).astype(dtype)
    else:
        lo, hi = jnp.asarray(range[0], dtype), jnp.asarray(range[1], dtype)
    # A degenerate range widens by 0.5 on each side, as NumPy does.
    same = lo == hi
    lo, hi = jnp.where(same, lo - 0.5, lo), jnp.where(same, hi + 0.5, hi)
    return jnp.linspace(lo, hi, operator.index(bins) + 1, dtype=dtype)


# ---- index tricks -------------------------------------------------------------------------------
class _IndexExpression:
    """np.s_ / np.index_exp: returns the index expression it is subscripted with."""

    def __init__(self, maketuple):
        self.maketuple = maketuple

    def __getitem__(self, item):
        if self.maketuple and not isinstance(item, tuple):
            return (item,)
        return item


s_ = _IndexExpression(False)
index_exp = _IndexExpression(True)


class _Grid:
    """mgrid (dense) / ogrid (open) from slices; a complex step is a number of points."""

    def __init__(self, sparse):
        self.sparse = sparse

    def __getitem__(self, key):
        single = not isinstance(key, tuple)
        keys = (key,) if single else key
        axes = []
        for k in keys:
            start = 0 if k.start is None else k.start
            step = 1 if k.step is None else k.step
            if isinstance(step, complex):
                axes.append(jnp.linspace(start, k.stop, int(abs(step))))
            else:
                axes.append(jnp.arange(start, k.stop, step))
        dtype = jnp.result_type(*axes)
        axes = [x.astype(dtype) for x in axes]
        if single:
            return axes[0]
        grids = jnp.meshgrid(*axes, indexing="ij", sparse=self.sparse)
        return list(grids) if self.sparse else jnp.stack(grids)


mgrid = _Grid(False)
ogrid = _Grid(True)


class _Concatenator:
    """r_ (along the first axis) / c_ (1-d pieces become columns, joined along the last
    axis), with slices as aranges (a complex step: that many points) and an integer string
    directive choosing the axis."""

    def __init__(self, axis, ndmin):
        self.axis, self.ndmin = axis, ndmin

    def __getitem__(self, key):
        keys = key if isinstance(key, tuple) else (key,)
        axis = self.axis
        parts = []
        for k in keys:
            if isinstance(k, str):
                try:
                    axis = int(k)
                except ValueError:
                    raise NotImplementedError(f"the {k!r} directive of r_/c_ is not "
                                              f"supported (only an integer axis)") from None
                continue
            if isinstance(k, slice):
                step = 1 if k.step is None else k.step
                start = 0 if k.start is None else k.start
                arr = jnp.linspace(start, k.stop, int(abs(step))) if isinstance(
                    step, complex) else jnp.arange(start, k.stop, step)
            else:
                arr = jnp.asarray(k)
            if arr.ndim < self.ndmin:
                # c_: a 1-d piece is a column; r_: a scalar is a 1-element vector.
                arr = jnp.reshape(arr, arr.shape + (1,) * (self.ndmin - arr.ndim))
            parts.append(arr)
        return jnp.concatenate(parts, axis=axis)


r_ = _Concatenator(0, 1)
c_ = _Concatenator(-1, 2)




# ---- updates that NumPy does in place (inplace=False required, as in JAX) ------------------------
def _no_inplace(fname, inplace):
    if inplace:
        raise ValueError(f"jax.numpy.{fname} cannot modify arrays in-place, because JAX "
                         f"arrays are immutable. Pass inplace=False to instead return an "
                         f"updated array.")


def _tile_to(v, n):
    v = jnp.ravel(jnp.asarray(v))
    return jnp.tile(v, -(-n // v.shape[0]))[:n] if v.shape[0] else v


def put(a, ind, v, mode=None, *, inplace=True):
    """a with ravel(a)[ind] = v (v repeated to fit; indices clipped, or wrapped with
    mode='wrap'). JAX: jnp.put."""
    _no_inplace("put", inplace)
    a = jnp.asarray(a)
    ind = jnp.ravel(jnp.asarray(ind))
    v = jnp.ravel(jnp.asarray(v))
    if not a.size or not ind.size or not v.size:
        return a
    n = a.size
    if mode is None or mode == "clip":
        ind = jnp.clip(ind, -n, n - 1)
        ind = jnp.where(ind < 0, ind + n, ind)
    elif mode == "wrap":
        ind = ind % n
    elif mode == "raise":
        raise NotImplementedError("The 'raise' mode to jnp.put is not supported.")
    else:
        raise ValueError(f"mode should be one of 'wrap' or 'clip'; got mode={mode!r}")
    v = _tile_to(v, ind.shape[0]).astype(a.dtype)
    return jnp.reshape(jnp.ravel(a).at[ind].set(v), a.shape)


def put_along_axis(arr, indices, values, axis, inplace=True, *, mode=None):
    """arr with values written at indices along axis (the counterpart of
    take_along_axis). JAX: jnp.put_along_axis."""
    _no_inplace("put_along_axis", inplace)
    arr, indices = jnp.asarray(arr), jnp.asarray(indices)
    if axis is None:
        arr_flat = jnp.ravel(arr)
        return jnp.reshape(put_along_axis(arr_flat, jnp.ravel(indices), values, 0,
                                          inplace=False, mode=mode), arr.shape)
    axis = _axis(axis, arr.ndim)
    if indices.ndim != arr.ndim:
        raise ValueError("indices and arr must have the same number of dimensions")
    shape = jnp.broadcast_shapes(tuple(1 if i == axis else d for i, d in enumerate(arr.shape)),
                                 tuple(1 if i == axis else d for i, d in
                                       enumerate(indices.shape)))
    full = tuple(indices.shape[axis] if i == axis else d for i, d in enumerate(shape))
    idx = []
    for i in range(arr.ndim):
        if i == axis:
            ind = jnp.broadcast_to(indices, full)
            idx.append(jnp.where(ind < 0, ind + arr.shape[axis], ind))
        else:
            idx.append(lax.broadcasted_iota(_dt.default_int(), full, i))
    values = jnp.broadcast_to(jnp.asarray(values).astype(arr.dtype), full)
    return arr.at[tuple(idx)].set(values, mode=mode)


def place(arr, mask, vals, *, inplace=True):
    """arr with the entries where mask is true set to vals, repeated in order.
    JAX: jnp.place (the mask must be concrete)."""
    _no_inplace("place", inplace)
    arr = jnp.asarray(arr)
    from mjax.numpy.concrete_values import known
    mask = known(mask)
    if isinstance(mask, Tracer) and mask.size == arr.size and arr.size and \
            jnp.size(vals):
        # Under jit: the k-th True entry takes vals[k % len(vals)]; no True, no change.
        where = jnp.flatnonzero(mask, size=mask.size, fill_value=mask.size)
        vals = _tile_to(vals, mask.size).astype(arr.dtype)
        return jnp.reshape(jnp.ravel(arr).at[where].set(vals, mode="drop"), arr.shape)
    positions = _onp.flatnonzero(_concrete(jnp.ravel(jnp.asarray(mask)), "place",
                                           "the mask must be concrete"))
    if not positions.size:
        return arr
    vals = _tile_to(vals, positions.size).astype(arr.dtype)
    flat = jnp.ravel(arr).at[positions.astype(_dt.default_int())].set(vals)
    return jnp.reshape(flat, arr.shape)


# ---- kron, ix_, unwrap, mask_indices -------------------------------------------------------------
def kron(a, b):
    """The Kronecker product. JAX: jnp.kron."""
    a, b = jnp.asarray(a), jnp.asarray(b)
    nd = max(a.ndim, b.ndim)
    a = jnp.reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = jnp.reshape(b, (1,) * (nd - b.ndim) + b.shape)
    # a's dims at even positions, b's at odd ones, then merge each pair.
    a_ex = jnp.reshape(a, tuple(d for n in a.shape for d in (n, 1)))
    b_ex = jnp.reshape(b, tuple(d for n in b.shape for d in (1, n)))
    return jnp.reshape(a_ex * b_ex, tuple(x * y for x, y in zip(a.shape, b.shape)))


def ix_(*args):
    """Open-mesh index arrays from 1-d sequences (booleans: their nonzero positions).
    JAX: jnp.ix_."""
    n = len(args)
    out = []
    for i, a in enumerate(args):
        a = jnp.asarray(a)
        if a.ndim != 1:
            raise ValueError(f"Arguments to jax.numpy.ix_ must be 1-dimensional, got shape "
                             f"{a.shape}")
        if a.dtype == _onp.bool_:
            raise TypeError("jax.numpy.ix_ does not support boolean indices")
        out.append(jnp.reshape(a, tuple(a.shape[0] if j == i else 1 for j in range(n))))
    return tuple(out)


def unwrap(p, discont=None, axis=-1, period=2 * _onp.pi):
    """p with jumps larger than discont (default period/2) replaced by their period
    complement, accumulated along axis. JAX: jnp.unwrap."""
    p = jnp.asarray(p)
    integral = _dt.issubdtype(p.dtype, _onp.integer) and isinstance(period, int)
    if not integral and not _dt.is_inexact(p.dtype):
        p = p.astype(_dt.default_float())
    axis = _axis(axis, p.ndim)
    # As NumPy: integers with an integer period stay integers (the boundary is ambiguous
    # only for an even period).
    half = period // 2 if integral else period / 2
    discont = period / 2 if discont is None else discont
    dd = jnp.diff(p, axis=axis)
    ddmod = jnp.mod(dd + half, period) - half
    if not integral or period % 2 == 0:
        ddmod = jnp.where((ddmod == -half) & (dd > 0), half, ddmod)
    correct = jnp.where(jnp.abs(dd) < discont, 0, ddmod - dd)
    first = lax.slice_in_dim(p, 0, 1, 1, axis)
    rest = lax.slice_in_dim(p, 1, p.shape[axis], 1, axis) + jnp.cumsum(correct, axis=axis)
    return jnp.concatenate([first, rest.astype(p.dtype)], axis=axis)


def mask_indices(n, mask_func, k=0, *, size=None):
    """Indices of the nonzero entries of mask_func(ones((n, n)), k). JAX: mask_indices."""
    mask = mask_func(jnp.ones((n, n), _dt.default_int()), k)
    return jnp.nonzero(mask, size=size)



# ---- frexp (integer bit manipulation only, so subnormals survive a flush-to-zero CPU) -------
def frexp(x, /):
    """(mantissa, exponent) with x = mantissa * 2**exponent and |mantissa| in [0.5, 1)
    (0, inf and NaN come back as is, with exponent 0). JAX: jnp.frexp."""
    x = jnp.asarray(x)
    if _dt.issubdtype(x.dtype, _onp.complexfloating):
        raise TypeError("frexp does not support complex-valued inputs")
    if not _dt.is_inexact(x.dtype):
        x = x.astype(_dt.default_float())
    info = _onp.finfo(x.dtype)
    width = x.dtype.itemsize * 8
    udt = _onp.dtype(f"uint{width}")
    nmant, nexp = info.nmant, info.nexp
    bias = (1 << (nexp - 1)) - 1

    def u(v):
        return _onp.array(v, udt)
    bits = lax.bitcast_convert_type(x, udt)
    sign = bits & u(1 << (width - 1))
    biased = lax.shift_right_logical(bits, u(nmant)) & u((1 << nexp) - 1)
    mant = bits & u((1 << nmant) - 1)
    # Subnormals: shift the mantissa up until its leading one is the implicit bit.
    shift = lax.clz(mant) - u(width - nmant - 1)
    sub_mant = lax.shift_left(mant, jnp.minimum(shift, u(width - 1))) & u((1 << nmant) - 1)
    is_sub = jnp.logical_and(biased == 0, mant != 0)
    mant = jnp.where(is_sub, sub_mant, mant)
    exponent = jnp.where(is_sub, 1 - bias + 1 - shift.astype(_onp.int32),
                         biased.astype(_onp.int32) - bias + 1)
    half = sign | lax.shift_left(u(bias - 1), u(nmant)) | mant
    mantissa = lax.bitcast_convert_type(half, x.dtype)
    special = jnp.logical_or(jnp.logical_and(biased == 0, jnp.logical_not(is_sub)),
                             biased == u((1 << nexp) - 1))
    return (jnp.where(special, x, mantissa),
            jnp.where(special, 0, exponent).astype(_onp.int32))


# ---- i0 and the Kaiser window ---------------------------------------------------------------------
_I0_SWITCH = 30.0  # below: the power series (positive terms, no cancellation); above: asymptotic


def i0(x):
    """The modified Bessel function of the first kind, order 0. JAX: jnp.i0.

    |x| <= 30: sum_k ((x/2)^k / k!)^2 over 64 terms, each formed in log space; beyond:
    e^|x| / sqrt(2 pi |x|) times the first terms of its asymptotic series."""
    x = jnp.asarray(x)
    if _dt.issubdtype(x.dtype, _onp.complexfloating):
        raise NotImplementedError("i0 does not support complex-valued inputs")
    if not _dt.is_inexact(x.dtype):
        x = x.astype(_dt.default_float())
    ax = jnp.abs(x)
    small = jnp.minimum(ax, _I0_SWITCH)
    k = jnp.arange(64, dtype=x.dtype)
    log_half = jnp.log(jnp.maximum(small, jnp.asarray(1e-30, x.dtype)) / 2)[..., None]
    terms = jnp.exp(2 * k * log_half - 2 * lax.lgamma(k + 1))
    series = jnp.where(small[..., None] == 0, (k == 0).astype(x.dtype), terms).sum(-1)
    big = jnp.maximum(ax, _I0_SWITCH)
    t = 1 / (8 * big)
    poly = 1 + t * (1 + t * (9 / 2 + t * (225 / 6 + t * (11025 / 24 + t * 893025 / 120))))
    asym = jnp.exp(big) / jnp.sqrt(2 * _onp.pi * big) * poly
    return jnp.where(ax <= _I0_SWITCH, series, asym)


def kaiser(M, beta):
    """The Kaiser window. JAX: jnp.kaiser."""
    M = operator.index(M)
    dtype = _dt.default_float()
    if M <= 1:
        return jnp.ones((max(M, 0),), dtype)
    n = jnp.arange(M, dtype=dtype)
    alpha = 0.5 * (M - 1)
    beta = jnp.asarray(beta, dtype)
    return i0(beta * jnp.sqrt(1 - ((n - alpha) / alpha) ** 2)) / i0(beta)


__all__ = [n for n in dir() if not n.startswith("_") and n not in (
    "annotations", "math", "operator", "lax", "jnp", "Tracer", "at_user_line")]
