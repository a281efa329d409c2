"""reduce_window, lax.reduce (monoids and custom computations), cumlogsumexp and
reduce_precision against jax, with gradients and vmap."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import lax
from mjax.test_util import check_grads
from frontend_util import check, x64

RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---- reduce_window ------------------------------------------------------------------
WINDOW_CASES = [
    dict(window_dimensions=(1, 3, 2), window_strides=(1, 2, 1), padding="SAME"),
    dict(window_dimensions=(2, 2, 2), padding=((0, 1), (1, 2), (0, 0)),
         base_dilation=(1, 2, 1), window_dilation=(1, 1, 2)),
    dict(window_dimensions=(1, 2, 3), window_strides=(1, 2, 2), padding="VALID"),
    dict(window_dimensions=(2, 3, 1), window_strides=(1, 1, 1), padding="SAME_LOWER",
         window_dilation=(1, 2, 1)),
]
MONOIDS = [(lax.add, jax.lax.add, 0.0), (lax.max, jax.lax.max, -np.inf),
           (lax.min, jax.lax.min, np.inf)]


@pytest.mark.parametrize("kw", WINDOW_CASES)
def test_reduce_window_matches_jax(kw):
    x = rand(2, 7, 6)
    xi = RNG.integers(-9, 9, (2, 7, 6)).astype(np.int32)
    for k, (f, jf, init) in enumerate(MONOIDS):
        check(lax.reduce_window(x, init, f, **kw), jax.lax.reduce_window(x, init, jf, **kw))
        if k == WINDOW_CASES.index(kw) % 3:  # one monoid per case for the other dtypes
            iinit = {0.0: 0, -np.inf: -2**31, np.inf: 2**31 - 1}[init]
            check(lax.reduce_window(xi, iinit, f, **kw),
                  jax.lax.reduce_window(xi, iinit, jf, **kw))
            # An init value that is not the identity starts every window's reduction.
            check(lax.reduce_window(x, 0.5, f, **kw), jax.lax.reduce_window(x, 0.5, jf, **kw))
    got = mjax.jit(lambda x, v: lax.reduce_window(x, v, lax.max, **kw))(x, np.float32(0.25))
    check(got, jax.lax.reduce_window(x, 0.25, jax.lax.max, **kw))


@pytest.mark.parametrize("kw", WINDOW_CASES)
def test_reduce_window_grads_match_jax(kw):
    x = rand(2, 7, 6)
    x[0, :2, :2] = 1.0  # ties: JAX's choice (the first maximum) must be reproduced
    for f, jf, init in MONOIDS:
        ct = rand(*jax.eval_shape(lambda x: jax.lax.reduce_window(x, init, jf, **kw), x).shape)

        def loss(red, fn):
            return lambda x: (red(jnp.sin(x) if red is lax.reduce_window else jjnp.sin(x),
                                  init, fn, **kw) * ct).sum()
        if f is not lax.add and any(d != 1 for d in kw.get("window_dilation", ())):
            with pytest.raises(NotImplementedError, match="window dilation"):  # as JAX
                mjax.grad(loss(lax.reduce_window, f))(x)
        else:
            got = mjax.grad(loss(lax.reduce_window, f))(x)
            want = jax.grad(loss(jax.lax.reduce_window, jf))(x)
            check(got, want, rtol=1e-5, atol=1e-5)
        t = rand(*x.shape)
        _, got_t = mjax.jvp(lambda x: lax.reduce_window(x, init, f, **kw), (x,), (t,))
        _, want_t = jax.jvp(lambda x: jax.lax.reduce_window(x, init, jf, **kw), (x,), (t,))
        check(got_t, want_t, rtol=1e-5, atol=1e-5)


def test_max_pool_second_order_grads():
    x = RNG.permutation(48).reshape(2, 4, 6).astype(np.float64) / 7.0  # no ties
    with x64():
        kw = dict(window_dimensions=(1, 2, 3), window_strides=(1, 2, 1), padding="SAME")
        f = lambda x: lax.reduce_window(x * x, -np.inf, lax.max, **kw)  # noqa: E731
        check_grads(f, (x,), order=2, modes=("rev",))
        g = lambda x: lax.reduce_window(jnp.sin(x), 0.0, lax.add, **kw)  # noqa: E731
        check_grads(g, (x,), order=2, modes=("fwd",))


def test_reduce_window_vmap_matches_jax():
    xs = rand(3, 2, 7, 6)
    for i, kw in enumerate(WINDOW_CASES[:2]):
        for f, jf, init in MONOIDS:
            for axis in ((0, 2)[i],):
                xa = np.moveaxis(xs, 0, axis)
                got = mjax.vmap(lambda x: lax.reduce_window(x, init, f, **kw), axis)(xa)
                want = jax.vmap(lambda x: jax.lax.reduce_window(x, init, jf, **kw), axis)(xa)
                check(got, want)
    kw = dict(window_dimensions=(1, 2, 2), window_strides=(1, 2, 1),
              padding=((0, 0), (1, 0), (0, 1)))
    pool = lambda x: lax.reduce_window(x, -np.inf, lax.max, **kw)  # noqa: E731
    jpool = lambda x: jax.lax.reduce_window(x, -np.inf, jax.lax.max, **kw)  # noqa: E731
    ts, cts = rand(*xs.shape), rand(*jax.eval_shape(jax.vmap(jpool), xs).shape)
    # Batching select_and_gather_add (the JVP) and select_and_scatter_add (the VJP).
    check(mjax.vmap(lambda x, t: mjax.jvp(pool, (x,), (t,))[1])(xs, ts),
          jax.vmap(lambda x, t: jax.jvp(jpool, (x,), (t,))[1])(xs, ts))
    check(mjax.vmap(lambda x, c: mjax.vjp(pool, x)[1](c)[0], (1, 0))(np.moveaxis(xs, 0, 1), cts),
          jax.vmap(lambda x, c: jax.vjp(jpool, x)[1](c)[0], (1, 0))(np.moveaxis(xs, 0, 1), cts))
    check(mjax.vmap(lambda c: mjax.vjp(pool, xs[0])[1](c)[0])(cts),
          jax.vmap(lambda c: jax.vjp(jpool, xs[0])[1](c)[0])(cts))


def test_reduce_window_errors():
    x = rand(4, 5)
    with pytest.raises(TypeError, match="wrong number of window_dimensions"):
        lax.reduce_window(x, 0.0, lax.add, (2,))
    with pytest.raises(ValueError, match="tree structure"):
        lax.reduce_window((x, x), 0.0, lax.add, (2, 2))
    assert lax.reduce_window_shape_tuple((4, 5), (2, 2), (1, 2), ((0, 0), (1, 1))) == \
        jax.lax.reduce_window_shape_tuple((4, 5), (2, 2), (1, 2), ((0, 0), (1, 1)))

def test_cumlogsumexp_and_reduce_precision():
    x = rand(3, 5)
    check(lax.cumlogsumexp(x, axis=1), jax.lax.cumlogsumexp(x, axis=1), rtol=1e-5)
    check(lax.cumlogsumexp(x, axis=0, reverse=True),
          jax.lax.cumlogsumexp(x, axis=0, reverse=True), rtol=1e-5)
    check(lax.reduce_precision(x, exponent_bits=5, mantissa_bits=2),
          jax.lax.reduce_precision(x, exponent_bits=5, mantissa_bits=2))
    check(mjax.grad(lambda x: lax.reduce_precision(x, 8, 7).sum())(x),
          jax.grad(lambda x: jax.lax.reduce_precision(x, 8, 7).sum())(x))


# ---- lax.reduce ------------------------------------------------------------------------
def test_reduce_with_monoids_matches_jax():
    x = rand(3, 4, 5)
    xi = RNG.integers(-4, 9, (3, 4, 5)).astype(np.int32)
    xb = RNG.uniform(size=(3, 4)) < 0.5
    cases = [(x, 0.0, lax.add, jax.lax.add), (x, 1.0, lax.mul, jax.lax.mul),
             (x, -np.inf, lax.max, jax.lax.max), (x, np.inf, lax.min, jax.lax.min),
             (x, 2.5, lax.add, jax.lax.add), (x, 0.0, lax.max, jax.lax.max),
             (x, 2.0, jnp.multiply, jjnp.multiply),
             (xi, 0, lax.add, jax.lax.add), (xi, -1, lax.bitwise_and, jax.lax.bitwise_and),
             (xi, 3, lax.bitwise_or, jax.lax.bitwise_or), (xi, 0, lax.bitwise_xor,
                                                          jax.lax.bitwise_xor),
             (xb, False, lax.bitwise_or, jax.lax.bitwise_or),
             (xb, True, lax.bitwise_and, jax.lax.bitwise_and)]
    for arr, init, f, jf in cases:
        dims = (0, 1) if arr.ndim == 2 else (0, 2)
        check(lax.reduce(arr, arr.dtype.type(init), f, dims),
              jax.lax.reduce(arr, arr.dtype.type(init), jf, dims), rtol=1e-5)
    check(mjax.jit(lambda x, v: lax.reduce(x, v, lax.max, (1,)))(x, np.float32(0.5)),
          jax.lax.reduce(x, np.float32(0.5), jax.lax.max, (1,)))
    check(mjax.grad(lambda x: lax.reduce(x, 0.0, lax.add, (0, 1)).sum())(x), np.ones_like(x))
    check(lax.reduce_xor(xi, (1,)), jax.lax.reduce_xor(xi, (1,)))

# ---- custom computations (jaxpr.reduce / jaxpr.reduce_window regions) ---------------------------
def _argmax_pair(np_):
    def f(a, b):
        pick = a[0] >= b[0]
        return np_.where(pick, a[0], b[0]), np_.where(pick, a[1], b[1])
    return f


@pytest.mark.parametrize("name", ["add", "mul", "max", "min"])
def test_monoid_reductions_from_other_init_values_are_jaxs(name):
    """A monoid reduction from a value that is not its identity is a reduce over the
    computation from that value, as JAX lowers it (XLA applies the init as it does
    JAX's: on a TPU once per partial reduction), and differentiates as JAX's (a tree of
    the computation's JVP): values, gradients and JVPs equal to JAX's bits."""
    x = rand(3, 4, 5)
    f, jf = getattr(lax, name), getattr(jax.lax, name)
    init = np.float32(0.3)
    for dims in ((0, 2), (1,), (0, 1, 2)):
        fun = lambda x: lax.reduce(x, init, f, dims)  # noqa: E731
        jfun = lambda x: jax.lax.reduce(x, init, jf, dims)  # noqa: E731
        text = mjax.jit(fun).lower(x).as_text()
        assert "stablehlo.reduce(%arg0 init: %cst)" in text, text
        np.testing.assert_array_equal(mjax.jit(fun)(x), jax.jit(jfun)(x))
        np.testing.assert_array_equal(mjax.grad(lambda x: fun(x).sum())(x),
                                      jax.grad(lambda x: jfun(x).sum())(x))
        (p, t), (jp, jt) = mjax.jvp(fun, (x,), (x,)), jax.jvp(jfun, (x,), (x,))
        np.testing.assert_array_equal(p, jp)
        np.testing.assert_allclose(t, jt, rtol=1e-6)
    window = dict(window_dimensions=(1, 3, 2), window_strides=(1, 2, 1), padding="SAME")
    if name in ("add", "max", "min"):
        text = mjax.jit(lambda x: lax.reduce_window(x, init, f, **window)).lower(x).as_text()
        assert '"stablehlo.reduce_window"(%arg0, %cst)' in text, text


def test_reduce_with_custom_computations():
    x = rand(3, 5)
    i = np.arange(15, dtype=np.int32).reshape(3, 5)
    f = lambda a, b: a * 0.5 + b  # noqa: E731
    check(lax.reduce(x, np.float32(0), f, (1,)), jax.lax.reduce(x, np.float32(0), f, (1,)))
    got = lax.reduce((x, i), (np.float32(-np.inf), np.int32(0)), _argmax_pair(jnp), (0,))
    want = jax.lax.reduce((x, i), (np.float32(-np.inf), np.int32(0)), _argmax_pair(jjnp), (0,))
    check(got[0], want[0])
    check(got[1], want[1])
    got = mjax.jit(lambda x, v: lax.reduce(x, v, f, (0, 1)))(x, np.float32(2))
    check(got, jax.lax.reduce(x, np.float32(2), f, (0, 1)), rtol=1e-5)
    with pytest.raises(ValueError, match="tree structure"):
        lax.reduce((x, i), (np.float32(0), np.int32(0)), lambda a, b: a[0], (0,))


def test_reduce_window_with_custom_computations():
    x = rand(2, 7, 6)
    kw = dict(window_dimensions=(1, 3, 2), window_strides=(1, 2, 1), padding="SAME",
              base_dilation=(1, 1, 2))
    check(lax.reduce_window(x, 1.0, lax.mul, **kw),
          jax.lax.reduce_window(x, 1.0, jax.lax.mul, **kw), rtol=1e-5)
    f = lambda a, b: a * 0.9 + b  # noqa: E731
    check(lax.reduce_window(x, 0.0, f, **kw), jax.lax.reduce_window(x, 0.0, f, **kw),
          rtol=1e-5)
    i = np.arange(84, dtype=np.int32).reshape(2, 7, 6)
    args = ((1, 2, 2), (1, 2, 2), "VALID")
    got = lax.reduce_window((x, i), (-np.inf, 0), _argmax_pair(jnp), *args)
    want = jax.lax.reduce_window((x, i), (-np.inf, 0), _argmax_pair(jjnp), *args)
    check(got[0], want[0])
    check(got[1], want[1])
    with pytest.raises(Exception, match="no JVP rule yet"):
        mjax.grad(lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2, 2)).sum())(x)

def test_custom_reductions_vmap_matches_jax():
    xs = rand(4, 3, 5)
    f = lambda a, b: a * 0.5 + b  # noqa: E731
    for axis in (0, 2):
        check(mjax.vmap(lambda x: lax.reduce(x, np.float32(0), f, (1,)), axis)(xs),
              jax.vmap(lambda x: jax.lax.reduce(x, np.float32(0), f, (1,)), axis)(xs),
              rtol=1e-5)
        check(mjax.vmap(lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 2), "SAME"),
                        axis)(xs),
              jax.vmap(lambda x: jax.lax.reduce_window(x, 1.0, jax.lax.mul, (2, 2), (1, 2),
                                                       "SAME"), axis)(xs), rtol=1e-5)
    i = np.arange(15, dtype=np.int32).reshape(3, 5)
    got = mjax.vmap(lambda x, k: lax.reduce((x, k), (np.float32(-np.inf), np.int32(0)),
                                            _argmax_pair(jnp), (0,)), (0, None))(xs, i)
    want = jax.vmap(lambda x, k: jax.lax.reduce((x, k), (np.float32(-np.inf), np.int32(0)),
                                                _argmax_pair(jjnp), (0,)), (0, None))(xs, i)
    check(got[0], want[0])
    check(got[1], want[1])
