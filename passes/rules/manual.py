"""Rules for `jaxpr.manual_computation` (dialect/ops/manual.py): what a compiled Pallas
kernel becomes under a shard_map, batching and lowering.

mjax runs a shard_map's body under one vmap per mesh axis (passes/rules/shard_map.py).
Batching a compiled pallas_call (TPU Mosaic, GPU Triton) along such an axis would fold
the devices into its grid or loop over them: one custom call over the global array,
which XLA's partitioner cannot split, so every device would run every device's kernel.
Instead the call is wrapped, unchanged, in a manual computation stacked along that
axis (`per_device`): the body runs it once per device on the device's blocks. Batching
the manual computation along another mesh axis stacks it along that axis too; along any
other axis (a vmap around the shard_map) batches its body.

Lowering: `sdy.manual_computation` over the module's `sdy.mesh` (made if there is none),
manual over every mesh axis (JAX's shard_map over the whole mesh). The region takes, as
JAX's does, the global value the shard_map's in_spec split where the expansion's layout
ops made the stacked operand from one (passes/rules/manual_layout.py recovers which dim
each mesh axis splits, major first: P(None, "x") is [{}, {"x"}], P(("y", "x")) is
[{"y", "x"}, {}]), and gives the global value the out_spec assembles where layout ops make
one from the stacked result; the conversions between, left dead, are erased after the
pass's walk, with the constraints of the region's own layout. Otherwise an operand
stacked along axes A with blocks of shape (b0, b1, ...) is reshaped to (|A| * b0, b1,
...) sharded as [{A...}, {}, ...] (a scalar block keeps one dim per axis), and a result
reshaped back to the stacked form the vmaps expect.
"""
from __future__ import annotations

import math

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy as sdy_d
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.attributes import encode
from mjax.dialect.builder import Builder
from mjax.dialect.ops.control_flow import YieldOp
from mjax.dialect.ops.manual import ManualComputationOp, stacked_shape
from mjax.dialect.ops.pallas import PallasCallOp
from mjax.dialect.ops.shard_map import block_layout
from mjax.dialect.types import ShapedArray, aval_of, tensor_type
from mjax.passes.rules.batch_util import bdim_at, moveaxis
from mjax.passes.rules import pallas as _pallas  # noqa: F401  (its rule, wrapped below)
from mjax.passes.rules.control_flow import inline_body
from mjax.passes.rules.op_names import SCOPES
from mjax.passes.rules.op_names import parse as parse_scope, render as render_scope
from mjax.passes.rules import manual_layout
from mjax.passes.rules.shard_map import SHARD_MAP_AXES
from mjax.passes.rules.tables import (AFTER_LOWERING, BATCH, BATCH_NESTED, JVP, MOSAIC,
                                      SHARD, TRANSPOSE, TRITON, lowering)

for _kernels in (MOSAIC, TRITON):
    _kernels.unsupported(ManualComputationOp, "a region run once per device of a mesh "
                         "wraps a compiled kernel (a pallas_call under shard_map), never "
                         "sits inside one")
JVP.unsupported(ManualComputationOp, "made by batching a compiled pallas_call along a "
                                     "shard_map axis, after differentiation")
TRANSPOSE.unsupported(ManualComputationOp, "made after differentiation (a compiled "
                                           "pallas_call has no transpose)")
BATCH.unsupported(ManualComputationOp, "batched by its BATCH_NESTED rule")
SHARD.unsupported(ManualComputationOp, "its operands' and results' layouts are fixed by "
                                       "its manual axes; the shard_map's constraints "
                                       "around it say them")


def _region_op(b: Builder, operands, in_axes, local_avals, params, fill):
    """A manual computation over `operands` whose body block (args: `local_avals`) is
    filled by fill(builder, args) -> local results."""
    loc = b.loc
    with loc:
        holder = ir.Operation.create("mjax.region_holder", regions=1, ip=b.ip)
    block = ir.Block.create_at_start(holder.regions[0], [tensor_type(a) for a in local_avals])
    bb = Builder(ir.InsertionPoint(block), loc)
    outs = fill(bb, list(block.arguments))
    with loc:
        ir.Operation.create(YieldOp.OPERATION_NAME, operands=outs, ip=bb.ip)
    sizes = dict(zip(params["mesh_axes"], params["mesh_shape"]))
    lead = stacked_shape(params["out_axes"], sizes)
    out_avals = [ShapedArray(lead + tuple(aval_of(v.type).shape), aval_of(v.type).dtype)
                 for v in outs]
    made = ManualComputationOp.build(list(operands), out_avals,
                                     dict(params, in_axes=tuple(map(tuple, in_axes))),
                                     [block], loc=loc, ip=b.ip)
    holder.erase()
    return list(made.results)


def per_device(batcher, op, vals, dims, b, mesh_axes, mesh_shape):
    """`op` (batched along the mesh axis batcher.axis_name) run once per device: a
    manual computation over that axis whose body is `op` unchanged."""
    axis = batcher.axis_name
    operands = [v if d is None else bdim_at(b, v, d, 0) for v, d in zip(vals, dims)]
    in_axes = [() if d is None else (axis,) for d in dims]
    params = dict(mesh_axes=tuple(mesh_axes), mesh_shape=tuple(mesh_shape),
                  out_axes=(axis,))

    def fill(bb, args):
        with bb.loc:
            new = op.operation.clone(ip=bb.ip).operation
        for k, a in enumerate(args):
            new.operands[k] = a
        attrs = new.attributes
        if "mesh_axes" not in attrs:     # (traced outside the shard_map)
            attrs["mesh_axes"] = encode(tuple(mesh_axes))
            attrs["mesh_shape"] = encode(tuple(mesh_shape))
        return list(new.results)
    outs = _region_op(b, operands, in_axes, [aval_of(v.type) for v in op.operands],
                      params, fill)
    return outs, [0] * len(outs)


def _manual_batch(batcher, op, vals, dims, b):
    p = dict(op.opview.params)
    axis, manual = batcher.axis_name, tuple(p["out_axes"])
    body = op.regions[0].blocks[0]
    local = [aval_of(a.type) for a in body.arguments]
    if axis is not None and axis in manual:
        raise NotImplementedError(f"jaxpr.manual_computation batched again along its "
                                  f"manual axis {axis!r}")
    if axis is not None and axis in tuple(p["mesh_axes"]):
        # (another mesh axis of the shard_map: outermost, so stacked first)
        operands = [v if d is None else bdim_at(b, v, d, 0) for v, d in zip(vals, dims)]
        in_axes = [st if d is None else (axis,) + tuple(st)
                   for st, d in zip(p["in_axes"], dims)]
        params = dict(mesh_axes=p["mesh_axes"], mesh_shape=p["mesh_shape"],
                      out_axes=(axis,) + manual)

        def fill(bb, args):
            return inline_body(body, args, bb.ip)
        outs = _region_op(b, operands, in_axes, local, params, fill)
        return outs, [0] * len(outs)
    # A vmap around the shard_map: every device runs the batched body on its blocks
    # (the batch dim first in each block, after the stacked dims outside).
    operands, batched, new_local = [], [], []
    for v, d, st, a in zip(vals, dims, p["in_axes"], local):
        if d is not None:
            v = moveaxis(b, v, d, len(st))
            a = ShapedArray((batcher.axis_size,) + a.shape, a.dtype)
        operands.append(v)
        batched.append(None if d is None else 0)
        new_local.append(a)

    for inner_op in body.operations:
        # (the mesh's vmaps are no transformations of the kernel: batched again, its
        # index maps are named as the kernel's, as JAX traces them, with no "vmap")
        if inner_op.operation.name == PallasCallOp.OPERATION_NAME:
            inner_op.operation.location = _without_transforms(inner_op.operation.location)

    def fill(bb, args):
        inner = batcher.at(bb.ip)
        pairs = inner.run(body, list(zip(args, batched)))
        ib = inner.builder(bb.loc)
        return [bdim_at(ib, v, d, 0) for v, d in pairs]
    outs = _region_op(b, operands, p["in_axes"], new_local,
                      dict(mesh_axes=p["mesh_axes"], mesh_shape=p["mesh_shape"],
                           out_axes=manual), fill)
    return outs, [len(manual)] * len(outs)


def _without_transforms(loc: ir.Location) -> ir.Location:
    """`loc` without the transformations wrapping its scope (`vmap(outer)/inner` ->
    `outer/inner`)."""
    scope = SCOPES.get(loc.attr)
    transforms, path = parse_scope(scope or "")
    if not transforms:
        return loc
    if not path:
        return loc.child_loc
    name = render_scope((), path)
    new = ir.Location.name(name, childLoc=loc.child_loc, context=loc.context)
    SCOPES[new.attr] = name
    return new


BATCH_NESTED[ManualComputationOp] = _manual_batch


def _shard_map_mesh(batcher, p):
    """The mesh (axes, shape) of the shard_map along one of whose axes a compiled
    pallas_call is batched (the one it was traced in, or the one being expanded: a
    custom_vjp's backward kernel is traced outside it), else None. Interpreted calls
    are passes/rules/pallas.py's and pallas_mesh.py's."""
    axis = batcher.axis_name
    if p.get("interpret") or axis is None:
        return None
    if p.get("mesh_axes") and axis in tuple(p["mesh_axes"]):
        return tuple(p["mesh_axes"]), tuple(p["mesh_shape"])
    return batcher.ex.state.get(SHARD_MAP_AXES, {}).get(axis)


def _pallas_call_batch(base):
    def rule(batcher, op, vals, dims, b):
        mesh = _shard_map_mesh(batcher, op.opview.params)
        if mesh is not None:
            return per_device(batcher, op, vals, dims, b, *mesh)
        return base(batcher, op, vals, dims, b)
    return rule


# (pallas_call's batching rule, passes/rules/pallas.py, with the per-device case first)
BATCH_NESTED[PallasCallOp] = _pallas_call_batch(BATCH_NESTED[PallasCallOp])


# ---- lowering ----------------------------------------------------------------------------
def _module_of(op: ir.Operation) -> ir.Operation:
    while op.parent is not None:
        op = op.parent
    return op


def _mesh_name(op: ir.Operation, axes, shape) -> str:
    """The name of the module's `sdy.mesh` of these axes (one made where there is none)."""
    module = _module_of(op)
    want = ir.Attribute.parse(
        "#sdy.mesh<[" + ", ".join(f'"{a}"={n}' for a, n in zip(axes, shape)) + "]>")
    names = set()
    body = module.regions[0].blocks[0]
    for m in body.operations:
        if m.operation.name == "sdy.mesh":
            name = ir.StringAttr(m.operation.attributes["sym_name"]).value
            names.add(name)
            if str(m.operation.attributes["mesh"]) == str(want):
                return name
    name, k = "mesh", 0
    while name in names:
        k += 1
        name = f"mesh_{k}"
    first = next(iter(body.operations), None)
    ip = ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(body)
    with ir.Location.unknown():
        sdy_d.MeshOp(name, want, ip=ip)
    return name


def _sharding(mesh: str, dims) -> str:
    """`<@mesh, [{"x", "y"}, {}]>`: per dimension the axes splitting it (major first)."""
    parts = ["{" + ", ".join(f'"{a}"' for a in d) + "}" for d in dims]
    return f"<@{mesh}, [{', '.join(parts)}]>"


def _global(stacked_axes, sizes, local: ShapedArray):
    """(global shape, per-dim axes, the block's type inside the region)."""
    lead = stacked_shape(stacked_axes, sizes)
    if local.ndim:
        shape = (math.prod(lead) * local.shape[0],) + local.shape[1:]
        return shape, [tuple(stacked_axes)] + [()] * (local.ndim - 1), local.shape
    return lead, [(a,) for a in stacked_axes], (1,) * len(lead)


def _reshape(x: ir.Value, shape) -> ir.Value:
    if list(x.type.shape) == list(shape):
        return x
    return hlo.reshape(ir.RankedTensorType.get(list(shape), x.type.element_type), x)


def _sdy_sharding(mesh: str, dims) -> str:
    return str(ir.Attribute.parse("#sdy.sharding" + _sharding(mesh, dims)))


def _constraint_of(v: ir.Value) -> str | None:
    """The sharding `v` is constrained to when it is an sdy.sharding_constraint's result."""
    if isinstance(v, ir.OpResult) and v.owner.operation.name == "sdy.sharding_constraint":
        return str(v.owner.operation.attributes["sharding"])
    return None


def _after_constraints(m: ir.Value, text: str, block) -> list[ir.Value]:
    """`m` and the constraints on it, each the only use of the one before, up to the
    farthest laying it out as `text` (the region's own sharding: those on the way are
    propagation's guesses for the shard_map's conversion, which the region replaces)."""
    chain, kept = [m], [m]
    while True:
        uses = list(chain[-1].uses)
        if len(uses) != 1:
            return kept
        owner = uses[0].owner.operation
        if owner.block != block or len(owner.results) != 1 or \
                _constraint_of(owner.results[0]) is None:
            return kept
        chain.append(owner.results[0])
        if _constraint_of(chain[-1]) == text:
            kept = list(chain)


def _operand(x, st, sizes, local, mesh):
    """(the value the region takes for stacked operand `x`, its per-dim axes, the block
    type inside): the global value the shard_map split, where layout ops made `x` from
    one (manual_layout.source; constraints of the region's layout are looked through),
    else `x` with its stacked dims merged into the first."""
    def passes(v, dims):     # (no constraint, or Shardy's of the region's own layout)
        if not isinstance(v, ir.OpResult) or manual_layout.kind(v.owner) != "same":
            return True
        return _constraint_of(v) == _sdy_sharding(mesh, dims)
    found = manual_layout.source(x, st, local.ndim, passes)
    if found is None and st:
        shape, dims, inner = _global(st, sizes, local)
        return _reshape(x, shape), dims, inner
    g, dims = found or (x, ((),) * local.ndim)
    while passes(g, dims) and _constraint_of(g) is not None:
        g = g.owner.operation.operands[0]
    return g, list(dims), local.shape


def _results(op, out_axes, local_out, mesh):
    """Per result: the global values layout ops make from it (manual_layout.targets) of
    one layout, with the constraints on them up to one of that layout ([] if none), and
    that layout."""
    block = op.block
    out = []
    for r, a in zip(op.results, local_out):
        found = manual_layout.targets(r, out_axes, a.ndim, block)
        if not found:
            out.append(([], None))
            continue
        dims = found[0][1]
        text = _sdy_sharding(mesh, dims)
        same = [c for v, d in found if d == dims for c in _after_constraints(v, text, block)]
        out.append((same, dims))
    return out


@lowering(ManualComputationOp)
def _manual_lower(ctx, *operands, mesh_axes, mesh_shape, out_axes, in_axes):
    sizes = dict(zip(mesh_axes, mesh_shape))
    mesh = _mesh_name(ctx.op, mesh_axes, mesh_shape)
    body = ctx.op.regions[0].blocks[0]
    local_in = [aval_of(a.type) for a in body.arguments]
    y = list(body.operations)[-1].operation
    local_out = [aval_of(v.type) for v in y.operands]
    cleanups = AFTER_LOWERING.get()
    ins, in_dims, in_local = [], [], []
    for x, st, a in zip(operands, in_axes, local_in):
        v, dims, inner = _operand(x, st, sizes, a, mesh)
        ins.append(v)
        in_dims.append(dims)
        in_local.append(inner)
    # (the global forms of the results are followed only where the pass erases the
    # stacked forms' conversions left dead)
    ends = _results(ctx.op, out_axes, local_out, mesh) if cleanups is not None \
        else [([], None)] * len(local_out)
    out_types, out_dims, out_local = [], [], []
    for a, (vals, dims) in zip(local_out, ends):
        if vals:
            shape, inner = tuple(aval_of(vals[0].type).shape), a.shape
        else:
            shape, dims, inner = _global(out_axes, sizes, a)
        out_types.append(ir.RankedTensorType.get(list(shape), tensor_type(a).element_type))
        out_dims.append(list(dims))
        out_local.append(inner)
    per_value = lambda ds: ir.Attribute.parse(
        "#sdy.sharding_per_value<[" + ", ".join(_sharding(mesh, d) for d in ds) + "]>")
    # (manual over the whole mesh, as JAX's shard_map over it: along an axis nothing is
    # stacked on, the blocks are the same on every device)
    manual = ir.Attribute.parse("#sdy<manual_axes{" + ", ".join(f'"{a}"' for a in mesh_axes)
                                + "}>")
    new = sdy_d.ManualComputationOp(out_types, ins, per_value(in_dims), per_value(out_dims),
                                    manual)
    block = new.regions[0].blocks.append(*[
        ir.RankedTensorType.get(list(s), tensor_type(a).element_type)
        for s, a in zip(in_local, local_in)])
    with ir.InsertionPoint(block):
        args = [_reshape(v, a.shape) for v, a in zip(block.arguments, local_in)]
        outs = inline_body(body, args, ir.InsertionPoint(block))
        outs = [_reshape(v, s) for v, s in zip(outs, out_local)]
        sdy_d.ReturnOp(outs)
    ctx.lower_nested(new.operation)
    lead = stacked_shape(out_axes, sizes)
    results = []
    for r, a, (vals, dims) in zip(new.results, local_out, ends):
        if not vals:
            results.append(_reshape(r, lead + a.shape))
            continue
        for v in vals:
            v.replace_all_uses_with(r)
        # (the stacked form, for what still reads it: the shard_map's conversion back,
        # dead now, and any other use)
        split, perm, _ = block_layout(tuple(r.type.shape), lambda d: dims[d], sizes,
                                      tuple(out_axes))
        results.append(_transpose(_reshape(r, split), perm))
    if cleanups is not None:
        # (the stacked forms, and the global results: constraints of the same layout as
        # theirs, now dead, hang on them)
        kept = [x for x, v in zip(operands, ins) if v is not x] + [
            v for r, v, (vals, _) in zip(new.results, results, ends) if vals for v in (r, v)]
        _dead_layouts(cleanups).values.extend(kept)
    return results


class _DeadLayouts:
    """The pass run's one erasure of the layout ops left dead around its manual
    computations (their chains may be shared: each op is erased once)."""

    def __init__(self):
        self.values: list[ir.Value] = []

    def __call__(self):
        manual_layout.erase_dead(self.values)


def _dead_layouts(cleanups: list) -> _DeadLayouts:
    for c in cleanups:
        if isinstance(c, _DeadLayouts):
            return c
    cleanups.append(_DeadLayouts())
    return cleanups[-1]


def _transpose(x: ir.Value, perm) -> ir.Value:
    if tuple(perm) == tuple(range(len(perm))):
        return x
    return hlo.transpose(x, ir.DenseI64ArrayAttr.get(list(perm)))


__all__ = ["per_device"]
