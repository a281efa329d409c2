"""Front doors shared by many samplers: check the key, dtype and shape, then run the
jitted body."""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes
from mjax.lax.prng import staged
from mjax.random.arguments import (_broadcast_shape, _canon_shape, _check_float,
                                   _check_safe_cast, _jit, _laid_out, _no_sharding,
                                   _user_dtype)
from mjax.random.keys import _check_prng_key


def _float_sampler(name, body, doc):
    """(sampler, jitted body): a sampler of signature (key, shape=(), dtype=None) built
    from body(key, shape, dtype), with the docstring `doc`."""
    jitted = _jit(("shape", "dtype"))(body)

    def sampler(key, shape=(), dtype=None, *, out_sharding=None):
        _no_sharding(out_sharding)
        key, _ = _check_prng_key(name, key)
        dtype = _user_dtype(dtype, float)
        _check_float(name, dtype)
        shape = _canon_shape(shape)
        return staged(jitted, key, shape=shape, dtype=dtype)
    sampler.__name__ = sampler.__qualname__ = name
    sampler.__doc__ = doc
    return _laid_out(sampler), jitted


def _param_call(name, jitted, key, params, shape, dtype, out_sharding, integer=False):
    """A sampler whose shape broadcasts with its parameters' shapes (JAX's pattern for
    pareto, t, rayleigh, wald, ...): checks, then the jitted body."""
    _no_sharding(out_sharding)
    key, _ = _check_prng_key(name, key)
    dtype = _user_dtype(dtype, int if integer else float)
    if integer:
        if not dtypes.issubdtype(dtype, np.integer):
            raise ValueError(f"dtype argument to `{name}` must be an int dtype, got {dtype}")
    else:
        _check_float(name, dtype)
    shape = _broadcast_shape(name, shape, *params)
    if not integer:
        _check_safe_cast(name, dtype, *params)
    return staged(jitted, key, *params, shape=shape, dtype=dtype)
