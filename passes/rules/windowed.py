"""Rules for the windowed family (dialect/ops/windowed.py): lowering, JVP, transpose,
batching.

    %y = "jaxpr.reduce_window_max"(%x) {window_dimensions = array<i64: 2, 2>, ...}
  ==>
    %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
    %y = "stablehlo.reduce_window"(%x, %init) ({ stablehlo.maximum ... })

Max/min pooling differentiates as JAX does: the JVP of reduce_window_max is
select_and_gather_add (the tangent at each window's argmax, a variadic reduce_window over
(value, tangent) pairs), whose transpose is select_and_scatter_add (stablehlo's
select_and_scatter), and the other way round.
JAX: lax/windowed_reductions.py.
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.dtype_rules import is_bool
from mjax.dialect.ops import windowed as W
from mjax.dialect.ops.convolution import dilate_dim
from mjax.dialect.shape_poly import is_symbolic_dim
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import hlo as H
from mjax.passes.rules.batch_util import batch_rule, bdim_to_front
from mjax.passes.rules.reductions import combiner, identity
from mjax.passes.registry import PassError
from mjax.passes.rules.tables import lowering, nan_checked, platform_rules

_KIND = {W.ReduceWindowSumOp: "add", W.ReduceWindowMaxOp: "max", W.ReduceWindowMinOp: "min"}
_SELECT = {"ge": ("GE", "max"), "le": ("LE", "min")}  # comparison, padding identity


# ---- lowering ----------------------------------------------------------------------
def _pads(padding) -> ir.Attribute:
    return ir.DenseIntElementsAttr.get(np.asarray(padding, np.int64).reshape(-1, 2))


def _region(op, region_index, dtypes, body):
    """Fills region `region_index` of `op` with scalar arguments (two per dtype, lhs then
    rhs) and `body(*args) -> [values]`."""
    scalars = [H.ttype((), d) for d in dtypes]
    block = op.regions[region_index].blocks.append(*scalars, *scalars)
    with ir.InsertionPoint(block):
        hlo.return_(list(body(*block.arguments)))


def _reduce_window_lower(ctx, x, *, window_dimensions, window_strides, padding,
                         base_dilation, window_dilation, kind):
    dtype = ctx.avals_in[0].dtype
    out = ctx.avals_out[0]
    init = H.constant(identity(kind, dtype), dtype)
    op = hlo.ReduceWindowOp([H.ttype(out.shape, dtype)], [x], [init], list(window_dimensions),
                            window_strides=list(window_strides),
                            base_dilations=list(base_dilation),
                            window_dilations=list(window_dilation), padding=_pads(padding))
    fn = combiner(kind, dtype)
    _region(op, 0, [dtype], lambda a, b: [fn(a, b)])
    return op.results[0]


for _op, _kind in _KIND.items():
    lowering(_op)(lambda ctx, x, _kind=_kind, **p: _reduce_window_lower(ctx, x, kind=_kind, **p))


@lowering(W.SelectAndGatherAddOp)
def _select_and_gather_add_lower(ctx, tangents, operand, *, select_prim, window_dimensions,
                                 window_strides, padding, base_dilation, window_dilation):
    # JAX: _select_and_gather_add_using_variadic_reducewindow. Reduce (value, tangent)
    # pairs keeping the pair whose value wins the comparison; padding is (identity, 0).
    direction, kind = _SELECT[select_prim]
    dtype = ctx.avals_in[1].dtype
    out = ctx.avals_out[0]
    inits = [H.constant(identity(kind, dtype), dtype), H.constant(0, dtype)]
    ttype = H.ttype(out.shape, dtype)
    op = hlo.ReduceWindowOp([ttype, ttype], [operand, tangents], inits,
                            list(window_dimensions), window_strides=list(window_strides),
                            base_dilations=list(base_dilation),
                            window_dilations=list(window_dilation), padding=_pads(padding))

    def body(kx, vx, ky, vy):
        pick = H.compare(kx, ky, direction)
        return [hlo.select(pick, kx, ky), hlo.select(pick, vx, vy)]
    _region(op, 0, [dtype, dtype], body)
    return op.results[1]


@lowering(W.SelectAndScatterAddOp)
def _select_and_scatter_add_lower(ctx, source, operand, *, select_prim, window_dimensions,
                                  window_strides, padding):
    # JAX: on the CPU and GPUs, pad the operand with the selection's identity and scatter
    # without padding, then slice the padding off again; elsewhere (a TPU) the op pads.
    direction, kind = _SELECT[select_prim]
    aval = ctx.avals_in[1]
    dtype = aval.dtype
    lows, highs = [lo for lo, _ in padding], [hi for _, hi in padding]
    padded_shape = tuple(d + lo + hi for d, lo, hi in zip(aval.shape, lows, highs))
    if not platform_rules().expand_scatter_padding:
        if _negative_size(padded_shape):
            # (XLA's TPU compiler aborts the process on such an op, JAX's program too;
            # raise the CPU's error instead)
            raise _PaddingValueError(
                ctx.op, f"select_and_scatter_add with negative padding {tuple(padding)} of "
                f"shape {tuple(aval.shape)}: the padded operand {padded_shape} has a "
                "negative size")
        op = hlo.SelectAndScatterOp(H.ttype(aval.shape, dtype), operand, source,
                                    H.constant(0, dtype),
                                    window_dimensions=list(window_dimensions),
                                    window_strides=list(window_strides),
                                    padding=_pads(padding))
        _select_and_scatter_regions(op, dtype, direction)
        return op.results[0]
    if min(lows + highs, default=0) < 0:
        # (JAX's lax.pad refuses a negative size, ValueError; else its slice a negative
        # start or a limit past the padded size, TypeError)
        raise (_PaddingValueError if _negative_size(padded_shape) else _PaddingTypeError)(
            ctx.op, f"select_and_scatter_add with negative padding {tuple(padding)} of "
            f"shape {tuple(aval.shape)}: the operand padded to {padded_shape} is sliced "
            "back out of range")
    unpadded = not any(lows) and not any(highs)
    padded = operand if unpadded else hlo.pad(
        operand, H.constant(identity(kind, dtype), dtype), lows, highs, [0] * aval.ndim)
    op = hlo.SelectAndScatterOp(H.ttype(padded_shape, dtype), padded, source,
                                H.constant(0, dtype), window_dimensions=list(window_dimensions),
                                window_strides=list(window_strides),
                                padding=_pads([(0, 0)] * aval.ndim))
    _select_and_scatter_regions(op, dtype, direction)
    if unpadded:
        return op.results[0]
    return H.slice_(ctx.op, op.results[0], lows, [lo + d for lo, d in zip(lows, aval.shape)])


def _negative_size(shape) -> bool:
    """Whether a padded operand has a negative size. Only constant sizes are checked: a
    symbolic one (a shape-polymorphic export) is known at the call, and comparing it with
    the others (min(shape)) is inconclusive (JAX checks none of them)."""
    return any(d < 0 for d in shape if not is_symbolic_dim(d))


class _PaddingValueError(PassError, ValueError):
    """A max/min-pool gradient whose negative padding leaves a negative size."""


class _PaddingTypeError(PassError, TypeError):
    """A max/min-pool gradient with negative padding (slicing it back fails in JAX)."""


def _select_and_scatter_regions(op, dtype, direction) -> None:
    """A select_and_scatter's select (compare in `direction`) and scatter (add; or for
    booleans) regions."""
    select = op.regions[0].blocks.append(H.ttype((), dtype), H.ttype((), dtype))
    with ir.InsertionPoint(select):
        hlo.return_([H.compare(*select.arguments, direction)])
    scatter_fn = hlo.or_ if is_bool(dtype) else hlo.add
    scatter = op.regions[1].blocks.append(H.ttype((), dtype), H.ttype((), dtype))
    with ir.InsertionPoint(scatter):
        hlo.return_([scatter_fn(*scatter.arguments)])


# ---- reduce_window_sum: linear -------------------------------------------------------
def _reduce_window_sum_transpose(b, ct, x, *, window_dimensions, window_strides, padding,
                                 base_dilation, window_dilation):
    # JAX: _reduce_window_sum_transpose_rule. Spread each window sum back over its window:
    # dilate the cotangent by the strides, pad it as a convolution's lhs transpose would,
    # and sum it over windows again (strides become the base dilation).
    in_shape, ct_shape = AD.aval(x).shape, AD.aval(ct).shape
    config = []
    for i in range(len(in_shape)):
        lhs_d = dilate_dim(in_shape[i], base_dilation[i])
        rhs_d = dilate_dim(window_dimensions[i], window_dilation[i])
        out_d = dilate_dim(ct_shape[i], window_strides[i])
        before = rhs_d - padding[i][0] - 1
        config.append((before, lhs_d + rhs_d - 1 - out_d - before, window_strides[i] - 1))
    zero = AD.constant(b, np.zeros((), AD.aval(ct).dtype))
    padded = b.pad(ct, zero, padding_config=tuple(config))
    ones = (1,) * len(in_shape)
    return [b.reduce_window_sum(padded, window_dimensions=tuple(window_dimensions),
                                window_strides=tuple(base_dilation),
                                padding=((0, 0),) * len(in_shape), base_dilation=ones,
                                window_dilation=tuple(window_dilation))]


AD.deflinear(W.ReduceWindowSumOp, _reduce_window_sum_transpose)


# ---- reduce_window_max / min: JVP through select_and_gather_add ----------------------
def _chooser_jvp(select_prim):
    def rule(b, t, x, **window):
        return b.select_and_gather_add(t, x, select_prim=select_prim, **window)
    return rule


AD.defjvp(W.ReduceWindowMaxOp, _chooser_jvp("ge"))
AD.defjvp(W.ReduceWindowMinOp, _chooser_jvp("le"))


# ---- select_and_gather_add / select_and_scatter_add: linear in their first operand ----
def _linear_in_first_jvp(op):
    def rule(b, primals, tangents, **params):
        out = b.emit(op, *primals, **params)
        t = tangents[0]
        if t is None:
            return out, [None]
        return out, b.emit(op, t, primals[1], **params)
    AD.jvp_rule(op)(rule)


_linear_in_first_jvp(W.SelectAndGatherAddOp)
_linear_in_first_jvp(W.SelectAndScatterAddOp)


@AD.transpose_rule(W.SelectAndGatherAddOp)
def _select_and_gather_add_transpose(b, ct, tangents, operand, *, select_prim,
                                     window_dimensions, window_strides, padding,
                                     base_dilation, window_dilation):
    # JAX: _select_and_gather_add_transpose.
    if AD.is_linear(operand):
        raise ValueError("select_and_gather_add is not linear in its operand")
    if any(d != 1 for d in window_dilation):
        raise NotImplementedError(f"VJP not implemented for select_and_gather (MaxPool) "
                                  f"with window dilation, got window_dilation="
                                  f"{tuple(window_dilation)}")
    dilated = any(d != 1 for d in base_dilation)
    if dilated:
        kind = _SELECT[select_prim][1]
        dtype = AD.aval(operand).dtype
        fill = AD.constant(b, np.asarray(identity(kind, dtype), dtype))
        operand = b.pad(operand, fill, padding_config=tuple((0, 0, d - 1)
                                                            for d in base_dilation))
    out = b.select_and_scatter_add(ct, operand, select_prim=select_prim,
                                   window_dimensions=tuple(window_dimensions),
                                   window_strides=tuple(window_strides), padding=padding)
    if dilated:
        shape = AD.aval(out).shape
        out = b.slice(out, start_indices=(0,) * len(shape), limit_indices=shape,
                      strides=tuple(base_dilation))
    return [out, None]


@AD.transpose_rule(W.SelectAndScatterAddOp)
def _select_and_scatter_add_transpose(b, ct, source, operand, *, select_prim,
                                      window_dimensions, window_strides, padding):
    if AD.is_linear(operand):
        raise ValueError("select_and_scatter_add is not linear in its operand")
    ones = (1,) * len(window_dimensions)
    return [b.select_and_gather_add(ct, operand, select_prim=select_prim,
                                    window_dimensions=tuple(window_dimensions),
                                    window_strides=tuple(window_strides), padding=padding,
                                    base_dilation=ones, window_dilation=ones), None]


# ---- batching --------------------------------------------------------------------------
def _with_unit_window_at(d: int, params: dict) -> dict:
    """Window params with a size-1, unpadded, undilated window dimension inserted at d."""
    out = dict(params)
    for name in ("window_dimensions", "window_strides", "base_dilation", "window_dilation"):
        if name in out:
            v = tuple(out[name])
            out[name] = v[:d] + (1,) + v[d:]
    pads = tuple(tuple(p) for p in out["padding"])
    out["padding"] = pads[:d] + ((0, 0),) + pads[d:]
    return out


def _make_reduce_window_batch(op):
    # JAX: _reduce_window_batch_rule. The batch axis is one more window dimension of 1.
    def rule(b, args, dims, **params):
        (x,), (d,) = args, dims
        return [b.emit(op, x, **_with_unit_window_at(d, params))[0]], [d]
    return rule


for _op in _KIND:
    batch_rule(_op)(_make_reduce_window_batch(_op))


def _make_pair_batch(op):
    # JAX: _select_and_{gather,scatter}_add_batching_rule: both operands batched at 0.
    def rule(b, args, dims, **params):
        xs = [bdim_to_front(b, x, d) for x, d in zip(args, dims)]
        return [b.emit(op, *xs, **_with_unit_window_at(0, params))[0]], [0]
    return rule


batch_rule(W.SelectAndGatherAddOp)(_make_pair_batch(W.SelectAndGatherAddOp))
batch_rule(W.SelectAndScatterAddOp)(_make_pair_batch(W.SelectAndScatterAddOp))


# ---- checkify -------------------------------------------------------------------------
nan_checked(W.ReduceWindowSumOp)
