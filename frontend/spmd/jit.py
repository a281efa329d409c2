"""`jit` over many devices: in_shardings/out_shardings and sharded arguments.

When a jit function gets shardings (or arguments laid out over a mesh), `lower` writes
them on the traced @main as `mjax.sharding` annotations and runs our own propagation,
`--jaxpr-propagate-shardings="sdy=true"`, between the transformation passes and
`--jaxpr-to-stablehlo`: every value it reaches gets our decision as a closed
`sdy.sharding_constraint`, arguments and requested results `sdy.sharding`, and XLA's
Shardy partitioner compiles the module for the mesh's devices (num_partitions = mesh
size), partitioning what we decided. Results come back as multi-device arrays with the
sharding the executable reports (a NamedSharding of the mesh where one matches).

Programs Shardy's form cannot carry yet (host callbacks or exported calls, which lower
with `mhlo.sharding` of their own; a constraint nested in a region or over another mesh;
shardings that are not NamedShardings of the mesh) take the older route: `mhlo.sharding`
on @main's arguments and results, and XLA's GSPMD propagation for the rest.
"""
from __future__ import annotations

import numpy as np

from mjax.base import trace_trees, tree_util
from mjax.arrays.array import Array
from mjax.jit.cache_miss_log import arg_names, describer
from mjax.config import config
from mjax.tracing.core import to_numpy
from mjax.dialect import attributes as A
from mjax.dialect.functions import building, function_types
from mjax.dialect.ops.sharding import DEVICE_PUT_MARK, ShardingConstraintOp
from mjax.dialect.ops.shard_map import ShardMapOp
from mjax.dialect.values import (function_arg_attrs, function_result_attrs,
                                 set_function_arg_attrs, set_function_result_attrs,
                                 type_shape)
from mjax.tracing.lowering import (alias_donated_inputs, clone_module, compile_pipeline,
                                   lower_module, step_names)
from mjax.passes import run_pipeline
from mjax.passes.analyses import recorded_op_names
from mjax.passes.ir_util import main_function, nested_ops
from mjax.passes.pipeline import print_for_backend
from mjax.passes.rules.export import CALLER_DEVICES
from mjax.passes.registry import format_location
from mjax.arrays.placement import _described, _devices_of, committed_device, put_sharded
from mjax.runtime import get_backend
from mjax.specs.sharding_impls import (AbstractMesh, AxisType, Mesh, computation_mesh, NamedSharding,
                                       P, Sharding, SingleDeviceSharding, as_sharding, check_rank,
                                       named_from_hlo, reshaped_mesh)
from mjax.arrays.sharding_types import partial_axes, spec_entry, typeof_array
from mjax.tracing.source_info import FUNCTION_AT
from mjax.lax.unreduced import device_put_unreduced, unreduced_of, without_reduced


def wants_spmd(jitted, leaves) -> bool:
    """Whether this call compiles for a mesh: shardings given, or a sharded argument."""
    if jitted._in_shardings is not None or jitted._out_shardings is not None:
        return True
    return any(type(x) is Array and isinstance(x._sharding, NamedSharding) for x in leaves)


# Ops laying values out over a mesh they name (mesh_axes, mesh_shape, device_ids): a
# shard_map expands into sharding constraints over its mesh.
_LAYING_OUT = frozenset({ShardingConstraintOp.OPERATION_NAME, ShardMapOp.OPERATION_NAME})


def constraint_mesh(module):
    """The mesh that the `jaxpr.sharding_constraint` ops of a traced module lay values
    out over (None when it has none): a jit whose arguments are not sharded still
    compiles for that mesh, so the constraints are honoured."""
    layouts = set()
    names = recorded_op_names(module)     # (what the tracer saw: no walk when it has none)
    for op in (nested_ops(module) if names is None or not _LAYING_OUT.isdisjoint(names)
               else ()):
        if op.name in _LAYING_OUT:
            p = op.opview.params
            ids = p["device_ids"] or tuple(range(int(np.prod(p["mesh_shape"]))))
            layouts.add((p["mesh_axes"], p["mesh_shape"], ids))
    if not layouts:     # (under set_mesh, JAX compiles for the context's mesh)
        mesh = computation_mesh()
        return mesh if isinstance(mesh, Mesh) else None
    if len(layouts) > 1:
        raise ValueError(f"Received incompatible devices for jitted computation: the "
                         f"sharding constraints use {len(layouts)} different meshes")
    axes, shape, ids = layouts.pop()
    context = computation_mesh()
    if isinstance(context, Mesh) and context.axis_names == tuple(axes) and \
            context.axis_sizes == tuple(shape) and \
            tuple(d.id for d in context.devices.flat) == tuple(ids):
        return context      # (the set_mesh mesh itself: its axis types too)
    by_id = {d.id: d for d in get_backend().devices()}
    devices = np.empty(len(ids), dtype=object)
    devices[:] = [by_id[i] for i in ids]
    return Mesh(devices.reshape(shape), axes)


def _constraint_site(op, platform: str) -> str:
    """JAX's words for a sharding constraint (or device_put) inside a jit: "sharding_
    constraint inside jit with device ids [0, 1] on platform CPU at f.py:3:4 (f)"."""
    p = op.opview.params
    ids = list(p["device_ids"] or range(int(np.prod(p["mesh_shape"]))))
    what = "device_put" if DEVICE_PUT_MARK in op.attributes else "sharding_constraint"
    file, line, col = format_location(op.location).rsplit(":", 2)
    function = FUNCTION_AT.get((file, int(line), int(col)), "?")
    return (f"{what} inside jit with device ids {ids} on platform {platform} at "
            f"{file}:{line}:{int(col) - 1} ({function})")


def first_constraint_site(module, mesh) -> str | None:
    """_constraint_site of the module's first sharding constraint (None: none)."""
    platform = mesh.devices.flat[0].platform.upper()
    return next((_constraint_site(op, platform) for op in nested_ops(module)
                 if op.name in _LAYING_OUT), None)


def check_constraint_devices(module, mesh, leaves, describe) -> None:
    """JAX's error for a device_put or sharding constraint inside a jit laying a value
    out over other devices than the mesh its sharded arguments are on; `describe(k)`
    names argument k ("x of f")."""
    want = sorted(int(d.id) for d in mesh.devices.flat)
    platform = mesh.devices.flat[0].platform.upper()
    for op in nested_ops(module):
        if op.name not in _LAYING_OUT:
            continue
        p = op.opview.params
        ids = list(p["device_ids"] or range(int(np.prod(p["mesh_shape"]))))
        if sorted(ids) == want:
            continue
        k, x = next(((k, x) for k, x in enumerate(leaves) if type(x) is Array and (
                     isinstance(x._sharding, NamedSharding)
                     or getattr(x, "_committed", False))
                     and sorted(d.id for d in x.devices()) == want), (None, None))
        if x is None:       # (the mesh comes from jit's shardings, not an argument)
            first = f"jit's mesh with device ids {want} on platform {platform}"
        else:
            devices = sorted(x.devices(), key=lambda d: d.id)   # (those of `want`)
            first = f"argument {_described(describe(k), x, devices)}"
        raise ValueError(f"Received incompatible devices for jitted computation. Got "
                         f"{first} and {_constraint_site(op, platform)}")


def check_committed_on(leaves, mesh, site, describe) -> None:
    """JAX's error for an argument committed to other devices than the mesh a call
    compiles for (set_mesh's, or the mesh of the sharding constraint `site`)."""
    want = {d.id for d in mesh.devices.flat}
    for k, x in enumerate(leaves):
        if type(x) is Array and getattr(x, "_committed", False) and \
                {d.id for d in x.devices()} != want:
            if mesh == computation_mesh() or site is None:
                committed_device(leaves, describe, mesh)    # (its "context mesh" words)
            devices = sorted(x.devices(), key=lambda d: d.id)
            raise ValueError(f"Received incompatible devices for jitted computation. Got "
                             f"argument {_described(describe(k), x, devices)} and {site}")


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
        return [_as_sharding(prefix, what)] * len(trace_trees.tree_leaves(tree))
    return [_as_sharding(s, what) for s in tree_util.prefix_entries(f"jit {what}", prefix,
                                                                  tree, _is_leaf)]


def in_shardings_for(jitted, dyn_args, leaves, in_tree=None) -> tuple:
    """(The sharding each argument leaf is compiled for, the mesh). With `in_tree` (the
    treedef of the call's arguments) the answer is remembered per treedef and argument
    shardings: a steady-state call only hashes them."""
    if in_tree is None:
        return _in_shardings_for(jitted, dyn_args, leaves)
    # (a Ref's `_sharding` is its value's: refs keep their layout through the call)
    key = (in_tree, tuple([getattr(x, "_sharding", None) for x in leaves]))
    memo = jitted.__dict__.setdefault("_spmd_layouts", {})
    found = memo.get(key)
    if found is None:
        found = memo[key] = _in_shardings_for(jitted, dyn_args, leaves, in_tree)
    return found


def _in_shardings_for(jitted, dyn_args, leaves, in_tree=None) -> tuple:
    n_kw_leaves = len(leaves) - len(trace_trees.tree_leaves(dyn_args))
    given = (flat_shardings(jitted._in_shardings, dyn_args, "in_shardings")
             if jitted._in_shardings is not None else [None] * (len(leaves) - n_kw_leaves))
    given += [None] * n_kw_leaves
    for k, (x, s) in enumerate(zip(leaves, given)):
        if isinstance(s, NamedSharding) and len(s.spec) > np.ndim(x):
            path = arg_names(jitted.fun, in_tree, ()) if in_tree is not None else []
            check_rank(s, np.ndim(x), f"One of pjit arguments with pytree key path "
                                      f"{path[k] if k < len(path) else f'args[{k}]'}")
    wanted = []
    for x, s in zip(leaves, given):
        if s is None and isinstance(getattr(x, "_sharding", None), NamedSharding):
            s = x._sharding     # (an array's, or the value of a Ref's)
        wanted.append(s)
    # (A reduced array is a replicated value, laid out as one; an unreduced one's
    # buffers are its partial sums, which Shardy's `unreduced={...}` reads as such.)
    wanted = [without_reduced(s) for s in wanted]
    mesh = _common_mesh(wanted + [s for s in _out_leaves(jitted) if s is not None])
    # (committed arguments must be on the same devices, as in JAX, and on the context
    # mesh's when the call compiles for that)
    context = computation_mesh()
    committed_device(leaves, describer(jitted.fun, jitted._name, in_tree, ())
                     if in_tree is not None and not jitted._has_static else None,
                     mesh if isinstance(context, Mesh) and mesh == context else None)
    if mesh.size == 1:      # (a committed one-device argument keeps its sharding: jit's
        wanted = [x._sharding if s is None and getattr(x, "_committed", False) else s
                  for x, s in zip(leaves, wanted)]  # results may take it, as JAX's)
        # (one device's sharding over another mesh of that device: replicated over this)
        wanted = [NamedSharding(mesh, P()) if isinstance(s, NamedSharding) and
                  s.mesh != mesh else s for s in wanted]
    return tuple(s if s is not None else NamedSharding(mesh, P()) for s in wanted), mesh


def _out_leaves(jitted):
    out = jitted._out_shardings
    if out is None:
        return []
    leaves = (trace_trees.tree_leaves(out, is_leaf=_is_leaf)
              if isinstance(out, (tuple, list, dict)) else [out])
    return [_as_sharding(s, "out_shardings") for s in leaves if s is not None]


_SINGLE = "_single"      # (the axis of the mesh made for a call with no mesh of its own)


def _common_mesh(shardings):
    meshes = {s.mesh for s in shardings if isinstance(s, NamedSharding)}
    singles = {s._device for s in shardings if isinstance(s, SingleDeviceSharding)}
    if len(meshes) > 1 and len({tuple(m.devices.flat) for m in meshes}) == 1:
        # Meshes of the same devices in the same order (two pmaps' results; a (2, 4) and
        # an (8,) mesh): JAX compares device assignments, not meshes. The computation
        # runs over the first one's; each sharding is written as its XLA sharding.
        return next(s.mesh for s in shardings if isinstance(s, NamedSharding))
    if len(meshes) > 1:
        raise ValueError(f"Received incompatible devices for jitted computation: the "
                         f"shardings use {len(meshes)} different meshes: "
                         f"{sorted(map(repr, meshes))}")
    if not meshes:
        context = computation_mesh()
        if isinstance(context, Mesh):
            return context      # (under set_mesh, JAX compiles for the context's mesh)
        dev = singles.pop() if len(singles) == 1 else get_backend().devices()[0]
        return Mesh(np.array([dev], dtype=object), (_SINGLE,))
    return meshes.pop()


def annotate(module, in_shardings, out_shardings, out_avals) -> None:
    """Writes `mhlo.sharding` on @main's arguments and on the results given a sharding."""
    main = main_function(module)
    ins, _ = function_types(main)

    def with_sharding(d, s, rank):
        return d if s is None else {**d, "mhlo.sharding": str(s.hlo_sharding(rank))}
    set_function_arg_attrs(main, [
        with_sharding(d, s, len(type_shape(t)))
        for d, s, t in zip(function_arg_attrs(main), in_shardings, ins)])
    set_function_result_attrs(main, [with_sharding({}, s, len(a.shape))
                                     for s, a in zip(out_shardings, out_avals)])


def lower(module, in_shardings, out_shardings, out_avals, mesh, donated=None,
          text: bool = True, user_passes=(), finishing=(), backend: str | None = None):
    """Lowers a traced module, in place, to StableHLO compiled for `mesh` (see the
    module docstring) and prints it for the backend after the `finishing` passes
    (a passes.pipeline.Printed; when not `text`: a copy of the module just before
    --jaxpr-to-stablehlo, for Lowered.as_text(dialect="jaxpr")); `in_shardings` covers
    @main's arguments, `out_shardings` its results (None: unconstrained);
    `user_passes` run at their points (docs/passes.md); `backend`: the backend whose
    devices the mesh holds, where it is not the default's (the host CPU beside a TPU)."""
    token = CALLER_DEVICES.set(mesh.size)
    try:
        return _lower(module, in_shardings, out_shardings, out_avals, mesh, donated,
                      list(finishing) if text else None, user_passes, backend)
    finally:
        CALLER_DEVICES.reset(token)


def _lower(module, in_shardings, out_shardings, out_avals, mesh, donated, finishing,
           user_passes, backend):
    if not _named_over(mesh, list(in_shardings) + list(out_shardings)):
        jaxpr = lower_module(module, user_passes, keep_jaxpr=finishing is None,
                             backend=backend)
        return _finish(module, donated, lambda m: annotate(m, in_shardings, out_shardings,
                                                           out_avals), finishing, jaxpr)
    pipeline = compile_pipeline(user_passes, backend)
    cut = step_names(pipeline).index("jaxpr-to-stablehlo")
    after = None
    if config.read("mjax_verify_each_pass") or config.read("jax_enable_checks"):
        def after(name, m):
            run_pipeline(m, "jaxpr-verify")
    with building():
        run_pipeline(module, pipeline[:cut], after_each=after)
        jaxpr = None if finishing is not None else clone_module(module)
        main = main_function(module)
        if _shardy_can_carry(module, main, mesh):
            _write_annotations(main, in_shardings, out_shardings, mesh)
            run_pipeline(module, [("jaxpr-propagate-shardings", "sdy=true")]
                         + pipeline[cut:], after_each=after)
            return _finish(module, donated, None, finishing, jaxpr)
        _refuse_unreduced(list(in_shardings) + list(out_shardings))
        run_pipeline(module, pipeline[cut:], after_each=after)
    return _finish(module, donated, lambda m: annotate(m, in_shardings, out_shardings,
                                                       out_avals), finishing, jaxpr)


def _refuse_unreduced(shardings) -> None:
    """XLA's own shardings (the form a module Shardy cannot carry is compiled in) have no
    unreduced axes: an argument's partial sums would be read as a replicated value."""
    for s in shardings:
        if s is not None and unreduced_of(s):
            raise NotImplementedError(
                f"jit with an argument or result laid out as {s!r}, of a function with a "
                f"sharding constraint inside a loop or branch body, or a host callback: "
                f"mjax compiles such a function without Shardy, which alone keeps "
                f"partial sums; reshard the argument to a sharding without unreduced "
                f"axes first, or return the value resharded")


def _finish(module, donated, annotate_fn, finishing, jaxpr):
    """Donation and shardings on the lowered `module`, then (`finishing`: a list of
    passes, else None) those passes and its one print."""
    if donated and any(donated):
        alias_donated_inputs(module, donated)
    if annotate_fn is not None:
        annotate_fn(module)
    if finishing is None:
        return jaxpr
    with building():
        return print_for_backend(module, finishing, partitioned=True)


def _named_over(mesh, shardings) -> bool:
    """Whether every given sharding is a NamedSharding of `mesh`, a mesh of >1 device."""
    return mesh.size > 1 and all(s is None or (type(s) is NamedSharding and s.mesh == mesh)
                                 for s in shardings)


# Ops that lower with XLA shardings of their own (`mhlo.sharding`), which Shardy's form
# cannot be mixed with.
_GSPMD_ONLY = frozenset({"jaxpr.callback", "jaxpr.call_exported"})


def _shardy_can_carry(module, main, mesh) -> bool:
    """Whether the (transformed, inlined) module can be compiled in Shardy's form: no op
    that brings its own XLA sharding, and every sharding constraint directly in @main
    and over `mesh`'s axes."""
    top = main.regions[0].blocks[0]
    want = (tuple(mesh.axis_names), tuple(mesh.axis_sizes))
    for op in nested_ops(module):
        name = op.name
        if name in _GSPMD_ONLY:
            return False
        if name == ShardingConstraintOp.OPERATION_NAME:
            p = op.opview.params
            if op.parent.operation != main or op.block != top or \
                    (tuple(p["mesh_axes"]), tuple(p["mesh_shape"])) != want:
                return False
    return True


def _write_annotations(main, in_shardings, out_shardings, mesh) -> None:
    """`mjax.sharding` (the propagation pass's sources) on @main's arguments and on the
    results given a sharding."""
    axes, shape = tuple(mesh.axis_names), tuple(mesh.axis_sizes)
    encoded: dict = {}

    def attrs(d, sharding, rank):
        if sharding is not None:
            spec = tuple(",".join(sharding.spec.axes_of(i)) for i in range(rank))
            partial = tuple(a for a in axes if a in unreduced_of(sharding))
            if (spec, partial) not in encoded:
                fields = {"mesh_axes": axes, "mesh_shape": shape, "spec": spec}
                if partial:     # (each device a partial sum over them: mjax/lax/unreduced.py)
                    fields["unreduced"] = partial
                encoded[spec, partial] = A.encode(fields)
            d["mjax.sharding"] = encoded[spec, partial]
        return d
    ins, outs = function_types(main)
    set_function_arg_attrs(main, [attrs(d, s, len(type_shape(t))) for d, s, t in
                                  zip(function_arg_attrs(main), in_shardings, ins)])
    set_function_result_attrs(main, [attrs(d, s, len(type_shape(t))) for d, s, t in
                                     zip(function_result_attrs(main), out_shardings, outs)])


def typed_out_shardings(outs, traced, mesh) -> list:
    """`outs` (a sharding or None per result) with the results a trace typed unreduced
    or reduced laid out so: their Arrays keep the partial sums XLA leaves per device."""
    types = getattr(traced, "out_types", None)
    if mesh.size == 1:
        return _one_device_out_shardings(outs, traced, mesh, types)
    if types is None:
        return outs
    new = []
    for s, t in zip(outs, types):
        if s is None and t is not None:
            unreduced, reduced = partial_axes(t)
            entries = [spec_entry(d) for d in t[1]]
            same_axes = set(t[0].axis_names) == set(mesh.axis_names)
            if (unreduced or reduced) and same_axes:
                s = NamedSharding(mesh, P(*entries, unreduced=unreduced, reduced=reduced))
            elif t[0].axis_names and not same_axes and isinstance(t[0], AbstractMesh) \
                    and t[0].size == mesh.size:
                # (typed over the mesh `use_abstract_mesh` gave: that mesh's shape over
                # the function's devices, as JAX lays the result out)
                s = NamedSharding(reshaped_mesh(tuple(mesh.devices.flat), t[0]), P(*entries))
        new.append(s)
    return new


def _one_device_out_shardings(outs, traced, mesh, types) -> list:
    """The result shardings of a jit over a mesh of one device, of which XLA reports
    none, as JAX's: a result typed over the mesh's Explicit axes (an argument's type
    carries the mesh, or nothing but scalars came in) has its type's NamedSharding;
    any other takes the first argument's sharding when it has its rank, else a
    replicated one (the first argument's SingleDeviceSharding, when it has one). An
    uncommitted first argument counts as replicated over the mesh."""
    if mesh.axis_names == (_SINGLE,):     # (no mesh of the user's: one device's arrays)
        device = SingleDeviceSharding(mesh.devices.flat[0])
        return [s if s is not None else device for s in outs]
    given = getattr(traced.trace, "arg_shardings", None) or [None]
    typed = AxisType.Explicit in mesh.axis_types and (
        all(a.ndim == 0 for a in traced.in_avals) or
        any(isinstance(s, NamedSharding) and AxisType.Explicit in s.mesh.axis_types
            for s in given))
    first = given[0] if isinstance(given[0], (NamedSharding, SingleDeviceSharding)) \
        else NamedSharding(mesh, P())
    first_ndim = traced.in_avals[0].ndim if traced.in_avals else None
    new = []
    for i, (s, aval) in enumerate(zip(outs, traced.out_avals)):
        t = types[i] if types is not None else None
        if t is not None and set(t[0].axis_names) != set(mesh.axis_names):
            t = None
        if s is None and (typed or t is not None):
            entries = [spec_entry(d) for d in t[1]] if t is not None else [None] * aval.ndim
            unreduced, reduced = partial_axes(t)
            s = NamedSharding(mesh, P(*entries, unreduced=unreduced, reduced=reduced))
        elif s is None:
            s = first if aval.ndim == first_ndim or type(first) is SingleDeviceSharding \
                else NamedSharding(mesh, P())
        new.append(s)
    return new


def laid_out(x, sharding) -> bool:
    """Whether `x` is an Array whose buffer is laid out as `sharding` already (put_for
    passes it through): its own sharding, or, for one device's sharding in its default
    memory, any array on that one device in its default memory."""
    if type(x) is not Array:
        return False
    s = x._sharding
    if s is sharding or s == sharding:
        return True
    return sharding.num_devices == 1 and sharding.memory_kind in (None, "device") and (
        s is None or s.num_devices == 1 and s.memory_kind in (None, "device")) and \
        _devices_of(x._buf) == tuple(sharding._device_list())


def put_for(x, aval, sharding) -> object:
    """`x`'s buffer laid out as `sharding` (moved through the host when it is not)."""
    if laid_out(x, sharding):
        return x._buf
    if unreduced_of(sharding):      # (its buffers are read as partial sums)
        if type(x) is Array and x._sharding is not None:
            raise ValueError(f"Sharding passed to jit does not match the sharding on the "
                             f"respective arg. Got jit sharding: {sharding!r},\narg "
                             f"sharding: {x._sharding!r} for arg type: {typeof_array(x)}")
        return device_put_unreduced(x, sharding)._buf
    if sharding.num_devices == 1:   # (one device: a copy put there)
        device = sharding._device_list()[0]
        value = np.asarray(to_numpy(x), dtype=aval.dtype)
        if sharding.memory_kind != "device":      # (host memory: XLA's backends)
            return get_backend().put(value, device, sharding.memory_kind)
        return get_backend().put(value, device)
    value = np.asarray(to_numpy(x), dtype=aval.dtype)
    return put_sharded(value, aval, sharding)._buf


def wrap_outputs(outs, out_avals, out_shardings, exe, mesh, committed=True) -> list:
    """The executable's output buffers as Arrays with their shardings (the requested
    ones, else the layout XLA reports, found once per executable). Over the mesh made
    for a call with no mesh of its own, one device's results are committed only when
    an argument was (`committed`), as JAX's."""
    shardings = committed_results(out_avals, out_shardings, exe, mesh, committed)
    return [Array(buf, aval, sharding) if type(sharding) is not _OnOneDevice else
            _one_device_result(exe, buf, aval, sharding.device)
            for buf, aval, sharding in zip(outs, out_avals, shardings)]


def committed_results(out_avals, out_shardings, exe, mesh, committed=True) -> list:
    """Per result: the sharding wrap_outputs commits it to (None: uncommitted)."""
    shardings = result_shardings(out_avals, out_shardings, exe, mesh)
    if not committed and mesh.axis_names == (_SINGLE,):
        shardings = [None if type(s) is SingleDeviceSharding and s.memory_kind == "device"
                     else s for s in shardings]
    return shardings


def fast_results(entry, mesh, leaves):
    """Per result of `entry` run on `leaves` over `mesh`: the sharding it is committed
    to (None: uncommitted), for the fast path (jit_entry.spmd_entry); None when some
    result is one XLA left on one device (wrap_outputs makes those itself)."""
    shardings = committed_results(entry.out_avals, entry.out_shardings, entry.executable,
                                  mesh, any(getattr(x, "_committed", False) for x in leaves))
    return None if any(type(s) is _OnOneDevice for s in shardings) else shardings


def result_shardings(out_avals, out_shardings, exe, mesh) -> list:
    """Per result: the requested sharding, else the layout XLA reports (an _OnOneDevice
    for a result XLA left on one device), found once per executable."""
    # (Keyed by mesh and the requested shardings' identities: one executable may serve
    # several jit entries, and the entries keep their sharding lists alive.)
    memo = exe.__dict__.setdefault("_mjax_out_shardings", {})
    key = (mesh, tuple(map(id, out_shardings)))
    shardings = memo.get(key)
    if shardings is None:
        hlos = exe.out_hlo_shardings or [None] * len(out_avals)
        shardings = memo[key] = [
            want if want is not None else _result_sharding(mesh, hlo, len(aval.shape))
            for aval, want, hlo in zip(out_avals, out_shardings, hlos)]
        kinds = getattr(exe, "out_memory_kinds", None)    # (the memory XLA put each in)
        if kinds:
            shardings[:] = [s.with_memory_kind(k) if hasattr(s, "with_memory_kind") and
                            s.memory_kind != k else s for s, k in zip(shardings, kinds)]
    return shardings


class _OnOneDevice:
    """A result XLA left on one device (a maximal sharding: a host callback's value
    returned as is); the other devices' buffers hold nothing meaningful."""

    def __init__(self, device):
        self.device = device


def _result_sharding(mesh, hlo, ndim):
    if hlo is None:
        return None
    if hlo.is_maximal() and not hlo.is_replicated():
        return _OnOneDevice(mesh.devices.flat[hlo.tile_assignment_devices()[0]])
    return named_from_hlo(mesh, hlo, ndim)


def _one_device_result(exe, buf, aval, device) -> Array:
    for dev, shard in exe.backend.shards(buf):
        if dev == device:
            return Array(shard, aval)
    raise RuntimeError(f"jit: the result XLA placed on {device} is not in this process")


__all__ = ["laid_out", "fast_results", "committed_results", "wants_spmd", "constraint_mesh",
           "replicated_over", "in_shardings_for", "flat_shardings", "annotate", "lower",
           "put_for", "wrap_outputs", "typed_out_shardings"]
