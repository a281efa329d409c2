"""Reductions of float16 and bfloat16 arrays compute in float32, as JAX's do.

jnp.sum/prod/mean/var/std/average and the nan-functions convert a half float operand to
float32, reduce (and, for mean and var, count and divide) there and convert back;
functions built on them (logsumexp, softmax, log_softmax, standardize, norm, trapezoid)
inherit it. Cumulative sums, einsum and matmul do not upcast: they accumulate in the
operands' dtype (or in `preferred_element_type`).

Each case runs in mjax and in JAX on 10^5 elements (or 300 x 400), enough that a float16
or bfloat16 accumulation visibly differs (a float16 count of 10^5 is inf, so a mean in
float16 is 0), and the results must be equal to the bit: both lower the same operations
to XLA on the CPU. JAX's jitted functions (log_softmax, standardize, trapezoid, ...) are
compared with mjax's eager calls, which are fused the same way: XLA keeps intermediates of
a fused bfloat16 computation in float32, so op-by-op execution would round differently.
JAX's unjitted compositions (logsumexp, softmax, grad) are compared under jit on both
sides, for the same reason (and because JAX's op-by-op dispatch compiles every op).
"""
from __future__ import annotations

import jax
import jax.numpy as jnp
import jax.scipy.special  # noqa: F401  (binds jax.scipy.special)
import ml_dtypes
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp
import mjax.scipy.special  # noqa: F401

HALF = [np.float16, ml_dtypes.bfloat16]
_rng = np.random.default_rng(0)
_U = _rng.random(100_000)                  # [0, 1): sums of 5e4 lose digits in f16/bf16
_N = _rng.standard_normal((300, 400))
_NAN = _N.copy()
_NAN[_rng.random(_N.shape) < 0.1] = np.nan


def _data(dtype):
    return {"u": _U.astype(dtype), "n": _N.astype(dtype), "nan": _NAN.astype(dtype),
            "near1": (1 + _N / 1000).astype(dtype)}


def _sp(lib):
    return lib.scipy.special


def _jitted(f):
    """f(lib, x) under lib.jit: for JAX's functions that are not jitted themselves."""
    return lambda L, x: L.jit(lambda v: f(L, v))(x)


# (name, data key, f(lib, x)): lib is jax or mjax, both spelled the same way.
CASES = [
    ("sum", "u", lambda L, x: L.numpy.sum(x)),
    ("sum_axis_keepdims", "n", lambda L, x: L.numpy.sum(x, axis=1, keepdims=True)),
    ("sum_where_initial", "n", lambda L, x: L.numpy.sum(x, axis=0, where=x > 0, initial=3.0)),
    ("sum_dtype_same", "u", lambda L, x: L.numpy.sum(x, dtype=x.dtype)),   # (no upcast)
    ("sum_dtype_f32", "u", lambda L, x: L.numpy.sum(x, dtype=np.float32)),
    ("sum_method", "u", lambda L, x: L.numpy.asarray(x).sum()),
    ("add_reduce", "u", lambda L, x: L.numpy.add.reduce(x)),
    ("prod", "near1", lambda L, x: L.numpy.prod(x, axis=0)),
    ("prod_where", "near1", lambda L, x: L.numpy.prod(x, where=x > 1, keepdims=True)),
    ("mean", "u", lambda L, x: L.numpy.mean(x)),
    ("mean_axis_keepdims", "n", lambda L, x: L.numpy.mean(x, axis=0, keepdims=True)),
    ("mean_where", "n", lambda L, x: L.numpy.mean(x, axis=1, where=x > -1)),
    ("mean_dtype_same", "u", lambda L, x: L.numpy.mean(x, dtype=x.dtype)),  # (f16: 0)
    ("mean_dtype_f32", "u", lambda L, x: L.numpy.mean(x, dtype=np.float32)),
    ("var", "u", lambda L, x: L.numpy.var(x)),
    ("var_axis_ddof", "n", lambda L, x: L.numpy.var(x, axis=1, ddof=1)),
    ("var_where", "n", lambda L, x: L.numpy.var(x, axis=0, where=x < 1, keepdims=True)),
    ("var_dtype_same", "u", lambda L, x: L.numpy.var(x, dtype=x.dtype)),  # (still f32 inside)
    ("var_given_mean", "n", lambda L, x: L.numpy.var(x, axis=1, mean=x[:, :1])),
    ("var_ddof_too_big", "n", lambda L, x: L.numpy.var(x[:2], axis=0, ddof=2)),  # NaN
    ("std", "u", lambda L, x: L.numpy.std(x)),
    ("std_axis", "n", lambda L, x: L.numpy.std(x, axis=(0, 1), correction=1)),
    ("average", "u", lambda L, x: L.numpy.average(x)),
    ("average_weights", "n", lambda L, x: L.numpy.average(x, axis=1, weights=x[0] ** 2)),
    ("average_returned", "n", lambda L, x: L.numpy.average(x, axis=0, returned=True)),
    ("nansum", "nan", lambda L, x: L.numpy.nansum(x)),
    ("nansum_axis_initial", "nan", lambda L, x: L.numpy.nansum(x, axis=0, initial=1.0)),
    ("nanmean", "nan", lambda L, x: L.numpy.nanmean(x, axis=1)),   # (JAX: in f16)
    ("nanmean_all", "nan", lambda L, x: L.numpy.nanmean(x)),
    ("nanvar", "nan", lambda L, x: L.numpy.nanvar(x)),
    ("nanvar_where", "nan", lambda L, x: L.numpy.nanvar(x, axis=0, where=x > -1)),
    ("nanstd", "nan", lambda L, x: L.numpy.nanstd(x, axis=1, ddof=1, keepdims=True)),
    ("cumsum", "u", lambda L, x: L.numpy.cumsum(x)),            # (no upcast in JAX)
    ("cumsum_axis", "n", lambda L, x: L.numpy.cumsum(x, axis=0)),
    ("cumsum_dtype_f32", "u", lambda L, x: L.numpy.cumsum(x, dtype=np.float32)),
    ("cumprod", "near1", lambda L, x: L.numpy.cumprod(x, axis=1)),
    ("nancumsum", "nan", lambda L, x: L.numpy.nancumsum(x, axis=1)),
    ("nn_logsumexp", "n", _jitted(lambda L, x: L.nn.logsumexp(x))),
    ("sp_logsumexp_axis_b", "n", _jitted(lambda L, x: _sp(L).logsumexp(x, axis=1,
                                                                        b=x[0] ** 2))),
    ("sp_logsumexp_where", "n", _jitted(lambda L, x: _sp(L).logsumexp(x, axis=0,
                                                                       where=x > 0))),
    ("softmax", "n", _jitted(lambda L, x: L.nn.softmax(x))),
    ("softmax_axis0_where", "n", _jitted(lambda L, x: L.nn.softmax(x, axis=0,
                                                                    where=x > -1))),
    ("log_softmax", "n", lambda L, x: L.nn.log_softmax(x)),
    ("standardize", "n", lambda L, x: L.nn.standardize(x)),
    ("standardize_stable", "n", lambda L, x: L.nn.standardize(x, axis=0,
                                                             algorithm="stable")),
    ("logmeanexp", "n", lambda L, x: L.nn.logmeanexp(x, axis=1)),
    ("norm", "n", lambda L, x: L.numpy.linalg.norm(x)),
    ("norm_axis", "n", lambda L, x: L.numpy.linalg.norm(x, axis=0)),
    ("norm_ord1", "n", lambda L, x: L.numpy.linalg.norm(x, ord=1)),
    ("norm_ord3", "n", lambda L, x: L.numpy.linalg.vector_norm(x, ord=3, axis=1)),
    ("trapezoid", "u", lambda L, x: L.numpy.trapezoid(x)),
    ("cov", "n", lambda L, x: L.numpy.cov(x[:20])),
    ("corrcoef", "n", lambda L, x: L.numpy.corrcoef(x[:20])),
    ("histogram_density", "u", lambda L, x: L.numpy.histogram(x, bins=7, density=True)),
    ("einsum", "n", lambda L, x: L.numpy.einsum("ij,kj->ik", x, x)),
    ("einsum_sum_out", "n", lambda L, x: L.numpy.einsum("ij->i", x)),   # (stays f16)
    ("einsum_preferred_f32", "n", lambda L, x: L.numpy.einsum(
        "ij,kj->ik", x, x, preferred_element_type=np.float32)),
    ("matmul", "n", lambda L, x: L.numpy.matmul(x, x.T)),
    ("matmul_preferred_f32", "n", lambda L, x: L.numpy.matmul(
        x, x.T, preferred_element_type=np.float32)),
    ("jit_var", "n", lambda L, x: L.jit(lambda v: L.numpy.var(v, axis=0))(x)),
    ("grad_mean", "u", _jitted(lambda L, x: L.grad(L.numpy.mean)(x))),
    ("grad_var", "n", _jitted(lambda L, x: L.grad(
        lambda v: L.numpy.var(v, axis=1).sum())(x))),
]


def _same(a, b):
    """Equal trees of arrays: dtype, shape and every bit (NaNs where NaNs)."""
    la, lb = jax.tree_util.tree_leaves(a), mjax.tree_util.tree_leaves(b)
    assert len(la) == len(lb)
    for u, v in zip(la, lb):
        u, v = np.asarray(u), np.asarray(v)
        assert v.dtype == u.dtype and v.shape == u.shape
        np.testing.assert_array_equal(v.astype(np.float32), u.astype(np.float32))


@pytest.mark.parametrize("dtype", HALF, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("name,key,f", CASES, ids=[c[0] for c in CASES])
def test_matches_jax(name, key, f, dtype):
    x = _data(dtype)[key]
    _same(f(jax, x), f(mjax, x))


@pytest.mark.parametrize("dtype", HALF, ids=lambda d: np.dtype(d).name)
def test_accurate_against_float64(dtype):
    # Independent of JAX: float32 accumulation leaves only the final rounding to `dtype`.
    x = _U.astype(dtype)
    exact = x.astype(np.float64)
    eps = float(ml_dtypes.finfo(dtype).eps)
    for got, want in [(mnp.sum(x), exact.sum()), (mnp.mean(x), exact.mean()),
                      (mnp.var(x), exact.var()), (mnp.std(x), exact.std()),
                      (mnp.nanmean(x.astype(np.float32)), exact.mean())]:
        assert abs(float(got) - want) <= eps * abs(want)


def test_sum_jaxpr_converts_around_the_reduction():
    x = np.ones((4, 3), np.float16)
    eqns = mjax.make_jaxpr(mnp.sum)(x).jaxpr.eqns
    assert [e.primitive.name for e in eqns] == ["convert_element_type", "reduce_sum",
                                                "convert_element_type"]
    assert [str(e.outvars[0].aval) for e in eqns] == ["float32[4,3]", "float32[]",
                                                      "float16[]"]
    for f in (lambda L: L.numpy.sum, lambda L: L.numpy.mean,
              lambda L: lambda v: L.numpy.prod(v, axis=0, keepdims=True, initial=2.0)):
        assert str(mjax.make_jaxpr(f(mjax))(x)) == str(jax.make_jaxpr(f(jax))(x))
    # (no upcast with an explicit dtype, nor in lax.reduce_sum)
    for f in (lambda v: mnp.sum(v, dtype=np.float16), lambda v: mjax.lax.reduce_sum(v, (0, 1))):
        eqns = mjax.make_jaxpr(f)(x).jaxpr.eqns
        assert [e.primitive.name for e in eqns] == ["reduce_sum"]
        assert str(eqns[0].outvars[0].aval) == "float16[]"


def test_weak_types_of_reductions_as_jax():
    # JAX's reductions cast their operand (a weak Python float becomes a strong float32).
    for name in ("sum", "prod", "max", "min", "mean", "var", "nansum", "cumsum"):
        want = jax.make_jaxpr(getattr(jnp, name))(3.0).out_avals
        got = mjax.make_jaxpr(getattr(mnp, name))(3.0).out_avals
        assert [(a.dtype, a.shape, a.weak_type) for a in got] == \
            [(a.dtype, a.shape, a.weak_type) for a in want], name


@pytest.mark.parametrize("kw", [dict(promote_integers=False), dict(dtype=bool), {}])
@pytest.mark.parametrize("name", ["sum", "prod"])
def test_bool_sum_and_prod(name, kw):
    x = np.array([[True, False], [True, True]])
    _same(getattr(jnp, name)(x, axis=0, **kw), getattr(mnp, name)(x, axis=0, **kw))


def test_cumulative_dtypes():
    x = np.array([1, -1, 2])
    for kw in ({}, dict(dtype=bool), dict(dtype=np.int8)):
        _same(jnp.cumsum(x, **kw), mnp.cumsum(x, **kw))
        _same(jnp.cumprod(x, **kw), mnp.cumprod(x, **kw))


def test_var_of_ints_with_int_dtype_is_weak_float():
    # (JAX's var puts NaN where no degree of freedom is left: the int result promotes)
    x = np.arange(6).reshape(2, 3)
    a, b = jnp.var(x, dtype=jnp.int32), mnp.var(x, dtype=np.int32)
    _same(a, b)
    assert b.weak_type == a.weak_type


def test_jnp_reductions_work_without_f16_reductions():
    x = _U[:1000].astype(np.float16)
    fns = [lambda L: L.numpy.sum(x), lambda L: L.numpy.mean(x, where=x > 0.5),
           lambda L: L.numpy.var(x), lambda L: L.numpy.std(x),
           lambda L: L.numpy.nansum(x), lambda L: L.numpy.prod(x),
           lambda L: L.jit(lambda v: (L.nn.logsumexp(v), L.nn.softmax(v),
                                      L.grad(L.numpy.mean)(v)))(x)]
    with jax.allow_f16_reductions(False), mjax.allow_f16_reductions(False):
        with pytest.raises(ValueError, match="jax_allow_f16_reductions=False"):
            mjax.lax.reduce_sum(x, (0,))
        with pytest.raises(ValueError, match="jax_allow_f16_reductions=False"):
            mnp.sum(x, dtype=np.float16)   # (an explicit dtype reduces in float16)
        for f in fns:
            _same(f(jax), f(mjax))
