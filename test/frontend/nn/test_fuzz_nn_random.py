"""Differential fuzz of `mjax.nn`, `mjax.scipy.special` and `mjax.random` against jax
(fuzz_harness.py)."""
import ml_dtypes
import numpy as np
import pytest

from fuzz_harness import BOOL, FLOAT, INT, Case, fuzz, names, registry

CASES, case = registry()


# ---- nn, scipy.special, random ---------------------------------------------------------

NN_UNARY = ("relu relu6 sigmoid softplus silu gelu elu leaky_relu celu selu log_sigmoid "
            "soft_sign hard_tanh mish").split()


def _nn_unary(name):
    @case(f"nn.{name}")
    def gen(d):
        return Case(lambda L, x: getattr(L.nn, name)(x), [d.operand("x", scalar_odds=8)])


for _n in NN_UNARY:
    _nn_unary(_n)


@case("nn.softmax")
def _softmax(d):
    x = d.array("x")
    name = d.pick("function", ["softmax", "log_softmax", "standardize"])
    axis = d.axis("axis", x.ndim, tuples=True)
    kw = {}
    if d.flag("with_where"):
        kw["where"] = d.array("where", BOOL, shape=d.broadcast_shape("where.shape", x.shape))
    return Case(lambda L, x: getattr(L.nn, name)(x, axis=axis, **kw), [x])


@case("nn.one_hot")
def _one_hot(d):
    x = d.operand("x", INT + FLOAT, kind=0)
    n = d.int("num_classes", 0, 5)
    dtype = d.pick("dtype", [None, np.int32, np.float16, np.bool_])
    axis = d.int("axis", -2, 1)
    return Case(lambda L, x: L.nn.one_hot(x, n, dtype=dtype, axis=axis), [x])


@case("nn.gelu_exact")
def _gelu_exact(d):
    return Case(lambda L, x: L.nn.gelu(x, approximate=False), [d.array("x", FLOAT)])


SPECIAL = ("erf erfc erfinv gammaln digamma xlogy xlog1py entr logit expit ndtr ndtri "
           "log_ndtr i0e i1e").split()
SPECIAL_BINARY = {"xlogy", "xlog1py"}


def _special(name):
    @case(f"scipy.special.{name}")
    def gen(d):
        x = d.array("x", FLOAT + [np.int32])
        if name in SPECIAL_BINARY:
            y = d.array("y", FLOAT + [np.int32], shape=d.broadcast_shape("y.shape", x.shape))
            return Case(lambda L, x, y: getattr(L.scipy.special, name)(x, y), [x, y])
        return Case(lambda L, x: getattr(L.scipy.special, name)(x), [x])


for _n in SPECIAL:
    _special(_n)


SAMPLERS = ["normal", "uniform", "bernoulli", "randint", "categorical", "gamma", "beta",
            "truncated_normal", "permutation", "exponential", "laplace", "logistic", "cauchy",
            "poisson", "choice", "dirichlet", "split", "fold_in", "bits"]


@case("random")
def _random(d):
    name = d.pick("function", SAMPLERS)
    seed_ = np.uint32(d.int("seed", 0, 2**32 - 1))
    shape = d.shape("shape", max_ndim=2)
    dtype = d.pick("dtype", [np.float32, np.float16, ml_dtypes.bfloat16])

    def key(L, s):
        return L.random.key(s) if d_typed else L.random.PRNGKey(s)
    d_typed = d.flag("typed_key")
    if name in ("normal", "uniform", "exponential", "laplace", "logistic", "cauchy"):
        return Case(lambda L, s: getattr(L.random, name)(key(L, s), shape, dtype), [seed_])
    if name == "bernoulli":
        p = d.array("p", [np.float32], shape=(), kind=2) / 3
        return Case(lambda L, s, p: L.random.bernoulli(key(L, s), p, shape), [seed_, p])
    if name == "randint":
        lo, hi = d.int("minval", -5, 5), d.int("maxval", -3, 9)
        idtype = d.pick("int_dtype", [np.int32, np.uint8, np.int8])
        return Case(lambda L, s: L.random.randint(key(L, s), shape, lo, hi, idtype), [seed_])
    if name == "categorical":
        logits = d.array("logits", FLOAT, min_ndim=1)
        return Case(lambda L, s, lg: L.random.categorical(key(L, s), lg), [seed_, logits])
    if name in ("gamma", "poisson", "dirichlet"):
        a = d.array("a", [np.float32], kind=2, min_ndim=1 if name == "dirichlet" else 0)
        return Case(lambda L, s, a: getattr(L.random, name)(key(L, s), a), [seed_, a])
    if name == "beta":
        a, b = d.array("a", [np.float32], kind=2), d.array("b", [np.float32], kind=2)
        return Case(lambda L, s, a, b: L.random.beta(key(L, s), a, b), [seed_, a, b])
    if name == "truncated_normal":
        lo, hi = d.pick("lower", [-2.0, 0.0, -np.inf]), d.pick("upper", [2.0, 0.5, np.inf])
        return Case(lambda L, s: L.random.truncated_normal(key(L, s), lo, hi, shape, dtype),
                    [seed_])
    if name == "permutation":
        x = d.array("x", min_ndim=1)
        independent = d.flag("independent")
        return Case(lambda L, s, x: L.random.permutation(key(L, s), x,
                                                         independent=independent), [seed_, x])
    if name == "choice":
        n, replace = d.int("a", 1, 6), d.flag("replace")
        shape = (d.int("n", 0, n),)
        return Case(lambda L, s: L.random.choice(key(L, s), n, shape, replace), [seed_])
    if name == "split":
        num = d.int("num", 1, 3)
        return Case(lambda L, s: L.random.key_data(L.random.split(key(L, s), num)), [seed_])
    if name == "fold_in":
        data = np.uint32(d.int("data", 0, 2**32 - 1))
        return Case(lambda L, s, x: L.random.key_data(L.random.fold_in(key(L, s), x)),
                    [seed_, data])
    return Case(lambda L, s: L.random.bits(key(L, s), shape), [seed_])


@pytest.mark.parametrize("name", names(CASES))
def test_matches_jax(name):
    fuzz(CASES, name)
