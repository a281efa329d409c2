"""Selecting by condition: where, select, compress, extract, choose, piecewise."""
from __future__ import annotations

from mjax.specs import dtypes as _dt
from mjax.lax import prng as _prng
from mjax.base.errors import TracerBoolConversionError
from mjax.numpy import reductions
from mjax.numpy.arguments import concrete, index_axis
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.concrete_values import concrete_or_error
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import ones, zeros_like
from mjax.numpy.elementwise import clip, logical_not, where_xy
from mjax.numpy.indexing import take, take_along_axis
from mjax.numpy.promotion import broadcast_arrays, broadcast_to
from mjax.numpy.searching import flatnonzero, nonzero
from mjax.numpy.shaping import ravel, stack


@fused_when_eager
def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """condition ? x : y, broadcast; the one-argument form is nonzero(condition, size=,
    fill_value=) (a concrete condition unless size is given)."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if size is not None or fill_value is not None:
        raise ValueError("size and fill_value are only valid for jnp.where(condition)")
    if x is None or y is None:
        raise TypeError(f"where requires ndarray or scalar arguments, got "
                        f"{type(None)} at position {1 if x is None else 2}.")
    if _prng.any_keys((x, y)):
        return _where_keys(condition, x, y)
    return where_xy(condition, x, y)


def _where_keys(condition, x, y):
    """where over key arrays: the condition picks whole keys (it is broadcast over each
    key's data, the trailing dims of the key arrays' uint32 base)."""
    impl = _prng.same_impl((x, y), "where")
    cond = asarray(condition)
    cond = cond.reshape(cond.shape + (1,) * (x._base.ndim - x.ndim))   # over each key's data
    return _prng.PRNGKeyArray(impl, where_xy(cond, x._base, y._base))


def select(condlist, choicelist, default=0):
    out = default
    for c, v in reversed(list(zip(condlist, choicelist))):
        out = where_xy(c, v, out)
    return asarray(out)


def compress(condition, a, axis=None, *, size=None, fill_value=0, out=None):
    """The slices of a along axis where condition is true. JAX: jnp.compress."""
    if out is not None:
        raise NotImplementedError("mjax.numpy.compress: the `out` argument is not supported")
    a = asarray(a)
    cond = asarray(condition)
    if cond.ndim != 1:
        raise ValueError("condition must be a 1D array")
    if axis is None:
        a, axis = ravel(a), 0
    axis = index_axis(axis, a.ndim)
    cond = cond[:a.shape[axis]] if cond.shape[0] > a.shape[axis] else cond
    if size is None:
        cond = concrete_or_error(cond, "jnp.compress: the condition decides the output "
                                       "size; pass size=", TracerBoolConversionError)
    idx = flatnonzero(cond, size=size, fill_value=cond.shape[0] if size else None)
    out = take(a, idx, axis=axis, mode="fill", fill_value=fill_value)
    return out


def extract(condition, arr, *, size=None, fill_value=0):
    """ravel(arr)[ravel(condition) != 0]. JAX: jnp.extract."""
    return compress(ravel(asarray(condition) != 0), ravel(asarray(arr)),
                    size=size, fill_value=fill_value)


def choose(a, choices, out=None, mode="raise"):
    """choices[a[i]][i] elementwise. JAX: jnp.choose (mode 'raise' needs concrete
    indices: under jit it raises ConcretizationTypeError, as in JAX)."""
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.choose is not supported.")
    a = asarray(a)
    choices = [asarray(c) for c in choices]
    n = len(choices)
    if mode == "wrap":
        a = a % n
    elif mode in ("clip", "raise"):
        if mode == "raise":     # JAX checks the (concrete) indices; under jit it raises
            host = concrete(a, "choose", "it was traced with mode='raise'; use "
                                          "mode='wrap' or mode='clip'")
            if host.size and (host.min() < 0 or host.max() >= n):
                raise ValueError("invalid entry in choice array")
        a = clip(a, 0, n - 1)
    else:
        raise ValueError(f"mode={mode!r} not understood. Must be 'raise', 'wrap', or 'clip'")
    arrays = broadcast_arrays(a, *choices)
    stacked = stack(arrays[1:])
    return take_along_axis(stacked, arrays[0][None].astype(_dt.default_int()), axis=0)[0]


def piecewise(x, condlist, funclist, *args, **kw):
    """funclist[i](x) where condlist[i] (the last function, if one extra, elsewhere).
    JAX: jnp.piecewise."""
    x = asarray(x)
    if isinstance(condlist, (list, tuple)):
        condlist = [asarray(c) for c in condlist]
    else:
        # An array of conditions holds one per function along its first axis (JAX); one
        # that fits no such count is a single condition (NumPy).
        condlist = asarray(condlist)
        per_function = condlist.ndim and len(funclist) - condlist.shape[0] in (0, 1)
        condlist = list(condlist) if per_function else [condlist]
    if x.ndim == 0 and condlist and condlist[0].ndim == 1 and len(condlist) == 1:
        condlist = [c for c in condlist[0]]
    n = len(condlist)
    funclist = list(funclist)
    if len(funclist) == n + 1:
        otherwise = funclist.pop()
        rest = logical_not(reductions.any(stack([broadcast_to(c, x.shape)
                                                  for c in condlist]), axis=0)) if n else \
            ones(x.shape, bool)
        condlist.append(rest)
        funclist.append(otherwise)
    elif len(funclist) != n:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are "
                         f"expected; got {len(funclist)}")
    out = zeros_like(x)
    for cond, f in zip(condlist, funclist):
        value = f(x, *args, **kw) if callable(f) else f
        out = where_xy(cond, asarray(value).astype(x.dtype), out)
    return out
