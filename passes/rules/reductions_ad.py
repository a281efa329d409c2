"""Differentiation rules for the reductions family (dialect/ops/reductions.py): JVP
rules, transposes of the linear ops, and declared reasons for the rest.

Kept apart from the family's lowering file (passes/rules/reductions.py); imported by
passes/__init__.py. The indexing family's rules are in indexing_ad.py.
JAX: the ad rules in lax/lax.py (reductions, sort) and lax/control_flow/loops.py
(cumulative reductions).
"""
from __future__ import annotations

import math

import numpy as np

from mjax.dialect.ops import elementwise as E
from mjax.dialect.ops import reductions as R
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules.tables import JVP


def _unreduce(b, x, in_shape, axes):
    """Broadcasts a reduced value back over `axes` of `in_shape`."""
    kept = tuple(d for d in range(len(in_shape)) if d not in axes)
    return b.broadcast_in_dim(x, shape=tuple(in_shape), broadcast_dimensions=kept)


def _slice_axis(b, x, start, stop, axis, stride=1):
    shape = AD.aval(x).shape
    lo, hi, st = [0] * len(shape), list(shape), [1] * len(shape)
    lo[axis], hi[axis], st[axis] = start, stop, stride
    return b.slice(x, start_indices=tuple(lo), limit_indices=tuple(hi), strides=tuple(st))


# ---- reduce_sum / reduce_max / reduce_min ----------------------------------------------
AD.deflinear(R.ReduceSumOp, lambda b, ct, x, *, axes: [
    _unreduce(b, ct, AD.aval(x).shape, axes)])


def _chooser_jvp(b, t, x, *, axes, ans):
    # JAX: _reduce_chooser_jvp_rule, op for op. The tangent averages over the positions
    # that attain the max/min (ties split evenly): the answer reshaped to keep the
    # reduced dims as 1s, compared with lax's implicit broadcast, the hits converted to
    # the tangent's dtype.
    shape = AD.aval(x).shape
    kept = tuple(1 if i in axes else d for i, d in enumerate(shape))
    hit = AD.lax_binary(b, "eq", x, b.reshape(ans, new_sizes=kept))
    hits = b.convert_element_type(hit, new_dtype=AD.aval(t).dtype)
    counts = b.reduce_sum(hits, axes=axes)
    return b.div(b.reduce_sum(b.mul(t, hits), axes=axes), counts)


AD.defjvp(R.ReduceMaxOp, _chooser_jvp)
AD.defjvp(R.ReduceMinOp, _chooser_jvp)
for _op in (R.ReduceAndOp, R.ReduceOrOp, R.ReduceXorOp):
    AD.defzero(_op, "boolean/integer reduction: no tangent (float0)")
for _op in (R.ArgMinOp, R.ArgMaxOp):
    AD.defzero(_op, "integer index result: no tangent (float0)")


# ---- reduce_prod -------------------------------------------------------------------------
@AD.jvp_rule(R.ReduceProdOp)
def _reduce_prod_jvp(b, primals, tangents, *, axes):
    # JAX: _reduce_prod_jvp_rule. The product rule through a balanced tree of pairwise
    # products over the reduced elements, so zeros need no division: at each level
    # (p1, t1) * (p2, t2) = (p1 p2, t1 p2 + p1 t2).
    (x,), (t,) = primals, tangents
    out = b.reduce_prod(x, axes=axes)
    shape = AD.aval(x).shape
    n = math.prod(shape[a] for a in axes)
    if t is None or n == 0:
        return [out], [None]
    rest = tuple(d for d in range(len(shape)) if d not in axes)
    perm = tuple(axes) + rest
    flat_shape = (n,) + tuple(shape[d] for d in rest)
    dims = None if perm == tuple(range(len(shape))) else perm
    p = b.reshape(x, new_sizes=flat_shape, dimensions=dims)
    t = b.reshape(t, new_sizes=flat_shape, dimensions=dims)
    one = AD.constant(b, np.ones((), AD.aval(x).dtype))
    zero = AD.constant(b, np.zeros((), AD.aval(x).dtype))
    while n > 1:
        half = (n + 1) // 2
        p1, p2 = _slice_axis(b, p, 0, half, 0), _slice_axis(b, p, half, n, 0)
        t1, t2 = _slice_axis(b, t, 0, half, 0), _slice_axis(b, t, half, n, 0)
        if n % 2:  # pad the short half with the identity (and a zero tangent)
            config = ((0, 1, 0),) + ((0, 0, 0),) * len(rest)
            p2, t2 = b.pad(p2, one, padding_config=config), b.pad(t2, zero, padding_config=config)
        p, t = b.mul(p1, p2), b.add(b.mul(t1, p2), b.mul(p1, t2))
        n = half
    return [out], [b.reshape(t, new_sizes=AD.aval(out).shape)]



# ---- cumulative reductions -----------------------------------------------------------------
AD.deflinear(R.CumsumOp, lambda b, ct, x, *, axis, reverse: [
    b.cumsum(ct, axis=axis, reverse=not reverse)])


def _interleave(b, even, odd, axis):
    """even[0], odd[0], even[1], odd[1], ... along `axis` (len(even) - len(odd) is 0 or 1)."""
    n_even, n_odd = AD.aval(even).shape[axis], AD.aval(odd).shape[axis]
    tail = None
    if n_even > n_odd:
        even, tail = _slice_axis(b, even, 0, n_odd, axis), _slice_axis(b, even, n_odd,
                                                                         n_even, axis)
    shape = AD.aval(odd).shape
    pair_shape = shape[:axis + 1] + (1,) + shape[axis + 1:]
    pairs = b.concatenate(b.reshape(even, new_sizes=pair_shape),
                          b.reshape(odd, new_sizes=pair_shape), dimension=axis + 1)
    out = b.reshape(pairs, new_sizes=shape[:axis] + (2 * n_odd,) + shape[axis + 1:])
    return out if tail is None else b.concatenate(out, tail, dimension=axis)


def _prefix_scan(b, combine, elems, axis):
    """Inclusive prefix scan of (primal, tangent) pairs under `combine`.

    JAX: lax.associative_scan, with the same tree of combinations, so that JVPs (ties of
    cummax included) match JAX's: combine adjacent pairs, scan the half-size result (the
    odd positions), then combine it with the remaining even elements, and interleave.
    """
    n = AD.aval(elems[0]).shape[axis]
    if n < 2:
        return elems
    reduced = combine(b, [_slice_axis(b, e, 0, n - 1, axis, 2) for e in elems],
                      [_slice_axis(b, e, 1, n, axis, 2) for e in elems])
    odd = _prefix_scan(b, combine, reduced, axis)
    n_odd = AD.aval(odd[0]).shape[axis]
    rest = [_slice_axis(b, e, 2, n, axis, 2) for e in elems]  # elements 2, 4, ...
    firsts = [_slice_axis(b, e, 0, 1, axis) for e in elems]
    if AD.aval(rest[0]).shape[axis] == 0:
        even = firsts
    else:
        prev = odd if n % 2 else [_slice_axis(b, o, 0, n_odd - 1, axis) for o in odd]
        even = [b.concatenate(f, r, dimension=axis)
                for f, r in zip(firsts, combine(b, prev, rest))]
    return [_interleave(b, e, o, axis) for e, o in zip(even, odd)]


def _combine_with_jvp(op):
    """A combine of (primal, tangent) pairs that applies `op` through its own JVP rule."""
    def combine(b, lhs, rhs):
        (p,), (t,) = JVP[op](b, [lhs[0], rhs[0]], [lhs[1], rhs[1]])
        return [p, t]
    return combine


def _logaddexp_combine(b, lhs, rhs):
    # JAX: lax.other.logaddexp and its custom JVP: each side's tangent is weighted by
    # exp(x - out), with +inf replaced by 0 on both so that inf - inf never appears.
    (x1, t1), (x2, t2) = lhs, rhs
    delta = b.sub(x1, x2)
    stable = b.add(b.max(x1, x2), b.log1p(b.exp(b.neg(b.abs(delta)))))
    out = b.select_n(b.ne(delta, delta), stable, b.add(x1, x2))  # NaN or inf - inf

    def finite_top(v):
        return b.select_n(b.eq(v, AD.full_like(b, v, np.inf)), v, AD.zeros_like(b, v))
    top = finite_top(out)
    t = b.add(b.mul(t1, b.exp(b.sub(finite_top(x1), top))),
              b.mul(t2, b.exp(b.sub(finite_top(x2), top))))
    return [out, t]


def _cumulative_jvp(op, combine):
    # JAX: loops._cumulative_jvp_rule, the JVP of an associative scan of the combine.
    def rule(b, primals, tangents, *, axis, reverse):
        (x,), (t,) = primals, tangents
        out = b.emit(op, x, axis=axis, reverse=reverse)
        if t is None:
            return out, [None]
        if reverse:
            x, t = b.rev(x, dimensions=(axis,)), b.rev(t, dimensions=(axis,))
        _, t_out = _prefix_scan(b, combine, [x, t], axis)
        if reverse:
            t_out = b.rev(t_out, dimensions=(axis,))
        return out, [t_out]
    AD.jvp_rule(op)(rule)


_cumulative_jvp(R.CumprodOp, _combine_with_jvp(E.MulOp))
_cumulative_jvp(R.CummaxOp, _combine_with_jvp(E.MaxOp))
_cumulative_jvp(R.CumminOp, _combine_with_jvp(E.MinOp))
_cumulative_jvp(R.CumlogsumexpOp, _logaddexp_combine)


# ---- sort ----------------------------------------------------------------------------------
@AD.jvp_rule(R.SortOp)
def _sort_jvp(b, primals, tangents, *, dimension, is_stable, num_keys):
    # JAX: _sort_jvp. Sort an iota along as one more (non-key) operand to learn the
    # permutation, then gather every tangent with it (take_along_axis as a gather whose
    # other dimensions are batching dimensions).
    params = dict(dimension=dimension, is_stable=is_stable, num_keys=num_keys)
    if all(t is None for t in tangents):
        return b.emit(R.SortOp, *primals, **params), [None] * len(primals)
    shape = AD.aval(primals[0]).shape
    iota = b.iota(dtype=np.dtype(np.int32), shape=shape, dimension=dimension)
    *outs, perm = b.emit(R.SortOp, *primals, iota, **params)
    indices = b.reshape(perm, new_sizes=shape + (1,))
    others = tuple(d for d in range(len(shape)) if d != dimension)
    dn = {"offset_dims": (), "collapsed_slice_dims": (dimension,),
          "start_index_map": (dimension,), "operand_batching_dims": others,
          "start_indices_batching_dims": others}
    t_outs = [None if t is None else
              b.gather(t, indices, dimension_numbers=dn, slice_sizes=(1,) * len(shape),
                       indices_are_sorted=False, unique_indices=True,
                       mode="promise_in_bounds", fill_value=None)
              for t in tangents]
    return outs, t_outs

