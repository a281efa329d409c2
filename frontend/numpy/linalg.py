"""`mjax.numpy.linalg`: norms (the decompositions need primitives mjax does not have yet).
JAX: jax.numpy.linalg.
"""
from __future__ import annotations

import numpy as _onp

from mjax import numpy as jnp


def _abs(x):
    (x,) = jnp._promote("norm", x, inexact=True)
    return jnp.abs(x)


def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):  # noqa: A002
    """p-norm over `axis` (all axes when None): ord in inf, -inf, 0, or any number."""
    x = jnp.asarray(x)
    a = _abs(x)
    if ord is None or ord == 2:
        return jnp.sqrt(jnp.sum(a * a, axis=axis, keepdims=keepdims))
    if ord == _onp.inf:
        return jnp.max(a, axis=axis, keepdims=keepdims)
    if ord == -_onp.inf:
        return jnp.min(a, axis=axis, keepdims=keepdims)
    if ord == 0:
        return jnp.sum(jnp.not_equal(a, 0), axis=axis, keepdims=keepdims, dtype=a.dtype)
    if ord == 1:
        return jnp.sum(a, axis=axis, keepdims=keepdims)
    if isinstance(ord, str):
        raise ValueError(f"mjax.numpy.linalg.norm: invalid order {ord!r} for vectors")
    return jnp.sum(a ** ord, axis=axis, keepdims=keepdims) ** (1.0 / ord)


def matrix_norm(x, /, *, keepdims=False, ord="fro", axis=(-2, -1)):  # noqa: A002
    """Frobenius, 1, -1, inf or -inf norm over the two axes `axis`."""
    x = jnp.asarray(x)
    r, c = (jnp._axis(a, x.ndim) for a in axis)
    if r == c:
        raise ValueError(f"mjax.numpy.linalg.norm: duplicate axes {axis}")
    a = _abs(x)
    if ord in (None, "fro", "f"):
        out = jnp.sqrt(jnp.sum(a * a, axis=(r, c), keepdims=True))
    elif ord in (1, -1):        # max/min over columns of the column sums
        red = jnp.max if ord == 1 else jnp.min
        out = red(jnp.sum(a, axis=r, keepdims=True), axis=c, keepdims=True)
    elif ord in (_onp.inf, -_onp.inf):   # max/min over rows of the row sums
        red = jnp.max if ord == _onp.inf else jnp.min
        out = red(jnp.sum(a, axis=c, keepdims=True), axis=r, keepdims=True)
    elif ord in (2, -2, "nuc"):
        raise NotImplementedError(f"mjax.numpy.linalg.norm: ord={ord!r} needs singular "
                                  f"values (an SVD), which mjax does not have yet")
    else:
        raise ValueError(f"mjax.numpy.linalg.norm: invalid order {ord!r} for matrices")
    return out if keepdims else jnp.squeeze(out, (r, c))


def norm(x, ord=None, axis=None, keepdims=False):  # noqa: A002
    """NumPy's norm: vector norm for one axis (or 1-d input), matrix norm for two."""
    x = jnp.asarray(x)
    if axis is None:
        if ord is None:
            return vector_norm(jnp.ravel(x), ord=2, keepdims=False) if not keepdims else \
                jnp.reshape(vector_norm(jnp.ravel(x)), (1,) * x.ndim)
        if x.ndim == 1:
            return vector_norm(x, ord=ord, keepdims=keepdims)
        if x.ndim == 2:
            return matrix_norm(x, ord=ord, keepdims=keepdims)
        raise ValueError(f"mjax.numpy.linalg.norm: ord={ord!r} needs axis for an array of "
                         f"rank {x.ndim}")
    axes = (axis,) if isinstance(axis, (int, _onp.integer)) else tuple(axis)
    if len(axes) == 1:
        return vector_norm(x, ord=2 if ord is None else ord, axis=axes, keepdims=keepdims)
    if len(axes) == 2:
        return matrix_norm(x, ord=ord, axis=axes, keepdims=keepdims)
    raise ValueError(f"mjax.numpy.linalg.norm: axis must have 1 or 2 entries, got {axis}")
