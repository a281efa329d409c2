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

from jaxlib.mlir import ir

from mjax.dialect.ops import sharding as S
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import batch_util as B
from mjax.passes.rules.tables import lowering

# ---- jvp / transpose ------------------------------------------------------------------
AD.deflinear(S.ShardingConstraintOp, lambda b, ct, x, **params: [
    b.emit(S.ShardingConstraintOp, ct, **params)[0]])


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
def _sharding_constraint_lower(ctx, x, *, mesh_axes, mesh_shape, spec, device_ids):
    text = str(S.hlo_sharding(mesh_axes, mesh_shape, spec))
    op = ir.Operation.create(
        "stablehlo.custom_call", results=[x.type], operands=[x],
        attributes={"call_target_name": ir.StringAttr.get("Sharding"),
                    "backend_config": ir.StringAttr.get(""),
                    "mhlo.sharding": ir.StringAttr.get(text)})
    return op.results[0]
