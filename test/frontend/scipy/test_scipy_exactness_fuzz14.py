"""Differences from jax.scipy found by a differential fuzz (fuzz 14), checked bitwise
against real jax: functions JAX runs op by op when called eagerly (i0, i1, erfcx,
ndtri: one fused program rounds differently on the CPU) and jnp.polyval, which JAX jits
(fused multiply-adds) and whose result is never weakly typed."""
import numpy as np
import pytest

import jax
import mjax

X = np.array([-3., -0.5, 0., 0.3, 0.9, 2., 5., 1e-3, 0.1, 7.0], np.float32)
P = np.array([1e-6, 1e-3, 0.01, 0.3, 0.5, 0.9, 0.999, 1 - 1e-7, 0., 1.], np.float32)


def _same(a, b):
    a, b = np.asarray(a), np.asarray(b)
    assert a.dtype == b.dtype and a.shape == b.shape
    assert a.tobytes() == b.tobytes(), (a, b)


@pytest.mark.parametrize("name", ["i0", "i1", "erfcx", "ndtri"])
@pytest.mark.parametrize("x", [X, P], ids=["x", "p"])
def test_eager_special_bitwise(name, x):
    _same(getattr(jax.scipy.special, name)(x), getattr(mjax.scipy.special, name)(x))


@pytest.mark.parametrize("name", ["i0", "i1", "erfcx", "ndtri"])
def test_jit_special_bitwise(name):
    _same(jax.jit(getattr(jax.scipy.special, name))(P),
          mjax.jit(getattr(mjax.scipy.special, name))(P))


def test_polyval_eager_fused():
    rng = np.random.default_rng(0)
    p = rng.standard_normal(9).astype(np.float32)
    x = rng.standard_normal(200).astype(np.float32)
    _same(jax.numpy.polyval(p, x), mjax.numpy.polyval(p, x))


@pytest.mark.parametrize("p,x", [(np.array([1, 2]), 2.), (np.array([1, 2]), 2),
                                 (np.array([1., 2.]), 2), (np.ones((3, 2)), 2.)])
def test_polyval_weak_type(p, x):
    a, b = jax.numpy.polyval(p, x), mjax.numpy.polyval(p, x)
    _same(a, b)
    assert a.weak_type == b.weak_type
