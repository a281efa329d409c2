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


# ---- scipy.stats ----------------------------------------------------------------------
EXPON_X = np.array([-2., -0.5, 0., 0.3, 1.5, 4., np.inf], np.float32)


@pytest.mark.parametrize("fn", ["logpdf", "pdf", "cdf", "logcdf", "sf", "logsf"])
@pytest.mark.parametrize("args", [(), (0.5, 2.)])
def test_expon_bitwise(fn, args):
    # logcdf is JAX's log1p(-sf) (it was log(cdf): 1e-5 off near 0)
    _same(getattr(jax.scipy.stats.expon, fn)(EXPON_X, *args),
          getattr(mjax.scipy.stats.expon, fn)(EXPON_X, *args))


def test_expon_ppf_bitwise():
    q = np.array([0., 0.3, 0.999, 1.], np.float32)
    _same(jax.scipy.stats.expon.ppf(q, 0.5, 2.), mjax.scipy.stats.expon.ppf(q, 0.5, 2.))


@pytest.mark.parametrize("call", [
    ("norm", "logpdf", (1,)), ("norm", "pdf", (1.,)), ("t", "logpdf", (1, 3)),
    ("gamma", "logpdf", (1, 2)), ("laplace", "pdf", (1,)), ("logistic", "pdf", (1,)),
    ("logistic", "ppf", (.1,)), ("logistic", "isf", (.1,)), ("chi2", "pdf", (1, 2)),
    ("poisson", "cdf", (np.array([-1, 0, 1, 3]), 3.)),
    ("geom", "pmf", (np.array([0, 1, 3]), 0.3)),
    ("bernoulli", "pmf", (np.array([-1, 0, 1, 3]), 0.3)),
    ("bernoulli", "cdf", (np.array([-1, 0, 1, 3]), 0.3)),
    ("norm", "ppf", (np.array([0.1, 0.5], np.float32),)),
    ("norm", "isf", (np.array([0.1, 0.5], np.float32), 1., 2.)), ("norm", "isf", (0.3,))],
    ids=lambda c: f"{c[0]}.{c[1]}")
def test_stats_weak_type_and_bits(call):
    # JAX's constants are Python scalars for a weak scalar argument (weak result) and
    # typed arrays otherwise (a strong result even from integer k and Python parameters)
    dist, fn, args = call
    a = getattr(getattr(jax.scipy.stats, dist), fn)(*args)
    b = getattr(getattr(mjax.scipy.stats, dist), fn)(*args)
    _same(a, b)
    assert a.weak_type == b.weak_type


def test_logit_weak_type():
    for x in [0.3, np.float32(0.3)]:
        a, b = jax.scipy.special.logit(x), mjax.scipy.special.logit(x)
        _same(a, b)
        assert a.weak_type == b.weak_type
        _same(jax.grad(jax.scipy.special.logit)(x), mjax.grad(mjax.scipy.special.logit)(x))


def test_norm_ppf_integer_raises():
    with pytest.raises(TypeError):
        jax.scipy.stats.norm.ppf(1)
    with pytest.raises(TypeError):
        mjax.scipy.stats.norm.ppf(1)


@pytest.mark.parametrize("mode", ["full", "same", "valid"])
def test_fftconvolve_mapped_axes_must_agree(mode):
    a, b = np.ones((6, 7), np.float32), np.ones((3, 1), np.float32)
    with pytest.raises(ValueError, match="mapped axes"):
        jax.scipy.signal.fftconvolve(a, b, mode=mode, axes=0)
    with pytest.raises(ValueError, match="mapped axes"):
        mjax.scipy.signal.fftconvolve(a, b, mode=mode, axes=0)
    b = np.ones((3, 7), np.float32)
    np.testing.assert_allclose(mjax.scipy.signal.fftconvolve(a, b, mode=mode, axes=0),
                               jax.scipy.signal.fftconvolve(a, b, mode=mode, axes=0),
                               rtol=1e-6)
