"""mjax.experimental.jet against jax.experimental.jet: the same function, written once
for both libraries, jet at the same primals and series (orders 1-4, scalars and arrays),
and the outputs must agree; plus repeated jvp as a second oracle, jet under
jit/vmap/grad, and the errors."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax import lax as jlax
from jax.experimental import jet as jjet

import mjax
import mjax.numpy as mjnp
from mjax import lax as mlax
from mjax.experimental import jet as mjet

JAX = (jax, jjnp, jlax)
MJAX = (mjax, mjnp, mlax)


def _series(shape, order, seed):
    rng = np.random.RandomState(seed)
    return [rng.uniform(-1.0, 1.0, shape).astype(np.float32) for _ in range(order)]


def _close(a, b, rtol=2e-4, atol=2e-5):
    a, b = np.asarray(a), np.asarray(b)
    assert a.shape == b.shape and a.dtype == b.dtype, (a.shape, a.dtype, b.shape, b.dtype)
    scale = max(1.0, float(np.max(np.abs(b))) if b.size else 1.0)
    np.testing.assert_allclose(a, b, rtol=rtol, atol=atol * scale)


def _compare(make_fun, primals, order, seed=0, factorial_scaled=True, rtol=2e-4,
             jit=False):
    """jet of one function in both libraries; with `jit`, each jet runs as one compiled
    program (much faster to compile than the many eager ops of a large function)."""
    series = [_series(np.shape(p), order, seed + i) for i, p in enumerate(primals)]

    def run(lib, jetmod):
        f = make_fun(*lib)
        call = lambda p, s: jetmod.jet(f, p, s, factorial_scaled=factorial_scaled)
        return (lib[0].jit(call) if jit else call)(tuple(primals), series)
    want, got = run(JAX, jjet), run(MJAX, mjet)
    want_leaves, want_tree = jax.tree_util.tree_flatten(want)
    got_leaves, got_tree = mjax.tree_util.tree_flatten(got)
    assert str(got_tree) == str(want_tree)
    for g, w in zip(got_leaves, want_leaves):
        _close(g, w, rtol=rtol)


# unary functions of x in (0.25, 0.75), written once: (jax-like module, jnp, lax) -> f
UNARY = {
    "sin": lambda j, np_, lax: np_.sin,
    "cos": lambda j, np_, lax: np_.cos,
    "exp": lambda j, np_, lax: np_.exp,
    "log": lambda j, np_, lax: np_.log,
    "log1p": lambda j, np_, lax: np_.log1p,
    "expm1": lambda j, np_, lax: np_.expm1,
    "tanh": lambda j, np_, lax: np_.tanh,
    "logistic": lambda j, np_, lax: j.nn.sigmoid,
    "sqrt": lambda j, np_, lax: np_.sqrt,
    "rsqrt": lambda j, np_, lax: lax.rsqrt,
    "sinh": lambda j, np_, lax: np_.sinh,
    "cosh": lambda j, np_, lax: np_.cosh,
    "asinh": lambda j, np_, lax: np_.arcsinh,
    "acosh": lambda j, np_, lax: lambda x: np_.arccosh(x + 1.5),
    "atanh": lambda j, np_, lax: np_.arctanh,
    "erf": lambda j, np_, lax: lax.erf,
    "erfc": lambda j, np_, lax: lax.erfc,
    "erf_inv": lambda j, np_, lax: lax.erf_inv,
    "square": lambda j, np_, lax: lax.square,
    "integer_pow": lambda j, np_, lax: lambda x: x ** 3 - x ** -2,
    "pow": lambda j, np_, lax: lambda x: x ** 2.5 + 2.0 ** x,
    "div": lambda j, np_, lax: lambda x: x / (1 + x * x) + 1 / x,
    "abs_sign": lambda j, np_, lax: lambda x: np_.abs(x - 0.5) + np_.sign(x - 0.4) * x,
    "select": lambda j, np_, lax: lambda x: np_.where(x > 0.5, np_.sin(x), np_.exp(x)),
    "atan2": lambda j, np_, lax: lambda x: lax.atan2(x, 1.0 + x * x),
    "floor_round": lambda j, np_, lax: lambda x: np_.floor(4 * x) * x + np_.round(x) * 2,
    "stop_gradient": lambda j, np_, lax: lambda x: lax.stop_gradient(x) * np_.sin(x),
    "composition": lambda j, np_, lax: lambda x: (np_.log(1 + np_.exp(np_.sin(3 * x) ** 2))
                                                  / np_.sqrt(x)),
}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_jax(name):
    x = np.linspace(0.26, 0.74, 5).astype(np.float32)
    _compare(UNARY[name], (x,), order=4, seed=1)


@pytest.mark.parametrize("order", [1, 2, 3, 4])
def test_orders_and_scaling_python_scalars(order):
    f = lambda j, np_, lax: lambda x: np_.sin(x) * np_.exp(-x * x)
    for scaled in (True, False):
        series = [float(v) for v in _series((), order, order)]
        want = jjet.jet(f(*JAX), (0.7,), (series,), factorial_scaled=scaled)
        got = mjet.jet(f(*MJAX), (0.7,), (series,), factorial_scaled=scaled)
        _close(got[0], want[0])
        assert len(got[1]) == order
        for g, w in zip(got[1], want[1]):
            _close(g, w)
            assert g.weak_type == w.weak_type


def test_jet2_and_fact_match():
    _close(mjet.fact(np.arange(6.0)), jjet.fact(np.arange(6.0)))
    x, s = np.float32(0.3), [np.float32(0.5), np.float32(-0.2), np.float32(0.1)]
    want = jjet.jet2(jjnp.tanh, (x,), (s,))
    got = mjet.jet2(mjnp.tanh, (x,), (s,))
    for g, w in zip(got[1], want[1]):
        _close(g, w)


def _custom_vjp_fn(j, np_):
    """exp(x) x; for mjax a custom_vjp function (jet differentiates its primal function,
    so its rule is never used), for the oracle (JAX's jvp) the plain function."""
    def f(x):
        return np_.exp(x) * x
    if j is jax:
        return f
    f = j.custom_vjp(f)
    f.defvjp(lambda x: (f(x), x), lambda x, g: (g * 0.0,))
    return f


ARRAY_FUNS = {
    "dot": lambda j, np_, lax: lambda x, w: np_.tanh(x @ w) @ w.T,
    "reductions": lambda j, np_, lax: lambda x, w: (np_.sum(np_.sin(x) ** 2, axis=0),
                                                     np_.max(x * w[:, :1], axis=1)),
    "cumulative": lambda j, np_, lax: lambda x, w: (np_.cumsum(x * w[:, :1], axis=1),
                                                     np_.cumprod(x + 1.0, axis=0)),
    "structural": lambda j, np_, lax: lambda x, w: np_.concatenate(
        [x.T[:2], np_.pad(x, ((0, 0), (1, 0)))[:, :3].T.reshape(3, 4)[:2]], axis=1) ** 2,
    "indexing": lambda j, np_, lax: lambda x, w: (
        x[np_.array([2, 0])] * w[0, 0], x.at[np_.array([1, 1])].add(w[:2, :3]),
        lax.dynamic_slice(x, (1, 0), (2, 2)), lax.dynamic_update_slice(x, w[:2, :2], (0, 1))),
    "broadcast_mixed": lambda j, np_, lax: lambda x, w: np_.exp(x[:, None, :] * w[None, :, :1]),
    "logsumexp_softmax": lambda j, np_, lax: lambda x, w: (
        j.scipy.special.logsumexp(x, axis=1), j.nn.softmax(x @ w[:3], axis=-1)),
    "jit_inside": lambda j, np_, lax: lambda x, w: j.jit(lambda a, b: np_.cos(a) @ b[:3])(x, w) * 2,
    "pytree_out": lambda j, np_, lax: lambda x, w: {"a": x * w[:, :3], "b": (np_.sum(x),)},
}


@pytest.mark.parametrize("name", sorted(ARRAY_FUNS))
def test_array_functions_match_jax(name):
    rng = np.random.RandomState(0)
    x = rng.uniform(0.1, 1.0, (4, 3)).astype(np.float32)
    w = rng.uniform(-1.0, 1.0, (4, 4)).astype(np.float32)
    if name == "dot":
        w = w[:3, :]
    _compare(ARRAY_FUNS[name], (x, w), order=3, seed=5, jit=True)


def test_conv_matches_jax():
    rng = np.random.RandomState(1)
    x = rng.normal(size=(1, 2, 5, 5)).astype(np.float32)
    k = rng.normal(size=(3, 2, 2, 2)).astype(np.float32)
    f = lambda j, np_, lax: lambda a, b: np_.sin(lax.conv_general_dilated(a, b, (1, 1), "SAME"))
    _compare(f, (x, k), order=2, seed=7, jit=True)


# Cases JAX's jet itself fails on (its min rule does not broadcast a scalar operand, and
# its custom_jvp/custom_vjp handling leaks a tracer), or has no rule for (tan, inverse trig, cbrt,
# exp2, lgamma, digamma, polygamma, reduce_prod, sort, top_k, cond, scan, while): the
# oracle is real JAX's nested jvp of t -> f(x(t)) along the polynomial path.
BEYOND_JAX = {
    "max_min": lambda j, np_, lax: lambda x: np_.maximum(x, 0.45) + np_.minimum(np_.sin(x), 0.4),
    "clamp": lambda j, np_, lax: lambda x: lax.clamp(0.3, x, 0.6) * x,
    "relu_softplus": lambda j, np_, lax: lambda x: j.nn.relu(x - 0.45) + j.nn.softplus(x),
    "tan": lambda j, np_, lax: np_.tan,
    "inverse_trig": lambda j, np_, lax: lambda x: np_.arcsin(x) * np_.arccos(x / 2) + np_.arctan(x),
    "cbrt_exp2": lambda j, np_, lax: lambda x: np_.cbrt(x) + np_.exp2(x),
    "cumulative_minmax": lambda j, np_, lax: lambda x: lax.cummax(x * x[::-1]),
    "rem": lambda j, np_, lax: lambda x: lax.rem(3 * x, 0.4 + x * x),
    "gamma_family": lambda j, np_, lax: lambda x: (lax.lgamma(x + 1) + lax.digamma(x + 1)
                                                    + j.scipy.special.polygamma(1, x)),
    "prod": lambda j, np_, lax: lambda x: np_.prod(x) * x + np_.prod(x[:, None] * x, axis=0),
    "sort_top_k": lambda j, np_, lax: lambda x: (np_.sort(np_.cos(3 * x))
                                                  + lax.top_k(x * (x - 0.5), 4)[0]),
    "custom_vjp_checkpoint": lambda j, np_, lax: lambda x: (
        _custom_vjp_fn(j, np_)(x) + j.checkpoint(lambda a: np_.sin(a) * a)(x)),
    "cond": lambda j, np_, lax: lambda x: lax.cond(np_.sum(x) > 1, np_.sin, np_.cos, x),
    "fori_loop": lambda j, np_, lax: lambda x: lax.fori_loop(
        0, 3, lambda i, c: np_.sin(c) * x + i, x),
    "while_loop": lambda j, np_, lax: lambda x: lax.while_loop(
        lambda c: c[0] < 3, lambda c: (c[0] + 1, np_.sin(c[1]) * x), (0, x))[1],
    "scan": lambda j, np_, lax: lambda x: (lambda r: r[0] + r[1].sum(0))(lax.scan(
        lambda c, a: (c * a + x, np_.exp(c * a)), x, np_.linspace(0.1, 0.5, 3))),
}


def _path_derivatives(f, primals, series):
    """d^k/dt^k f(x(t)) at t = 0, x(t) = x_0 + sum_k x_k t^k / k!, by nested jax.jvp."""
    def g(t):
        return f(*[p + sum(s * t ** (k + 1) / np.prod(np.arange(1, k + 2, dtype=np.float32))
                           for k, s in enumerate(terms)) for p, terms in zip(primals, series)])
    out, fn = [], g
    for _ in series[0]:
        fn = (lambda h: lambda t: jax.jvp(h, (t,), (np.float32(1.0),))[1])(fn)
        out.append(fn(np.float32(0.0)))
    return out


@pytest.mark.parametrize("name", sorted(BEYOND_JAX))
def test_beyond_jax_matches_path_derivatives(name):
    x = np.linspace(0.26, 0.74, 4).astype(np.float32)
    series = [_series(x.shape, 3, 11)]
    want = jax.jit(lambda x: _path_derivatives(BEYOND_JAX[name](*JAX), (x,), series))(x)
    prim, got = mjax.jit(lambda x: mjet.jet(BEYOND_JAX[name](*MJAX), (x,), series))(x)
    _close(prim, BEYOND_JAX[name](*JAX)(x))
    for g, w in zip(got, want):
        _close(g, w, rtol=1e-3)


def _nested_jvp(jvp, f, x, v, k):
    g = f
    for _ in range(k):
        g = (lambda h: lambda y: jvp(h, (y,), (v,))[1])(g)
    return g(x)


@pytest.mark.parametrize("f", [lambda x: mjnp.tan(x) * mjnp.sum(x),
                               lambda x: mjnp.arctan(x) + mjnp.arcsin(x / 2) * mjnp.arccos(x / 3)],
                         ids=["tan", "inverse_trig"])
def test_matches_repeated_jvp(f):
    x = np.array([0.3, -0.4, 0.6], np.float32)
    v = np.array([1.0, 0.5, -0.7], np.float32)
    zero = np.zeros_like(v)
    _, terms = mjet.jet(f, (x,), ((v, zero, zero),))
    for k, t in enumerate(terms, 1):
        _close(t, _nested_jvp(mjax.jvp, f, x, v, k), rtol=1e-3)


def test_under_jit_vmap_grad():
    def jj(x, v):
        return jjet.jet(lambda y: jjnp.sin(y) * jjnp.exp(y), (x,), ((v, v * v, v),))

    def mj(x, v):
        return mjet.jet(lambda y: mjnp.sin(y) * mjnp.exp(y), (x,), ((v, v * v, v),))
    x = np.linspace(-1.0, 1.0, 6).astype(np.float32)
    v = np.linspace(0.5, -0.5, 6).astype(np.float32)
    # (JAX's side runs jitted: only faster to compile)
    for g, w in zip(mjax.tree_util.tree_leaves(mjax.jit(mj)(x, v)),
                    jax.tree_util.tree_leaves(jax.jit(jj)(x, v))):
        _close(g, w)
    xs, vs = x.reshape(3, 2), v.reshape(3, 2)
    for g, w in zip(mjax.tree_util.tree_leaves(mjax.jit(mjax.vmap(mj))(xs, vs)),
                    jax.tree_util.tree_leaves(jax.jit(jax.vmap(jj))(xs, vs))):
        _close(g, w)
    loss_m = lambda x: mjnp.sum(mj(x, v)[1][2])
    loss_j = lambda x: jjnp.sum(jj(x, v)[1][2])
    _close(mjax.grad(loss_m)(x), jax.jit(jax.grad(loss_j))(x))


def test_closure_constants_and_unused_outputs():
    c = np.array([1.0, 2.0, 3.0], np.float32)
    want = jjet.jet(lambda x: (x * c, jjnp.ones(3), x, 2.0), (np.ones(3, np.float32),),
                    ((np.ones(3, np.float32), np.ones(3, np.float32)),))
    got = mjet.jet(lambda x: (x * c, mjnp.ones(3), x, 2.0), (np.ones(3, np.float32),),
                   ((np.ones(3, np.float32), np.ones(3, np.float32)),))
    for g, w in zip(mjax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        _close(g, w)
        assert getattr(g, "weak_type", None) == getattr(w, "weak_type", None)


def test_errors_match_jax():
    lax_of = {jjet: jlax, mjet: mlax}
    for jetmod, np_ in ((jjet, jjnp), (mjet, mjnp)):
        with pytest.raises(ValueError, match="inconsistent lengths"):
            jetmod.jet(np_.sin, (0.5, 1.0), ((1.0,), (1.0, 2.0)))
        with pytest.raises(ValueError, match="primal value at position 0 is not an array"):
            jetmod.jet(np_.sin, ([0.5],), ((1.0,),))
        with pytest.raises(ValueError, match="term 1 for argument 0 is not an array"):
            jetmod.jet(np_.sin, (0.5,), ((1.0, [2.0]),))
        with pytest.raises(KeyError):   # no rule (JAX: the table's KeyError)
            jetmod.jet(lax_of[jetmod].cumlogsumexp, (np.ones(3, np.float32),),
                       ((np.ones(3, np.float32),),))
    with pytest.raises(NotImplementedError, match="'cumlogsumexp'"):
        mjet.jet(mlax.cumlogsumexp, (np.ones(3, np.float32),), ((np.ones(3, np.float32),),))


def test_user_rule_replaces_builtin():
    prim = mlax.cos_p
    saved = mjet.jet_rules[prim]
    try:
        mjet.jet_rules[prim] = lambda ps, ss, **_: (mlax.cos(ps[0]), [s * 0 + 7 for s in ss[0]])
        _, terms = mjet.jet(mjnp.cos, (0.5,), ((1.0, 2.0),), factorial_scaled=False)
        assert [float(t) for t in terms] == [7.0, 7.0]
    finally:
        mjet.jet_rules[prim] = saved


def test_discrete_values_and_keys():
    # integer and boolean values are piecewise constant: zero terms (JAX's jet carries
    # converted terms through an integer cast, and fails on an integer remainder)
    x, s = np.float32(1.5), [np.float32(1.0), np.float32(0.5)]
    _, terms = mjet.jet(lambda x: mjnp.floor(x) + (x * 3).astype(mjnp.int32) % 2, (x,), (s,))
    assert [float(t) for t in terms] == [0.0, 0.0]
    # key ops run as one program eagerly
    f = lambda lib: lambda x: lib[0].random.uniform(lib[0].random.key(0), (2,)) * x * x
    for g, w in zip(mjax.tree_util.tree_leaves(mjet.jet(f(MJAX), (x,), (s,))),
                    jax.tree_util.tree_leaves(jjet.jet(f(JAX), (x,), (s,)))):
        _close(g, w)
