"""A traced shard_map as one `jaxpr.shard_map @body` equation (JAX's shard_map_p).

Inside a trace (jit, grad, vmap, ...), shard_map traces its body once, at the per-device
block avals, into a function of the module, and emits one op naming it, with the mesh,
the specs, the manual axes and check_vma as attributes. make_jaxpr prints it as JAX's
`shard_map[...]` equation with the body's jaxpr nested (shard_map_print.py), and grad of
it as JAX's two (passes/shard_map_ad.py); the compile pipeline's
--jaxpr-expand-transforms rewrites it last into the sharding constraints, reshapes and
per-axis vmaps mjax runs (passes/rules/shard_map.py). Unreduced out_specs and reduced
in_specs are attributes too (`out_unreduced`, `in_reduced`); a pcast to 'unreduced' in
the body is noted on its copy (printed as JAX's vary_unreduced_cast_p).

The errors JAX raises while tracing are raised here: with check_vma, an output that
varies along a manual axis its out_spec does not name (the body's varying axes, as
sharding_types tracks them: Trace.varying), and an out_spec longer than its output's
rank.
"""
from __future__ import annotations

import contextlib

from mjax.base import trace_trees, tree_util
from mjax.tracing.axis_env import AXIS_ENV
from mjax.ad.staging import stage_function
from mjax.tracing.core import aval_of_value, current_trace
from mjax.dialect.attributes import Symbol
from mjax.dialect.ops.sharding import ShardingConstraintOp
from mjax.dialect.ops.shard_map import ShardMapOp
from mjax.dialect.values import set_strings
from mjax.lax.sharding import constraint_params
from mjax.passes import shard_map_ad as _rules  # noqa: F401  (ShardMapOp: expansion, AD)
from mjax.specs.sharding_impls import (UNCONSTRAINED, AxisType, NamedSharding, PartitionSpec,
                                       get_abstract_mesh, use_abstract_mesh)
from mjax.arrays.sharding_types import trace_op_types
from mjax.tracing.staging import call_args, emit
from mjax.tracing.tracer import Tracer


def spec_entries(spec: PartitionSpec) -> tuple[str, ...]:
    """A PartitionSpec as the op's attribute: one string per entry ("" for None)."""
    return tuple(",".join(spec.axes_of(d)) for d in range(len(spec)))


def _names(spec: PartitionSpec) -> set:
    return {a for d in range(len(spec)) for a in spec.axes_of(d)}


def _block_aval(aval, spec: PartitionSpec, sizes: dict):
    shape = list(aval.shape)
    for d in range(len(spec)):
        for a in spec.axes_of(d):
            shape[d] //= sizes[a]
    return aval.update(shape=tuple(shape))


def emit_shard_map(body, mesh, manual: tuple, leaves, specs, out_specs, check_vma: bool,
                   fun_name: str, flat_specs, abstract: bool = False, reduced=None):
    """The results (a pytree) of `body` (a function of the block leaves, returning the
    body's pytree) as one jaxpr.shard_map equation over `leaves` laid out by `specs`
    (one PartitionSpec each); `flat_specs(what, specs, tree)` flattens out_specs against
    the body's output tree; `abstract`: the user named the mesh abstractly (or by the
    context), as the printed equation says; `reduced`: per leaf, the mesh axes its
    in_spec calls reduced."""
    sizes = dict(zip(mesh.axis_names, mesh.axis_sizes))
    blocks = [_block_aval(aval_of_value(x), s, sizes) for x, s in zip(leaves, specs)]
    seen = {}

    def recorded(*block_leaves):
        out = body(*block_leaves)
        seen["varying"] = varying_of(out)
        _mark_unreduced_casts(current_trace())
        return out

    with contextlib.ExitStack() as stack:
        stack.enter_context(AXIS_ENV.mesh(mesh.axis_names, mesh.axis_sizes, check_vma))
        for a in manual:
            stack.enter_context(AXIS_ENV.bound(a, sizes[a]))
        traced = stage_function(recorded, tuple(blocks), {}, name="body")
    example = tree_util.tree_unflatten(traced.out_tree, list(traced.out_avals))
    flat_out = flat_specs("out_specs", out_specs, example)
    for j, (aval, s) in enumerate(zip(traced.out_avals, flat_out)):
        if len(s) > len(aval.shape):
            raise ValueError(f"shard_map out_specs {s!r} has length {len(s)}, but the "
                             f"output has rank {len(aval.shape)}")
    if check_vma:
        _check_varying(mesh, manual, traced.out_tree, flat_out,
                       seen.get("varying") or [frozenset()] * len(flat_out), fun_name)
    operands = call_args(traced, leaves)
    outs = emit(ShardMapOp, operands, callee=Symbol(traced.name),
                mesh_axes=tuple(mesh.axis_names), mesh_shape=tuple(mesh.axis_sizes),
                device_ids=tuple(int(i) for i in mesh.device_ids.flat),
                axis_types=tuple(str(t).split(".")[-1] for t in mesh.axis_types),
                in_specs=tuple(spec_entries(s) for s in specs),
                out_specs=tuple(spec_entries(s) for s in flat_out),
                manual_axes=tuple(manual), check_vma=bool(check_vma),
                num_captured=len(operands) - len(leaves),
                out_paths=_out_paths(traced.out_tree, len(flat_out)),
                abstract_mesh=bool(abstract),
                in_reduced=_axes_lists(mesh, reduced, len(leaves)),
                out_unreduced=_axes_lists(mesh, [getattr(s, "unreduced", None)
                                                 for s in flat_out], len(flat_out)))
    for t, a in zip(outs, traced.out_avals):
        if a.weak_type:
            t.aval = t.aval.update(weak_type=True)
    _carry_types(mesh, manual, operands, outs, specs, flat_out)
    return tree_util.tree_unflatten(traced.out_tree, outs)


def _axes_lists(mesh, axes, n: int):
    """The op's in_reduced / out_unreduced attribute: per spec, the mesh axes named (in
    mesh order); None when no spec names any."""
    axes = list(axes or ()) + [None] * (n - len(axes or ()))
    if not any(axes):
        return None
    return tuple(tuple(a for a in mesh.axis_names if a in (s or ())) for s in axes)


# The discardable attribute of the copy `lax.pcast(x, to='unreduced')` makes in a
# shard_map body: the axes (printed as JAX's vary_unreduced_cast_p).
UNREDUCED_CAST = "mjax.unreduced_cast"


def _mark_unreduced_casts(trace) -> None:
    """Notes on the copies the body's pcasts to 'unreduced' made (the trace's table of
    unreduced values, sharding_types.mark_manual_partial) the axes they name."""
    table = getattr(trace, "__dict__", {}).get("manual_partial") or {}
    for v, (unreduced, _) in table.items():
        op = getattr(v.owner, "operation", None)
        if unreduced and op is not None and op.name == "jaxpr.copy":
            set_strings(op, UNREDUCED_CAST, sorted(unreduced))


def varying_of(out) -> list:
    """The manual axes each leaf of a body's output `out` varies along (the trace's)."""
    trace = current_trace()
    table = getattr(trace, "varying", None) or {}
    return [table.get(t.value, frozenset()) if isinstance(t, Tracer) and t.trace is trace
            else frozenset() for t in trace_trees.tree_leaves(out)]


def check_outputs(out, mesh, manual, out_specs, fun_name, flat_specs) -> None:
    """check_vma's error for the body output `out` (a pytree of the body's tracers)."""
    leaves, tree = trace_trees.tree_flatten(out)
    _check_varying(mesh, manual, tree, flat_specs("out_specs", out_specs, out),
                   varying_of(out), fun_name)


def _carry_types(mesh, manual, operands, outs, specs, flat_out) -> None:
    """What the trace's type tables would have got from the constraints the expansion
    makes: results typed as their out_specs' Explicit axes (explicit mode), and, in an
    enclosing shard_map body, varying along the axes the operands vary along."""
    trace = current_trace()
    varying = trace.varying
    if varying is not None:
        axes = frozenset().union(*[varying.get(getattr(x, "value", None), frozenset())
                                   for x in operands if isinstance(x, Tracer)])
        if axes:
            for o in outs:
                varying[o.value] = axes
    explicit = {n for n, t in zip(mesh.axis_names, mesh.axis_types)
                if t == AxisType.Explicit}
    if not any((_names(s) | set(getattr(s, "unreduced", ()) or ())) & explicit
               for s in (*specs, *flat_out)):
        if trace.type_specs is None:
            return
    elif trace.type_specs is None:
        trace.type_specs = {}
    partial = set(manual) != set(mesh.axis_names)
    for o, s in zip(outs, flat_out):
        ndim = len(o.aval.shape)
        if partial:
            s = PartitionSpec(*[s[d] if d < len(s) and s[d] is not None else UNCONSTRAINED
                                for d in range(ndim)])
        params = constraint_params(NamedSharding(mesh, s), ndim)
        names_explicit = any(a in explicit for a in _names(s))
        context = (use_abstract_mesh(mesh.abstract_mesh)
                   if names_explicit and get_abstract_mesh().empty
                   else contextlib.nullcontext())
        with context:
            trace_op_types(trace, ShardingConstraintOp, [o], [o], params)


def _out_paths(out_tree, n: int) -> tuple:
    example = tree_util.tree_unflatten(out_tree, list(range(n)))
    paths = [""] * n
    for path, i in tree_util.tree_flatten_with_path(example)[0]:
        if isinstance(i, int) and 0 <= i < n:
            paths[i] = tree_util.keystr(path)
    return tuple(paths)


def _check_varying(mesh, manual, out_tree, flat_out, varying, fun_name) -> None:
    """JAX's check_vma error: an output varying along a manual axis its out_spec leaves
    unnamed (claims replicated)."""
    paths = _out_paths(out_tree, len(flat_out))
    order = [a for a in mesh.axis_names]
    msgs = []
    for path, s, axes in zip(paths, flat_out, varying):
        named = _names(s) | set(getattr(s, "unreduced", ()) or ())
        bad = [a for a in order if a in axes and a in manual and a not in named]
        if not bad:
            continue
        unmentioned = [a for a in order if a not in named]
        if len(unmentioned) > 1:
            need = ",".join(a for a in order if a in named)
            got = ",".join(a for a in order if a in axes)
            diff = ",".join(a for a in unmentioned if a in axes)
            msgs.append(f"* out_specs{path} is {s} which implies that the corresponding "
                        f"output value is only varying across mesh axes {{{need}}} and not "
                        f"{{{diff}}}, but it was inferred to be possibly varying over "
                        f"{{{got}}}")
        else:
            msgs.append(f"* out_specs{path} is {s} which implies that the corresponding "
                        f"output value is replicated across mesh axis '{unmentioned[0]}', "
                        f"but could not infer replication over any axes")
    if not msgs:
        return
    if len(msgs) == 1:
        msgs = [msgs[0][2:]]
    raise ValueError(
        f"shard_map applied to the function '{fun_name}' was given out_specs which require "
        f"replication which can't be statically inferred given the mesh:\n\n"
        f"The mesh given has shape {tuple(mesh.axis_sizes)} with corresponding axis names "
        f"{tuple(mesh.axis_names)}.\n\n" + "\n\n".join(msgs) + "\n\n"
        "Check if these output values are meant to be replicated over those mesh axes. If "
        "not, consider revising the corresponding out_specs entries. If so, consider "
        "disabling the check by passing the check_vma=False argument to `jax.shard_map`.")


__all__ = ["check_outputs", "emit_shard_map", "spec_entries", "varying_of"]
