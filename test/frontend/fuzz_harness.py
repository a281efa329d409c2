"""The differential fuzzer's harness: draws random calls of `mjax.numpy`, `mjax.lax`,
`mjax.nn` and `mjax.random` functions with their keyword options (test_fuzz_*.py hold the
cases, one file per family), runs each eagerly and under `jit`, `grad` (float arguments)
and `vmap` (and `vmap` of `grad` where per-example gradients matter) in mjax and in jax
0.10.2, and compares values, shapes, dtypes, weak types and exception classes.

The cases are drawn by hypothesis from a fixed seed, so every run draws the same ones.
The fast tier (CI) draws one case of every 15th function; the long tier
(docs/fuzzing.md) draws `MJAX_FUZZ_EXAMPLES` per function (40 give over 10,000 cases):

    MJAX_TEST_TIER=full MJAX_FUZZ_EXAMPLES=40 python -m pytest -n 2 -q \
        test/frontend/test_fuzz_*.py

(MJAX_TEST_TIER=full: without it test/conftest.py runs a sixth of the functions.)


`MJAX_FUZZ_SEED=<int>` draws other cases. A mismatch is reported with the function, the
drawn options, the arguments and both outcomes (`MJAX_FUZZ_SHRINK=1` shrinks it).

mjax and jax run in one process (importing jax patches jaxlib's array class process-wide),
so every result is compared through `np.asarray`, and each side's own types are checked
(an mjax result must be an `mjax.Array` where jax's is a `jax.Array`).
"""
from __future__ import annotations

import math
import os
import warnings
from dataclasses import dataclass

import ml_dtypes
import numpy as np
from hypothesis import HealthCheck, Phase, given, seed, settings
from hypothesis import strategies as st

import jax  # the oracle: this file fails without it
import jax.nn
import jax.numpy
import jax.random
import jax.scipy.special
import mjax
import mjax.nn
import mjax.numpy
import mjax.random
import mjax.scipy.special

# The fast tier (no MJAX_FUZZ_EXAMPLES) checks one case of every FAST_STRIDE-th function
# (a fixed selection: each family file keeps well under a CI minute); the long tier checks
# MJAX_FUZZ_EXAMPLES cases of every function.
LONG = "MJAX_FUZZ_EXAMPLES" in os.environ
EXAMPLES = int(os.environ.get("MJAX_FUZZ_EXAMPLES", "1"))
FAST_STRIDE = 15
SEED = int(os.environ.get("MJAX_FUZZ_SEED", "0"))
# A mismatch's report shows the whole drawn case; shrinking it (MJAX_FUZZ_SHRINK=1) reruns
# the case hundreds of times to find a smaller one.
PHASES = tuple(Phase) if os.environ.get("MJAX_FUZZ_SHRINK") == "1" else (
    Phase.explicit, Phase.reuse, Phase.generate)


BOOL = [np.bool_]
SINT = [np.int32, np.int8, np.int16, np.int64]
UINT = [np.uint8, np.uint32, np.uint16, np.uint64]
FLOAT = [np.float32, np.float16, ml_dtypes.bfloat16, np.float64]
COMPLEX = [np.complex64, np.complex128]
INT = SINT + UINT
REAL = FLOAT + INT
NUMERIC = FLOAT + INT + COMPLEX
INEXACT = FLOAT + COMPLEX
ALL = FLOAT + INT + COMPLEX + BOOL

MODES = ("eager", "jit", "grad", "vmap")


# ---- drawing cases ---------------------------------------------------------------------


def fill(rng, shape, dtype, kind):
    """Values of one array: kind 0 small and plain, 1 halves / full integer range, 2
    positive, 3 with special values (nan, infinities, signed zeros, extremes)."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(shape) < 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if kind == 1:
            return rng.integers(info.min, info.max, shape, dtype=dt, endpoint=True)
        if kind == 3:
            pool = [info.min, info.max, 0, 1, 2, info.max - 1] + ([-1] if info.min else [])
            return rng.choice(np.array(pool, dtype=dt), shape)
        lo, hi = (1, 6) if kind == 2 else (max(info.min, -4), min(info.max, 8))
        return rng.integers(lo, hi, shape, endpoint=True).astype(dt)
    if dt.kind == "c":
        part = np.float32 if dt == np.complex64 else np.float64
        with np.errstate(all="ignore"):
            return (fill(rng, shape, part, kind) + 1j * fill(rng, shape, part, kind)
                    ).astype(dt)
    if kind == 1:
        v = rng.integers(-6, 7, shape) / 2
    elif kind == 2:
        v = np.abs(rng.normal(size=shape)) + 0.25
    elif kind == 3:
        v = rng.normal(size=shape) * 10.0 ** rng.integers(-3, 4, shape)
        fi = ml_dtypes.finfo(dt)  # (np.finfo refuses bfloat16 and the float8s)
        special = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, float(fi.max), float(fi.tiny)])
        mask = rng.random(shape) < 0.3
        v = np.where(mask, rng.choice(special, shape), v)
    else:
        v = rng.normal(size=shape) * 2
    with np.errstate(over="ignore"):
        return np.asarray(v).astype(dt)


def _name(dtype):
    return np.dtype(dtype).name


class Draw:
    """Draws one case's arrays and options from hypothesis, keeping what it drew for the
    report."""

    def __init__(self, data):
        self.data, self.drawn = data, {}

    def __call__(self, strategy, name):
        value = self.data.draw(strategy, label=name)
        self.drawn[name] = value
        return value

    def pick(self, name, options):
        return self(st.sampled_from(options), name)

    def flag(self, name):
        return self(st.booleans(), name)

    def int(self, name, lo, hi):
        return self(st.integers(lo, hi), name)

    def dtype(self, name, pool):
        return np.dtype(self.pick(name, pool)).type

    def shape(self, name, min_ndim=0, max_ndim=3, min_side=1, max_side=4, zero=True):
        ndim = self.data.draw(st.integers(min_ndim, max_ndim))
        dims = [self.data.draw(st.integers(min_side, max_side)) for _ in range(ndim)]
        if zero and ndim and self.data.draw(st.integers(0, 9)) == 9:  # one zero-size in ten
            dims[self.data.draw(st.integers(0, ndim - 1))] = 0
        self.drawn[name] = tuple(dims)
        return tuple(dims)

    def array(self, name, pool=ALL, shape=None, kind=None, dtype=None, **shape_kw):
        dtype = dtype or self.dtype(f"{name}.dtype", pool)
        shape = self.shape(f"{name}.shape", **shape_kw) if shape is None else tuple(shape)
        kind = self.data.draw(st.integers(0, 3)) if kind is None else kind
        rng = np.random.default_rng(self.data.draw(st.integers(0, 2**32 - 1)))
        return fill(rng, shape, dtype, kind)

    def scalar(self, name, kinds=("int", "float", "bool", "complex")):
        """A Python scalar (weakly typed in both libraries)."""
        kind = self.pick(f"{name}.type", kinds)
        strategy = {"int": st.integers(-5, 9), "bool": st.booleans(),
                    "float": st.sampled_from([0.5, -1.5, 2.0, 0.0, 3.25, -0.0, math.inf]),
                    "complex": st.sampled_from([1 + 2j, -0.5j, 2 + 0j])}[kind]
        return self(strategy, name)

    def operand(self, name, pool=ALL, shape=None, scalar_odds=5, **kw):
        """An array, or (one time in scalar_odds) a Python scalar."""
        if scalar_odds and self.data.draw(st.integers(1, scalar_odds)) == scalar_odds:
            return self.scalar(name)
        return self.array(name, pool, shape=shape, **kw)

    def axis(self, name, ndim, none=True, tuples=False, oob=True):
        """An axis of an ndim array: None, one axis (maybe negative), a tuple of distinct
        axes, or (rarely) out of range."""
        options = ["int"] * 3 + ["none"] * none + ["tuple"] * tuples + ["oob"] * oob
        kind = self.pick(f"{name}.kind", options) if ndim else (
            "none" if none else "int")
        if kind == "none" or (kind == "tuple" and ndim == 0):
            value = None
        elif kind == "oob":
            value = self.pick(name, [ndim, -ndim - 1, ndim + 2])
        elif kind == "tuple":
            value = tuple(self(st.lists(st.integers(-ndim, ndim - 1), max_size=ndim,
                                        unique_by=lambda a: a % ndim), name))
        else:
            value = self.int(name, -max(ndim, 1), max(ndim, 1) - 1)
        self.drawn[name] = value
        return value

    def broadcast_shape(self, name, shape):
        """A shape that broadcasts with shape: a suffix of it with some sides 1, sometimes
        with leading sides added; one time in twenty, one that may not broadcast."""
        if self.data.draw(st.integers(0, 19)) == 19:
            return self.shape(name, max_ndim=len(shape) + 1)
        keep = self.data.draw(st.integers(0, len(shape)))
        dims = [1 if self.data.draw(st.integers(0, 3)) == 0 else s
                for s in shape[len(shape) - keep:]]
        if self.data.draw(st.integers(0, 5)) == 0:
            dims = [self.data.draw(st.integers(1, 3))] + dims
        self.drawn[name] = tuple(dims)
        return tuple(dims)


@dataclass
class Case:
    """fn(L, *args) computes the case in library L (mjax or jax); args are numpy arrays
    and Python scalars, traced by jit, differentiated by grad and mapped by vmap; options
    are closed over."""
    fn: object
    args: list
    modes: tuple = MODES
    rtol: float = 1.0        # a factor on the tolerance of each dtype


def registry():
    """A family's cases by name, and the decorator that registers one: @case(name) on a
    function of a Draw that returns a Case."""
    cases = {}

    def case(name):
        def register(gen):
            cases[name] = gen
            return gen
        return register
    return cases, case


def names(cases):
    """The functions a tier checks, sorted."""
    return sorted(cases) if LONG else sorted(cases)[::FAST_STRIDE]


def fuzz(cases, name):
    """Draws EXAMPLES cases of cases[name] from the seed and checks each."""
    calls = []

    @seed(SEED)
    @settings(max_examples=EXAMPLES + 1, deadline=None, database=None, derandomize=False,
              suppress_health_check=list(HealthCheck), print_blob=False, phases=PHASES)
    @given(st.data())
    def run_cases(data):
        calls.append(data.draw(st.integers(0, 255)))  # (a draw: else this would
        #                                                 exhaust the search space)
        if len(calls) == 1:
            # Hypothesis's first case is the least of every choice (a float32 scalar,
            # axis 0, the first option), the same for every seed and function: skipped.
            return
        d = Draw(data)
        check(name, d, cases[name](d))
    run_cases()


# ---- comparing mjax with jax -----------------------------------------------------------

# Relative and absolute tolerances per result dtype, before a case's factor.
TOLERANCE = {np.dtype(np.float16): (2e-3, 1e-3), np.dtype(ml_dtypes.bfloat16): (1.6e-2, 1e-2),
             np.dtype(np.float32): (2e-6, 1e-6), np.dtype(np.float64): (1e-12, 1e-13),
             np.dtype(np.complex64): (2e-6, 1e-6), np.dtype(np.complex128): (1e-12, 1e-13)}


GRADS = ("grad", "vmap_grad")

# Differences from jax the fuzzer accepts, each with its reason: (case names, modes (None:
# all), predicate(mjax's exception, jax's exception), either None when that side returned).
KNOWN = [
    (({"lax.cumulative"}, None, lambda got, want: isinstance(want, OverflowError)),
     "jax's cumlogsumexp of an integer array fails computing its -inf initial value "
     "(OverflowError); mjax rejects the dtype (TypeError)"),
    (({"lax.reduce_window"}, GRADS,
      lambda got, want: "custom computation" in str(got) and "Linearization" in str(want)),
     "neither differentiates reduce_window with a custom computation: jax fails inside "
     "its linearization (ValueError), mjax says so (PassError)"),
    (({"lax.reshape"}, None, lambda got, want: isinstance(got, TypeError) and
      "verifier errors" in str(want)),
     "jax's lax.reshape to another size fails late, in its MLIR verifier (ValueError); mjax "
     "checks the sizes first (TypeError, as jax's numpy.reshape under jit)"),
    (({"index.at"}, GRADS, lambda got, want: "scatter_apply" in str(want)
      and isinstance(want, NotImplementedError) and isinstance(got, ValueError)),
     "x.at[i].apply(f) under grad: jax's scatter_apply has no JVP (NotImplementedError); "
     "mjax's is a while loop, which forward mode differentiates and reverse mode refuses "
     "(ValueError, as for any while_loop)"),
    (({"lax.clamp"}, GRADS, lambda got, want: got is None and isinstance(want, TypeError)
      and "select cases must have the same shapes" in str(want)),
     "grad of lax.clamp with scalar bounds and an array operand: jax's derivative rule "
     "selects between the operand and a bound of another shape (TypeError), a jax bug"),
    (({"lax.clamp"}, ("vmap",), lambda got, want: got is None and isinstance(want, TypeError)
      and "clamp requires m" in str(want) and "operand.shape=()" in str(want)),
     "vmap of lax.clamp of a scalar operand with a batched bound and an unbatched one: "
     "jax's batching rule leaves the operand scalar (TypeError), a jax bug"),
    (({"lax.convert_element_type"}, ("vmap",), lambda got, want: ((
        got is None or isinstance(got, ValueError)) and isinstance(want, IndexError)
        and "tuple index out of range" in str(want)) or (got is None and isinstance(
            want, ValueError) and "Attempting to convert array of shape" in str(want))),
     "vmap of a widening lax.bitcast_convert_type: jax's batching rule leaves the batch "
     "axis where it is, so it indexes a minor dimension the operand lacks (IndexError) or "
     "consumes the batch axis as the minor one (ValueError), where the op is valid per "
     "example or its shape rule's ValueError is due, a jax bug"),
    (({"lax.select_n"}, GRADS, lambda got, want: got is None
      and isinstance(want, IndexError) and "tuple index out of range" in str(want)),
     "grad of lax.select_n with one case and a bool predicate: jax's transpose rule reads "
     "a second case (cases[1]: IndexError), a jax bug; mjax passes the cotangent through"),
    (({"lax.nextafter", "numpy.nextafter", "numpy.spacing"}, GRADS,
      lambda got, want: got is None and isinstance(want, NotImplementedError)),
     "mjax's nextafter is composed of bit operations, whose derivative is zero; jax's "
     "primitive has no differentiation rule (NotImplementedError)"),
]


def known(name, mode, got, want):
    for (names, modes, pred), reason in KNOWN:
        if name in names and (modes is None or mode in modes) and pred(got, want):
            return reason
    return None


class Mismatch(AssertionError):
    """mjax and jax disagree on a value, shape, dtype or weak type."""


class ErrorMismatch(AssertionError):
    """Exactly one of mjax and jax raised, or they raised different exception classes."""


def outcome(thunk):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return thunk(), None
    except Exception as e:  # noqa: BLE001 (the classes are compared)
        return None, e


def same_error_class(got, want):
    """jax's exception class is mjax's or one of its bases, by name: whatever a user
    catches for jax catches mjax's."""
    return type(want).__name__ in {c.__name__ for c in type(got).__mro__}


def is_float(dtype):
    return np.issubdtype(np.dtype(dtype), np.floating)


def compare_leaves(got, want, mode, factor):
    g_leaves = mjax.tree_util.tree_leaves(got)
    w_leaves = jax.tree_util.tree_leaves(want)
    g_tree, w_tree = mjax.tree_util.tree_structure(got), jax.tree_util.tree_structure(want)
    if str(g_tree) != str(w_tree):
        raise Mismatch(f"{mode}: result structure {g_tree} vs jax's {w_tree}")
    for k, (g, w) in enumerate(zip(g_leaves, w_leaves)):
        where = f"{mode}: result {k}"
        if isinstance(w, jax.Array) and not isinstance(g, mjax.Array):
            raise Mismatch(f"{where}: type {type(g).__name__} vs jax's {type(w).__name__}")
        if isinstance(w, np.ndarray) and isinstance(g, mjax.Array):
            # jax's vmap hands back an input that the function returns unchanged as it
            # came (a NumPy array, not canonicalized); mjax's result is an Array of it.
            w = jax.numpy.asarray(w)
        ga, wa = np.asarray(g), np.asarray(w)
        if ga.shape != wa.shape or ga.dtype != wa.dtype:
            raise Mismatch(f"{where}: {ga.dtype}{list(ga.shape)} vs jax's "
                           f"{wa.dtype}{list(wa.shape)}")
        if isinstance(w, jax.Array) and g.weak_type != w.weak_type:
            raise Mismatch(f"{where}: weak_type {g.weak_type} vs jax's {w.weak_type}")
        if wa.dtype in TOLERANCE:
            rtol, atol = TOLERANCE[wa.dtype]
            grads = 10 if "grad" in mode else 1
            try:
                np.testing.assert_allclose(ga.astype(np.complex128 if wa.dtype.kind == "c"
                                                     else np.float64),
                                           wa.astype(np.complex128 if wa.dtype.kind == "c"
                                                     else np.float64),
                                           rtol=rtol * factor * grads,
                                           atol=atol * factor * grads, equal_nan=True)
            except AssertionError as e:
                raise Mismatch(f"{where}: values differ{e}") from None
        elif not np.array_equal(ga, wa):
            raise Mismatch(f"{where}: values differ\n mjax: {ga!r}\n jax:  {wa!r}")


def vary(a):
    """Another batch member with a's shape and dtype: its values rolled, so they stay in
    the same domain (indices stay in range)."""
    flat = np.asarray(a).reshape(-1)
    return np.roll(flat, 1).reshape(np.shape(a)) if flat.size > 1 else np.asarray(a)


def _loss(L, f, weights):
    """sum(out * weights) over the real float leaves: nonuniform cotangents for grad."""
    def loss(*args):
        total = 0.0
        for leaf, w in zip(L.tree_util.tree_leaves(f(*args)), weights):
            if w is not None:
                total = total + L.numpy.sum(leaf * w)
        return total
    return loss


@dataclass
class Plan:
    argnums: tuple     # the real float arguments grad differentiates
    weights: list      # one per result leaf of jax's eager result (None: not a float)
    in_axes: tuple     # vmap's, one per argument
    batched: list      # vmap's arguments


def run(L, c, mode, plan, jitted=False):
    """Case c in `mode`; `jitted`: the whole transformed function under jit."""
    f = lambda *args: c.fn(L, *args)  # noqa: E731
    wrap = L.jit if jitted else (lambda g: g)
    if mode == "eager":
        return f(*c.args)
    if mode == "jit":
        return L.jit(f)(*c.args)
    if mode == "grad":
        return wrap(L.grad(_loss(L, f, plan.weights), argnums=plan.argnums))(*c.args)
    if mode == "vmap":
        return L.vmap(f, in_axes=plan.in_axes)(*plan.batched)
    if mode == "vmap_grad":
        g = L.grad(_loss(L, f, plan.weights), argnums=plan.argnums)
        return wrap(L.vmap(g, in_axes=plan.in_axes))(*plan.batched)
    raise ValueError(mode)


def _as_jitted_jax(got, c, mode, plan):
    """Whether mjax's gradient (whose values differ from jax's) is jax's when jax
    compiles the whole gradient, as mjax's does: jax's eager backward pass runs op by
    op, rounding every low-precision intermediate (xlog1py's derivative computes log1p(y)
    in y's bfloat16), where one compiled program (XLA) keeps some of them wider; both
    are jax's answers."""
    if mode not in GRADS:
        return False
    want, werr = outcome(lambda: run(jax, c, mode, plan, jitted=True))
    if werr is not None:
        return False
    try:
        compare_leaves(got, want, mode, c.rtol)
    except Mismatch:
        return False
    return True


def draw_plan(d, c, want_eager):
    argnums = tuple(i for i, a in enumerate(c.args)
                    if (isinstance(a, float) or
                        (isinstance(a, np.ndarray) and is_float(a.dtype))))
    weights = None
    if want_eager is not None:
        weights = []
        for leaf in jax.tree_util.tree_leaves(want_eager):
            leaf = np.asarray(leaf)
            weights.append(np.linspace(0.5, 1.5, leaf.size).reshape(leaf.shape)
                           .astype(leaf.dtype) if is_float(leaf.dtype) else None)
        if all(w is None for w in weights):
            weights = None
    in_axes, batched = [], []
    size = d.pick("vmap.size", [2, 1, 3])
    for k, a in enumerate(c.args):
        axis = None
        if isinstance(a, np.ndarray):
            axis = d.pick(f"vmap.in_axes[{k}]", [0, None] + list(range(1, a.ndim + 1)))
        in_axes.append(axis)
    if all(ax is None for ax in in_axes):
        arrays = [k for k, a in enumerate(c.args) if isinstance(a, np.ndarray)]
        if arrays:
            in_axes[arrays[0]] = 0
    for a, axis in zip(c.args, in_axes):
        if axis is None:
            batched.append(a)
        else:
            members = [a]
            for _ in range(size - 1):
                members.append(vary(members[-1]))
            batched.append(np.stack(members, axis=axis))
    if all(ax is None for ax in in_axes):
        in_axes = None
    return Plan(argnums, weights, tuple(in_axes) if in_axes else None, batched)


def describe(name, d, c):
    def show(a):
        if isinstance(a, np.ndarray):
            return f"np.array({np.array2string(a, separator=', ', threshold=60)}, " \
                   f"dtype='{a.dtype}')"
        return repr(a)
    args = "\n  ".join(show(a) for a in c.args)
    opts = ", ".join(f"{k}={v!r}" for k, v in d.drawn.items())
    return f"case {name}: {opts}\n  {args}"


def check(name, d, c):
    """Runs case c in every mode in mjax and jax and raises on the first difference."""
    want_eager, _ = outcome(lambda: run(jax, c, "eager", None))
    plan = draw_plan(d, c, want_eager)
    for mode in c.modes:
        if mode in ("grad", "vmap_grad") and (not plan.argnums or plan.weights is None):
            continue
        if mode in ("vmap", "vmap_grad") and plan.in_axes is None:
            continue
        got, gerr = outcome(lambda: run(mjax, c, mode, plan))
        want, werr = outcome(lambda: run(jax, c, mode, plan))
        if gerr is None and werr is None:
            try:
                compare_leaves(got, want, mode, c.rtol)
            except Mismatch as e:
                if not known(name, mode, e, None) and not (
                        "values differ" in str(e) and _as_jitted_jax(got, c, mode, plan)):
                    raise Mismatch(f"{e}\n{describe(name, d, c)}") from None
            continue
        if gerr is not None and werr is not None and same_error_class(gerr, werr):
            continue
        if known(name, mode, gerr, werr):
            continue
        raise ErrorMismatch(f"{mode}: mjax {_said(gerr)}; jax {_said(werr)}\n"
                            f"{describe(name, d, c)}")


def _said(err):
    return f"raised {type(err).__name__}: {str(err)[:300]}" if err else "returned"


def indices(d, name, side, shape=None):
    """Integer indices for an axis of this side: in range, negative, sometimes out of
    range."""
    dtype = d.dtype(f"{name}.dtype", [np.int32, np.int8, np.uint8, np.int64])
    shape = d.shape(f"{name}.shape", max_ndim=2) if shape is None else shape
    lo = -side - 2 if d.int(f"{name}.oob", 0, 4) == 4 else -side
    hi = side + 2 if lo < -side else max(side - 1, 0)
    rng = np.random.default_rng(d.int(f"{name}.seed", 0, 2**16))
    lo = max(lo, np.iinfo(dtype).min)
    return rng.integers(lo, hi, shape, endpoint=True).astype(dtype)


def same_size_shape(d, name, size):
    """A shape of this size (one time in ten any shape), maybe with a -1 side."""
    if d.int(f"{name}.wrong", 0, 9) == 9:
        return d.shape(name)
    ndim = d.int(f"{name}.ndim", 0 if size == 1 else 1, 4)
    sides = [1] * ndim
    if size == 0:
        sides[d.int(f"{name}.zero", 0, ndim - 1)] = 0
    else:
        f, n = 2, size
        while n > 1:
            while n % f:
                f += 1
            sides[d.int(f"{name}.factor{f}", 0, ndim - 1)] *= f
            n //= f
    if ndim and d.flag(f"{name}.infer"):
        sides[d.int(f"{name}.infer_at", 0, ndim - 1)] = -1
    d.drawn[name] = tuple(sides)
    return tuple(sides)
