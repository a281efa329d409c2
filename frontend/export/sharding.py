"""`mjax.export` of functions laid out over several devices (export.py's sharded part).

Exporting: the arguments' shardings (a `ShapeDtypeStruct`'s sharding, a sharded array's,
or jit's in_shardings) and jit's out_shardings are kept as NamedShardings over the
mesh's *abstract* mesh (its axis sizes, names and types, no devices), as JAX keeps them
(`Exported._in_named_shardings`); the module is lowered for that mesh (Shardy's
`sdy.mesh @mesh` and `sdy.sharding` on @main, `mhlo.num_partitions` = the device count).

Calling: the devices are those of the arguments' shardings (any mesh with as many
devices); each argument is laid out as the exported sharding over the abstract mesh's
shape of those devices, the module runs there, and the results come back sharded as
exported (or as XLA laid them out, for results exported without a sharding).
JAX: jax/_src/export/_export.py (to_named_sharding_with_abstract_mesh,
_get_named_sharding, _call_exported_lowering).
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy

from mjax.base import trace_trees, tree_util
from mjax.dialect import context
from mjax.dialect.symbols import main_function
from mjax.arrays.dispatch import execute
from mjax.passes.pipeline import partitioning
from mjax.arrays.array import Array
from mjax.dialect.types import ShapedArray
from mjax.arrays.placement import default_backend
from mjax.runtime import get_backend
from mjax.specs.sharding_impls import (AbstractMesh, Mesh, NamedSharding, P,
                                       SingleDeviceSharding, reshaped_mesh)
from mjax.spmd import jit as spmd


# ---- exporting ----------------------------------------------------------------------------
def _abstract(s) -> NamedSharding | None:
    """A NamedSharding over a concrete or abstract mesh, over the abstract one (JAX:
    to_named_sharding_with_abstract_mesh)."""
    if s is None or not isinstance(s, NamedSharding):
        return None
    mesh = s.mesh.abstract_mesh if isinstance(s.mesh, Mesh) else s.mesh
    return NamedSharding(mesh, s.spec, memory_kind=s.memory_kind)


def _leaf_sharding(leaf):
    s = leaf._sharding if type(leaf) is Array else getattr(leaf, "sharding", None)
    return s if isinstance(s, NamedSharding) and s.mesh.size > 1 else None


def export_layout(fun_jit, traced, args, kwargs):
    """(in shardings, out shardings, abstract mesh) an export over several devices is
    lowered for (NamedShardings over the abstract mesh, None where unspecified), or None
    for a one-device export."""
    tr = traced._traced
    leaves = trace_trees.tree_leaves((args, kwargs))
    dyn_args = tuple(args)
    given = [None] * len(leaves)
    if fun_jit._in_shardings is not None:
        n_kw = len(leaves) - len(trace_trees.tree_leaves(dyn_args))
        given = spmd.flat_shardings(fun_jit._in_shardings, dyn_args, "in_shardings") + \
            [None] * n_kw
    ins = [s if s is not None else _leaf_sharding(x) for s, x in zip(given, leaves)]
    outs = [None] * len(tr.out_avals)
    if fun_jit._out_shardings is not None:
        example = tree_util.tree_unflatten(tr.out_tree, list(tr.out_avals))
        outs = spmd.flat_shardings(fun_jit._out_shardings, example, "out_shardings")
    named = [s for s in ins + outs if isinstance(s, NamedSharding) and s.mesh.size > 1]
    if not named and traced._layout is None:
        return None
    if named:
        mesh = _abstract(named[0]).mesh
    else:   # (constraints inside over a mesh: JAX exports for that mesh)
        mesh = traced._layout[2].abstract_mesh
        if mesh.size == 1:
            return None
    for s in named:
        m = _abstract(s).mesh
        if (m.axis_names, m.axis_sizes, m.axis_types) != (mesh.axis_names, mesh.axis_sizes,
                                                          mesh.axis_types):
            raise ValueError(f"Received incompatible devices for jitted computation: the "
                             f"shardings use different meshes: {mesh!r} and {m!r}")

    def over(s):
        a = _abstract(s)
        return (None if a is None or a.mesh.size == 1 else
                NamedSharding(mesh, a.spec, memory_kind=a.memory_kind))
    return [over(s) for s in ins], [over(s) for s in outs], mesh


def lower_sharded(module, layout, out_avals) -> None:
    """Lowers the (jaxpr dialect) module in place for the layout's mesh: Shardy's form,
    unspecified arguments replicated, unspecified results as propagation decides."""
    ins, outs, mesh = layout
    replicated = NamedSharding(mesh, P())
    spmd.lower(module, [s if s is not None else replicated for s in ins], list(outs),
               list(out_avals), mesh)


def shardings_jax(named, mesh) -> tuple:
    """Exported.in_shardings_jax / out_shardings_jax: the exported shardings over `mesh`
    (a Mesh or an AbstractMesh with the exported axes)."""
    out = []
    for s in named:
        if s is None:
            out.append(None)
            continue
        if mesh is None:
            out.append(s)
            continue
        am = mesh.abstract_mesh
        if (am.axis_sizes, am.axis_names, am.axis_types) != (
                s.mesh.axis_sizes, s.mesh.axis_names, s.mesh.axis_types):
            raise ValueError(f"NamedSharding new mesh {mesh} does not match the mesh used "
                             f"for export {s.mesh}.")
        out.append(s.update(mesh=mesh))
    return tuple(out)


def export_mesh(exported) -> AbstractMesh | None:
    """The abstract mesh an Exported was lowered for (None: one device, or none known)."""
    for s in list(exported._in_named_shardings) + list(exported._out_named_shardings):
        if s is not None and s.mesh.size > 1:
            return s.mesh
    return None


def vjp_shardings(primal, ct_avals):
    """(The shardings of the exported VJP's arguments: the primal's arguments', then a
    cotangent's as its result's (replicated where unspecified, as JAX's); its results'
    as the primal's arguments' (None for jit's out_shardings on one device)."""
    mesh = export_mesh(primal)
    if primal.nr_devices == 1 or mesh is None:
        return [None] * (len(primal.in_avals) + len(ct_avals)), None
    cts = [s if s is not None else NamedSharding(mesh, P(*[None] * len(a.shape)))
           for s, a in zip(primal._out_named_shardings, ct_avals)]
    return list(primal._in_named_shardings) + cts, tuple(primal._in_named_shardings)


# ---- calling ------------------------------------------------------------------------------
def _devices_of(leaves) -> tuple[list, Mesh | None]:
    """(The devices the call runs on: those of the arguments' shardings, in mesh order;
    the first argument's mesh over them, if any)."""
    for x in leaves:
        s = getattr(x, "_sharding", None) if type(x) is Array else None
        if isinstance(s, NamedSharding) and isinstance(s.mesh, Mesh) and s.mesh.size > 1:
            return list(s.mesh.devices.flat), s.mesh
    for x in leaves:
        s = getattr(x, "_sharding", None) if type(x) is Array else None
        if s is not None and len(s._device_list()) > 1:
            return list(s._device_list()), None
    for x in leaves:
        s = getattr(x, "_sharding", None) if type(x) is Array else None
        if isinstance(s, SingleDeviceSharding):
            return [s._device], None
    return [get_backend(default_backend()).devices()[0]], None


def check_device_count(exported, n: int) -> None:
    if n != exported.nr_devices and exported.nr_devices != 1:
        raise ValueError(f"Function {exported.fun_name} was exported for "
                         f"{exported.nr_devices} devices and is called in a context with "
                         f"{n} devices, which is not allowed.")


def call_eager(exported, leaves, module_avals, platform_index) -> list:
    """Runs a multi-device export on the devices of its (concrete) arguments: results
    exported with a sharding come back with it, over those devices in the exported
    mesh's shape; the others laid out as XLA chose, over the arguments' mesh (as JAX)."""
    devices, arg_mesh = _devices_of(leaves)
    check_device_count(exported, len(devices))
    amesh = export_mesh(exported) or AbstractMesh((len(devices),), ("_export",))
    mesh = reshaped_mesh(tuple(devices), amesh)
    replicated = NamedSharding(mesh, P())
    in_sh = [NamedSharding(mesh, s.spec) if s is not None else replicated
             for s in exported._in_named_shardings]
    out_sh = [NamedSharding(mesh, s.spec) if s is not None else None
              for s in exported._out_named_shardings]
    in_avals, out_avals = module_avals
    bufs = [spmd.put_for(x, a, s) for x, a, s in zip(leaves, in_avals, in_sh)]
    if platform_index is not None:
        index = ShapedArray((), "int32")
        bufs = [spmd.put_for(np.int32(platform_index), index, replicated)] + bufs
    backend = get_backend(default_backend())
    exe = backend.compile(exported.mlir_module(), devices, num_partitions=len(devices),
                          out_avals=list(out_avals), partitioning=_partitioning(exported))
    outs = execute(exe, bufs, None, leaves)
    return spmd.wrap_outputs(outs, list(out_avals), out_sh, exe, arg_mesh or mesh)


def _partitioning(exported) -> tuple:
    """XLA's partitioner for an export's module (passes.pipeline.partitioning), found
    once per Exported: its module comes as text (serialized, or from another lowering)."""
    found = exported.__dict__.get("_partitioning")
    if found is None:
        with context():
            found = partitioning(ir.Module.parse(exported.mlir_module()))
        exported.__dict__["_partitioning"] = found
    return found


# ---- under a trace: the module in XLA's (GSPMD's) form --------------------------------------
def gspmd_module(exported) -> str:
    """The module of a multi-device export as a call inside a traced program takes it
    (export.py binds it in `jaxpr.call_exported`, whose lowering clones its functions
    into the caller's module, compiled in XLA's `mhlo.sharding` form): Shardy's meshes
    dropped, its sharding constraints written as `@Sharding` custom calls over the
    logical devices 0..n-1 of the caller's device assignment, and the exported argument
    and result shardings constrained in @main (JAX wraps the call's operands and
    results so)."""
    text = exported.__dict__.get("_gspmd_text")
    if text is not None:
        return text
    with context(), ir.Location.unknown(context()):
        module = ir.Module.parse(exported.mlir_module())
        meshes = {}
        for op in list(module.body.operations):
            if op.operation.name == "sdy.mesh":
                axes = [sdy.MeshAxisAttr(a) for a in sdy.MeshAttr(op.attributes["mesh"]).axes]
                name = ir.StringAttr(op.attributes["sym_name"]).value
                meshes[name] = AbstractMesh(tuple(a.size for a in axes),
                                            tuple(a.name for a in axes))
                op.operation.erase()
        constraints = []

        def visit(op):
            if op.name == "sdy.sharding_constraint":
                constraints.append(op)
            elif op.name.startswith("sdy."):
                raise NotImplementedError(
                    f"Exported.call of '{exported.fun_name}' inside a traced function: its "
                    f"module uses {op.name} (shard_map or a Shardy construct), which mjax "
                    f"cannot yet combine with the caller's program")
            return ir.WalkResult.ADVANCE
        module.operation.walk(visit)
        for op in constraints:
            sharding = _named_of(op.attributes["sharding"], meshes)
            new = _sharding_call(op.operands[0], sharding, ir.InsertionPoint(op))
            op.results[0].replace_all_uses_with(new)
            op.erase()
        for fn in module.body.operations:
            _drop_sdy_attrs(fn.operation)
        main = main_function(module)
        _constrain_main(main, exported)
    text = module.operation.get_asm()
    exported.__dict__["_gspmd_text"] = text
    return text


def _drop_sdy_attrs(fn) -> None:
    """A function's argument and result attributes without Shardy's."""
    for name in ("arg_attrs", "res_attrs"):
        if name in fn.attributes:
            fn.attributes[name] = ir.ArrayAttr.get([
                ir.DictAttr.get({a.name: a.attr for a in ir.DictAttr(d)
                                 if not a.name.startswith("sdy.")})
                for d in ir.ArrayAttr(fn.attributes[name])])


def _named_of(attr, meshes) -> NamedSharding:
    t = sdy.TensorShardingAttr(attr)
    mesh_name = ir.FlatSymbolRefAttr(t.mesh_or_ref).value
    dims = []
    for d in t.dimension_shardings:
        axes = [sdy.AxisRefAttr(a) for a in sdy.DimensionShardingAttr(d).axes]
        if any(a.sub_axis_info is not None for a in axes):
            raise NotImplementedError("Exported.call inside a traced function: a sharding "
                                      "over sub-axes of a mesh axis is not supported")
        names = tuple(a.name for a in axes)
        dims.append(None if not names else names[0] if len(names) == 1 else names)
    return NamedSharding(meshes[mesh_name], P(*dims))


def _sharding_call(x, sharding: NamedSharding, ip) -> ir.Value:
    rank = len(ir.RankedTensorType(x.type).shape)
    op = ir.Operation.create(
        "stablehlo.custom_call", results=[x.type], operands=[x],
        attributes={"call_target_name": ir.StringAttr.get("Sharding"),
                    "mhlo.sharding": ir.StringAttr.get(str(sharding.hlo_sharding(rank)))},
        ip=ip)
    return op.results[0]


def _constrain_main(main, exported) -> None:
    """The exported argument shardings on @main's arguments as it starts (after the
    platform index, when there is one), and the result shardings on what it returns."""
    block = main.regions[0].blocks[0]
    args = list(block.arguments)[len(block.arguments) - len(exported.in_avals):]
    first = block.operations[0]
    for arg, s in zip(args, exported._in_named_shardings):
        if s is None:
            continue
        users = [u.owner for u in arg.uses]
        new = _sharding_call(arg, s, ir.InsertionPoint(first))
        for user in users:
            for i, operand in enumerate(user.operands):
                if operand == arg:
                    user.operands[i] = new
    ret = block.operations[len(block.operations) - 1]
    for i, s in enumerate(exported._out_named_shardings):
        if s is not None:
            ret.operands[i] = _sharding_call(ret.operands[i], s, ir.InsertionPoint(ret))


__all__ = ["call_eager", "check_device_count", "export_layout", "export_mesh",
           "gspmd_module", "lower_sharded", "shardings_jax", "vjp_shardings"]
