"""Differential fuzz of `mjax.numpy` against jax (fuzz_harness.py): elementwise functions,
reductions, shapes, products and creation."""
import numpy as np
import pytest
from hypothesis import strategies as st

from fuzz_harness import (ALL, BOOL, NUMERIC, REAL, Case, fuzz, names, registry,
                          same_size_shape)


CASES, case = registry()


# ---- the cases: numpy elementwise ------------------------------------------------------

UNARY = ("abs negative positive sign floor ceil trunc rint sqrt cbrt square exp exp2 expm1 "
         "log log2 log10 log1p sin cos tan arcsin arccos arctan sinh cosh tanh arcsinh arccosh "
         "arctanh deg2rad rad2deg reciprocal logical_not invert isnan isinf isfinite signbit "
         "real imag conj angle fabs sinc i0 bitwise_count iscomplex isreal isneginf isposinf "
         "nan_to_num spacing frexp modf").split()


BINARY = ("add subtract multiply divide true_divide floor_divide remainder fmod power "
          "float_power maximum minimum fmax fmin arctan2 hypot copysign nextafter logaddexp "
          "logaddexp2 bitwise_and bitwise_or bitwise_xor left_shift right_shift equal "
          "not_equal less greater less_equal greater_equal logical_and logical_or "
          "logical_xor heaviside ldexp gcd lcm divmod").split()


def _numpy_unary(name):
    @case(f"numpy.{name}")
    def gen(d):
        return Case(lambda L, x: getattr(L.numpy, name)(x), [d.operand("x", scalar_odds=8)])


def _numpy_binary(name):
    @case(f"numpy.{name}")
    def gen(d):
        x = d.operand("x")
        y = d.operand("y", shape=d.broadcast_shape("y.shape", np.shape(x)))
        if name in ("gcd", "lcm"):
            x, y = _without_int_min(x), _without_int_min(y)
        return Case(lambda L, x, y: getattr(L.numpy, name)(x, y), [x, y])


def _without_int_min(a):
    """a without its signed dtype's minimum (nor, for int64, values that wrap to int32's:
    x64 is off): jax's gcd never returns there (abs(INT_MIN) is INT_MIN, and its Euclid
    loop never reaches 0: gcd(5, INT_MIN) runs forever, eagerly and under jit), a jax bug
    the harness cannot time out (the loop is compiled code); mjax returns."""
    if not isinstance(a, np.ndarray) or a.dtype.kind != "i":
        return a
    narrow = a.astype(np.int32) if a.dtype == np.int64 else a
    return np.where(narrow == np.iinfo(narrow.dtype).min, a + 1, a).astype(a.dtype)


for _n in UNARY:
    _numpy_unary(_n)
for _n in BINARY:
    _numpy_binary(_n)


@case("numpy.round")
def _round(d):
    decimals = d.int("decimals", -2, 3)
    return Case(lambda L, x: L.numpy.round(x, decimals), [d.operand("x", scalar_odds=8)])


@case("numpy.clip")
def _clip(d):
    x = d.array("x", REAL)
    bounds = [d.pick("min.kind", ["scalar", "none", "array"]),
              d.pick("max.kind", ["scalar", "none", "array"])]
    lo, hi = [None if k == "none" else
              d.scalar(n, ("int", "float")) if k == "scalar" else
              d.array(n, REAL, shape=d.broadcast_shape(f"{n}.shape", x.shape))
              for n, k in zip(("min", "max"), bounds)]
    return Case(lambda L, x: L.numpy.clip(x, lo, hi), [x])


@case("numpy.isclose")
def _isclose(d):
    x = d.operand("x", NUMERIC, kind=3)
    y = d.operand("y", NUMERIC, shape=d.broadcast_shape("y.shape", np.shape(x)), kind=3)
    rtol, atol = d.pick("rtol", [1e-5, 0.0, 0.5]), d.pick("atol", [1e-8, 0.0, 1.0])
    equal_nan = d.flag("equal_nan")
    return Case(lambda L, x, y: L.numpy.isclose(x, y, rtol=rtol, atol=atol,
                                                equal_nan=equal_nan), [x, y])


@case("numpy.where")
def _where(d):
    c = d.array("condition", BOOL + [np.int32, np.float32])
    x = d.operand("x", shape=d.broadcast_shape("x.shape", c.shape))
    y = d.operand("y", shape=d.broadcast_shape("y.shape", c.shape))
    return Case(lambda L, c, x, y: L.numpy.where(c, x, y), [c, x, y])


@case("numpy.astype")
def _astype(d):
    x = d.array("x", ALL)
    dtype = d.dtype("dtype", ALL)
    if d.flag("method"):
        return Case(lambda L, x: L.numpy.asarray(x).astype(dtype), [x])
    return Case(lambda L, x: L.numpy.astype(x, dtype), [x])


# ---- reductions ------------------------------------------------------------------------


def _reduction(name, pool=ALL, tuples=True, keepdims=True, dtype=False, initial=False,
               where=False, ddof=False, none=True):
    @case(f"numpy.{name}")
    def gen(d):
        x = d.array("x", pool)
        kw = {"axis": d.axis("axis", x.ndim, tuples=tuples, none=none)}
        if keepdims and d.flag("keepdims"):
            kw["keepdims"] = True
        if dtype and d.flag("with_dtype"):
            kw["dtype"] = d.dtype("dtype", ALL)
        if initial and d.flag("with_initial"):
            kw["initial"] = d.scalar("initial", ("int", "float"))
        if where and d.flag("with_where"):
            kw["where"] = d.array("where", BOOL, shape=d.broadcast_shape("where.shape",
                                                                         x.shape))
        if ddof:
            kw["ddof"] = d.int("ddof", 0, 2)
        return Case(lambda L, x: getattr(L.numpy, name)(x, **kw), [x])


for _n in ("sum", "prod"):
    _reduction(_n, dtype=True, initial=True, where=True)
for _n in ("max", "min"):
    _reduction(_n, initial=True, where=True)
_reduction("mean", dtype=True, where=True)
_reduction("var", dtype=True, where=True, ddof=True)
_reduction("std", ddof=True)
for _n in ("all", "any"):
    _reduction(_n, where=True)
for _n in ("argmax", "argmin"):
    _reduction(_n, tuples=False)
for _n in ("nansum", "nanmax", "nanmin", "nanmean", "ptp", "median", "count_nonzero"):
    _reduction(_n, REAL)
_reduction("nanvar", REAL, ddof=True)
for _n in ("cumsum", "cumprod", "nancumsum"):
    _reduction(_n, tuples=False, keepdims=False, dtype=True)


@case("numpy.average")
def _average(d):
    x = d.array("x", NUMERIC)
    axis = d.axis("axis", x.ndim, oob=False)
    weights = None
    if d.flag("with_weights") and axis is not None:
        weights = d.array("weights", REAL, shape=(x.shape[axis],), kind=2)
    returned = d.flag("returned")
    return Case(lambda L, x: L.numpy.average(x, axis, weights, returned), [x])


@case("nn.logsumexp")
def _logsumexp(d):
    x = d.array("x", REAL, kind=d.int("x.kind", 0, 3))
    axis, keepdims = d.axis("axis", x.ndim, tuples=True), d.flag("keepdims")
    return Case(lambda L, x: L.nn.logsumexp(x, axis=axis, keepdims=keepdims), [x])


# ---- shapes ----------------------------------------------------------------------------


@case("numpy.reshape")
def _reshape(d):
    x = d.array("x")
    shape = same_size_shape(d, "shape", x.size)
    order = d.pick("order", ["C", "F"])
    return Case(lambda L, x: L.numpy.reshape(x, shape, order=order), [x])


@case("numpy.transpose")
def _transpose(d):
    x = d.array("x", max_ndim=4)
    kind = d.pick("axes.kind", ["permutation", "none", "negative", "wrong"])
    axes = None
    if kind in ("permutation", "negative"):
        axes = d(st.permutations(range(x.ndim)), "axes")
        if kind == "negative":
            axes = [a - x.ndim for a in axes]
    elif kind == "wrong":
        axes = d(st.lists(st.integers(-3, 3), max_size=4), "axes")
    return Case(lambda L, x: L.numpy.transpose(x, axes), [x])


@case("numpy.swapaxes")
def _swapaxes(d):
    x = d.array("x")
    a, b = d.axis("axis1", x.ndim, none=False), d.axis("axis2", x.ndim, none=False)
    return Case(lambda L, x: L.numpy.swapaxes(x, a, b), [x])


@case("numpy.moveaxis")
def _moveaxis(d):
    x = d.array("x")
    src, dst = d.axis("source", x.ndim, none=False), d.axis("destination", x.ndim, none=False)
    return Case(lambda L, x: L.numpy.moveaxis(x, src, dst), [x])


@case("numpy.expand_dims")
def _expand_dims(d):
    x = d.array("x")
    axis = d.axis("axis", x.ndim + 1, none=False, tuples=True)
    return Case(lambda L, x: L.numpy.expand_dims(x, axis), [x])


@case("numpy.squeeze")
def _squeeze(d):
    x = d.array("x", min_side=1, max_side=2)
    axis = d.axis("axis", x.ndim, tuples=True)
    return Case(lambda L, x: L.numpy.squeeze(x, axis), [x])


@case("numpy.flip")
def _flip(d):
    x = d.array("x")
    axis = d.axis("axis", x.ndim, tuples=True)
    return Case(lambda L, x: L.numpy.flip(x, axis), [x])


@case("numpy.roll")
def _roll(d):
    x = d.array("x")
    axis = d.axis("axis", x.ndim, tuples=True)
    n = len(axis) if isinstance(axis, tuple) else 0
    shift = tuple(d(st.lists(st.integers(-5, 5), min_size=n, max_size=n), "shift")) if n \
        else d.int("shift", -5, 5)
    return Case(lambda L, x: L.numpy.roll(x, shift, axis), [x])


@case("numpy.tile")
def _tile(d):
    x = d.array("x")
    reps = d.pick("reps.kind", ["int", "tuple"])
    reps = d.int("reps", 0, 3) if reps == "int" else tuple(
        d(st.lists(st.integers(0, 3), max_size=4), "reps"))
    return Case(lambda L, x: L.numpy.tile(x, reps), [x])


@case("numpy.repeat")
def _repeat(d):
    x = d.array("x")
    axis = d.axis("axis", x.ndim)
    length = x.size if axis is None else x.shape[axis] if -x.ndim <= axis < x.ndim else 1
    if d.flag("repeats_array"):
        repeats = d.array("repeats", [np.int32], shape=(length,), kind=0) % 3
    else:
        repeats = d.int("repeats", 0, 3)
    total = d.pick("total_repeat_length", [None, 0, 3, 7])
    return Case(lambda L, x: L.numpy.repeat(x, repeats, axis, total_repeat_length=total),
                [x])


@case("numpy.concatenate")
def _concatenate(d):
    x = d.array("x", min_ndim=1)
    axis = d.axis("axis", x.ndim)
    shape = list(x.shape)
    if axis is not None and -x.ndim <= axis < x.ndim:
        shape[axis] = d.int("y.side", 0, 3)
    y = d.array("y", shape=shape)
    return Case(lambda L, x, y: L.numpy.concatenate([x, y], axis=axis), [x, y])


@case("numpy.stack")
def _stack(d):
    x = d.array("x")
    y = d.array("y", shape=x.shape if d.int("y.same", 0, 9) else x.shape + (1,))
    name = d.pick("function", ["stack", "hstack", "vstack", "dstack", "column_stack"])
    axis = d.axis("axis", x.ndim + 1, none=False)
    if name == "stack":
        return Case(lambda L, x, y: L.numpy.stack([x, y], axis=axis), [x, y])
    return Case(lambda L, x, y: getattr(L.numpy, name)([x, y]), [x, y])


@case("numpy.split")
def _split(d):
    x = d.array("x", min_ndim=1)
    axis = d.axis("axis", x.ndim, none=False)
    name = d.pick("function", ["split", "array_split"])
    if d.flag("sections"):
        parts = d.int("indices_or_sections", 1, 4)
    else:
        parts = d(st.lists(st.integers(-2, 5), max_size=3), "indices_or_sections")
    return Case(lambda L, x: getattr(L.numpy, name)(x, parts, axis=axis), [x])


@case("numpy.broadcast_to")
def _broadcast_to(d):
    x = d.array("x")
    lead = d(st.lists(st.integers(0, 3), max_size=2), "lead")
    shape = tuple(lead) + tuple(d.int(f"side{k}", 1, 3) if s == 1 else s
                                for k, s in enumerate(x.shape))
    if d.int("wrong", 0, 9) == 9:
        shape = d.shape("shape")
    return Case(lambda L, x: L.numpy.broadcast_to(x, shape), [x])


@case("numpy.ravel")
def _ravel(d):
    order = d.pick("order", ["C", "F"])
    return Case(lambda L, x: L.numpy.ravel(x, order=order), [d.array("x")])


@case("numpy.pad")
def _pad(d):
    x = d.array("x")
    mode = d.pick("mode", ["constant", "edge", "reflect", "symmetric", "wrap",
                           "linear_ramp", "maximum", "minimum", "mean", "median", "empty"])
    width = d.pick("pad_width.kind", ["int", "pair", "per_axis"])
    if width == "int":
        pad_width = d.int("pad_width", 0, 3)
    elif width == "pair":
        pad_width = (d.int("before", 0, 3), d.int("after", 0, 3))
    else:
        pad_width = tuple((d.int(f"before{k}", 0, 3), d.int(f"after{k}", 0, 3))
                          for k in range(x.ndim))
    kw = {}
    if mode == "constant" and d.flag("with_constant"):
        kw["constant_values"] = d.scalar("constant_values", ("int", "float"))
    if mode in ("reflect", "symmetric") and d.flag("odd"):
        kw["reflect_type"] = "odd"
    if mode in ("maximum", "minimum", "mean", "median") and d.flag("with_stat_length"):
        kw["stat_length"] = d.int("stat_length", 1, 3)
    if mode == "linear_ramp" and d.flag("with_end_values"):
        kw["end_values"] = d.scalar("end_values", ("int", "float"))
    return Case(lambda L, x: L.numpy.pad(x, pad_width, mode, **kw), [x])


@case("numpy.diagonal")
def _diagonal(d):
    x = d.array("x", min_ndim=1)
    name = d.pick("function", ["diagonal", "trace", "diag", "tril", "triu"])
    k = d.int("offset", -3, 3)
    if name in ("diagonal", "trace"):
        a1, a2 = d.axis("axis1", x.ndim, none=False), d.axis("axis2", x.ndim, none=False)
        return Case(lambda L, x: getattr(L.numpy, name)(x, k, a1, a2), [x])
    return Case(lambda L, x: getattr(L.numpy, name)(x, k), [x])


@case("numpy.diff")
def _diff(d):
    x = d.array("x")
    n, axis = d.int("n", 0, 3), d.axis("axis", x.ndim, none=False)
    return Case(lambda L, x: L.numpy.diff(x, n, axis), [x])


EINSUM = ["ij->", "ij->ji", "ij,jk->ik", "i,i->", "ii->i", "ij->i", "...i,...i->...",
          "bij,bjk->bik", "i,j->ij", "ijk->kji", "ij,ij->ij", "i->"]


@case("numpy.einsum")
def _einsum(d):
    spec = d.pick("subscripts", EINSUM)
    sizes = {c: d.int(f"size.{c}", 0, 3) for c in "ijkb"}
    dots = d.shape("...", max_ndim=2)
    ins = spec.split("->")[0].split(",")
    dtype = d.dtype("dtype", NUMERIC + BOOL)
    ops = [d.array(f"operand{k}", dtype=dtype,
                   shape=(dots if s.startswith("...") else ()) +
                   tuple(sizes[c] for c in s.replace("...", "")))
           for k, s in enumerate(ins)]
    return Case(lambda L, *ops: L.numpy.einsum(spec, *ops), ops)


@case("numpy.matmul")
def _matmul(d):
    name = d.pick("function", ["matmul", "dot", "vdot", "inner", "outer", "tensordot",
                               "kron", "cross"])
    x = d.array("x", NUMERIC + BOOL, max_ndim=3)
    if name in ("matmul", "dot", "inner", "tensordot") and x.ndim:
        n = x.shape[-1] if name != "tensordot" else None
        shape = d.shape("y.shape", min_ndim=1, max_ndim=3)
        if n is not None:
            k = -1 if name == "inner" else 0 if shape and len(shape) == 1 else -2
            shape = list(shape)
            shape[k] = n if d.int("y.fits", 0, 9) else n + 1
            shape = tuple(shape)
    elif name == "vdot":
        shape = x.shape
    elif name == "cross":
        shape = x.shape[:-1] + (3,) if x.ndim else ()
        x = d.array("x3", NUMERIC, shape=x.shape[:-1] + (3,)) if x.ndim else x
    else:
        shape = d.shape("y.shape")
    y = d.array("y", NUMERIC + BOOL, shape=shape)
    if name == "tensordot":
        axes = d.int("axes", 0, 2)
        return Case(lambda L, x, y: L.numpy.tensordot(x, y, axes), [x, y])
    return Case(lambda L, x, y: getattr(L.numpy, name)(x, y), [x, y])


@case("numpy.convolve")
def _convolve(d):
    name = d.pick("function", ["convolve", "correlate"])
    a = d.array("a", NUMERIC, shape=(d.int("a.size", 0, 6),))
    v = d.array("v", NUMERIC, shape=(d.int("v.size", 0, 4),))
    mode = d.pick("mode", ["full", "same", "valid"])
    return Case(lambda L, a, v: getattr(L.numpy, name)(a, v, mode=mode), [a, v])


# ---- creation --------------------------------------------------------------------------


@case("numpy.linspace")
def _linspace(d):
    start, stop = d.operand("start", REAL, shape=()), d.operand("stop", REAL, shape=())
    num = d.int("num", 0, 7)
    endpoint, retstep = d.flag("endpoint"), d.flag("retstep")
    dtype = d.pick("dtype", [None, np.int32, np.float32, np.uint8, np.int16, np.float16])
    name = d.pick("function", ["linspace", "logspace", "geomspace"])
    if name != "linspace":
        return Case(lambda L, a, b: getattr(L.numpy, name)(a, b, num, endpoint, dtype=dtype),
                    [start, stop])
    return Case(lambda L, a, b: L.numpy.linspace(a, b, num, endpoint, retstep, dtype),
                [start, stop])


@case("numpy.arange")
def _arange(d):
    start = d.pick("start", [0, 3, -2, 1.5, -0.5, 7])
    stop = d.pick("stop", [None, 5, -3, 2.5, 10])
    step = d.pick("step", [None, 1, 2, -1, 0.5, -1.5])
    dtype = d.pick("dtype", [None, np.int32, np.float32, np.uint8, np.float16])
    if dtype is np.uint8 and any(isinstance(v, float) and v < 0 for v in (start, step)):
        # A negative float start or step cast to uint8 is out of its range: jax's jit
        # casts these constants with NumPy (-1.5 -> 255), its eager (and mjax) as XLA
        # does (saturating: 0); as for numpy.full, the cases keep inside the range.
        dtype = np.int32
    return Case(lambda L: L.numpy.arange(start, stop, step, dtype), [])


@case("numpy.full")
def _full(d):
    shape = d.shape("shape")
    name = d.pick("function", ["full", "zeros", "ones", "empty", "full_like", "eye"])
    dtype = d.pick("dtype", [None] + ALL)
    fill = d.operand("fill_value", kind=3)
    if dtype is not None and np.dtype(dtype).kind in "iub" and isinstance(fill, np.ndarray) \
            and fill.dtype.kind in "fc":
        # A float constant out of an integer dtype's range (or NaN) casts as XLA does in
        # mjax (saturating); jax casts its constants with NumPy, whose result is undefined
        # there (and differs between jax's own eager and jit).
        # (Half the range of the dtype's 32-bit version: x64 is off, and a float32 of it
        # rounds inside.)
        kind = np.dtype(dtype).kind
        info = np.iinfo(f"{kind}{min(np.dtype(dtype).itemsize, 4)}") if kind != "b" else None
        fill = np.nan_to_num(fill.real.astype(np.float32), posinf=0, neginf=0)
        fill = np.clip(fill, info.min // 2, info.max // 2) if info else fill
    if name == "full":
        return Case(lambda L, v: L.numpy.full(shape, v, dtype), [fill])
    if name == "full_like":
        return Case(lambda L, x, v: L.numpy.full_like(x, v, dtype), [d.array("x"), fill])
    if name == "eye":
        n, m, k = d.int("N", 0, 4), d.pick("M", [None, 0, 2, 5]), d.int("k", -3, 3)
        return Case(lambda L: L.numpy.eye(n, m, k, dtype), [])
    if name == "empty":  # its values are unspecified
        return Case(lambda L: L.numpy.zeros_like(L.numpy.empty(shape, dtype)), [])
    return Case(lambda L: getattr(L.numpy, name)(shape, dtype), [])


@pytest.mark.parametrize("name", names(CASES))
def test_matches_jax(name):
    fuzz(CASES, name)
