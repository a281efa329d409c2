"""Literals: the NumPy-backed constants jnp functions make while tracing (`jnp.array(0)`
under jit, promoted Python scalars), folded into the ops that use them as JAX folds its
literals, and still jax.Arrays to the user."""
from __future__ import annotations

import builtins

import numpy as np

from mjax.specs import basearray, dtypes
from mjax.arrays.array_methods import ArrayMethods
from mjax.dialect import ShapedArray as _ShapedArray


class _LiteralArray(ArrayMethods, np.ndarray):
    """A NumPy constant that carries JAX's weak_type flag while tracing. Its Array
    methods and operators (`.at`, `.T`, `.sum()`, `x[i]`, `+`, ...) are mjax's, as on a
    traced array: a literal is a traced constant to the user (JAX traces one)."""

    # Static facts stay NumPy's (the Array mixin's read `aval`, which reads these).
    shape, dtype, ndim, size = (np.ndarray.shape, np.ndarray.dtype, np.ndarray.ndim,
                                np.ndarray.size)
    itemsize, nbytes = np.ndarray.itemsize, np.ndarray.nbytes
    __array_priority__ = 100  # below a Tracer's: `literal + tracer` is the tracer's op
    # The trace a user's jnp constant (`jnp.array(0)` under jit) was made in: JAX traces
    # one there, so another function closing over it (make_jaxpr, closure_convert, a
    # nested jit) takes it as a constant argument, never as a literal.
    _made_in = None

    def view(self, dtype=None, type=None):  # noqa: A002 (NumPy's name)
        if type is not None or (isinstance(dtype, builtins.type)
                                and issubclass(dtype, np.ndarray)):
            return np.ndarray.view(self, *(a for a in (dtype, type) if a is not None))
        return ArrayMethods.view(self, dtype)

    def __new__(cls, value, weak_type):
        obj = np.asarray(value).view(cls)
        obj._weak = weak_type
        return obj

    def __array_finalize__(self, obj):
        self._weak = getattr(obj, "_weak", False)

    @property
    def aval(self):
        # (asked several times per literal operand while binding: the avals of dtypes
        # x64 mode leaves alone are made once per shape, dtype and weak type)
        key = (self.shape, self.dtype, self._weak)
        hit = _LITERAL_AVALS.get(key)
        if hit is None:
            hit = _ShapedArray(self.shape, dtypes.canonicalize_dtype(self.dtype), self._weak)
            if isinstance(hit.dtype, np.dtype) and hit.dtype == self.dtype and (
                    hit.dtype.itemsize < 8 or hit.dtype == np.complex64):
                if len(_LITERAL_AVALS) > 1024:
                    _LITERAL_AVALS.clear()
                _LITERAL_AVALS[key] = hit
        return hit


_LITERAL_AVALS: dict = {}


# A literal is a jax.Array to the user, as the tracer JAX would trace there is (flax.nnx's
# Variables test `isinstance(value, jax.Array)` to choose `.at[].set` over `x[i] = v`).
basearray.Array.register(_LiteralArray)
