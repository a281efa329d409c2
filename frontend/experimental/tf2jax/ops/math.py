"""Elementwise arithmetic, comparisons, logic, casts, reductions, matmuls and einsum."""
from __future__ import annotations

import numpy as np

import mjax.lax as lax
import mjax.nn as nn
import mjax.numpy as jnp
import mjax.ops
from mjax.experimental.tf2jax.ops.registry import (cast, is_numpy, register, static,
                                                   static_ints, xp)


def _mjax(x):
    return jnp.asarray(x)


def _unary(name, np_fn, mjax_fn):
    """Registers op `name`: NumPy on constants, `mjax_fn` on anything else."""
    def rule(ctx, node, x):
        if is_numpy(x) and np_fn is not None:
            out, dt = np.asarray(np_fn(x)), np.asarray(x).dtype
            # NumPy may widen (float16 -> float32 in some ufuncs); TF keeps the dtype.
            same_kind = out.dtype.kind == dt.kind and dt.kind in "fc"
            return out.astype(dt) if same_kind else out
        return mjax_fn(_mjax(x))
    register(name)(rule)


def _lax(name):
    def f(x):
        return getattr(lax, name)(x)
    return f


def _jnp(name):
    def f(x):
        return getattr(jnp, name)(x)
    return f


def _nn(name):
    def f(x):
        return getattr(nn, name)(x)
    return f


for _tf, _np in {"Neg": "negative", "Abs": "abs", "Sign": "sign", "Square": "square",
                 "Sqrt": "sqrt", "Exp": "exp", "Expm1": "expm1", "Log": "log",
                 "Log1p": "log1p", "Sin": "sin", "Cos": "cos", "Tan": "tan",
                 "Asin": "arcsin", "Acos": "arccos", "Atan": "arctan", "Sinh": "sinh",
                 "Cosh": "cosh", "Tanh": "tanh", "Asinh": "arcsinh", "Acosh": "arccosh",
                 "Atanh": "arctanh", "Floor": "floor", "Ceil": "ceil", "Rint": "rint",
                 "Round": "round", "Reciprocal": "reciprocal", "Inv": "reciprocal",
                 "LogicalNot": "logical_not", "Invert": "invert", "Conj": "conj",
                 "Real": "real", "Imag": "imag"}.items():
    _unary(_tf, getattr(np, _np), _jnp(_np))

_unary("Rsqrt", lambda x: 1 / np.sqrt(x), _lax("rsqrt"))
# Special functions of constants are computed by mjax too (no static use needs them).
_unary("Erf", None, _lax("erf"))
_unary("Erfc", None, _lax("erfc"))
_unary("Lgamma", None, _lax("lgamma"))
_unary("Digamma", None, _lax("digamma"))
_unary("Erfinv", None, _lax("erf_inv"))
_unary("Ndtri", None, lambda p: np.sqrt(2.0).astype(p.dtype) * _lax("erf_inv")(2 * p - 1))
_unary("Sigmoid", lambda x: 1 / (1 + np.exp(-x)), _nn("sigmoid"))


def _bool_unary(name, np_fn, mjax_name):
    """IsNan & co. give bools (the generic unary rule keeps the input's dtype)."""
    def rule(ctx, node, x):
        return np_fn(x) if is_numpy(x) else _jnp(mjax_name)(x)
    register(name)(rule)


_bool_unary("IsNan", np.isnan, "isnan")
_bool_unary("IsInf", np.isinf, "isinf")
_bool_unary("IsFinite", np.isfinite, "isfinite")


# ---- binary ---------------------------------------------------------------------------------
def _binary(name, fn):
    """Registers op `name` as `fn(m, x, y)`, `m` NumPy (constants) or mjax.numpy."""
    def rule(ctx, node, x, y):
        return fn(xp(x, y), x, y)
    register(name)(rule)


def _same(m, out, x):
    """`out` in x's dtype when NumPy computed it (it may widen: float16 / float16 in
    some ufuncs, true_divide of ints); TF keeps its operands' dtype."""
    return out.astype(np.asarray(x).dtype) if m is np else out


def _is_int(x):
    return np.issubdtype(np.dtype(x.dtype), np.integer)


def _trunc_div(m, x, y):
    if _is_int(x):
        q = m.floor_divide(x, y)
        fix = m.logical_and(m.not_equal(m.remainder(x, y), 0),
                            m.not_equal(m.sign(x), m.sign(y)))
        return _same(m, m.where(fix, q + 1, q), x)
    return m.true_divide(x, y)


def _div_no_nan(m, x, y):
    safe = m.where(y == 0, m.ones_like(y), y)
    return m.where(y == 0, m.zeros_like(x), _same(m, m.true_divide(x, safe), x))


_binary("Add", lambda m, x, y: m.add(x, y))
_binary("AddV2", lambda m, x, y: m.add(x, y))
_binary("Sub", lambda m, x, y: m.subtract(x, y))
_binary("Mul", lambda m, x, y: m.multiply(x, y))
_binary("MulNoNan", lambda m, x, y: m.where(y == 0, m.zeros_like(x * y), x * y))
_binary("RealDiv", lambda m, x, y: _same(m, m.true_divide(x, y), x))
_binary("Div", _trunc_div)
_binary("TruncateDiv", _trunc_div)
_binary("DivNoNan", _div_no_nan)
_binary("FloorDiv", lambda m, x, y: _same(m, m.floor_divide(x, y), x))
_binary("FloorMod", lambda m, x, y: _same(m, m.remainder(x, y), x))
_binary("Mod", lambda m, x, y: _same(m, m.fmod(x, y), x))
_binary("TruncateMod", lambda m, x, y: _same(m, m.fmod(x, y), x))
_binary("Maximum", lambda m, x, y: m.maximum(x, y))
_binary("Minimum", lambda m, x, y: m.minimum(x, y))
_binary("Pow", lambda m, x, y: _same(m, m.power(x, y), x))
_binary("SquaredDifference", lambda m, x, y: m.square(m.subtract(x, y)))
_binary("Atan2", lambda m, x, y: m.arctan2(x, y))
_binary("Xlogy", lambda m, x, y: m.where(x == 0, m.zeros_like(x), x * m.log(y)))
_binary("Xdivy", lambda m, x, y: m.where(x == 0, m.zeros_like(x), x / y))
_binary("BitwiseAnd", lambda m, x, y: m.bitwise_and(x, y))
_binary("BitwiseOr", lambda m, x, y: m.bitwise_or(x, y))
_binary("BitwiseXor", lambda m, x, y: m.bitwise_xor(x, y))
_binary("LeftShift", lambda m, x, y: m.left_shift(x, y))
_binary("RightShift", lambda m, x, y: m.right_shift(x, y))
_binary("Less", lambda m, x, y: m.less(x, y))
_binary("LessEqual", lambda m, x, y: m.less_equal(x, y))
_binary("Greater", lambda m, x, y: m.greater(x, y))
_binary("GreaterEqual", lambda m, x, y: m.greater_equal(x, y))
_binary("Equal", lambda m, x, y: m.equal(x, y))
_binary("NotEqual", lambda m, x, y: m.not_equal(x, y))
_binary("LogicalAnd", lambda m, x, y: m.logical_and(x, y))
_binary("LogicalOr", lambda m, x, y: m.logical_or(x, y))


@register("AddN")
def _add_n(ctx, node, *xs):
    out = xs[0]
    for x in xs[1:]:
        out = xp(out, x).add(out, x)
    return out


@register("Cast")
def _cast(ctx, node, x):
    return cast(x, node.attrs["DstT"])


@register("ClipByValue")
def _clip(ctx, node, x, lo, hi):
    m = xp(x, lo, hi)
    return m.minimum(m.maximum(x, lo), hi)


@register("Select")
def _select(ctx, node, c, x, y):
    m = xp(c, x, y)
    if np.ndim(c) == 1 and np.ndim(x) > 1:    # TF1 Select: a condition per row
        c = m.reshape(c, (-1,) + (1,) * (np.ndim(x) - 1))
    return m.where(c, x, y)


@register("SelectV2")
def _select_v2(ctx, node, c, x, y):
    return xp(c, x, y).where(c, x, y)


# ---- reductions -----------------------------------------------------------------------------
def _axes(x, axes):
    r = max(np.ndim(x), 1)
    return tuple(sorted({int(a) % r for a in static_ints(axes, "the reduction axes")}))


def _reduction(name, np_name):
    def rule(ctx, node, x, axes):
        m = xp(x)
        ax = _axes(x, axes)
        keep = bool(node.attrs.get("keep_dims", False))
        out = getattr(m, np_name)(x, axis=ax, keepdims=keep)
        if name == "Mean" and _is_int(x):         # TF's integer mean truncates
            n = int(np.prod([np.shape(x)[a] for a in ax]))
            out = _trunc_div(m, getattr(m, "sum")(x, axis=ax, keepdims=keep),
                             m.asarray(n, dtype=x.dtype))
        if name in ("Sum", "Prod", "Mean"):
            out = cast(out, np.dtype(x.dtype))
        return out
    register(name)(rule)


for _tf, _np in {"Sum": "sum", "Mean": "mean", "Max": "max", "Min": "min",
                 "Prod": "prod", "All": "all", "Any": "any"}.items():
    _reduction(_tf, _np)


def _arg_reduction(name, np_name):
    def rule(ctx, node, x, axis):
        (a,) = static_ints(axis, "the axis")
        return cast(getattr(xp(x), np_name)(x, axis=a), node.attrs.get("output_type",
                                                                       np.int64))
    register(name)(rule)


_arg_reduction("ArgMax", "argmax")
_arg_reduction("ArgMin", "argmin")


def _cumulative(name, np_name):
    def rule(ctx, node, x, axis):
        m = xp(x)
        (a,) = static_ints(axis, "the axis")
        a %= np.ndim(x)
        if node.attrs.get("reverse"):
            x = m.flip(x, a)
        out = getattr(m, np_name)(x, axis=a)
        if node.attrs.get("exclusive"):
            init = 0 if np_name == "cumsum" else 1
            pad = [(0, 0)] * np.ndim(x)
            pad[a] = (1, 0)
            sl = [slice(None)] * np.ndim(x)
            sl[a] = slice(0, np.shape(x)[a])
            out = m.pad(out, pad, constant_values=init)[tuple(sl)]
        if node.attrs.get("reverse"):
            out = m.flip(out, a)
        return cast(out, np.dtype(x.dtype))
    register(name)(rule)


_cumulative("Cumsum", "cumsum")
_cumulative("Cumprod", "cumprod")


@register("CumulativeLogsumexp")
def _cumulative_logsumexp(ctx, node, x, axis):
    (a,) = static_ints(axis, "the axis")
    x = jnp.asarray(x)
    a %= x.ndim
    rev = bool(node.attrs.get("reverse"))
    out = lax.cumlogsumexp(x, axis=a, reverse=rev)
    if node.attrs.get("exclusive"):        # shift by one, -inf first (log of 0)
        pad = [(0, 0)] * x.ndim
        pad[a] = (0, 1) if rev else (1, 0)
        sl = [slice(None)] * x.ndim
        sl[a] = slice(1, None) if rev else slice(0, x.shape[a])
        out = jnp.pad(out, pad, constant_values=-np.inf)[tuple(sl)]
    return out


@register("Complex")
def _complex(ctx, node, re, im):
    m = xp(re, im)
    return cast(m.add(re, m.multiply(im, 1j)), node.attrs.get("Tout", np.complex64))


@register("ComplexAbs")
def _complex_abs(ctx, node, z):
    return xp(z).abs(z)


@register("Angle")
def _angle(ctx, node, z):
    return xp(z).angle(z)


@register("InTopKV2")
def _in_top_k(ctx, node, predictions, targets, k):
    """True where the target's score has fewer than k strictly larger scores (ties at
    the boundary count as in, as TF says); non-finite target scores are out."""
    p = jnp.asarray(predictions)
    t = jnp.take_along_axis(p, jnp.asarray(targets).astype(np.int32)[:, None], axis=1)
    above = jnp.sum(p > t, axis=1)
    return jnp.logical_and(above < jnp.asarray(k), jnp.isfinite(t[:, 0]))


# ---- products -------------------------------------------------------------------------------
def _adjoint(m, x):
    x = m.swapaxes(x, -1, -2)
    return m.conj(x) if np.iscomplexobj(np.zeros((), np.dtype(x.dtype))) else x


@register("MatMul")
def _matmul(ctx, node, a, b):
    m = xp(a, b)
    if node.attrs.get("transpose_a"):
        a = m.swapaxes(a, 0, 1)
    if node.attrs.get("transpose_b"):
        b = m.swapaxes(b, 0, 1)
    return m.matmul(a, b)


@register("BatchMatMul", "BatchMatMulV2", "BatchMatMulV3")
def _batch_matmul(ctx, node, a, b):
    m = xp(a, b)
    if node.attrs.get("adj_x"):
        a = _adjoint(m, a)
    if node.attrs.get("adj_y"):
        b = _adjoint(m, b)
    out = m.matmul(a, b)
    tout = node.attrs.get("Tout")
    return cast(out, tout) if tout is not None else out


@register("Einsum")
def _einsum(ctx, node, *xs):
    return xp(*xs).einsum(node.attrs["equation"], *xs)


# ---- ranges ---------------------------------------------------------------------------------
@register("Range")
def _range(ctx, node, start, limit, delta):
    dtype = node.attrs.get("Tidx", np.asarray(start).dtype)
    s, lim, d = (static(v, "the bounds of Range").item() for v in (start, limit, delta))
    return np.arange(s, lim, d).astype(dtype)


@register("LinSpace")
def _linspace(ctx, node, start, stop, num):
    n = int(static(num, "the count of LinSpace"))
    m = xp(start, stop)
    return cast(m.linspace(start, stop, n), np.dtype(start.dtype))


@register("EuclideanNorm")
def _euclidean_norm(ctx, node, x, axes):
    m = xp(x)
    keep = bool(node.attrs.get("keep_dims", False))
    return m.sqrt(m.sum(m.square(x), axis=_axes(x, axes), keepdims=keep))


@register("TopKV2")
def _top_k(ctx, node, x, k):
    values, idx = lax.top_k(jnp.asarray(x), int(static(k, "k of TopKV2")))
    return values, cast(idx, node.attrs.get("index_type", np.int32))


def _segment(name, fn_name):
    def rule(ctx, node, data, ids, num):
        n = int(static(num, f"the number of segments of {name}"))
        return getattr(mjax.ops, fn_name)(_mjax(data), _mjax(ids), num_segments=n)
    register(name)(rule)


_segment("UnsortedSegmentSum", "segment_sum")
_segment("UnsortedSegmentMax", "segment_max")
_segment("UnsortedSegmentMin", "segment_min")
_segment("UnsortedSegmentProd", "segment_prod")


def _sorted_segment(name, fn_name):
    """Segment ops with sorted ids: the segment count is the last id + 1, so the ids must
    be constants."""
    def rule(ctx, node, data, ids):
        n = int(static(ids, f"the segment ids of {name}").reshape(-1)[-1]) + 1 \
            if np.size(ids) else 0
        return getattr(mjax.ops, fn_name)(_mjax(data), _mjax(ids), num_segments=n,
                                          indices_are_sorted=True)
    register(name)(rule)


_sorted_segment("SegmentSum", "segment_sum")
_sorted_segment("SegmentMax", "segment_max")
_sorted_segment("SegmentMin", "segment_min")
_sorted_segment("SegmentProd", "segment_prod")
