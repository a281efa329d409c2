"""mjax.scipy.special against jax.scipy.special (and SciPy): values, dtypes, gradients."""
import jax
import jax.numpy as jjnp
import jax.scipy.special as jsp
import numpy as np
import pytest
import scipy.special as osp

import mjax
from frontend_util import check, tol
import mjax.numpy as jnp
import mjax.scipy.special as msp

RNG = np.random.default_rng(1)
POS = RNG.uniform(0.2, 6, (3, 4)).astype(np.float32)
REAL = RNG.uniform(-4, 4, (3, 4)).astype(np.float32)
UNIT = RNG.uniform(-0.95, 0.95, (3, 4)).astype(np.float32)
PROB = RNG.uniform(0.02, 0.98, (3, 4)).astype(np.float32)

UNARY = {"erf": REAL, "erfc": REAL, "erfinv": UNIT, "gammaln": POS, "digamma": POS,
         "expit": REAL, "logit": PROB, "entr": POS, "ndtr": REAL, "log_ndtr": REAL}


@pytest.mark.parametrize("name", sorted(UNARY))
def test_unary_matches_jax_and_scipy(name):
    x = UNARY[name]
    got = getattr(msp, name)(x)
    check(got, getattr(jsp, name)(x), rtol=2e-5)
    # (float32 against float64 SciPy: the TPU's log and division are less exact, in JAX's
    # values as in mjax's, compared above)
    np.testing.assert_allclose(np.asarray(got), getattr(osp, name)(x.astype(np.float64)),
                               rtol=tol(1e-4, 1e-3), atol=1e-5)


def test_integer_arguments_promote_to_float():
    ints = np.array([1, 2, 3], np.int32)
    for name in ("erf", "gammaln", "digamma", "expit", "entr"):
        check(getattr(msp, name)(ints), getattr(jsp, name)(ints), rtol=2e-5)


def test_binary_and_special_values():
    x = np.array([0.0, 0.0, 1.5, 2.0, -1.0], np.float32)
    y = np.array([0.0, 3.0, 2.0, 0.0, 0.5], np.float32)
    check(msp.xlogy(x, y), jsp.xlogy(x, y))
    check(msp.xlog1py(x, y - 0.5), jsp.xlog1py(x, y - 0.5))
    check(msp.entr(np.array([-1.0, 0.0, 0.5], np.float32)),
          jsp.entr(np.array([-1.0, 0.0, 0.5], np.float32)))
    n = np.array([0, 1, 2, 3], np.int32)
    xs = np.array([0.5, 1.5, 2.5, 4.0], np.float32)
    check(msp.polygamma(n, xs), jsp.polygamma(n, xs), rtol=1e-4)
    np.testing.assert_allclose(np.asarray(msp.polygamma(n, xs)), osp.polygamma(n, xs),
                               rtol=1e-4)
    tails = np.array([-30.0, -21.0, -19.0, -11.0, -9.0, 0.0, 4.0, 6.0, 9.0], np.float32)
    check(msp.log_ndtr(tails), jsp.log_ndtr(tails), rtol=1e-4)
    np.testing.assert_allclose(np.asarray(msp.log_ndtr(tails)), osp.log_ndtr(tails * 1.0),
                               rtol=1e-5, atol=1e-7)   # f32 rounding of ndtr near 1


def _logsumexps(lse, a, b):
    return dict(
        all=lse(a), axis0=lse(a, axis=0), axis1k=lse(a, axis=1, keepdims=True),
        axes=lse(a, axis=(0, 1)), b=lse(a, axis=1, b=b),
        signed=lse(a, axis=1, b=b - 0.5, return_sign=True),
        nan_when_negative=lse(a, axis=0, b=b - 0.5),
        where=lse(a, axis=1, where=a > -1))


def test_logsumexp_under_jit_matches_jax():
    a = REAL
    b = RNG.uniform(0, 1, (3, 4)).astype(np.float32)
    got = mjax.jit(lambda a, b: _logsumexps(msp.logsumexp, a, b))(a, b)
    want = _logsumexps(jsp.logsumexp, jjnp.asarray(a), jjnp.asarray(b))
    for k in want:
        g, w = (got[k], want[k]) if k != "signed" else (got[k][0], want[k][0])
        check(g, w, rtol=1e-5)
    check(got["signed"][1], want["signed"][1])
    assert np.isnan(np.asarray(got["nan_when_negative"])).any()


def test_logsumexp_infinities_and_stability():
    rows = np.array([[-np.inf, -np.inf], [np.inf, 1.0], [1000.0, 1000.0], [-np.inf, 2.0]],
                    np.float32)
    check(msp.logsumexp(rows, axis=1), jsp.logsumexp(rows, axis=1))
    check(mjax.nn.logsumexp(rows[2:]), jax.nn.logsumexp(rows[2:]))


def test_gradients_match_jax():
    names = ["erf", "erfc", "erfinv", "gammaln", "digamma", "expit", "logit", "ndtr"]

    def grads(mod, grad, xs):
        out = [grad(lambda x, f=getattr(mod, n): f(x).sum())(xs[n]) for n in names]
        out.append(grad(lambda a: mod.logsumexp(a, axis=1).sum())(xs["erf"]))
        out.append(grad(lambda x, y: mod.xlogy(x, y).sum(), argnums=(0, 1))(
            xs["gammaln"], xs["digamma"])[1])
        out.append(grad(lambda y: mod.entr(y).sum())(xs["gammaln"]))
        return out
    xs = {n: UNARY[n] for n in names}
    got = mjax.jit(lambda xs: grads(msp, mjax.grad, xs))(xs)
    want = grads(jsp, jax.grad, {k: jjnp.asarray(v) for k, v in xs.items()})
    for i, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-4, atol=1e-5,
                                   err_msg=str(i))


def test_xlogy_gradient_where_x_is_zero_is_jaxs():
    # JAX's custom derivative t_y x / y: 0 / 0 = NaN at x = y = 0, 0 elsewhere.
    y = np.array([0.0, 2.0], np.float32)
    g = mjax.grad(lambda y: msp.xlogy(jnp.zeros(2), y).sum())(y)
    want = jax.grad(lambda y: jsp.xlogy(jjnp.zeros(2), y).sum())(y)
    np.testing.assert_array_equal(np.asarray(g), np.asarray(want))


def test_scipy_is_reachable_from_mjax():
    assert mjax.scipy.special.logsumexp is msp.logsumexp
