"""Differences from JAX found by the fourteenth differential round (jax.numpy): var, std,
nanvar and nanstd computed eagerly round as JAX's jitted functions do (ddof is an argument
of the program, so the division is not folded into a reciprocal multiplication); nanmean
with an integer dtype divides as integers; max/min of an empty bool slice are refused."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp


def _same(got, want):
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape
    assert g.tobytes() == w.tobytes(), (g, w)
    assert got.weak_type == want.weak_type


def _data(dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random((3, 4)) < 0.5
    if np.dtype(dtype).kind == "i":
        return rng.integers(-9, 9, (3, 4)).astype(dtype)
    v = rng.normal(size=(3, 4)) * 3
    if np.dtype(dtype).kind == "c":
        v = v + 1j * rng.normal(size=(3, 4))
    return v.astype(dtype)


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
@pytest.mark.parametrize("dtype", [np.float32, np.bool_, np.int32, np.complex64])
def test_variance_rounds_as_jax_eagerly(name, dtype):
    for seed in range(6):
        a = _data(dtype, seed)
        _same(getattr(mnp, name)(a, axis=0), getattr(jnp, name)(a, axis=0))
        _same(getattr(mnp, name)(a, ddof=1), getattr(jnp, name)(a, ddof=1))
    f = lambda L: (lambda x: getattr(L.numpy, name)(x, axis=0))  # noqa: E731
    _same(mjax.jit(f(mjax))(a), jax.jit(f(jax))(a))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint32])
def test_nanmean_integer_dtype_divides_as_integers(dtype):
    a = _data(np.complex64, 1)
    _same(mnp.nanmean(a, axis=0, dtype=dtype), jnp.nanmean(a, axis=0, dtype=dtype))
    with pytest.raises(TypeError):
        jnp.nanmean(a, axis=0, dtype=bool)
    with pytest.raises(TypeError):
        mnp.nanmean(a, axis=0, dtype=bool)


@pytest.mark.parametrize("name", ["max", "min", "nanmax", "nanmin", "ptp"])
def test_empty_bool_extremum_is_refused(name):
    e = np.zeros((0, 3), bool)
    with pytest.raises(ValueError):
        getattr(jnp, name)(e, axis=0)
    with pytest.raises(ValueError):
        getattr(mnp, name)(e, axis=0)
    if name in ("max", "min"):
        _same(getattr(mnp, name)(e, axis=0, initial=True),
              getattr(jnp, name)(e, axis=0, initial=True))
