"""`lax.with_sharding_constraint`: ask that a value be laid out over a mesh.

Under a trace it emits `jaxpr.sharding_constraint` (lowered to XLA's
`custom_call @Sharding`, and read by jit to compile for the mesh); on concrete arrays it
is a `device_put`. JAX: jax.lax.with_sharding_constraint.
"""
from __future__ import annotations

import contextlib
import functools
import inspect

from mjax.tracing import registration
from mjax.base import trace_trees, tree_util
from mjax.tracing.core import RegionTrace, at_user_line, aval_of_value, bind, current_trace
from mjax.dialect.ops.sharding import DEVICE_PUT_MARK, ShardingConstraintOp
from mjax.dialect.ops.structural import DevicePutOp, LayoutConstraintOp
from mjax.dialect.values import defining_op, is_value, mark, string_attr
from mjax.specs.layout import AutoLayoutSingleton, Format, Layout
from mjax.arrays.placement import device_put
from mjax.specs.sharding_impls import (UNCONSTRAINED, AbstractMesh, AxisType, NamedSharding,
                                       PartitionSpec, Sharding, SingleDeviceSharding, as_sharding,
                                       concrete_mesh_for, current_mesh, get_abstract_mesh,
                                       use_abstract_mesh)
from mjax.tracing.tracer import Tracer
from mjax.arrays.sharding_types import out_sharding_given, partial_axes, spec_entry
from mjax.lax.unreduced import local_contractions


def _as_named(s, fn="with_sharding_constraint") -> Sharding:
    return as_sharding(s, fn)


def constraint_params(s: NamedSharding, ndim: int) -> dict:
    """The attributes of jaxpr.sharding_constraint laying out a rank-`ndim` value as `s`."""
    spec = s.spec
    if len(spec) > ndim:
        raise ValueError(at_user_line(
            f"Sharding {s!r} is only valid for values of rank at least {len(spec)}, but "
            f"was applied to a value of rank {ndim}"))
    mesh = s.mesh
    if isinstance(mesh, AbstractMesh):   # (the concrete mesh jax.set_mesh gave, as JAX's)
        mesh = concrete_mesh_for(mesh, "with_sharding_constraint")
    entries = tuple("?" if d < len(spec) and spec[d] is UNCONSTRAINED
                    else ",".join(spec.axes_of(d)) for d in range(ndim))
    params = {"mesh_axes": tuple(mesh.axis_names), "mesh_shape": tuple(mesh.axis_sizes),
              "spec": entries,
              "device_ids": tuple(int(i) for i in mesh.device_ids.flat)}
    for what in ("unreduced", "reduced"):     # (partial sums: mjax/lax/unreduced.py)
        axes = getattr(spec, what)
        if axes:
            params[what] = tuple(a for a in mesh.axis_names if a in axes)
    return params


def _check_auto(s: NamedSharding):
    explicit = [a for d in range(len(s.spec)) for a in s.spec.axes_of(d)
                if s.mesh.axis_types[s.mesh.axis_names.index(a)] != AxisType.Auto]
    if explicit:
        raise ValueError(f"The spec of NamedSharding passed to with_sharding_constraint can "
                         f"only refer to Auto axes of the mesh. Got spec={s.spec!r} and "
                         f"mesh={s.mesh!r}. You probably meant to use `reshard` API?")


def _constrain(x, s):
    if isinstance(s, SingleDeviceSharding) and current_trace() is not None:
        return x  # one device: nothing to lay out inside a program
    if current_trace() is None:
        return device_put(x, s)
    if not isinstance(s, NamedSharding):
        raise NotImplementedError(f"with_sharding_constraint under a trace takes a "
                                  f"NamedSharding or PartitionSpec, got {s!r}")
    _check_auto(s)
    return _bind_constraint(x, s)


def _bind_constraint(x, s: NamedSharding):
    params = constraint_params(s, len(aval_of_value(x).shape))
    trace = current_trace()
    explicit = _names_explicit_axes(s)
    if trace.type_specs is None and ("unreduced" in params or "reduced" in params or
                                     explicit):
        trace.type_specs = {}     # (types begin here: the result's carry the axes)
    if explicit and get_abstract_mesh().empty:
        # (outside any mesh context the result's type names the sharding's own mesh)
        with use_abstract_mesh(s.mesh.abstract_mesh):
            return bind(ShardingConstraintOp, x, **params)
    return bind(ShardingConstraintOp, x, **params)


def _names_explicit_axes(s: NamedSharding) -> bool:
    return any(s.mesh.axis_types[s.mesh.axis_names.index(a)] == AxisType.Explicit
               for d in range(len(s.spec)) for a in s.spec.axes_of(d))


def pin_unreduced(xs) -> list:
    """`xs` (traced values), those typed unreduced laid out so by a constraint, as JAX
    lays out each unreduced value (a reduced primal's cotangent): Shardy then keeps the
    partial sums of the contraction computing it. Not in loop or branch bodies (a
    constraint there makes jit compile without Shardy)."""
    trace = current_trace()
    if trace is None or trace.type_specs is None or isinstance(trace, RegionTrace):
        return list(xs)
    out = []
    for x in xs:
        found = trace.type_specs.get(x.value) if getattr(x, "trace", None) is trace \
            else None
        unreduced, reduced = partial_axes(found)
        if unreduced and not found[0].empty:
            spec = PartitionSpec(*[spec_entry(d) for d in found[1]], unreduced=unreduced,
                                 reduced=reduced)
            x = _bind_constraint(x, NamedSharding(found[0], spec))
        out.append(x)
    return out


def constrain_unchecked(x, s: NamedSharding):
    """`x` constrained to `s` over any mesh axes (shard_map lays out blocks over Explicit
    axes too, which with_sharding_constraint refuses as JAX does)."""
    if current_trace() is None:
        return device_put(x, s)
    return _bind_constraint(x, s)


def with_sharding_constraint(x, shardings):
    """`x` (a pytree) laid out as `shardings` (a pytree prefix of shardings or
    PartitionSpecs). JAX: jax.lax.with_sharding_constraint."""
    leaves, treedef = trace_trees.tree_flatten(x)
    is_leaf = lambda s: isinstance(s, (Sharding, PartitionSpec, Format, Layout,  # noqa: E731
                                       AutoLayoutSingleton))
    if is_leaf(shardings):
        flat = [shardings] * len(leaves)
    else:
        flat = tree_util.prefix_entries("with_sharding_constraint shardings", shardings, x,
                                     is_leaf)
    out = []
    for leaf, s in zip(leaves, flat):
        layout = None
        if isinstance(s, (Layout, AutoLayoutSingleton)):
            raise ValueError(
                f"`jax.jit` does not accept device-local layouts directly. Create a "
                f"`Format` instance wrapping this device-local layout and pass that to "
                f"`jit` instead. Got {s}")
        if isinstance(s, Format):   # (a sharding with the layout its result takes)
            layout, s = s.layout, s.sharding
        s = _as_named(s)
        if isinstance(s, NamedSharding):
            _check_auto(s)
        out.append(_with_layout(_constrain(leaf, s), layout))
    return tree_util.tree_unflatten(treedef, out)


def _with_layout(x, layout):
    """`x` in `layout` (None or AUTO: as it is), as with_layout_constraint does."""
    if not isinstance(layout, Layout):
        return x
    layout.check_compatible_aval(aval_of_value(x).shape)
    if isinstance(x, Tracer):
        return bind(LayoutConstraintOp, x, major_to_minor=layout.major_to_minor)
    current = x.format.layout
    if current is not None and current.major_to_minor == layout.major_to_minor and \
            layout.tiling in (None, current.tiling):
        return x
    ndim = len(layout.major_to_minor)
    if len(x.sharding.device_set) > 1 and not layout.tiling and \
            layout.major_to_minor == tuple(range(ndim - 1, -1, -1)):
        return x    # (mjax keeps arrays over several devices in XLA's default layout)
    return device_put(x, Format(layout, x.sharding))


def reshard(xs, out_shardings):
    """`xs` (a pytree) laid out as `out_shardings` (shardings or PartitionSpecs under a
    mesh), over any mesh axes. JAX: jax.reshard."""
    leaves, treedef = trace_trees.tree_flatten(xs)
    is_leaf = lambda s: isinstance(s, (Sharding, PartitionSpec))  # noqa: E731
    if is_leaf(out_shardings):
        flat = [out_shardings] * len(leaves)
    else:
        flat = tree_util.prefix_entries("reshard out_shardings", out_shardings, xs, is_leaf)
    out = []
    for leaf, s in zip(leaves, flat):
        s = _as_named(s, "reshard")
        if isinstance(s, NamedSharding):
            out.append(constrain_unchecked(leaf, s))
        else:
            out.append(_constrain(leaf, s))
    return tree_util.tree_unflatten(treedef, out)


def apply_out_sharding(x, out_sharding):
    """`x` laid out as an op's `out_sharding=` keyword asks (None: left to propagation),
    as JAX's lax/numpy functions taking `out_sharding` do. A sharding over an abstract
    mesh (`jax.typeof(y).sharding`) names the current mesh's devices; over the empty
    mesh it lays out nothing (JAX: the default placement)."""
    if out_sharding is None:
        return x
    if isinstance(out_sharding, NamedSharding) and isinstance(out_sharding.mesh,
                                                              AbstractMesh):
        if out_sharding.mesh.empty:
            return x
        mesh = current_mesh()
        if mesh is None or tuple(mesh.axis_names) != tuple(out_sharding.mesh.axis_names):
            raise ValueError(at_user_line(
                f"out_sharding={out_sharding!r} is over an abstract mesh: call inside "
                f"`with mjax.set_mesh(mesh):` with a mesh of axes "
                f"{out_sharding.mesh.axis_names}, or pass NamedSharding(mesh, spec)"))
        out_sharding = NamedSharding(mesh, out_sharding.spec)
    return reshard(x, out_sharding)


def local_contractions_if(out_sharding):
    """Eagerly, an out_sharding unreduced over mesh axes makes the dot_generals under it
    contract each device's blocks without the sum over those axes (mjax/lax/unreduced.py)."""
    spec = getattr(out_sharding, "spec", out_sharding)
    if getattr(spec, "unreduced", None) and current_trace() is None:
        return local_contractions()
    return contextlib.nullcontext()


def takes_out_sharding(f):
    """Decorator: f also takes JAX's keyword-only `out_sharding=` (its result laid out so
    when given), and its signature shows it."""
    sig = inspect.signature(f)
    params = list(sig.parameters.values())
    at = len(params) - (params[-1].kind is inspect.Parameter.VAR_KEYWORD if params else 0)
    params.insert(at, inspect.Parameter("out_sharding", inspect.Parameter.KEYWORD_ONLY,
                                        default=None))

    @functools.wraps(f)
    def g(*args, out_sharding=None, **kwargs):
        if out_sharding is None:
            return f(*args, **kwargs)
        with out_sharding_given(), local_contractions_if(out_sharding):
            out = f(*args, **kwargs)
        return apply_out_sharding(out, out_sharding)
    g.__signature__ = sig.replace(parameters=params)
    return g


__all__ = ["with_sharding_constraint", "constraint_params", "reshard", "pin_unreduced"]


def _device_put_traced(x, s: NamedSharding):
    """device_put of a traced value: a reshard, its constraint marked as device_put's."""
    out = constrain_unchecked(x, s)
    op = _made_by(out)
    if op is not None and op.name == ShardingConstraintOp.OPERATION_NAME:
        mark(op, DEVICE_PUT_MARK)
    return out


registration.DEVICE_PUT_TRACED.fill(_device_put_traced)


def _device_put_memory(x, memory_kind: str):
    """device_put of a traced value to a sharding in `memory_kind` memory (JAX's
    device_put_p with a memory-kind target; on CPU its lowering moves nothing). `src`:
    the memory an earlier device_put moved `x` to, where it did."""
    op = _made_by(x)
    src = None
    if op is not None and op.name == DevicePutOp.OPERATION_NAME:
        src = string_attr(op, "memory_kind")
    return bind(DevicePutOp, x, memory_kind=memory_kind, **({"src": src} if src else {}))


registration.DEVICE_PUT_MEMORY.fill(_device_put_memory)


def _made_by(x):
    """The op whose result traced `x` is (None for an argument or an untraced value)."""
    v = getattr(x, "value", None)
    return defining_op(v) if is_value(v) else None
