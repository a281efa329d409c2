"""Argument checks and conversions shared by every sampler of `mjax.random`, and the
two wrappers each sampler goes through (`_jit` for its body, `_laid_out` for
`out_sharding=`)."""
from __future__ import annotations

import functools
import operator

import numpy as np

from mjax.specs import dtypes
from mjax import lax
from mjax.config import config
from mjax import numpy as jnp
from mjax.dialect.shape_poly import is_symbolic_dim
from mjax.jit.jitted import jit
from mjax.lax.prng import staged
from mjax.lax.sharding import apply_out_sharding
from mjax.tracing.core import current_trace

_UINT = {8: np.dtype(np.uint8), 16: np.dtype(np.uint16), 32: np.dtype(np.uint32),
         64: np.dtype(np.uint64)}
_SHAPE_DTYPE = ("shape", "dtype")


def _canon_shape(shape, name="shape") -> tuple[int, ...]:
    if isinstance(shape, (int, np.integer)) and not isinstance(shape, bool):
        return (operator.index(shape),)
    try:
        return tuple(d if is_symbolic_dim(d) else operator.index(d) for d in shape)
    except TypeError:
        raise TypeError(f"Shapes must be 1D sequences of concrete values of integer type, "
                        f"got {shape}.") from None


def _user_dtype(dtype, default) -> np.dtype:
    d = default if dtype is None else dtype
    if d is float:
        return dtypes.default_float()
    if d is int:
        return dtypes.default_int()
    if d is complex:
        return dtypes.default_complex()
    if d is bool:
        return np.dtype(bool)
    if dtype is None:
        return dtypes.canonicalize_dtype(np.dtype(d))
    return dtypes.check_user_dtype(dtype)   # (warns, as JAX, of a 64-bit type without x64)


def _shape_of(x) -> tuple[int, ...]:
    return tuple(np.shape(x)) if not hasattr(x, "shape") else tuple(x.shape)


def _check_shape(name: str, shape, *param_shapes):
    if param_shapes:
        got = jnp.broadcast_shapes(shape, *param_shapes)
        if tuple(got) != tuple(shape):
            raise ValueError(f"{name} parameter shapes must be broadcast-compatible with "
                             f"shape argument, and the result of broadcasting the shapes "
                             f"must equal the shape argument, but got result {tuple(got)} "
                             f"for shape argument {tuple(shape)}.")


def _broadcast_shape(name, shape, *args):
    shapes = [_shape_of(a) for a in args]
    if shape is None:
        return tuple(jnp.broadcast_shapes(*shapes)) if shapes else ()
    shape = _canon_shape(shape)
    _check_shape(name, shape, *shapes)
    return shape


def _check_float(name, dtype, what="a float"):
    if not dtypes.issubdtype(dtype, np.floating):
        raise ValueError(f"dtype argument to `{name}` must be {what} dtype, got {dtype}")


def _check_safe_cast(name, dtype, *args):
    for a in args:
        d = np.dtype(jnp.asarray(a).dtype) if not isinstance(a, (int, float)) else None
        if d is None:
            if isinstance(a, float) and not dtypes.issubdtype(dtype, np.inexact):
                raise dtypes.TypePromotionError(f"In arguments to {name}, cannot safely "
                                                f"cast argument of type float to {dtype}")
            continue
        if dtypes.issubdtype(d, np.complexfloating) and not dtypes.issubdtype(
                dtype, np.complexfloating) or (dtypes.issubdtype(d, np.floating) and
                                               dtypes.issubdtype(dtype, np.integer)):
            raise dtypes.TypePromotionError(f"In arguments to {name}, cannot safely cast "
                                            f"argument of type {d} to {dtype}")


def _promote_inexact(*args):
    arrs = [jnp.asarray(a) for a in args]
    d = dtypes.result_type(*args)
    if not dtypes.issubdtype(d, np.inexact):
        d = dtypes.default_float()
    return [a.astype(d) for a in arrs]


def _as(x, dtype, shape=None):
    x = lax.convert_element_type(jnp.asarray(x), dtype)
    return x if shape is None else jnp.broadcast_to(x, shape)


def _finfo(dtype):
    return dtypes.finfo(dtype)


def _const(dtype, value):
    return np.asarray(value, dtype=dtype)


def _jit(static=()):
    """A sampler's body as a jit whose trace uses standard dtype and rank promotion
    whatever the user's jax_numpy_dtype_promotion / _rank_promotion (a sampler's own
    arithmetic mixes int and float and broadcasts ranks; JAX's samplers run under
    jax_numpy_dtype_promotion='strict' too)."""
    def wrap(fun):
        @functools.wraps(fun)
        def body(*args, **kwargs):
            with config.override(jax_numpy_dtype_promotion="standard",
                                 jax_numpy_rank_promotion="allow"):
                return fun(*args, **kwargs)
        return jit(body, static_argnames=static)
    return wrap


def nested(jitted, *args, **kwargs):
    """A sampler's jitted body called from a trace as JAX calls its samplers' jits: a
    nested jit (JAX's jaxpr has `jit[name=_uniform]`; in a Pallas kernel its literal
    arguments become constants where it is called); elsewhere prng.staged's call."""
    if current_trace() is not None:
        return jitted(*args, **kwargs)
    return staged(jitted, *args, **kwargs)


def _no_sharding(out_sharding):
    if out_sharding is not None:
        raise NotImplementedError("out_sharding is not supported by mjax.random yet")


def _laid_out(sampler):
    """`sampler` with its `out_sharding=` applied to the samples (the same bits as JAX's,
    whose partitionable threefry gives each element the same value however it is laid
    out)."""
    @functools.wraps(sampler)
    def wrapped(*args, out_sharding=None, **kwargs):
        return apply_out_sharding(sampler(*args, **kwargs), out_sharding)
    return wrapped
