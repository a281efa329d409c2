"""Expansion of `jaxpr.shard_map @body` (dialect/ops/shard_map.py) into what mjax runs:
sharding constraints, reshapes and one `jaxpr.vmap` per manual mesh axis.

For a mesh (x: 4, y: 2) and an operand of shape (8, 6) with in_spec ("x",):

  1. the operand is constrained to ("x", ""), reshaped to (4, 2, 6) (one leading block
     axis per mesh axis its spec names, in mesh order) and constrained to ("x", "", "");
  2. @body runs under nested vmaps, one per manual axis (outermost = first), each with
     `axis_name` = the mesh axis: in_axes 0 where the operand has that block axis, -1
     where it is replicated (the captured operands: -1 always). The named-axis
     collectives inside batch into reductions/gathers along block axes, which XLA's SPMD
     partitioner turns into cross-device collectives;
  3. results come back stacked per out_specs (with check_vma, a block axis per mesh
     axis the spec names and out_axes -1 for the others; without, one per manual axis,
     of which member 0's block is kept for the axes the spec does not name) and are
     reshaped to the global shape under the out_spec's constraint.

Over part of the mesh (manual_axes a subset), the dimensions a constraint leaves whole
are "?" (left to the compiler, which may split them over the automatic axes).

The vmaps made are expanded at once (passes/batching.py's rule, through EXPAND), so
the op leaves plain ops and calls behind. This is the program frontend/spmd/shard_map.py
built at trace time before the op existed, op for op. A result unreduced over axes
(`out_unreduced`) is stacked along them and summed, laid out unreduced.

The expansion is the last step of --jaxpr-expand-transforms (`expand_shard_maps`):
jvp, vjp and linear_transpose keep the op, with its body transformed
(passes/shard_map_ad.py), as JAX's shard_map_p stays one equation under AD.
"""
from __future__ import annotations

import math

from jaxlib.mlir import ir

from mjax.dialect.attributes import Symbol
from mjax.dialect.builder import Builder
from mjax.dialect.ops import transforms as T
from mjax.dialect.ops.shard_map import ShardMapOp, block_layout, entry_axes, spec_axes
from mjax.dialect.ops.sharding import UNCONSTRAINED, ShardingConstraintOp
from mjax.dialect.ops.reductions import ReduceSumOp
from mjax.dialect.ops.structural import ReshapeOp, SliceOp, SqueezeOp, TransposeOp
from mjax.dialect.types import aval_of
from mjax.passes.ir_util import callee_of, nested_ops, replace_op, set_results
from mjax.passes.rules.tables import BATCH, EXPAND, JVP, LOWER, SHARD, TRANSPOSE


# ex.state key: manual axis name -> (mesh axes, mesh shape) of the shard_map being expanded
SHARD_MAP_AXES = "shard_map_axes"


class _Mesh:
    """The mesh an op names, and the manual axes it is over."""

    def __init__(self, p):
        self.axes = tuple(p["mesh_axes"])
        self.sizes = dict(zip(self.axes, p["mesh_shape"]))
        self.device_ids = p["device_ids"]
        self.manual = tuple(p["manual_axes"])
        self.partial = set(self.manual) != set(self.axes)

    def constrain(self, b: Builder, x, entries, unreduced=()):
        """`x` laid out as `entries` (one per leading dimension; the rest whole, or left to
        the compiler over part of the mesh)."""
        rank = len(aval_of(x.type).shape)
        if self.partial:
            spec = tuple(entries[d] if d < len(entries) and entries[d] else UNCONSTRAINED
                         for d in range(rank))
        else:
            spec = tuple(entries[d] if d < len(entries) else "" for d in range(rank))
        params = dict(mesh_axes=self.axes, mesh_shape=tuple(self.sizes[a] for a in self.axes),
                      spec=spec)
        params["device_ids"] = (tuple(self.device_ids) if self.device_ids is not None
                                else tuple(range(math.prod(self.sizes.values()))))
        if unreduced:
            params["unreduced"] = tuple(a for a in self.axes if a in unreduced)
        return b.emit(ShardingConstraintOp, x, **params)[0]


def _reshape(b, x, shape):
    if tuple(aval_of(x.type).shape) == tuple(shape):
        return x
    return b.emit(ReshapeOp, x, new_sizes=tuple(shape), dimensions=None)[0]


def _transpose(b, x, perm):
    if tuple(perm) == tuple(range(len(perm))):
        return x
    return b.emit(TransposeOp, x, permutation=tuple(perm))[0]


def _to_blocks(b, mesh: _Mesh, x, spec):
    """Global value -> (block axes of the mesh axes `spec` uses, in mesh order, ...block)."""
    shape = aval_of(x.type).shape
    x = mesh.constrain(b, x, spec)
    split, perm, present = block_layout(
        shape, lambda d: entry_axes(spec[d]) if d < len(spec) else (), mesh.sizes, mesh.axes)
    if not present:
        return x
    x = _transpose(b, _reshape(b, x, split), perm)
    return mesh.constrain(b, x, present)


def _index_first(b, y, axis: int):
    """Member 0's block along `axis` (lax.index_in_dim(y, 0, axis, keepdims=False))."""
    shape = aval_of(y.type).shape
    limit = list(shape)
    limit[axis] = 1
    y = b.emit(SliceOp, y, start_indices=(0,) * len(shape), limit_indices=tuple(limit),
               strides=(1,) * len(shape))[0]
    return b.emit(SqueezeOp, y, dimensions=(axis,))[0]


def _from_blocks(b, mesh: _Mesh, y, spec, stacked, unreduced=()):
    """(block axes of `stacked`, ...block) -> the global value laid out as `spec`; the
    blocks stacked along the axes `unreduced` are summed (laid out unreduced)."""
    if stacked:
        y = mesh.constrain(b, y, stacked)
    named = spec_axes(spec)
    for a in reversed([a for a in stacked if a not in named]):
        if a in unreduced:
            y = b.emit(ReduceSumOp, y, axes=(stacked.index(a),))[0]
        else:
            y = _index_first(b, y, stacked.index(a))
    present = [a for a in stacked if a in named]
    block = aval_of(y.type).shape[len(present):]
    perm, shape = [], []
    for d, size in enumerate(block):
        names = entry_axes(spec[d]) if d < len(spec) else ()
        perm += [present.index(a) for a in names] + [len(present) + d]
        shape.append(size * math.prod(mesh.sizes[a] for a in names))
    if present:
        y = _transpose(b, y, perm)
        y = _reshape(b, y, shape)
    return mesh.constrain(b, y, spec, unreduced)


def expand_shard_map_op(ex, op: ir.Operation) -> None:
    """Replaces one `jaxpr.shard_map` by its constraints, reshapes and vmaps, and expands
    the vmaps."""
    p = op.opview.params
    mesh = _Mesh(p)
    callee = str(p["callee"])
    n_args = len(op.operands) - p["num_captured"]
    in_specs, out_specs = p["in_specs"], p["out_specs"]
    check = p["check_vma"] and not p["stacked_outputs"]
    unreduced = [set(u) for u in p["out_unreduced"] or [()] * len(out_specs)]
    b = Builder(ir.InsertionPoint(op), op.location)
    operands = [_to_blocks(b, mesh, x, s) for x, s in zip(list(op.operands)[:n_args], in_specs)]
    operands += list(op.operands)[n_args:]
    # One vmap per manual axis, outermost first: level k vmaps fn_k, where fn_{L-1} is
    # @body and fn_k (k < L-1) a new function holding level k+1's vmap of fn_{k+1}.
    levels = []
    for a in mesh.manual:
        in_axes = tuple(0 if a in spec_axes(s) else T.NOT_MAPPED for s in in_specs)
        in_axes += (T.NOT_MAPPED,) * p["num_captured"]
        out_axes = tuple(0 if not check or a in spec_axes(s) or a in u else T.NOT_MAPPED
                         for s, u in zip(out_specs, unreduced))
        levels.append((a, in_axes, out_axes))
    ins, _ = ex.fns.signature(callee)
    inner, made = callee, []
    for k in range(len(levels) - 2, -1, -1):
        args = []
        for i, aval in enumerate(ins):
            for a, in_axes, _ in reversed(levels[k + 1:]):
                if in_axes[i] != T.NOT_MAPPED:
                    aval = aval.update(shape=(mesh.sizes[a],) + tuple(aval.shape))
            args.append(aval)
        name = ex.fns.fresh_name(f"{callee}_{levels[k][0]}")
        fn, block = ex.fns.create(name, args, None, after=ex.fns.get(callee))
        wb = Builder(ir.InsertionPoint(block), op.location)
        set_results(fn, _vmap(ex, wb, inner, list(block.arguments), levels[k + 1], mesh, p))
        made.append(name)
        inner = name
    vmap_op = _vmap(ex, b, inner, operands, levels[0], mesh, p, op_only=True)
    stacked = list(vmap_op.results)
    results = []
    for y, s, u in zip(stacked, out_specs, unreduced):
        order = [a for a in mesh.manual if not check or a in spec_axes(s) or a in u]
        results.append(_from_blocks(b, mesh, y, s, order, u))
    replace_op(op, results)
    # (while its vmaps expand, each manual axis names this mesh: a compiled kernel traced
    # outside the shard_map, as a custom_vjp's backward pass, still runs per device)
    axes = ex.state.setdefault(SHARD_MAP_AXES, {})
    saved = dict(axes)
    axes.update({a: (mesh.axes, tuple(mesh.sizes[x] for x in mesh.axes))
                 for a in mesh.manual})
    try:
        if made:
            ex.expand_function(made[-1])
        EXPAND.get(T.VmapOp)(ex, vmap_op)
    finally:
        axes.clear()
        axes.update(saved)


def _vmap(ex, b, callee, operands, level, mesh, p, op_only=False):
    """`jaxpr.vmap @callee(operands)` over the level's axis: its results (the op)."""
    a, in_axes, out_axes = level
    params = T.VmapOp.check_params(dict(
        callee=Symbol(callee), in_axes=in_axes, out_axes=out_axes, axis_size=mesh.sizes[a],
        axis_name=a, out_paths=p["out_paths"] if T.NOT_MAPPED in out_axes else None))
    avals = [aval_of(v.type) for v in operands]
    out = T.VmapOp.infer_with_callees(avals, params, ex.fns.signature)
    made = T.VmapOp.create(operands, out, params, loc=b.loc, ip=b.ip)
    made = made.operation if hasattr(made, "operation") else made
    return made if op_only else list(made.results)


def expand_shard_maps(ex, roots=None) -> None:
    """Expands every `jaxpr.shard_map` left in the module, or in the functions `roots`
    and those they reach (bodies first): the last step of --jaxpr-expand-transforms,
    after differentiation kept them as ops."""
    done = set()

    def visit(name):
        if name in done or name not in ex.fns:
            return
        done.add(name)
        for op in nested_ops(ex.fns.get(name)):
            callee = callee_of(op)
            if callee is not None:
                visit(callee)
            if op.name == ShardMapOp.OPERATION_NAME:
                expand_shard_map_op(ex, op)
    for name in list(ex.fns.table) if roots is None else roots:
        visit(name)


def _keep(ex, op) -> None:
    # (Differentiation keeps the op, with its body differentiated: the AD rules of
    # passes/shard_map_ad.py; expand_shard_maps expands what is left at the end.)
    ex.state["shard_maps"] = True


EXPAND[ShardMapOp] = _keep
JVP.unsupported(ShardMapOp, "differentiated by its JVP_NESTED rule (passes/shard_map_ad.py)")
TRANSPOSE.unsupported(ShardMapOp, "transposed by its TRANSPOSE_NESTED rule "
                                  "(passes/shard_map_ad.py)")
BATCH.unsupported(ShardMapOp, "batched by its BATCH_NESTED rule (passes/shard_map_ad.py): "
                              "expanded, then batched as a call")
LOWER.unsupported(ShardMapOp, "unexpanded transformation op 'jaxpr.shard_map'; run "
                              "--jaxpr-expand-transforms first")
SHARD.unsupported(ShardMapOp, "its layouts are its specs; --jaxpr-expand-transforms "
                              "expands it into sharding constraints first")

__all__ = ["SHARD_MAP_AXES", "expand_shard_map_op", "expand_shard_maps"]
