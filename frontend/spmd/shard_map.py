"""`shard_map`: run a function on per-device blocks, with collectives over mesh axes.

Built like pmap, from vmap and shardings. For a mesh (x: 4, y: 2) and an argument of
shape (8, 6) with in_spec P("x"):

  1. the argument is constrained to NamedSharding(mesh, P("x")), reshaped to
     (4, 2, 6) (one leading block axis per mesh axis it is split over, in mesh order)
     and constrained to P("x", None, None), so each device holds one block;
  2. the body runs under nested vmaps, one per mesh axis (outermost = first), each with
     `axis_name` = the mesh axis: in_axes 0 where the argument has that block axis, None
     where it is replicated. The named-axis collectives inside (psum, all_gather, ...)
     batch into reductions/gathers along block axes that XLA's SPMD partitioner turns
     into cross-device collectives;
  3. outputs come back stacked per out_specs (a block axis per mesh axis the spec names;
     out_axes None for the others, so a value that varies along an axis its out_spec
     claims replicated is an error, as JAX's check_vma makes it) and are reshaped to
     the global shape under the out_spec's constraint.

Inside a trace (jit, grad, vmap, ...) the body is traced once, at the block avals, into
one `jaxpr.shard_map @body` equation (shard_map_op.py; printed as JAX's, with the
body's varying axes: shard_map_print.py), which --jaxpr-expand-transforms rewrites into
exactly the steps above (passes/rules/shard_map.py); its mesh makes the enclosing jit
compile for the mesh. Called outside jit, the steps above are traced directly, under
jit (a body that prints shows each device's block: _Shown). JAX: jax.shard_map.
"""
from __future__ import annotations

import contextlib
import io
import math
import re
import sys
import threading

import numpy as np

from mjax import lax
from mjax.tracing import registration
from mjax.base import trace_trees, tree_util
from mjax.ad.staging import _check_callable, _wraps
from mjax.arrays.array import Array
from mjax.vmap.batching import vmap
from mjax.tracing.core import aval_of_value, current_trace
from mjax.dialect.ops.shard_map import ShardMapOp, block_layout
from mjax.specs.dtypes import hitype_rules
from mjax.jit.jitted import jit
from mjax.lax.sharding import constrain_unchecked
from mjax.passes.custom_rules import emulating_shard_map
from mjax.specs.sharding_impls import (UNCONSTRAINED, AbstractMesh, AxisType, Mesh, NamedSharding,
                                       PartitionSpec, current_mesh, use_abstract_mesh)
from mjax.arrays.sharding_types import mark_manual_partial, seed_varying, spec_entry, typeof_array
from mjax.spmd.shard_map_hi import shard_map_hi, uses_hi
from mjax.spmd.shard_map_op import check_outputs, emit_shard_map
from mjax.lax.unreduced import _stacked, from_partials, partials, unreduced_of, without_reduced


class _InferType:
    def __repr__(self):
        return "Infer"


Infer = _InferType()


def _is_spec(s) -> bool:
    return s is None or isinstance(s, PartitionSpec)


def _flat_specs(name, specs, tree) -> list[PartitionSpec]:
    if _is_spec(specs):
        flat = [specs] * len(trace_trees.tree_leaves(tree))
    else:
        flat = tree_util.prefix_entries(f"shard_map {name}", specs, tree, _is_spec)
    return [PartitionSpec() if s is None else s for s in flat]


def _axes(spec: PartitionSpec, dim: int) -> tuple[str, ...]:
    return spec.axes_of(dim)


def _check_spec(fun_name, mesh: Mesh, spec, shape, what: str, path: str):
    for d in range(len(spec)):
        for a in _axes(spec, d):
            if a not in mesh.axis_names:
                raise ValueError(f"shard_map applied to the function '{fun_name}': "
                                 f"{what}_specs{path} is {spec!r}, which names '{a}', not an "
                                 f"axis of the mesh {tuple(mesh.axis_names)}")
    if len(spec) > len(shape):
        raise ValueError(
            f"shard_map applied to the function '{fun_name}' was given an {what}_specs "
            f"entry which is too long to be compatible with the corresponding {what}put "
            f"value from the function: {what}_specs{path} is {spec!r} which has length "
            f"{len(spec)}, but the value has shape {tuple(shape)}, which has rank "
            f"{len(shape)} (and {len(shape)} < {len(spec)})")
    for d in range(len(spec)):
        names = _axes(spec, d)
        size = math.prod(mesh.shape[n] for n in names)
        if shape[d] % size:
            axis = f"axes {names}" if len(names) > 1 else f"axis '{names[0]}'"
            raise ValueError(
                f"shard_map applied to the function '{fun_name}' was given argument arrays "
                f"with axis sizes that are not evenly divisible by the corresponding mesh "
                f"axis sizes: {what}_specs{path} of value {spec!r} maps array axis {d} (of "
                f"size {shape[d]}) to mesh {axis} (of size {size}), but {size} does not "
                f"evenly divide {shape[d]}")


def _constrain(x, mesh, spec, manual=None):
    """`x` laid out as `spec`; with `manual` (the manual axes of a shard_map over part of
    the mesh), the dimensions `spec` leaves whole are left to the compiler, which may
    split them over the other (automatic) axes."""
    if manual is not None and set(manual) != set(mesh.axis_names):
        ndim = len(aval_of_value(x).shape)
        spec = PartitionSpec(*[spec[d] if d < len(spec) and spec[d] is not None
                               else UNCONSTRAINED for d in range(ndim)])
    return constrain_unchecked(x, NamedSharding(mesh, spec))


def _to_blocks(x, mesh: Mesh, spec: PartitionSpec, manual=None):
    """Global value -> (block axes of the mesh axes `spec` uses, in mesh order, ...block)."""
    shape = aval_of_value(x).shape
    x = _constrain(x, mesh, spec, manual)
    split, perm, present = block_layout(shape, lambda d: _axes(spec, d), mesh.shape,
                                        mesh.axis_names)
    if not present:
        return x
    x = lax.reshape(x, tuple(split))
    if perm != tuple(range(len(perm))):
        x = lax.transpose(x, perm)
    return _constrain(x, mesh, PartitionSpec(*present), manual)


def _from_blocks(y, mesh: Mesh, spec: PartitionSpec, stacked: list[str], manual=None):
    """(block axes of `stacked`, ...block) -> the global value laid out as `spec`."""
    if stacked:
        y = _constrain(y, mesh, PartitionSpec(*stacked), manual)
    # Axes the spec does not name (check_vma=False): keep member 0's block, as JAX does.
    for a in reversed([a for a in stacked if a not in _spec_names(spec)]):
        i = stacked.index(a)
        y = lax.index_in_dim(y, 0, axis=i, keepdims=False)
    present = [a for a in stacked if a in _spec_names(spec)]
    block = aval_of_value(y).shape[len(present):]
    if len(spec) > len(block):
        raise ValueError(f"shard_map out_specs {spec!r} has length {len(spec)}, but the "
                         f"output has rank {len(block)}")
    perm, shape = [], []
    for d, size in enumerate(block):
        names = _axes(spec, d)
        perm += [present.index(a) for a in names] + [len(present) + d]
        shape.append(size * math.prod(mesh.shape[a] for a in names))
    if present:
        if tuple(perm) != tuple(range(len(perm))):
            y = lax.transpose(y, tuple(perm))
        y = lax.reshape(y, tuple(shape))
    return _constrain(y, mesh, spec, manual)


def _spec_names(spec: PartitionSpec) -> set[str]:
    return {a for d in range(len(spec)) for a in _axes(spec, d)}


def _run(f, mesh, in_specs, out_specs, check_vma, fun_name, args, shown=None,
         manual=None, abstract=False):
    """The traced body of a shard_map call on global values `args`, manual over the mesh
    axes `manual` (None: all); with `shown` (a _Shown), also the per-device blocks of the
    body values it printed."""
    manual = tuple(mesh.axis_names) if manual is None else manual
    leaves, in_tree = trace_trees.tree_flatten(args)
    specs = _flat_specs("in_specs", in_specs, args)
    # (Reduced in_specs: replicated blocks typed {R:...}, whose cotangents mjax sums as
    # usual.)
    reduced = [getattr(s, "reduced", frozenset()) for s in specs]
    specs = [without_reduced(s) for s in specs]
    for i, (x, s) in enumerate(zip(leaves, specs)):
        _check_spec(fun_name, mesh, s, aval_of_value(x).shape, "in", f"[{i}]")
    inside = _enclosing_manual() | set(manual)
    body_mesh = mesh.abstract_mesh.update_axis_types(
        {a: AxisType.Manual for a in inside})

    def body(*block_leaves):
        trace = current_trace()
        if trace is not None:   # (each block varies along the mesh axes its spec names)
            seed_varying(trace, block_leaves, [_spec_names(s) for s in specs], mesh)
            for t, r in zip(block_leaves, reduced):
                if r:
                    mark_manual_partial(t, reduced=r)
        # (The body sees the mesh with its manual axes typed Manual, as in JAX; a
        # shard_map in it over the other axes runs on the same concrete mesh.)
        _ACTIVE.stack = _active() + [(mesh, frozenset(inside))]
        try:
            with use_abstract_mesh(body_mesh):
                if shown is None:
                    return f(*tree_util.tree_unflatten(in_tree, block_leaves))
                with shown.printing(trace):
                    out = f(*tree_util.tree_unflatten(in_tree, block_leaves))
                if check_vma and trace is not None:   # (JAX's error, while tracing)
                    check_outputs(out, mesh, manual, out_specs, fun_name, _flat_specs)
                return out, list(shown.tracers)
        finally:
            _ACTIVE.stack = _ACTIVE.stack[:-1]

    if shown is None and manual:    # (under a trace: one jaxpr.shard_map equation)
        return emit_shard_map(body, mesh, manual, leaves, specs, out_specs, check_vma,
                              fun_name, _flat_specs, abstract, reduced)
    blocks = [_to_blocks(x, mesh, s, manual) for x, s in zip(leaves, specs)]
    fn = body
    for a in reversed(manual):
        in_axes = tuple(0 if a in _spec_names(s) else None for s in specs)
        out_axes = (trace_trees.tree_map(lambda s, a=a: 0 if a in _spec_names(
            PartitionSpec() if s is None else s) else None, out_specs, is_leaf=_is_spec)
            if check_vma else 0)
        if shown is not None:    # (printed values: one block per device, stacked)
            out_axes = (out_axes, 0)
        fn = vmap(fn, in_axes=in_axes, out_axes=out_axes, axis_name=a,
                  axis_size=mesh.shape[a])
    outs = fn(*blocks)
    if shown is not None:
        outs, printed = outs
        return _assemble(outs, mesh, out_specs, check_vma, manual), printed
    return _assemble(outs, mesh, out_specs, check_vma, manual)


def _assemble(outs, mesh, out_specs, check_vma, manual):
    """The global results from the body's stacked blocks."""
    out_leaves, out_tree = trace_trees.tree_flatten(outs)
    flat_out_specs = _flat_specs("out_specs", out_specs, outs)
    result = []
    for y, s in zip(out_leaves, flat_out_specs):
        stacked = [a for a in manual if not check_vma or a in _spec_names(s)]
        result.append(_from_blocks(y, mesh, s, stacked, manual))
    return tree_util.tree_unflatten(out_tree, result)


_ACTIVE = threading.local()


def _active() -> list:
    """(mesh, manual axes) of the shard_map bodies being traced, innermost last."""
    return getattr(_ACTIVE, "stack", [])


def _enclosing_manual() -> frozenset:
    stack = _active()
    return stack[-1][1] if stack else frozenset()


def _check_explicit_args(mesh: Mesh, in_specs, args) -> None:
    """On Explicit mesh axes an argument's type says how it is laid out, and in_specs
    must say the same (JAX's check; it does not reshard). Checked for concrete arrays:
    mjax's traced values do not carry every layout JAX's types do."""
    explicit = {n for n, t in zip(mesh.axis_names, mesh.axis_types)
                if t == AxisType.Explicit}
    if not explicit:
        return
    leaves = trace_trees.tree_leaves(args)
    for x, spec in zip(leaves, _flat_specs("in_specs", in_specs, args)):
        if not isinstance(x, (Array, np.ndarray)):
            continue
        t = typeof_array(x)
        want = tuple(tuple(a for a in spec.axes_of(d) if a in explicit)
                     for d in range(t.ndim))
        have = tuple(t.sharding.spec.axes_of(d) for d in range(t.ndim))
        if want != have:
            padded = PartitionSpec(*[spec[d] if d < len(spec) else None
                                     for d in range(t.ndim)])
            raise ValueError(
                f"in_specs passed to shard_map: {padded!r} does not match the specs of the "
                f"input: {t.sharding.spec!r} for arg: {t}. `in_specs` is an optional "
                f"argument so you can omit specifying it and shard_map will infer the "
                f"in_specs from the arguments. If you want to reshard your inputs, you can "
                f"use `jax.reshard` on the arguments and then pass those args to shard_map.")


class _Shown:
    """What a shard_map body called outside jit prints: its text is held back until the
    run, values of the body shown as markers, then written with each device's block in
    place of each marker (JAX's `On cpu:0 at mesh coordinates (i,) = (0,):` form)."""

    def __init__(self, mesh: Mesh, manual: tuple):
        self.mesh = mesh
        self.manual = manual
        self.tracers: list = []
        self.values = None

    @contextlib.contextmanager
    def printing(self, trace):
        """While the body runs, its tracers print as markers (Trace.shows)."""
        if trace is None:
            yield
            return
        previous, trace.shows = trace.shows, self._marker
        try:
            yield
        finally:
            trace.shows = previous

    def _marker(self, tracer):
        self.tracers.append(tracer)
        return f"\x00shown{len(self.tracers) - 1}\x00"

    @contextlib.contextmanager
    def capturing(self):
        buf = io.StringIO()
        try:
            with contextlib.redirect_stdout(buf):
                yield
        finally:
            sys.stdout.write(re.sub("\x00shown(\\d+)\x00",
                                    lambda m: self._blocks(int(m.group(1))), buf.getvalue()))

    def _blocks(self, k: int) -> str:
        if self.values is None:
            return "<traced value>"
        value = np.asarray(self.values[k])
        mesh, manual = self.mesh, self.manual
        names = ", ".join(manual)
        parts = []
        for idx in np.ndindex(*[mesh.shape[a] for a in manual]):
            # (Over part of the mesh, a block is on the devices along the other axes.)
            where = (f"On {mesh.devices[idx]} at" if len(manual) == len(mesh.axis_names)
                     else "At")
            parts.append(f"{where} mesh coordinates ({names},) = {idx}:\n{value[idx]}\n")
        return "\n".join(parts)


def _inferred_specs(mesh: Mesh, args, manual: tuple):
    """in_specs from the arguments' own layouts (JAX: in_specs=Infer, which needs the
    manual axes to be Explicit): an array laid out over `mesh` keeps its spec over the
    manual axes, the rest are replicated."""
    types = mesh._name_to_type
    if not all(types[a] == AxisType.Explicit for a in manual):
        raise TypeError(f"shard_map in_specs argument must be a pytree of "
                        f"`jax.sharding.PartitionSpec` instances, but it was `None` when "
                        f"axis_names={frozenset(manual)} are of type "
                        f"{', '.join(str(types[a]) for a in manual)}")

    def spec_of(x):
        # A traced value's layout is in its type (an abstract mesh), a concrete one's on it.
        if type(x) is Array:
            s = getattr(x, "_sharding", None)
            on_mesh = isinstance(s, NamedSharding) and s.mesh == mesh
        else:
            s = typeof_array(x).sharding if hasattr(x, "aval") else None
            on_mesh = isinstance(s, NamedSharding) and s.mesh == mesh.abstract_mesh
        return _only(s.spec, manual) if on_mesh else PartitionSpec()
    leaves, treedef = trace_trees.tree_flatten(args)
    return tree_util.tree_unflatten(treedef, [spec_of(x) for x in leaves])


def _only(spec: PartitionSpec, axes) -> PartitionSpec:
    """`spec` with the mesh axes not in `axes` dropped (JAX's rule for inferred specs)."""
    out = []
    for d in range(len(spec)):
        names = spec.axes_of(d)
        kept = tuple(a for a in names if a in axes)
        if kept != names[:len(kept)]:
            raise ValueError(f"Invalid spec: {spec}")
        out.append(spec_entry(kept))
    return PartitionSpec(*out)


def _manual_axes(mesh: Mesh, axis_names) -> tuple:
    """The mesh axes a shard_map is manual over, in mesh order (JAX's checks)."""
    if not isinstance(axis_names, (set, frozenset)):
        raise TypeError(f"`axis_names` argument of shard_map should be of type `frozenset` "
                        f"or `set`. Got type: {type(axis_names)}")
    free = frozenset(mesh.axis_names) - _enclosing_manual()
    names = frozenset(axis_names) or free
    if not names <= free:
        raise ValueError(f"jax.shard_map requires axis_names={names} to be a subset of "
                         f"mesh.axis_names={free}")
    return tuple(a for a in mesh.axis_names if a in names)


def _check_manual_specs(what: str, specs, manual: tuple, mesh: Mesh) -> None:
    """Specs may name only the manual axes (JAX's ValueError otherwise), and name
    unreduced/reduced axes only when every mesh axis is manual."""
    if what == "in" and specs is None:
        raise TypeError("shard_map in_specs argument must be a pytree of "
                        "`jax.sharding.PartitionSpec` instances, but it was None.\n"
                        "Instead of `in_specs=None`, did you mean `in_specs=P()`, "
                        "where `P = jax.sharding.PartitionSpec`?")
    paths = tree_util.tree_flatten_with_path(specs, is_leaf=_is_spec)[0]
    bad = []
    for path, s in paths:
        if s is None or not isinstance(s, PartitionSpec):
            continue
        bad += [f"  {what}_specs{tree_util.keystr(path)} refers to {a!r}"
                for d in range(len(s)) for a in s.axes_of(d)
                if a in mesh.axis_names and a not in manual]
        if (s.unreduced or s.reduced) and len(manual) != len(mesh.axis_names):
            raise NotImplementedError(
                f"unreduced/reduced can only be passed to {what}_specs when shard_map is "
                f"in full manual mode. Got mesh axis names {tuple(mesh.axis_names)}, "
                f"manual_axes: {frozenset(manual)}, specs: {s}.")
    if bad:
        raise ValueError(f"shard_map {what}_specs argument must refer to an axis marked as "
                         f"manual ({frozenset(manual)}), but:\n\n" + "\n\n".join(bad) +
                         f"\n\nCheck the {what}_specs values passed to shard_map.")


def _resolve_mesh(mesh):
    """The concrete mesh a shard_map runs on: `mesh`, else the context's; an abstract
    mesh (get_abstract_mesh() in a shard_map body) is the enclosing body's mesh."""
    stack = _active()
    if isinstance(mesh, AbstractMesh):
        for m, _ in reversed(stack):
            if (m.axis_names, m.axis_sizes) == (mesh.axis_names, mesh.axis_sizes):
                return m
        concrete = current_mesh()
        if concrete is not None and (concrete.axis_names, concrete.axis_sizes) == (
                mesh.axis_names, mesh.axis_sizes):
            return concrete
        raise NotImplementedError(f"shard_map over the abstract mesh {mesh!r}: mjax needs "
                                  f"the concrete mesh it describes (jax.set_mesh)")
    if mesh is None:
        mesh = current_mesh() or (stack[-1][0] if stack else None)
        if mesh is None:
            raise ValueError("shard_map requires a `mesh=` argument or a mesh context "
                             "(`with mesh:`)")
    if not isinstance(mesh, Mesh):
        raise TypeError(f"shard_map mesh must be a Mesh, got {type(mesh).__name__}")
    return mesh


def shard_map(f=None, /, *, out_specs, in_specs=Infer, mesh=None, axis_names=frozenset(),
              check_vma=True, check_rep=None):
    """`f` applied to per-device blocks of its arguments, laid out over `mesh` by
    `in_specs`, with results assembled by `out_specs`. JAX: jax.shard_map."""
    if f is None:
        return lambda g: shard_map(g, out_specs=out_specs, in_specs=in_specs, mesh=mesh,
                                   axis_names=axis_names, check_vma=check_vma,
                                   check_rep=check_rep)
    _check_callable(f)
    if check_rep is not None:
        check_vma = check_rep
    fun_name = getattr(f, "__name__", None) or type(f).__name__   # (not repr: it may trace)
    cache: dict = {}

    @_wraps(f)
    def mapped(*args, **kwargs):
        if kwargs:
            raise TypeError(f"shard_map applied to the function '{fun_name}' got keyword "
                            f"arguments {sorted(kwargs)}: pass them positionally (or close "
                            f"over them)")
        if hitype_rules and uses_hi(in_specs, out_specs, args):
            options = dict(mesh=mesh, axis_names=axis_names, check_vma=check_vma)
            return shard_map_hi(shard_map, f, in_specs, out_specs, options, cache, args)
        m = _resolve_mesh(mesh)
        manual = _manual_axes(m, axis_names)
        if in_specs is not Infer:
            _check_manual_specs("in", in_specs, manual, m)
        _check_manual_specs("out", out_specs, manual, m)
        full = len(manual) == len(m.axis_names)
        specs = in_specs if in_specs is not Infer else _inferred_specs(m, args, manual)
        if in_specs is not Infer and full:
            _check_explicit_args(m, specs, args)
        if any(getattr(s, "unreduced", None) for s in _flat_specs("in_specs", specs, args)):
            if current_trace() is not None:
                raise NotImplementedError("shard_map with unreduced in_specs inside a "
                                          "trace (jit, grad, ...): mjax takes them only "
                                          "in calls outside jit")
            return _unreduced_ins(f, m, specs, out_specs, check_vma, args)
        unreduced = _unreduced_outs(out_specs)
        if unreduced is not None and current_trace() is not None and full:
            # (one equation whose results are unreduced: JAX's out_specs)
            return _run(f, m, specs, out_specs, check_vma, fun_name, args, manual=manual,
                        abstract=not isinstance(mesh, Mesh))
        if unreduced is not None:
            inner = cache.get(("unreduced", m))
            if inner is None:
                inner = cache[("unreduced", m)] = shard_map(
                    _stacking(f, unreduced), out_specs=_stacked_specs(out_specs, m),
                    in_specs=specs, mesh=m, check_vma=check_vma)
            if current_trace() is not None:
                return _summed_unreduced(inner(*args), out_specs, unreduced, m)
            return _as_unreduced(inner(*args), out_specs, unreduced, m)
        if current_trace() is not None:
            return _run(f, m, specs, out_specs, check_vma, fun_name, args, manual=manual,
                        abstract=not isinstance(mesh, Mesh))
        # Called outside jit: JAX runs the body eagerly, so printing a value shows each
        # device's block. mjax stages the body; what it prints waits for the run, which
        # also returns the printed values' blocks (see _Shown).
        shown = _Shown(m, manual)
        hit = cache.get((m, manual))
        if hit is None:
            current: dict = {}   # (this call's specs and _Shown, for a trace it causes)
            jitted = jit(lambda *a: _run(f, m, current["specs"], out_specs, check_vma,
                                         fun_name, a, shown=current["shown"],
                                         manual=manual))
            hit = cache[(m, manual)] = (jitted, current)
        jitted, current = hit
        current.update(specs=specs, shown=shown)
        try:
            with shown.capturing(), emulating_shard_map(manual):
                outs, printed = jitted(*args)
                shown.values = printed
            return _named_as_specs(outs, m, out_specs)
        except Exception as e:
            if re.search(r"at vmap out_axes\S*, got axis spec None", str(e)):
                raise ValueError(
                    f"shard_map applied to the function '{fun_name}' was given out_specs "
                    f"{out_specs!r} which require replication over mesh axes that the "
                    f"outputs vary along (they are not reduced over them, e.g. by psum). "
                    f"Pass check_vma=False (check_rep=False) to skip this check, or name "
                    f"those axes in out_specs. ({e})") from None
            raise
    return mapped


def _unreduced_ins(f, mesh, in_specs, out_specs, check_vma, args):
    """shard_map called outside jit on arguments with unreduced in_specs: each device's
    block is its own partial (typed {U:...}). The partials enter stacked along a new
    leading dimension split over those axes, which the body drops."""
    leaves, tree = trace_trees.tree_flatten(args)
    flat = _flat_specs("in_specs", in_specs, args)
    axes = [frozenset(s.unreduced or ()) for s in flat]
    new_leaves, new_specs = [], []
    for i, (x, s, u) in enumerate(zip(leaves, flat, axes)):
        if not u:
            new_leaves.append(x)
            new_specs.append(s)
            continue
        if not isinstance(x, Array) or x._sharding is None or unreduced_of(x._sharding) != u:
            raise NotImplementedError(f"shard_map argument [{i}] with in_spec {s!r}: mjax "
                                      f"takes only arrays unreduced over exactly {set(u)} "
                                      f"as unreduced inputs")
        order = tuple(a for a in mesh.axis_names if a in u)
        new_leaves.append(_stacked(x))
        new_specs.append(PartitionSpec(spec_entry(order), *s))

    def unstacked(*a):
        blocks = trace_trees.tree_leaves(a)
        trace = current_trace()
        for j, u in enumerate(axes):
            if u:
                blocks[j] = lax.reshape(blocks[j], aval_of_value(blocks[j]).shape[1:])
                if trace is not None and getattr(trace, "varying", None) is not None:
                    trace.varying.pop(blocks[j].value, None)
                    mark_manual_partial(blocks[j], unreduced=u)
        return f(*tree_util.tree_unflatten(tree, blocks))
    inner = shard_map(unstacked, mesh=mesh, in_specs=tuple(new_specs),
                      out_specs=out_specs, check_vma=check_vma)
    return inner(*new_leaves)


def _unreduced_outs(out_specs):
    """Positions of the out_specs unreduced over mesh axes (None: none is); out_specs
    a spec or a flat tuple/list of them."""
    flat = [out_specs] if _is_spec(out_specs) else list(out_specs) if isinstance(
        out_specs, (tuple, list)) and all(_is_spec(s) for s in out_specs) else None
    if flat is None:
        if any(getattr(s, "unreduced", None) for s in trace_trees.tree_leaves(
                out_specs, is_leaf=_is_spec)):
            raise NotImplementedError("shard_map with unreduced out_specs nested in a "
                                      "pytree: give a spec or a tuple of specs")
        return None
    found = [i for i, s in enumerate(flat) if s is not None and s.unreduced]
    return found or None


def _stacking(f, positions):
    """f whose unreduced outputs gain a leading dimension (the partials, stacked)."""
    def g(*args):
        out = f(*args)
        single = not isinstance(out, (tuple, list))
        outs = [out] if single else list(out)
        outs = [lax.expand_dims(y, (0,)) if i in positions else y
                for i, y in enumerate(outs)]
        return outs[0] if single else type(out)(outs)
    return g


def _stacked_specs(out_specs, mesh):
    def stack(spec):
        if spec is None or not spec.unreduced:
            return spec
        axes = tuple(a for a in mesh.axis_names if a in spec.unreduced)
        return PartitionSpec(axes[0] if len(axes) == 1 else axes, *spec)
    if _is_spec(out_specs):
        return stack(out_specs)
    return type(out_specs)(stack(s) for s in out_specs)


def _as_unreduced(outs, out_specs, positions, mesh):
    """The stacked partials of the unreduced outputs as arrays unreduced over the axes
    (each device keeps its own partial: mjax/lax/unreduced.py)."""
    single = _is_spec(out_specs)
    flat = [outs] if single else list(outs)
    specs = [out_specs] if single else list(out_specs)
    for i in positions:
        y, spec = flat[i], specs[i]
        parts = {d: v[0] for d, v in partials(y).items()}
        flat[i] = from_partials(parts, y.shape[1:], y.dtype, NamedSharding(mesh, spec),
                                y.aval.weak_type)
    return flat[0] if single else type(outs)(flat)


def _summed_unreduced(outs, out_specs, positions, mesh):
    """Under a trace: the stacked partials of the unreduced outputs summed, as values
    typed unreduced over the axes. (The sum is their value; Shardy keeps the sum of a
    dimension split over the axes undone where its result is laid out unreduced.)"""
    single = _is_spec(out_specs)
    flat = [outs] if single else list(outs)
    specs = [out_specs] if single else list(out_specs)
    for i in positions:
        flat[i] = constrain_unchecked(lax.reduce_sum(flat[i], (0,)),
                                      NamedSharding(mesh, specs[i]))
    return flat[0] if single else type(outs)(flat)


def _named_as_specs(outs, mesh: Mesh, out_specs):
    """The results, each Array's sharding spelled as its out_spec (`P(None)` stays
    `P(None)`, as in JAX) where the layout is the one the spec names."""
    leaves, tree = trace_trees.tree_flatten(outs)
    for y, spec in zip(leaves, _flat_specs("out_specs", out_specs, outs)):
        if type(y) is Array and isinstance(y.sharding, NamedSharding):
            want = NamedSharding(mesh, spec)
            if y.sharding.is_equivalent_to(want, y.ndim):
                y._sharding = want
    return tree_util.tree_unflatten(tree, leaves)


def _bind_shard_map(*args, jaxpr, mesh, in_specs, out_specs, check_vma=True,
                    newly_manual_axes=frozenset(), **_):
    """A shard_map equation bound again (eval_jaxpr of a make_jaxpr result): shard_map of
    its body's jaxpr, with its specs, on its mesh (an abstract one: the context's)."""
    if isinstance(mesh, AbstractMesh):
        mesh = _resolve_mesh(mesh)

    def body(*blocks):
        return list(registration.EVAL_JAXPR(jaxpr, [], *blocks))
    return shard_map(body, mesh=mesh, in_specs=tuple(in_specs), out_specs=list(out_specs),
                     axis_names=set(newly_manual_axes), check_vma=check_vma)(*args)


registration.REGION_BINDS[ShardMapOp] = _bind_shard_map

__all__ = ["shard_map", "Infer"]
