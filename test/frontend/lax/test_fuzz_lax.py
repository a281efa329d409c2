"""Differential fuzz of `mjax.lax` against jax (fuzz_harness.py), with `vmap` of `grad`
through reduce_window and convolutions."""
import numpy as np
import pytest
from hypothesis import strategies as st

from fuzz_harness import (ALL, BOOL, FLOAT, MODES, NUMERIC, REAL, Case, fuzz, names,
                          registry, same_size_shape)


CASES, case = registry()


# ---- lax -------------------------------------------------------------------------------

LAX_UNARY = ("neg sign floor ceil round is_finite exp exp2 log log1p expm1 tanh logistic sin "
             "cos tan asin acos atan sinh cosh asinh acosh atanh lgamma digamma erf erfc "
             "erf_inv bessel_i0e bessel_i1e abs sqrt rsqrt cbrt bitwise_not population_count "
             "clz real imag conj square").split()
LAX_BINARY = ("add sub mul div rem max min pow atan2 nextafter bitwise_and bitwise_or "
              "bitwise_xor shift_left shift_right_logical shift_right_arithmetic eq ne lt le "
              "gt ge complex").split()


def _lax_unary(name):
    @case(f"lax.{name}")
    def gen(d):
        return Case(lambda L, x: getattr(L.lax, name)(x), [d.operand("x", scalar_odds=10)])


def _lax_binary(name):
    @case(f"lax.{name}")
    def gen(d):
        x = d.operand("x", scalar_odds=10)
        # lax wants equal dtypes and shapes: mostly give them, sometimes not
        same = d.int("y.same", 0, 4)
        y = d.operand("y", dtype=np.asarray(x).dtype.type if same else None,
                      shape=np.shape(x) if same else None, scalar_odds=10)
        return Case(lambda L, x, y: getattr(L.lax, name)(x, y), [x, y])


for _n in LAX_UNARY:
    _lax_unary(_n)
for _n in LAX_BINARY:
    _lax_binary(_n)


@case("lax.integer_pow")
def _integer_pow(d):
    y = d.int("y", -3, 4)
    return Case(lambda L, x: L.lax.integer_pow(x, y), [d.array("x", NUMERIC)])


@case("lax.convert_element_type")
def _convert(d):
    x = d.operand("x", scalar_odds=8)
    dtype = d.dtype("new_dtype", ALL)
    if d.flag("bitcast"):
        return Case(lambda L, x: L.lax.bitcast_convert_type(x, dtype), [x])
    return Case(lambda L, x: L.lax.convert_element_type(x, dtype), [x])


@case("lax.reduce_precision")
def _reduce_precision(d):
    e, m = d.int("exponent_bits", 1, 8), d.int("mantissa_bits", 0, 23)
    return Case(lambda L, x: L.lax.reduce_precision(x, e, m), [d.array("x", FLOAT, kind=3)])


@case("lax.round")
def _lax_round(d):
    method = d.pick("rounding_method", [0, 1])
    return Case(lambda L, x: L.lax.round(x, method), [d.array("x", FLOAT, kind=1)])


@case("lax.clamp")
def _clamp(d):
    x = d.array("x", REAL)
    shape = () if d.flag("scalar_bounds") else x.shape
    lo = d.array("min", dtype=x.dtype.type, shape=shape)
    hi = d.array("max", dtype=x.dtype.type, shape=shape)
    return Case(lambda L, lo, x, hi: L.lax.clamp(lo, x, hi), [lo, x, hi])


@case("lax.select_n")
def _select_n(d):
    n = d.int("cases", 1, 3)
    x = d.array("case0")
    cases = [x] + [d.array(f"case{k}", dtype=x.dtype.type, shape=x.shape)
                   for k in range(1, n)]
    which = (d.array("which", BOOL, shape=x.shape if d.flag("which.full") else ())
             if n <= 2 and d.flag("which.bool") else
             (d.array("which", [np.int32], shape=x.shape, kind=2) % n).astype(np.int32))
    return Case(lambda L, w, *cs: L.lax.select_n(w, *cs), [which] + cases)


@case("lax.cumulative")
def _lax_cumulative(d):
    name = d.pick("function", ["cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"])
    x = d.array("x", REAL, min_ndim=1)
    axis, reverse = d.int("axis", 0, x.ndim - 1), d.flag("reverse")
    return Case(lambda L, x: getattr(L.lax, name)(x, axis=axis, reverse=reverse), [x])


@case("lax.sort")
def _lax_sort(d):
    x = d.array("x", REAL, min_ndim=1)
    n = d.int("operands", 1, 3)
    ops = [x] + [d.array(f"operand{k}", shape=x.shape) for k in range(1, n)]
    dim, stable = d.int("dimension", -x.ndim, x.ndim - 1), d.flag("is_stable")
    num_keys = d.int("num_keys", 1, n)
    if n == 1:
        return Case(lambda L, x: L.lax.sort(x, dimension=dim, is_stable=stable), [x])
    return Case(lambda L, *ops: L.lax.sort(ops, dimension=dim, is_stable=stable,
                                           num_keys=num_keys), ops)


@case("lax.top_k")
def _top_k(d):
    x = d.array("x", REAL, min_ndim=1)
    k = d.int("k", 0, x.shape[-1] + 1)
    return Case(lambda L, x: L.lax.top_k(x, k), [x])


@case("lax.argmax")
def _lax_argmax(d):
    x = d.array("x", REAL, min_ndim=1)
    name = d.pick("function", ["argmax", "argmin"])
    axis = d.int("axis", 0, x.ndim - 1)
    dtype = d.pick("index_dtype", [np.int32, np.int16, np.uint8, np.int64])
    return Case(lambda L, x: getattr(L.lax, name)(x, axis, dtype), [x])


@case("lax.slice")
def _lax_slice(d):
    x = d.array("x", min_ndim=1)
    start = [d.int(f"start{k}", 0, s) for k, s in enumerate(x.shape)]
    limit = [d.int(f"limit{k}", b, s) for k, (b, s) in enumerate(zip(start, x.shape))]
    strides = [d.int(f"stride{k}", 1, 3) for k in range(x.ndim)] if d.flag("strided") \
        else None
    return Case(lambda L, x: L.lax.slice(x, start, limit, strides), [x])


@case("lax.dynamic_slice")
def _dynamic_slice(d):
    x = d.array("x", min_ndim=1)
    sizes = [d.int(f"size{k}", 0, s) for k, s in enumerate(x.shape)]
    starts = [np.int32(d.int(f"start{k}", -s - 2, s + 2)) for k, s in enumerate(x.shape)]
    if d.flag("update"):
        u = d.array("update", dtype=x.dtype.type, shape=sizes)
        return Case(lambda L, x, u, *s: L.lax.dynamic_update_slice(x, u, s), [x, u] + starts)
    return Case(lambda L, x, *s: L.lax.dynamic_slice(x, s, sizes), [x] + starts)


@case("lax.pad")
def _lax_pad(d):
    x = d.array("x")
    config = [(d.int(f"lo{k}", -2, 2), d.int(f"hi{k}", -2, 2), d.int(f"interior{k}", 0, 2))
              for k in range(x.ndim)]
    value = d.array("padding_value", dtype=x.dtype.type, shape=())
    return Case(lambda L, x, v: L.lax.pad(x, v, config), [x, value])


@case("lax.rev")
def _rev(d):
    x = d.array("x")
    dims = d(st.lists(st.integers(0, max(x.ndim - 1, 0)), unique=True, max_size=x.ndim),
             "dimensions")
    return Case(lambda L, x: L.lax.rev(x, dims), [x])


@case("lax.dot_general")
def _dot_general(d):
    b, m, k, n = (d.int(c, 0, 3) for c in "bmkn")
    batch = d.flag("batch")
    x = d.array("lhs", NUMERIC + BOOL, shape=((b,) if batch else ()) + (m, k))
    dtype = x.dtype.type if d.int("rhs.same", 0, 3) else None
    y = d.array("rhs", NUMERIC + BOOL, dtype=dtype, shape=((b,) if batch else ()) + (k, n))
    dims = (((x.ndim - 1,), (y.ndim - 2,)), ((0,), (0,)) if batch else ((), ()))
    pref = d.pick("preferred_element_type", [None, np.float32, np.int32])
    return Case(lambda L, x, y: L.lax.dot_general(x, y, dims, preferred_element_type=pref),
                [x, y])


@case("lax.broadcast_in_dim")
def _broadcast_in_dim(d):
    x = d.array("x")
    lead = d.int("lead", 0, 2)
    shape = tuple(d.int(f"lead{k}", 0, 3) for k in range(lead)) + tuple(
        d.int(f"side{k}", 1, 3) if s == 1 else s for k, s in enumerate(x.shape))
    dims = tuple(range(lead, lead + x.ndim))
    return Case(lambda L, x: L.lax.broadcast_in_dim(x, shape, dims), [x])


@case("lax.reshape")
def _lax_reshape(d):
    x = d.array("x")
    shape = tuple(abs(s) for s in same_size_shape(d, "new_sizes", x.size))
    dims = tuple(d(st.permutations(range(x.ndim)), "dimensions")) if d.flag("with_dims") \
        else None
    return Case(lambda L, x: L.lax.reshape(x, shape, dims), [x])


@case("lax.concatenate")
def _lax_concatenate(d):
    x = d.array("x", min_ndim=1)
    dim = d.int("dimension", 0, x.ndim - 1)
    shape = list(x.shape)
    shape[dim] = d.int("y.side", 0, 3)
    y = d.array("y", dtype=x.dtype.type if d.int("y.same", 0, 5) else None, shape=shape)
    return Case(lambda L, x, y: L.lax.concatenate([x, y], dim), [x, y])


@case("lax.iota")
def _iota(d):
    dtype, size = d.dtype("dtype", NUMERIC), d.int("size", 0, 5)
    return Case(lambda L: L.lax.iota(dtype, size), [])


PADDINGS = ["VALID", "SAME", "SAME_LOWER", "explicit"]


def _padding(d, name, ndim):
    kind = d.pick(name, PADDINGS)
    if kind != "explicit":
        return kind
    return tuple((d.int(f"{name}.lo{k}", -1, 2), d.int(f"{name}.hi{k}", -1, 2))
                 for k in range(ndim))


@case("lax.reduce_window")
def _reduce_window(d):
    x = d.array("x", REAL, min_ndim=1, max_ndim=3, min_side=1, max_side=5)
    op = d.pick("computation", ["add", "max", "min", "mul_generic"])
    window = tuple(d.int(f"window{k}", 1, 3) for k in range(x.ndim))
    strides = tuple(d.int(f"stride{k}", 1, 3) for k in range(x.ndim))
    base = tuple(d.int(f"base_dilation{k}", 1, 2) for k in range(x.ndim))
    wdil = tuple(d.int(f"window_dilation{k}", 1, 2) for k in range(x.ndim))
    padding = _padding(d, "padding", x.ndim)

    def f(L, x):
        if op == "add":
            init, fn = 0, L.lax.add
        elif op == "max":
            init, fn = -L.numpy.inf, L.lax.max
        elif op == "min":
            init, fn = L.numpy.inf, L.lax.min
        else:
            init, fn = 1, lambda a, b: a * b
        init = L.numpy.array(init, x.dtype) if L.numpy.issubdtype(x.dtype, L.numpy.floating) \
            else L.numpy.array(0 if op != "mul_generic" else 1, x.dtype)
        return L.lax.reduce_window(x, init, fn, window, strides, padding, base, wdil)
    return Case(f, [x], modes=MODES + ("vmap_grad",))


@case("lax.conv_general_dilated")
def _conv(d):
    nsp = d.int("spatial_dims", 1, 2)
    groups = d.pick("groups", ["none", "feature", "batch"])
    g = d.int("group_count", 1, 2) if groups != "none" else 1
    n, cin, cout = d.int("N", 1, 2) * (g if groups == "batch" else 1), d.int("C", 1, 2) * (
        g if groups == "feature" else 1), d.int("O", 1, 2) * g
    spatial = tuple(d.int(f"in{k}", 1, 5) for k in range(nsp))
    kernel = tuple(d.int(f"kernel{k}", 1, 3) for k in range(nsp))
    dtype = d.dtype("dtype", [np.float32, np.float16, np.float64, np.int32, np.complex64])
    lhs = d.array("lhs", dtype=dtype, shape=(n, cin) + spatial)
    rhs = d.array("rhs", dtype=dtype,
                  shape=(cout, cin // (g if groups == "feature" else 1)) + kernel)
    kw = dict(window_strides=tuple(d.int(f"stride{k}", 1, 3) for k in range(nsp)),
              padding=_padding(d, "padding", nsp),
              lhs_dilation=tuple(d.int(f"lhs_dilation{k}", 1, 2) for k in range(nsp)),
              rhs_dilation=tuple(d.int(f"rhs_dilation{k}", 1, 2) for k in range(nsp)),
              feature_group_count=g if groups == "feature" else 1,
              batch_group_count=g if groups == "batch" else 1)
    if any(k != 1 for k in kw["lhs_dilation"]) and isinstance(kw["padding"], str):
        kw["padding"] = ((0, 0),) * nsp  # jax: no string padding with lhs dilation
    if nsp == 2 and d.flag("nhwc"):
        kw["dimension_numbers"] = ("NHWC", "OIHW", "NHWC")
        lhs = np.moveaxis(lhs, 1, -1).copy()
    return Case(lambda L, x, w: L.lax.conv_general_dilated(x, w, **kw), [lhs, rhs],
                modes=MODES + ("vmap_grad",))


@pytest.mark.parametrize("name", names(CASES))
def test_matches_jax(name):
    fuzz(CASES, name)
