"""`jit` over many devices: in_shardings/out_shardings and sharded arguments.

When a jit function gets shardings (or arguments laid out over a mesh), its StableHLO
carries `mhlo.sharding` on the arguments and the requested results, XLA's SPMD
partitioner compiles it for the mesh's devices (num_partitions = mesh size), and results
come back as multi-device arrays with the sharding XLA chose (expressed as a
NamedSharding of the mesh where one matches).
"""
from __future__ import annotations

import numpy as np

from mjax import tree_util
from mjax.array import Array
from mjax.runtime import get_backend
from mjax.sharding import NamedSharding, P, Sharding, SingleDeviceSharding, as_sharding, \
    named_from_hlo


def wants_spmd(jitted, leaves) -> bool:
    """Whether this call compiles for a mesh: shardings given, or a sharded argument."""
    if jitted._in_shardings is not None or jitted._out_shardings is not None:
        return True
    return any(type(x) is Array and isinstance(x._sharding, NamedSharding) and
               x._sharding.num_devices > 1 for x in leaves)


def constraint_mesh(module):
    """The mesh that the `jaxpr.sharding_constraint` ops of a traced module lay values
    out over (None when it has none): a jit whose arguments are not sharded still
    compiles for that mesh, so the constraints are honoured."""
    from mjax.dialect.ops.sharding import ShardingConstraintOp
    from mjax.passes.registry import walk_ops
    from mjax.sharding import Mesh
    layouts = set()
    for op in walk_ops(module):
        if op.name == ShardingConstraintOp.OPERATION_NAME:
            p = op.opview.params
            ids = p["device_ids"] or tuple(range(int(np.prod(p["mesh_shape"]))))
            layouts.add((p["mesh_axes"], p["mesh_shape"], ids))
    if not layouts:
        return None
    if len(layouts) > 1:
        raise ValueError(f"Received incompatible devices for jitted computation: the "
                         f"sharding constraints use {len(layouts)} different meshes")
    axes, shape, ids = layouts.pop()
    by_id = {d.id: d for d in get_backend().devices()}
    devices = np.empty(len(ids), dtype=object)
    devices[:] = [by_id[i] for i in ids]
    return Mesh(devices.reshape(shape), axes)


def replicated_over(mesh, leaves) -> tuple:
    """One replicated NamedSharding of `mesh` per leaf."""
    return (NamedSharding(mesh, P()),) * len(leaves)


def _as_sharding(s, what):
    return None if s is None else as_sharding(s, f"jit {what}")


def _is_leaf(x):
    return x is None or isinstance(x, (Sharding, P))


def flat_shardings(prefix, tree, what) -> list:
    """One sharding (or None) per leaf of `tree`, from a pytree prefix `prefix`."""
    if _is_leaf(prefix) or not isinstance(prefix, (tuple, list, dict)):
        return [_as_sharding(prefix, what)] * len(tree_util.tree_leaves(tree))
    from mjax.batching import broadcast_prefix_with
    return [_as_sharding(s, what) for s in broadcast_prefix_with(f"jit {what}", prefix,
                                                                  tree, _is_leaf)]


def in_shardings_for(jitted, dyn_args, leaves) -> tuple:
    """The sharding each argument leaf is compiled for."""
    n_kw_leaves = len(leaves) - len(tree_util.tree_leaves(dyn_args))
    given = (flat_shardings(jitted._in_shardings, dyn_args, "in_shardings")
             if jitted._in_shardings is not None else [None] * (len(leaves) - n_kw_leaves))
    given += [None] * n_kw_leaves
    wanted = []
    for x, s in zip(leaves, given):
        if s is None and type(x) is Array and isinstance(x._sharding, NamedSharding):
            s = x._sharding
        wanted.append(s)
    mesh = _common_mesh(wanted + [s for s in _out_leaves(jitted) if s is not None])
    return tuple(s if s is not None else NamedSharding(mesh, P()) for s in wanted), mesh


def _out_leaves(jitted):
    out = jitted._out_shardings
    if out is None:
        return []
    leaves = (tree_util.tree_leaves(out, is_leaf=_is_leaf)
              if isinstance(out, (tuple, list, dict)) else [out])
    return [_as_sharding(s, "out_shardings") for s in leaves if s is not None]


def _common_mesh(shardings):
    meshes = {s.mesh for s in shardings if isinstance(s, NamedSharding)}
    singles = {s._device for s in shardings if isinstance(s, SingleDeviceSharding)}
    if len(meshes) > 1:
        raise ValueError(f"Received incompatible devices for jitted computation: the "
                         f"shardings use {len(meshes)} different meshes: "
                         f"{sorted(map(repr, meshes))}")
    if not meshes:
        from mjax.sharding import Mesh
        dev = singles.pop() if len(singles) == 1 else get_backend().devices()[0]
        return Mesh(np.array([dev], dtype=object), ("_single",))
    return meshes.pop()


def annotate(module, in_shardings, out_shardings, out_avals) -> None:
    """Writes `mhlo.sharding` on @main's arguments and on the results given a sharding."""
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import func as func_d

    from mjax.dialect import context
    main = next(op for op in module.body.operations
                if isinstance(op, func_d.FuncOp) and op.sym_name.value == "main")
    ftype = ir.FunctionType(main.type)
    with context():
        def with_sharding(old, text):
            d = {} if old is None else {n.name: n.attr for n in ir.DictAttr(old)}
            if text is not None:
                d["mhlo.sharding"] = ir.StringAttr.get(text)
            return ir.DictAttr.get(d)
        old_args = list(main.arg_attrs) if "arg_attrs" in main.attributes else \
            [None] * len(ftype.inputs)
        main.arg_attrs = ir.ArrayAttr.get([
            with_sharding(old, str(s.hlo_sharding(len(_shape(t)))) if s is not None else None)
            for old, s, t in zip(old_args, in_shardings, ftype.inputs)])
        main.result_attrs = ir.ArrayAttr.get([
            with_sharding(None, str(s.hlo_sharding(len(a.shape))) if s is not None else None)
            for s, a in zip(out_shardings, out_avals)])


def _shape(t):
    from jaxlib.mlir import ir
    return ir.RankedTensorType(t).shape


def put_for(x, aval, sharding) -> object:
    """`x`'s buffer laid out as `sharding` (moved through the host when it is not)."""
    if type(x) is Array and x._sharding == sharding:
        return x._buf
    from mjax.api import put_sharded
    from mjax.core import to_numpy
    value = np.asarray(to_numpy(x), dtype=aval.dtype)
    return put_sharded(value, aval, sharding)._buf


def wrap_outputs(outs, out_avals, out_shardings, exe, mesh) -> list:
    arrays = []
    hlos = exe.out_hlo_shardings or [None] * len(outs)
    for buf, aval, want, hlo in zip(outs, out_avals, out_shardings, hlos):
        sharding = want if want is not None else (
            named_from_hlo(mesh, hlo, len(aval.shape)) if hlo is not None else None)
        arrays.append(Array(buf, aval, sharding))
    return arrays


__all__ = ["wants_spmd", "constraint_mesh", "replicated_over", "in_shardings_for", "flat_shardings", "annotate", "put_for",
           "wrap_outputs"]
