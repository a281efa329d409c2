"""Rules for jaxpr.sharding_constraint (dialect/ops/sharding.py): jvp, transpose, batch,
lower.

    %y = "jaxpr.sharding_constraint"(%x) {mesh_axes = ["x"], mesh_shape = array<i64: 8>,
                                          spec = ["x", ""]} : ...
  ==>
    %y = stablehlo.custom_call @Sharding(%x) {mhlo.sharding = "{devices=[8,1]<=[8]}"}

which is what XLA's sharding propagation reads (JAX lowers with_sharding_constraint the
same way when it does not use Shardy). The constraint is linear (the identity), so its
tangent and cotangent carry the same constraint (JAX: the same rules for
sharding_constraint_p).
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir

from mjax.dialect import OPS
from mjax.dialect.ops import elementwise as E
from mjax.dialect.ops import indexing as I
from mjax.dialect.ops import reductions as R
from mjax.dialect.ops import sharding as S
from mjax.dialect.ops import sorting as So
from mjax.dialect.ops import structural as St
from mjax.dialect.ops import transforms as T
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import batch_util as B
from mjax.passes.rules.tables import (CONTRACTION, PARTIAL_SUMS, PER_PARTIAL, PRODUCT, SHARD,
                                      SUM, UPDATE, lowering)

# ---- jvp / transpose ------------------------------------------------------------------
# (A value reduced over mesh axes has a cotangent unreduced over them, and the other way
# round: JAX's reduced/unreduced casts transpose into each other.)
def _constraint_transpose(b, ct, x, *, unreduced=None, reduced=None, **params):
    return [b.emit(S.ShardingConstraintOp, ct, unreduced=reduced, reduced=unreduced,
                   **params)[0]]


AD.deflinear(S.ShardingConstraintOp, _constraint_transpose)


# ---- batching -------------------------------------------------------------------------
@B.batch_rule(S.ShardingConstraintOp)
def _sharding_constraint_batch(b, args, dims, *, spec, **params):
    # The batch axis is not split: the vmapped members stay where the constraint put the
    # rest of the array (JAX does the same unless vmap(spmd_axis_name=...)).
    (x,), (d,) = args, dims
    spec = spec[:d] + ("",) + spec[d:]
    return b.emit(S.ShardingConstraintOp, x, spec=spec, **params), [d]


# ---- lowering --------------------------------------------------------------------------
@lowering(S.ShardingConstraintOp)
def _sharding_constraint_lower(ctx, x, *, mesh_axes, mesh_shape, spec, device_ids,
                               unreduced=None, reduced=None):
    # (Unreduced and reduced axes change no value; XLA's HloSharding cannot say them:
    # only Shardy's form, jaxpr_propagate_shardings.to_sdy, lays them out.)
    text = str(S.hlo_sharding(mesh_axes, mesh_shape, spec))
    # Dimensions left to the compiler are listed apart (as JAX lowers P.UNCONSTRAINED).
    open_dims = [d for d, e in enumerate(spec) if e == S.UNCONSTRAINED]
    config = f"unspecified_dims=[{','.join(map(str, open_dims))}]" if open_dims else ""
    op = ir.Operation.create(
        "stablehlo.custom_call", results=[x.type], operands=[x],
        attributes={"call_target_name": ir.StringAttr.get("Sharding"),
                    "backend_config": ir.StringAttr.get(config),
                    "mhlo.sharding": ir.StringAttr.get(text)})
    return op.results[0]


# ---- sharding propagation rules (--jaxpr-propagate-shardings) --------------------------
# Shardy's factor idea: a rule names the factors of an op (one per independent index of
# its iteration space) and, for each operand and result dimension, the factor it is
# indexed by, or None when that dimension must stay whole (replicated). A factor that
# appears in operands only (contracting or reduced dimensions) is `reduced`: sharding it
# leaves partial results that need a cross-device reduction. JAX's Shardy rules:
# jax._src.lax (sharding_rule=...), Shardy's OpShardingRuleAttr.
@dataclass(frozen=True)
class Factors:
    """The sharding rule of one op instance: dimension -> factor maps."""

    operands: tuple[tuple[int | None, ...], ...]
    results: tuple[tuple[int | None, ...], ...]
    reduced: frozenset = frozenset()
    kind: str = ""


def shard_rule(*ops):
    """Decorator: `rule(avals_in, avals_out, **params) -> Factors` for each op."""
    return SHARD.register(*ops)


def not_propagated(op, why: str) -> None:
    SHARD.unsupported(op, "replicated, not propagated: " + why)


def _same_dims(avals_in, avals_out, kind):
    """Every operand and result of the full rank is indexed by the result's dims; rank-0
    operands (scalar bounds, predicates) have no dims."""
    rank = len(avals_out[0].shape)
    dims = tuple(range(rank))
    return Factors(tuple(dims if len(a.shape) == rank else () for a in avals_in),
                   tuple(dims for _ in avals_out), kind=kind)


def shard_elementwise(*ops):
    """Ops whose operands and results share one shape: dimension i is factor i."""
    for op in ops:
        SHARD[op] = _without_params(lambda avals_in, avals_out, **params: _same_dims(
            avals_in, avals_out, "elementwise"))


def _without_params(rule):
    """Marks a rule that reads no op parameters: the propagation pass then does not
    decode them (a constant's value, for one)."""
    rule.uses_params = False
    return rule


def _fresh(avals_out, kind):
    """No operands: each result dimension is its own factor (shardable from users)."""
    return Factors((), tuple(tuple(range(len(a.shape))) for a in avals_out), kind=kind)


def _keep_dims(rank, whole, kind, n_operands=1, n_results=1):
    """Dimension i is factor i except the dimensions in `whole`, which stay whole."""
    dims = tuple(None if d in whole else d for d in range(rank))
    return Factors((dims,) * n_operands, (dims,) * n_results, kind=kind)


# ---- the rules, family by family ---------------------------------------------------------
shard_elementwise(*[op for op in OPS.values() if op.__module__ == E.__name__])
shard_elementwise(St.ConvertElementTypeOp, St.ReducePrecisionOp, St.StopGradientOp,
                  St.CopyOp, St.SelectNOp, St.ClampOp, S.ShardingConstraintOp,
                  St.LayoutConstraintOp, T.XlaMetadataValueOp, St.DevicePutOp)


@shard_rule(St.OptimizationBarrierOp)
def _optimization_barrier_shard(avals_in, avals_out):
    # Each operand passes to its result: factors numbered per operand.
    start, operands = 0, []
    for a in avals_in:
        operands.append(tuple(range(start, start + len(a.shape))))
        start += len(a.shape)
    return Factors(tuple(operands), tuple(operands), kind="identity")


@shard_rule(St.ConstantOp, St.IotaOp, St.DimAsValueOp)
@_without_params
def _constant_shard(avals_in, avals_out, **params):
    return _fresh(avals_out, "constant")


@shard_rule(St.BroadcastInDimOp)
def _broadcast_in_dim_shard(avals_in, avals_out, *, shape, broadcast_dimensions):
    # Operand dim i indexes result dim broadcast_dimensions[i] unless it is a size-1 dim
    # being expanded (which stays whole); the new result dims are their own factors.
    x = avals_in[0].shape
    operand = tuple(r if x[i] == shape[r] else None
                    for i, r in enumerate(broadcast_dimensions))
    return Factors((operand,), (tuple(range(len(shape))),), kind="broadcast_in_dim")


def _reshape_groups(src, dst):
    """Pairs of (source dims, target dims) groups with equal element counts, greedy."""
    groups, i, j = [], 0, 0
    while i < len(src) or j < len(dst):
        gi, gj = [i] if i < len(src) else [], [j] if j < len(dst) else []
        a = src[i] if i < len(src) else 1
        b = dst[j] if j < len(dst) else 1
        i, j = i + bool(gi), j + bool(gj)
        while a != b:
            if a < b and i < len(src):
                gi.append(i)
                a *= src[i]
                i += 1
            elif j < len(dst):
                gj.append(j)
                b *= dst[j]
                j += 1
            else:
                break
        groups.append((gi, gj))
    return groups


@shard_rule(St.ReshapeOp)
def _reshape_shard(avals_in, avals_out, *, new_sizes, dimensions):
    # Dimensions that keep their size map 1:1; in a group that splits or merges
    # dimensions only the major ones share a factor (a block of rows of the merged
    # dimension is a block of its major dimension when the tile count divides it; the
    # pass checks divisibility); the rest of the group stays whole.
    src, dst = avals_in[0].shape, tuple(new_sizes)
    operand, result = [None] * len(src), [None] * len(dst)
    if dimensions is None:
        for f, (gi, gj) in enumerate(_reshape_groups(src, dst)):
            gi = [d for d in gi if src[d] != 1]
            gj = [d for d in gj if dst[d] != 1]
            if gi and gj:
                operand[gi[0]] = result[gj[0]] = f
    return Factors((tuple(operand),), (tuple(result),), kind="reshape")


@shard_rule(St.SqueezeOp)
def _squeeze_shard(avals_in, avals_out, *, dimensions):
    rank = len(avals_in[0].shape)
    kept = [d for d in range(rank) if d not in dimensions]
    return Factors((tuple(d if d in kept else None for d in range(rank)),), (tuple(kept),),
                   kind="squeeze")


@shard_rule(St.ExpandDimsOp)
def _expand_dims_shard(avals_in, avals_out, *, dimensions):
    rank = len(avals_out[0].shape)
    kept = [d for d in range(rank) if d not in dimensions]
    return Factors((tuple(kept),), (tuple(d if d in kept else None for d in range(rank)),),
                   kind="expand_dims")


@shard_rule(St.TransposeOp)
def _transpose_shard(avals_in, avals_out, *, permutation):
    # Result dim i is operand dim permutation[i]: factor = the operand dim.
    return Factors((tuple(range(len(permutation))),), (tuple(permutation),),
                   kind="transpose")


@shard_rule(St.RevOp)
def _rev_shard(avals_in, avals_out, *, dimensions):
    return _keep_dims(len(avals_out[0].shape), set(dimensions), "rev")


@shard_rule(St.TileOp)
def _tile_shard(avals_in, avals_out, *, reps):
    # A repeated dim is not propagated (JAX refuses to tile a sharded dim).
    return _keep_dims(len(reps), {i for i, r in enumerate(reps) if r != 1}, "tile")


@shard_rule(St.ConcatenateOp)
def _concatenate_shard(avals_in, avals_out, *, dimension):
    return _keep_dims(len(avals_out[0].shape), {dimension}, "concatenate",
                      n_operands=len(avals_in))


@shard_rule(St.PadOp)
def _pad_shard(avals_in, avals_out, *, padding_config):
    padded = {d for d, c in enumerate(padding_config) if tuple(c) != (0, 0, 0)}
    f = _keep_dims(len(avals_out[0].shape), padded, "pad")
    return Factors((f.operands[0], ()), f.results, kind="pad")


@shard_rule(St.SliceOp)
def _slice_shard(avals_in, avals_out, *, start_indices, limit_indices, strides):
    shape = avals_in[0].shape
    cut = {d for d in range(len(shape)) if (start_indices[d], limit_indices[d]) !=
           (0, shape[d]) or (strides is not None and strides[d] != 1)}
    return _keep_dims(len(shape), cut, "slice")


@shard_rule(St.DotGeneralOp)
def _dot_general_shard(avals_in, avals_out, *, dimension_numbers, precision=None,
                       preferred_element_type=None):
    # Factors: batch dims (lhs, rhs, result), lhs free dims (lhs, result), rhs free dims
    # (rhs, result), contracting dims (lhs, rhs: reduced). Result dims are ordered
    # batch, lhs free, rhs free.
    (lc, rc), (lb, rb) = dimension_numbers
    lhs, rhs = [None] * len(avals_in[0].shape), [None] * len(avals_in[1].shape)
    result, f = [], 0
    for l, r in zip(lb, rb):
        lhs[l] = rhs[r] = f
        result.append(f)
        f += 1
    for side, skip in ((lhs, set(lc) | set(lb)), (rhs, set(rc) | set(rb))):
        for d in range(len(side)):
            if d not in skip:
                side[d] = f
                result.append(f)
                f += 1
    reduced = []
    for l, r in zip(lc, rc):
        lhs[l] = rhs[r] = f
        reduced.append(f)
        f += 1
    return Factors((tuple(lhs), tuple(rhs)), (tuple(result),), frozenset(reduced),
                   kind="dot_general")


@shard_rule(R.ReduceSumOp, R.ReduceProdOp, R.ReduceMaxOp, R.ReduceMinOp, R.ReduceAndOp,
            R.ReduceOrOp, R.ReduceXorOp)
def _reduction_shard(avals_in, avals_out, *, axes):
    # Reduced dims are reduced factors: a sharded one leaves partial results per device.
    rank = len(avals_in[0].shape)
    kept = [d for d in range(rank) if d not in axes]
    return Factors((tuple(range(rank)),), (tuple(kept),), frozenset(axes),
                   kind="reduction")


@shard_rule(R.ArgMinOp, R.ArgMaxOp)
def _argminmax_shard(avals_in, avals_out, *, axes, index_dtype):
    # An index is not combined by a plain all-reduce: the searched dims stay whole.
    rank = len(avals_in[0].shape)
    kept = [d for d in range(rank) if d not in axes]
    return Factors((tuple(None if d in axes else d for d in range(rank)),), (tuple(kept),),
                   kind="argminmax")


@shard_rule(*[op for op in OPS.values() if op.__module__ == R.__name__
              and issubclass(op, R.CumulativeReduction)])
def _cumulative_shard(avals_in, avals_out, *, axis, reverse):
    return _keep_dims(len(avals_in[0].shape), {axis}, "cumulative")


@shard_rule(R.SortOp)
def _sort_shard(avals_in, avals_out, *, dimension, is_stable, num_keys):
    return _keep_dims(len(avals_in[0].shape), {dimension}, "sort", len(avals_in),
                      len(avals_out))


@shard_rule(So.TopKOp)
def _top_k_shard(avals_in, avals_out, *, k, axis=-1):
    rank = len(avals_in[0].shape)
    return _keep_dims(rank, {axis % rank}, "top_k", 1, len(avals_out))


@shard_rule(So.ApproxTopKOp)
def _approx_top_k_shard(avals_in, avals_out, *, reduction_dimension, **params):
    # As top_k: the reduction dimension stays whole (JAX refuses a sharded one), the
    # others pass to both results.
    rank = len(avals_in[0].shape)
    return _keep_dims(rank, {reduction_dimension % rank}, "approx_top_k", 1,
                      len(avals_out))


# Families with no sharding rule: their values are left replicated (XLA decides), each
# for a stated reason. Keyed by the op's dialect module, so a new op of these families
# has its reason at once.
_FAMILY_REASONS = {
    "collectives": "named-axis collectives are batched away by vmap (shard_map) before "
                   "sharding propagation sees them",
    "transforms": "transformation ops are expanded (--jaxpr-expand-transforms) and calls "
                  "inlined (--jaxpr-inline) before propagation",
    "control_flow": "values inside cond/while/scan regions are not propagated into yet",
    "region_reductions": "reductions with a body region are not propagated into yet",
    "linalg": "factorizations and FFTs need whole matrices on one device here",
    "indexing": "gathers, scatters and dynamic slices are not propagated yet",
    "random": "PRNG key ops are not propagated yet",
    "convolution": "convolutions are not propagated yet (their spatial dims need halos)",
    "windowed": "windowed reductions need halos, which are not propagated yet",
    "callbacks": "host callbacks see whole values on the host",
}
not_propagated(St.BitcastConvertTypeOp, "a change of element width reshapes the minor "
                                        "dimension")
for _op in OPS.values():
    family = _op.__module__.rsplit(".", 1)[-1]
    if _op not in SHARD and SHARD.reason(_op) is None and family in _FAMILY_REASONS:
        not_propagated(_op, _FAMILY_REASONS[family])


# ---- partial sums (unreduced values; tables.PARTIAL_SUMS) -----------------------------
# JAX's unreduced rules: casts, copies, sums and structural ops act on each device's term
# alone; add needs its operands unreduced alike; mul is bilinear; dot_general refuses
# unreduced operands (JAX: the `unreduced_rule`s of jax._src.lax).
for _op in (St.ConvertElementTypeOp, St.CopyOp, R.ReduceSumOp, St.TransposeOp,
            St.ReshapeOp, St.BroadcastInDimOp, St.SqueezeOp, St.ExpandDimsOp, St.RevOp,
            St.SliceOp, I.DynamicSliceOp, St.ReducePrecisionOp):
    PARTIAL_SUMS[_op] = PER_PARTIAL
PARTIAL_SUMS.update({E.AddOp: SUM, E.MulOp: PRODUCT, St.DotGeneralOp: CONTRACTION,
                     I.DynamicUpdateSliceOp: UPDATE})
