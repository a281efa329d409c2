"""A corpus of programs run under `jit` by mjax and by jax on the CPU, compared to the bit
(`benchmarks/bit_identical.py` reports the counts; test_bit_identical.py holds the line).

Each program is `make(L) -> (function, args)` for L the `jax` or the `mjax` module; the
same code runs with both. The corpus: the elementwise functions of jax.numpy, jax.lax and
jax.scipy.special (value and gradient), reductions, products, jax.scipy.stats log
densities, normalizations of jax.nn, an ELBO (the variational-inference example), and an
MLP and a CNN training step."""
from __future__ import annotations

import collections
import re

import numpy as np

RNG = np.random.default_rng(57)
X = RNG.standard_normal((4, 5)).astype(np.float32)
Y = RNG.standard_normal((4, 5)).astype(np.float32)
POS = (np.abs(RNG.standard_normal((4, 5))) + 0.1).astype(np.float32)
UNIT = RNG.uniform(0.05, 0.95, (4, 5)).astype(np.float32)
BIG = (RNG.standard_normal((4, 5)) * 3 + 1).astype(np.float32)

PROGRAMS = {}


def program(name):
    def register(make):
        PROGRAMS[name] = make
        return make
    return register


def _value_and_grad(name, op, arg):
    program(f"{name}")(lambda L: (op(L), (arg,)))
    program(f"grad {name}")(lambda L: (L.grad(lambda x: op(L)(x).sum()), (arg,)))


# ---- jax.numpy elementwise ---------------------------------------------------------------

UNARY = {
    "abs": X, "negative": X, "positive": X, "sign": X, "floor": X, "ceil": X, "trunc": X,
    "rint": X, "sqrt": POS, "cbrt": X, "square": X, "exp": X, "exp2": X, "expm1": X,
    "log": POS, "log2": POS, "log10": POS, "log1p": POS, "sin": X, "cos": X, "tan": X,
    "arcsin": UNIT, "arccos": UNIT, "arctan": X, "sinh": X, "cosh": X, "tanh": X,
    "arcsinh": X, "arccosh": POS + 1, "arctanh": UNIT, "deg2rad": X, "rad2deg": X,
    "reciprocal": POS, "fabs": X, "sinc": X, "i0": X, "logaddexp_self": X,
    "round": X, "nan_to_num": X, "signbit": X, "isfinite": X, "spacing": X,
}
GRADLESS = {"sign", "floor", "ceil", "trunc", "rint", "round", "signbit", "isfinite",
            "spacing"}


def _np_unary(name):
    if name == "logaddexp_self":
        return lambda L: lambda x: L.numpy.logaddexp(x, x)
    return lambda L: getattr(L.numpy, name)


for _n, _a in UNARY.items():
    if _n in GRADLESS:
        program(f"jnp.{_n}")(lambda L, f=_np_unary(_n), a=_a: (f(L), (a,)))
    else:
        _value_and_grad(f"jnp.{_n}", _np_unary(_n), _a)

BINARY = {
    "add": (X, Y), "subtract": (X, Y), "multiply": (X, Y), "divide": (X, POS),
    "true_divide": (X, POS), "power": (POS, Y), "float_power": (POS, Y),
    "maximum": (X, Y), "minimum": (X, Y), "fmax": (X, Y), "fmin": (X, Y),
    "arctan2": (X, Y), "hypot": (X, Y), "copysign": (X, Y), "logaddexp": (X, Y),
    "logaddexp2": (X, Y), "heaviside": (X, Y), "floor_divide": (X, POS),
    "remainder": (X, POS), "fmod": (X, POS), "nextafter": (X, Y), "ldexp_": (X, Y),
}


def _np_binary(name):
    if name == "ldexp_":
        return lambda L: lambda x, y: L.numpy.ldexp(x, 3)
    return lambda L: getattr(L.numpy, name)


for _n, (_a, _b) in BINARY.items():
    program(f"jnp.{_n}")(lambda L, f=_np_binary(_n), a=_a, b=_b: (f(L), (a, b)))
    if _n not in ("nextafter", "floor_divide", "heaviside"):
        program(f"grad jnp.{_n}")(lambda L, f=_np_binary(_n), a=_a, b=_b: (
            L.grad(lambda x, y: f(L)(x, y).sum(), argnums=(0, 1)), (a, b)))

for _p in (2, 3, -1, 0.5, -2):
    _value_and_grad(f"x ** {_p}", lambda L, p=_p: (lambda x: x ** p), POS)


# ---- jax.lax elementwise -------------------------------------------------------------------

LAX_UNARY = {"exp": X, "log": POS, "logistic": X, "tanh": X, "rsqrt": POS, "sqrt": POS,
             "erf": X, "erfc": X, "erf_inv": UNIT, "lgamma": POS, "digamma": POS,
             "sin": X, "cos": X, "atan": X, "asinh": X, "log1p": POS, "expm1": X,
             "square": X, "cbrt": X, "tan": X, "exp2": X, "abs": X, "neg": X}
for _n, _a in LAX_UNARY.items():
    _value_and_grad(f"lax.{_n}", lambda L, n=_n: getattr(L.lax, n), _a)
_value_and_grad("lax.integer_pow 3", lambda L: lambda x: L.lax.integer_pow(x, 3), X)
_value_and_grad("lax.integer_pow -2", lambda L: lambda x: L.lax.integer_pow(x, -2), POS)


# ---- jax.scipy.special ------------------------------------------------------------------------

SPECIAL = {"erf": X, "erfc": X, "erfinv": UNIT, "expit": X, "logit": UNIT, "gammaln": POS,
           "digamma": POS, "ndtr": X, "ndtri": UNIT, "log_ndtr": BIG, "entr": POS,
           "i0e": X, "i1e": X, "xlogy_self": POS, "xlog1py_self": POS, "logsumexp": X,
           "softmax": X, "log_softmax": X}


def _special(name):
    if name == "xlogy_self":
        return lambda L: lambda x: L.scipy.special.xlogy(x, x)
    if name == "xlog1py_self":
        return lambda L: lambda x: L.scipy.special.xlog1py(x, x)
    if name in ("softmax", "log_softmax"):
        return lambda L: getattr(L.nn, name)
    return lambda L: getattr(L.scipy.special, name)


for _n, _a in SPECIAL.items():
    _value_and_grad(f"special.{_n}", _special(_n), _a)


# ---- jax.scipy.stats ---------------------------------------------------------------------------

STATS = {
    "norm.logpdf": lambda s, x: s.norm.logpdf(x, 0.5, 1.5),
    "norm.pdf": lambda s, x: s.norm.pdf(x, 0.5, 1.5),
    "norm.cdf": lambda s, x: s.norm.cdf(x, 0.5, 1.5),
    "norm.logcdf": lambda s, x: s.norm.logcdf(x, 0.5, 1.5),
    "norm.sf": lambda s, x: s.norm.sf(x, 0.5, 1.5),
    "norm.logsf": lambda s, x: s.norm.logsf(x, 0.5, 1.5),
    "norm.ppf": lambda s, x: s.norm.ppf(x * 0.1 + 0.5, 0.5, 1.5),
    "laplace.logpdf": lambda s, x: s.laplace.logpdf(x, 0.5, 1.5),
    "cauchy.logpdf": lambda s, x: s.cauchy.logpdf(x, 0.5, 1.5),
    "logistic.logpdf": lambda s, x: s.logistic.logpdf(x),
    "t.logpdf": lambda s, x: s.t.logpdf(x, 3.0, 0.5, 1.5),
    "expon.logpdf": lambda s, x: s.expon.logpdf(x * x),
    "gamma.logpdf": lambda s, x: s.gamma.logpdf(x * x + 0.1, 2.0),
    "beta.logpdf": lambda s, x: s.beta.logpdf(x * 0.1 + 0.5, 2.0, 3.0),
    "uniform.logpdf": lambda s, x: s.uniform.logpdf(x, -3.0, 6.0),
    "poisson.logpmf": lambda s, x: s.poisson.logpmf(3.0, x * x + 0.5),
    "multivariate_normal.logpdf": lambda s, x: s.multivariate_normal.logpdf(
        x, x[0], np.eye(5, dtype=np.float32) * 2.0),
}
for _n, _f in STATS.items():
    _value_and_grad(f"stats.{_n}", lambda L, f=_f: (lambda x: f(L.scipy.stats, x)), X)


# ---- reductions, products, normalizations -------------------------------------------------------

REDUCTIONS = {"sum": "sum", "mean": "mean", "var": "var", "std": "std", "max": "max",
              "min": "min", "prod": "prod", "logsumexp": None, "norm": None,
              "cumsum": "cumsum", "cumprod": "cumprod"}
for _n, _f in REDUCTIONS.items():
    if _f is None:
        _op = ((lambda L: lambda x: L.scipy.special.logsumexp(x, axis=1)) if _n == "logsumexp"
               else (lambda L: lambda x: L.numpy.linalg.norm(x, axis=1)))
    else:
        _op = (lambda L, f=_f: lambda x: getattr(L.numpy, f)(x, axis=1))
    _value_and_grad(f"jnp.{_n}", _op, X)

_value_and_grad("matmul", lambda L: lambda x: x @ Y.T, X)
_value_and_grad("einsum", lambda L: lambda x: L.numpy.einsum("ij,kj->ik", x, Y), X)
_value_and_grad("nn.relu", lambda L: L.nn.relu, X)
_value_and_grad("nn.gelu", lambda L: L.nn.gelu, X)
_value_and_grad("nn.gelu exact", lambda L: lambda x: L.nn.gelu(x, approximate=False), X)
_value_and_grad("nn.silu", lambda L: L.nn.silu, X)
_value_and_grad("nn.softplus", lambda L: L.nn.softplus, X)
_value_and_grad("nn.sigmoid", lambda L: L.nn.sigmoid, X)
_value_and_grad("nn.elu", lambda L: L.nn.elu, X)
_value_and_grad("nn.standardize", lambda L: L.nn.standardize, X)
_value_and_grad("nn.one_hot CE", lambda L: lambda x: -(L.nn.log_softmax(x) * L.nn.one_hot(
    np.array([0, 1, 2, 3]), 5)).sum(-1), X)


# ---- programs: the ELBO, an MLP and a CNN training step ---------------------------------------

EPS = RNG.standard_normal((7, 5)).astype(np.float32)


def _elbo(L):
    def logprob(z):
        return L.numpy.sum(L.scipy.stats.norm.logpdf(z, 1.0, 2.0))

    def elbo(params, eps):
        mu, log_std = params
        z = mu + L.numpy.exp(log_std) * eps
        return L.numpy.mean(L.vmap(logprob)(z)) + L.numpy.sum(log_std)
    return elbo


ELBO_PARAMS = (np.linspace(-1, 1, 5).astype(np.float32),
               np.linspace(-0.5, 0.3, 5).astype(np.float32))
program("ELBO value")(lambda L: (_elbo(L), (ELBO_PARAMS, EPS)))
program("ELBO grad")(lambda L: (L.grad(_elbo(L)), (ELBO_PARAMS, EPS)))


def _momentum_steps(L):
    def run(params, eps):
        vel = L.tree_util.tree_map(L.numpy.zeros_like, params)
        for _ in range(5):
            g = L.grad(lambda p: -_elbo(L)(p, eps))(params)
            vel = L.tree_util.tree_map(lambda v, gi: 0.9 * v - 0.01 * gi, vel, g)
            params = L.tree_util.tree_map(lambda p, v: p + v, params, vel)
        return params
    return run


program("ELBO 5 momentum steps")(lambda L: (_momentum_steps(L), (ELBO_PARAMS, EPS)))

MLP_PARAMS = [(RNG.standard_normal((8, 16)).astype(np.float32) * 0.3,
               RNG.standard_normal(16).astype(np.float32) * 0.1),
              (RNG.standard_normal((16, 4)).astype(np.float32) * 0.3,
               RNG.standard_normal(4).astype(np.float32) * 0.1)]
MLP_X = RNG.standard_normal((6, 8)).astype(np.float32)
MLP_Y = np.eye(4, dtype=np.float32)[RNG.integers(0, 4, 6)]


def _mlp_step(L):
    def loss(params, x, y):
        h = x
        for i, (w, b) in enumerate(params):
            h = h @ w + b
            if i < len(params) - 1:
                h = L.numpy.tanh(h)
        return -L.numpy.mean(L.numpy.sum(L.nn.log_softmax(h) * y, axis=-1))

    def step(params, x, y):
        g = L.grad(loss)(params, x, y)
        return L.tree_util.tree_map(lambda p, gi: p - 0.1 * gi, params, g)
    return step


program("MLP training step")(lambda L: (_mlp_step(L), (MLP_PARAMS, MLP_X, MLP_Y)))

CNN_W = RNG.standard_normal((3, 3, 1, 4)).astype(np.float32) * 0.3
CNN_D = RNG.standard_normal((16, 3)).astype(np.float32) * 0.1
CNN_X = RNG.standard_normal((2, 8, 8, 1)).astype(np.float32)


def _cnn_step(L):
    def loss(params, x):
        w, d = params
        h = L.lax.conv_general_dilated(x, w, (1, 1), "SAME",
                                       dimension_numbers=("NHWC", "HWIO", "NHWC"))
        h = L.nn.relu(h)
        h = L.lax.reduce_window(h, -np.inf, L.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        h = L.lax.reduce_window(h, 0.0, L.lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
        logits = h.reshape(h.shape[0], -1) @ d
        return -L.numpy.mean(L.nn.log_softmax(logits)[:, 0])

    def step(params, x):
        g = L.grad(loss)(params, x)
        return L.tree_util.tree_map(lambda p, gi: p - 0.1 * gi, params, g)
    return step


program("CNN training step")(lambda L: (_cnn_step(L), ((CNN_W, CNN_D), CNN_X)))


# ---- running and comparing ---------------------------------------------------------------------

_OP = re.compile(r"\b((?:stablehlo|chlo|mhlo)\.[a-z_]+)")


def op_counts(text):
    return collections.Counter(_OP.findall(text))


def _bits(leaves):
    return [np.ascontiguousarray(np.asarray(v)) for v in leaves]


def compare(name):
    """(identical, reason): the program's jit results in mjax and jax, to the bit, and when
    they differ, the ulps and the StableHLO ops that differ in kind or count."""
    import jax
    import mjax
    out = {}
    for L in (jax, mjax):
        fn, args = PROGRAMS[name](L)
        jitted = L.jit(fn)
        try:
            res = jitted(*args)
        except Exception as e:  # noqa: BLE001
            out[L.__name__] = e
            continue
        out[L.__name__] = (_bits(jax.tree_util.tree_leaves(res)),
                           lambda j=jitted, a=args: j.lower(*a).as_text())
    j, m = out["jax"], out["mjax"]
    if isinstance(j, Exception) or isinstance(m, Exception):
        return False, f"raised: jax {j!r:.80}, mjax {m!r:.80}"
    (jv, jtext), (mv, mtext) = j, m
    if len(jv) != len(mv):
        return False, f"{len(mv)} results, jax {len(jv)}"
    worst = 0
    for a, b in zip(jv, mv):
        if a.dtype != b.dtype or a.shape != b.shape:
            return False, f"result {b.dtype}{b.shape}, jax {a.dtype}{a.shape}"
        if a.tobytes() != b.tobytes():
            if a.dtype.kind == "f":
                ia = a.view(np.int32 if a.itemsize == 4 else np.int64).astype(np.int64)
                ib = b.view(np.int32 if b.itemsize == 4 else np.int64).astype(np.int64)
                worst = max(worst, int(np.max(np.abs(ia - ib))))
            else:
                worst = max(worst, 1)
    if not worst:
        return True, ""
    jc, mc = op_counts(jtext()), op_counts(mtext())
    diff = sorted(f"{k.split('.', 1)[1]} {mc.get(k, 0)}/{jc.get(k, 0)}"
                  for k in set(jc) | set(mc) if jc.get(k, 0) != mc.get(k, 0))
    return False, (f"{worst} ulp; ops mjax/jax: {', '.join(diff) if diff else 'same counts'}")


def run(names=None):
    names = list(PROGRAMS) if names is None else names
    return {n: compare(n) for n in names}
