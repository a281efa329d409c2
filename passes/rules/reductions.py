"""Rules for the reductions family (dialect/ops/reductions.py): lowering.

    %0 = "jaxpr.reduce_max"(%x) {axes = array<i64: 0>} : (tensor<2x3xf32>) -> tensor<3xf32>
  ==>
    %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %0 = stablehlo.reduce(%x init: %init) applies stablehlo.maximum across dimensions = [0]

Reductions are a stablehlo.reduce with the monoid's identity as init; argmin/argmax a
variadic reduce over (value, iota); cumulative reductions a reduce_window whose window
spans the whole axis, padded on one side (a prefix, or with `reverse` a suffix, scan);
sort a stablehlo.sort whose comparator is JAX's total order.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func as func_d
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect import attributes as A
from mjax.dialect.dtype_rules import is_bool, is_complex, is_float, is_int, is_inexact
from mjax.dialect.ops import reductions as R
from mjax.dialect.shape_poly import is_symbolic_dim
from mjax.passes.rules import hlo as H
from mjax.passes.rules.dynamic_shapes import shape_value
from mjax.passes.rules.tables import lowering, nan_checked


# ---- monoids: identity and combiner per reduction kind -----------------------------
# The float types JAX says have no inf (dtypes.supports_inf): their extremes are finite.
_NO_INF = frozenset(np.dtype(t) for t in (
    ml_dtypes.float8_e4m3b11fnuz, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3fnuz,
    ml_dtypes.float8_e5m2fnuz))


def _extreme(dtype, sign: int):
    """+inf/-inf of dtype, as JAX's reduction identities cast them (float8_e8m0fnu, which
    has neither inf nor sign, gets NaN there; float4/float6 their largest finite value),
    or the largest/lowest finite value for the types JAX says have no inf."""
    if is_bool(dtype):
        return sign > 0
    if is_int(dtype):
        info = ml_dtypes.iinfo(dtype)      # (int2, int4 too)
        return info.max if sign > 0 else info.min
    real = np.dtype(np.float32 if np.dtype(dtype) == np.complex64 else
                    np.float64 if np.dtype(dtype) == np.complex128 else dtype)
    with np.errstate(invalid="ignore", over="ignore"):
        inf = np.array(sign * np.inf).astype(real)
    value = inf if real not in _NO_INF else np.array(
        ml_dtypes.finfo(real).max if sign > 0 else ml_dtypes.finfo(real).min, real)
    if is_complex(dtype):
        # Lexicographic order: (-inf, -inf) is below every complex number.
        return complex(float(value), float(value))
    return value


def identity(kind: str, dtype):
    """The identity element of `kind` ('add', 'mul', 'max', ...) for dtype."""
    if kind in ("add", "or", "xor"):
        return 0
    if kind == "mul":
        return 1
    if kind == "and":
        return True if is_bool(dtype) else np.array(-1).astype(dtype)
    if kind in ("max", "logaddexp"):
        return _extreme(dtype, -1)
    if kind == "min":
        return _extreme(dtype, +1)
    raise ValueError(f"unknown reduction kind {kind}")


def _complex_minmax(a, b, direction: str):
    # JAX orders complex numbers lexicographically (real part, then imaginary part).
    ra, rb, ia, ib = hlo.real(a), hlo.real(b), hlo.imag(a), hlo.imag(b)
    pick_a = hlo.or_(H.compare(ra, rb, direction),
                     hlo.and_(H.compare(ra, rb, "EQ"), H.compare(ia, ib, direction)))
    return hlo.select(pick_a, a, b)


def _logaddexp(a, b):
    # max + log1p(exp(-|a - b|)); a NaN difference (inf - inf or a NaN) gives a + b.
    delta = hlo.subtract(a, b)
    out = hlo.add(hlo.maximum(a, b), hlo.log_plus_one(hlo.exponential(
        hlo.negate(hlo.abs(delta)))))
    return hlo.select(H.compare(delta, delta, "NE"), hlo.add(a, b), out)


def combiner(kind: str, dtype):
    """`f(a, b) -> Value` combining two values of dtype with the monoid `kind`."""
    if kind in ("max", "min") and is_complex(dtype):
        return lambda a, b: _complex_minmax(a, b, "GT" if kind == "max" else "LT")
    return {"add": hlo.add, "mul": hlo.multiply, "max": hlo.maximum, "min": hlo.minimum,
            "and": hlo.and_, "or": hlo.or_, "xor": hlo.xor, "logaddexp": _logaddexp}[kind]


# ---- reduce_* ----------------------------------------------------------------------
_REDUCTIONS = {R.ReduceSumOp: "add", R.ReduceProdOp: "mul", R.ReduceMaxOp: "max",
               R.ReduceMinOp: "min", R.ReduceAndOp: "and", R.ReduceOrOp: "or",
               R.ReduceXorOp: "xor"}


# The combiner op of each monoid whose combiner is one StableHLO op (not complex max/min)
_COMBINER_OP = {"add": "stablehlo.add", "mul": "stablehlo.multiply",
                "max": "stablehlo.maximum", "min": "stablehlo.minimum",
                "and": "stablehlo.and", "or": "stablehlo.or", "xor": "stablehlo.xor"}
# (context, kind, dtype) -> (scalar tensor type, identity attribute): reductions lower
# again and again with the same few identities (a training step's gradients are dozens
# of reduce_sums)
_IDENTITIES: dict = {}


def _reduce_lower(ctx, x, *, axes, kind):
    dtype = ctx.avals_in[0].dtype
    out = H.ttype(ctx.avals_out[0].shape, dtype)
    name = _COMBINER_OP.get(kind)
    if name is None or is_complex(dtype):
        init = H.constant(identity(kind, dtype), dtype)
        fn = combiner(kind, dtype)
        return H.scalar_reduce([out], [x], [init], list(axes), lambda a, b: [fn(a, b)])[0]
    # The same ops as the path above, made directly (no op builders: ~2x faster).
    key = (ir.Context.current, kind, dtype)
    hit = _IDENTITIES.get(key)
    if hit is None:
        if len(_IDENTITIES) >= 256:
            _IDENTITIES.clear()
        value = A.dense_elements(np.full((), identity(kind, dtype), dtype=dtype))
        hit = _IDENTITIES[key] = (H.ttype((), dtype), value)
    scalar, value = hit
    init = ir.Operation.create("stablehlo.constant", results=[value.type],
                               attributes={"value": value}).result
    op = ir.Operation.create("stablehlo.reduce", results=[out], operands=[x, init],
                             attributes={"dimensions": ir.DenseI64ArrayAttr.get(list(axes))},
                             regions=1)
    block = op.regions[0].blocks.append(scalar, scalar)
    ip = ir.InsertionPoint(block)
    combined = ir.Operation.create(name, results=[scalar], operands=list(block.arguments),
                                   ip=ip)
    ir.Operation.create("stablehlo.return", operands=[combined.result], ip=ip)
    return op.result


for _op, _kind in _REDUCTIONS.items():
    lowering(_op)(lambda ctx, x, *, axes, _kind=_kind: _reduce_lower(ctx, x, axes=axes,
                                                                      kind=_kind))


# ---- argmin / argmax ---------------------------------------------------------------
def _argminmax_lower(ctx, x, *, axes, index_dtype, direction):
    aval = ctx.avals_in[0]
    axis, = axes
    iota = hlo.iota(H.ttype(aval.shape, index_dtype), axis)
    init_val = H.constant(identity("max" if direction == "GT" else "min", aval.dtype),
                          aval.dtype)
    init_idx = H.constant(0, index_dtype)
    nan_aware = is_inexact(aval.dtype)

    # JAX: lax._ArgMinMaxReducer. NaN beats every number, then `direction` decides, and
    # ties (NaN against NaN too) go to the smaller index: a total order, so the result
    # does not depend on the order XLA combines elements in.
    def body(xv, xi, yv, yi):
        pick_x = H.compare(xv, yv, direction)
        tie = H.compare(xv, yv, "EQ")
        if nan_aware:
            x_nan, y_nan = H.compare(xv, xv, "NE"), H.compare(yv, yv, "NE")
            pick_x = hlo.or_(pick_x, hlo.and_(x_nan, hlo.not_(y_nan)))
            tie = hlo.or_(tie, hlo.and_(x_nan, y_nan))
        pick_x = hlo.or_(pick_x, hlo.and_(tie, H.compare(xi, yi, "LT")))
        return [hlo.select(pick_x, xv, yv), hlo.select(pick_x, xi, yi)]

    out_shape = ctx.avals_out[0].shape
    results = H.scalar_reduce([H.ttype(out_shape, aval.dtype), H.ttype(out_shape, index_dtype)],
                              [x, iota], [init_val, init_idx], [axis], body)
    return results[1]


@lowering(R.ArgMaxOp)
def _argmax_lower(ctx, x, *, axes, index_dtype):
    return _argminmax_lower(ctx, x, axes=axes, index_dtype=index_dtype, direction="GT")


@lowering(R.ArgMinOp)
def _argmin_lower(ctx, x, *, axes, index_dtype):
    return _argminmax_lower(ctx, x, axes=axes, index_dtype=index_dtype, direction="LT")


# ---- cumulative reductions ---------------------------------------------------------
_CUMULATIVE = {R.CumsumOp: "add", R.CumprodOp: "mul", R.CummaxOp: "max",
               R.CumminOp: "min", R.CumlogsumexpOp: "logaddexp"}


def _cumulative_lower(ctx, x, *, axis, reverse, kind):
    # JAX: loops.cumred_reduce_window_impl. out[i] = reduce(x[i-n+1 .. i]) over a window
    # of the whole axis, with n-1 identity elements padded before (after, for reverse).
    aval = ctx.avals_in[0]
    n = aval.shape[axis]
    if is_symbolic_dim(n):
        return _dynamic_cumulative(ctx, x, axis, reverse, kind)
    if n <= 1:
        return x
    window = [1] * aval.ndim
    window[axis] = n
    padding = np.zeros((aval.ndim, 2), np.int64)
    padding[axis] = (0, n - 1) if reverse else (n - 1, 0)
    init = H.constant(identity(kind, aval.dtype), aval.dtype)
    ttype = H.ttype(aval.shape, aval.dtype)
    op = hlo.ReduceWindowOp([ttype], [x], [init], window,
                            padding=ir.DenseIntElementsAttr.get(padding))
    scalar = H.ttype((), aval.dtype)
    block = op.regions[0].blocks.append(scalar, scalar)
    with ir.InsertionPoint(block):
        hlo.return_([combiner(kind, aval.dtype)(*block.arguments)])
    return op.results[0]


def _dynamic_cumulative(ctx, x, axis, reverse, kind):
    """The window of a symbolic axis as values: StableHLO's `dynamic_reduce_window`
    custom call (shape refinement makes it a reduce_window), its reducer a function of
    the module, as JAX lowers it."""
    aval = ctx.avals_in[0]
    i32 = np.dtype(np.int32)
    scalar = H.ttype((), aval.dtype)
    module = ctx.op
    while module.name != "builtin.module":
        module = module.parent
    name = f"mjax_cumulative_{kind}_{np.dtype(aval.dtype).name}"
    if name not in ir.SymbolTable(module.operation):
        with ir.InsertionPoint(module.regions[0].blocks[0]), ir.Location.unknown():
            fn = func_d.FuncOp(name, ([scalar, scalar], [scalar]))
            fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
            block = fn.add_entry_block()
            with ir.InsertionPoint(block):
                func_d.ReturnOp([combiner(kind, aval.dtype)(*block.arguments)])

    def vector(dims):
        return H.convert(shape_value(ctx.op, dims), i32)
    ones = [1] * aval.ndim
    window = [aval.shape[axis] if d == axis else 1 for d in range(aval.ndim)]
    lows = [aval.shape[axis] - 1 if d == axis and not reverse else 0 for d in range(aval.ndim)]
    highs = [aval.shape[axis] - 1 if d == axis and reverse else 0 for d in range(aval.ndim)]
    # ((low, high) per dimension: rows of constants refinement folds)
    padding = hlo.concatenate([hlo.reshape(H.ttype((1, 2), i32), vector([lo, hi]))
                               for lo, hi in zip(lows, highs)], 0)
    init = H.constant(identity(kind, aval.dtype), aval.dtype)
    op = ir.Operation.create(
        "stablehlo.custom_call", results=[H.ttype(aval.shape, aval.dtype)],
        operands=[x, init, vector(window), vector(ones), vector(ones), vector(ones), padding],
        attributes={"call_target_name": ir.StringAttr.get("stablehlo.dynamic_reduce_window"),
                    "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 2),
                    "called_computations": ir.ArrayAttr.get([ir.FlatSymbolRefAttr.get(name)])})
    return op.result


for _op, _kind in _CUMULATIVE.items():
    lowering(_op)(lambda ctx, x, *, axis, reverse, _kind=_kind: _cumulative_lower(
        ctx, x, axis=axis, reverse=reverse, kind=_kind))


# ---- sort --------------------------------------------------------------------------
def _total_order_keys(x):
    """Keys to compare with TOTALORDER so that -0.0 == 0.0 and every NaN sorts last.

    JAX: lax._canonicalize_float_for_sort (complex numbers compare real, then imag).
    """
    dtype = H.aval_of(x.type).dtype
    if is_complex(dtype):
        return _total_order_keys(hlo.real(x)) + _total_order_keys(hlo.imag(x))
    if not is_float(dtype):
        return [x]
    zero = H.constant_like(x, 0)
    x = hlo.select(H.compare(x, zero, "EQ"), zero, x)
    return [hlo.select(H.compare(x, x, "NE"), H.constant_like(x, np.nan), x)]


def _key_compare(x, y, direction: str):
    if is_float(H.aval_of(x.type).dtype):
        return hlo.compare(x, y, hlo.ComparisonDirectionAttr.get(direction),
                           compare_type=hlo.ComparisonTypeAttr.get("TOTALORDER"))
    return H.compare(x, y, direction)


@lowering(R.SortOp)
def _sort_lower(ctx, *xs, dimension, is_stable, num_keys):
    types = [H.ttype(a.shape, a.dtype) for a in ctx.avals_in]
    op = hlo.SortOp(types, list(xs), dimension=dimension, is_stable=is_stable)
    scalars = [H.ttype((), a.dtype) for a in ctx.avals_in for _ in (0, 1)]
    block = op.regions[0].blocks.append(*scalars)
    with ir.InsertionPoint(block):
        args = list(block.arguments)
        lhs, rhs = [], []
        for i in range(num_keys):
            lhs += _total_order_keys(args[2 * i])
            rhs += _total_order_keys(args[2 * i + 1])
        # Lexicographic "less than", built from the last key up:
        # lt(k0) | (eq(k0) & (lt(k1) | (eq(k1) & ...))).
        less = _key_compare(lhs[-1], rhs[-1], "LT")
        for a, b in zip(lhs[-2::-1], rhs[-2::-1]):
            less = hlo.or_(_key_compare(a, b, "LT"), hlo.and_(_key_compare(a, b, "EQ"), less))
        hlo.return_([less])
    return list(op.results)


# ---- batching ----------------------------------------------------------------------
# JAX: batching.defreducer, _argminmax batching, loops' cumred batching, _sort_batch_rule.
# The batch axis stays where it is; the op's axes are renumbered around it.
from mjax.passes.rules import batch_util as B  # noqa: E402


def _shift_axes(axes, d):
    """Per-example axes as axes of the value batched at `d`."""
    return tuple(B.canonical_axis(a, d) for a in axes)


def _reduce_batch(b, args, dims, *, _op, **params):
    # reduce_* and argmin/argmax: the reduced axes disappear, and the batch axis moves
    # left by the number of them before it.
    (x,), (d,) = args, dims
    axes = params.pop("axes")
    out = b.emit(_op, x, axes=_shift_axes(axes, d), **params)
    return out, [d - sum(1 for a in axes if a < d)]


for _op in (*_REDUCTIONS, R.ArgMinOp, R.ArgMaxOp):
    B.batch_rule(_op)(lambda b, args, dims, _op=_op, **params: _reduce_batch(
        b, args, dims, _op=_op, **params))


def _cumulative_batch(b, args, dims, *, _op, axis, reverse):
    (x,), (d,) = args, dims
    return b.emit(_op, x, axis=B.canonical_axis(axis, d), reverse=reverse), [d]


for _op in _CUMULATIVE:
    B.batch_rule(_op)(lambda b, args, dims, _op=_op, **params: _cumulative_batch(
        b, args, dims, _op=_op, **params))


@B.batch_rule(R.SortOp)
def _sort_batch(b, args, dims, *, dimension, is_stable, num_keys):
    # Operands must have one shape: unbatched ones are broadcast along the batch axis.
    xs, d = B.align_operands(b, args, dims)
    outs = b.emit(R.SortOp, *xs, dimension=B.canonical_axis(dimension, d),
                  is_stable=is_stable, num_keys=num_keys)
    return outs, [d] * len(outs)


# ---- checkify -------------------------------------------------------------------------
nan_checked(R.CumlogsumexpOp, R.CummaxOp, R.CumminOp, R.CumprodOp, R.CumsumOp,
            R.ReduceProdOp, R.ReduceSumOp)
