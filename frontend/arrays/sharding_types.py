"""Shardings in types: what `mjax.typeof` says about how an array is laid out.

On a mesh whose axes are Explicit, JAX makes an array's sharding part of its type:
`typeof(x)` is `float32[8@X,4@Y]` and `typeof(x).sharding` a NamedSharding over the
mesh's AbstractMesh. Auto axes are the compiler's business and never appear in types.
mjax's avals stay sharding-free (its propagation pass decides every layout after
tracing); the types live beside them: a concrete array's come from its sharding, a
traced value's from a table its trace keeps (Trace.type_specs), which bind fills op by op
with the ops' factor rules (the propagation pass's SHARD table), raising JAX's
ShardingTypeErrors where the operands' types leave a result's ill-defined. In a
shard_map body a second table (Trace.varying) gives JAX's varying-manual-axes types.
"""
from __future__ import annotations

import contextlib
import threading

from mjax.dialect.ops import collectives as C
from mjax.dialect.ops.sharding import ShardingConstraintOp, dim_axes
from mjax.dialect.types import KeyType, RefAval, ShapedArray, short_dtype_name
from mjax.specs.dtypes import aval_of_value, hi_aval
from mjax.specs.manual_axis_type import ManualAxisType
from mjax.passes.rules.tables import CONTRACTION, PARTIAL_SUMS, PER_PARTIAL, PRODUCT, SHARD, SUM
from mjax.specs.sharding_impls import (AbstractMesh, AxisType, Mesh, NamedSharding, PartitionSpec,
                                       get_abstract_mesh)
from mjax.tracing.tracer import Tracer


def _default_sharding(aval) -> NamedSharding:
    """JAX's `aval.sharding` of a value whose type names no layout: replicated, over the
    empty abstract mesh (ShardedAval, what `typeof` gives, has the real one)."""
    return NamedSharding(AbstractMesh((), ()), PartitionSpec(*[None] * len(aval.shape)))


ShapedArray.sharding = property(_default_sharding)   # (flax's linen scan reads it)


class ShardedAval(ShapedArray):
    """A ShapedArray with JAX's `sharding` (a NamedSharding over an AbstractMesh)."""

    __slots__ = ("sharding", "manual_axis_type", "varying_order")

    def __init__(self, shape, dtype, weak_type: bool = False, sharding=None):
        super().__init__(shape, dtype, weak_type)
        if sharding is None:
            sharding = NamedSharding(AbstractMesh((), ()), PartitionSpec(*[None] * len(shape)))
        self.sharding = sharding
        self.manual_axis_type = ManualAxisType()
        self.varying_order = ()      # (the varying axes in mesh order, for printing)

    def _vma(self) -> str:
        """JAX's `{V:X}`, `{U:(X,Y)}`, `{V:X, R:Y}`: varying, unreduced and reduced axes."""
        spec, mesh = self.sharding.spec, self.sharding.mesh
        parts = []
        for tag, axes in (("V", self.varying_order),
                          ("U", _mesh_ordered(mesh, getattr(spec, "unreduced", ()))),
                          ("R", _mesh_ordered(mesh, getattr(spec, "reduced", ())))):
            if axes:
                parts.append(f"{tag}:{axes[0]}" if len(axes) == 1 else
                             f"{tag}:({','.join(axes)})")
        return f"{{{', '.join(parts)}}}" if parts else ""

    def update(self, shape=None, dtype=None, weak_type=None, sharding=None):
        return ShardedAval(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type,
                           self.sharding if sharding is None else sharding)

    def _dims(self) -> str:
        spec = self.sharding.spec
        return _dims_text(self.shape, [spec.axes_of(d) for d in range(len(self.shape))])

    def str_short(self) -> str:
        spec = self.sharding.spec
        return _short_type(self, [spec.axes_of(d) for d in range(len(self.shape))]) + \
            self._vma()

    def _str_strong(self) -> str:    # (ShapedArray's __str__ and __repr__ add the rest)
        name = getattr(self.dtype, "name", str(self.dtype))
        return f"{name}[{self._dims()}]{self._vma()}"

    def __eq__(self, other):
        return super().__eq__(other) and _layout_key(self) == _layout_key(other)

    __hash__ = ShapedArray.__hash__


def _mesh_ordered(mesh, axes) -> tuple:
    return tuple(a for a in mesh.axis_names if a in axes) if axes else ()


def _dims_text(shape, axes_per_dim) -> str:
    """JAX's `8@X,4@(Y,Z),2` dimension list."""
    out = []
    for size, axes in zip(shape, axes_per_dim):
        if not axes:
            out.append(str(size))
        elif len(axes) == 1:
            out.append(f"{size}@{axes[0]}")
        else:
            out.append(f"{size}@({','.join(axes)})")
    return ",".join(out)


def _short_type(aval, axes_per_dim) -> str:
    """f32[8@X,4@X]: a type that no valid sharding has (for errors)."""
    return f"{short_dtype_name(aval.dtype)}[{_dims_text(aval.shape, axes_per_dim)}]"


def _layout_key(aval):
    """The mesh axes of each dimension (None: all whole), so that an unsharded typed aval
    equals a plain ShapedArray."""
    sharding = getattr(aval, "sharding", None)
    if sharding is None:
        return None
    spec = sharding.spec
    dims = tuple(spec.axes_of(d) for d in range(len(aval.shape)))
    extra = (getattr(spec, "unreduced", frozenset()), getattr(spec, "reduced", frozenset()))
    return None if not any(dims) and not any(extra) else (sharding.mesh, dims, extra)


def type_spec(sharding, ndim: int) -> PartitionSpec:
    """The part of `sharding`'s spec a type records: its Explicit mesh axes, one entry
    per dimension."""
    mesh = getattr(sharding, "mesh", None)
    if mesh is None:
        return PartitionSpec(*[None] * ndim)
    explicit = {n for n, t in zip(mesh.axis_names, mesh.axis_types) if t == AxisType.Explicit}
    explicit -= _not_explicit_here()
    entries = []
    for d in range(ndim):
        axes = tuple(a for a in sharding.spec.axes_of(d) if a in explicit)
        entries.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    return PartitionSpec(*entries)


def _not_explicit_here() -> set:
    """Mesh axes the current context (auto_axes, explicit_axes, use_abstract_mesh) makes
    Auto or Manual: types do not record them there."""
    mesh = get_abstract_mesh()
    return {n for n, t in zip(mesh.axis_names, mesh.axis_types) if t != AxisType.Explicit}


def _live(dims) -> tuple:
    """`dims` without the axes the current context makes non-Explicit."""
    hidden = _not_explicit_here()
    if not hidden:
        return tuple(dims)
    return tuple(tuple(a for a in axes if a not in hidden) for axes in dims)


def typed_aval(aval: ShapedArray, sharding) -> ShardedAval:
    """`aval` with the type-level sharding of an array laid out as `sharding` (None: on
    one device)."""
    mesh = getattr(sharding, "mesh", None)
    if mesh is None:
        abstract = AbstractMesh((), ())
    else:
        abstract = mesh.abstract_mesh
    spec = type_spec(sharding, aval.ndim)
    full = getattr(sharding, "spec", None)
    if full is not None and (full.unreduced or full.reduced):   # (partial sums and the
        spec = PartitionSpec(*spec, unreduced=full.unreduced,  # values whose cotangents
                             reduced=full.reduced)            # are: mjax/lax/unreduced.py)
    return ShardedAval(aval.shape, aval.dtype, aval.weak_type, NamedSharding(abstract, spec))


class ShardingTypeError(Exception):
    """An op whose operands' explicit shardings give no well-defined result sharding.
    JAX: jax._src.core.ShardingTypeError."""


_out_sharding = threading.local()


@contextlib.contextmanager
def out_sharding_given():
    """Within the block, ops need not resolve ambiguous result shardings: the caller
    lays the result out as its `out_sharding=` says."""
    depth = getattr(_out_sharding, "depth", 0)
    _out_sharding.depth = depth + 1
    try:
        yield
    finally:
        _out_sharding.depth = depth


def check_explicit_op(opcls, args, avals_out, params) -> None:
    """JAX's sharding-in-types checks for an op applied eagerly to arrays laid out over a
    mesh with Explicit axes (see result_dims)."""
    avals_in = [aval_of_value(a) for a in args]
    dims_in = [_explicit_dims(a, aval.ndim) for a, aval in zip(args, avals_in)]
    if any(any(dims) for dims in dims_in):
        result_dims(opcls, avals_in, dims_in, avals_out, params)


def result_dims(opcls, avals_in, dims_in, avals_out, params) -> list | None:
    """The Explicit mesh axes of each result dimension of an op whose operands' are
    `dims_in` (None: the op has no factor rule, or the rule could not read the params).
    ShardingTypeError as JAX's: operands that split one dimension differently, a result
    that would split two dimensions over one mesh axis, or contracting dimensions split
    on both sides (whose result sharding only `out_sharding=` can say). The op's factor
    rule (the propagation pass's SHARD table) says which operand and result dimensions
    correspond."""
    if opcls.primitive == "gather" and not getattr(_out_sharding, "depth", 0):
        _check_gather(avals_in, dims_in, params)
    rule = SHARD.get(opcls)
    if rule is None:
        return None
    try:
        factors = rule(avals_in, avals_out, **params)
    except Exception:  # noqa: BLE001
        # (Params in a form only the op's verifier normalizes: no type-level answer,
        # and the op itself still runs; the propagation pass decides its layout.)
        return None
    name = opcls.primitive
    if factors.kind == "dot_general" and getattr(_out_sharding, "depth", 0):
        # (JAX's dot_general takes the caller's out_sharding as is, without checking
        # its operands' batch or contracting shardings: the result's type is that.)
        return [[()] * len(res) for res in factors.results]
    axes_of: dict = {}
    for dims, operand in zip(dims_in, factors.operands):
        for d, f in enumerate(operand):
            if f is None or not dims[d]:
                continue
            if axes_of.setdefault(f, dims[d]) != dims[d]:
                shown = ", ".join(str(tuple(spec_entry(ax) for ax in ds)) for ds in dims_in
                                  if any(ds))
                raise ShardingTypeError(
                    f"{name} got incompatible shardings for broadcasting: {shown}.")
    if factors.kind == "dot_general":
        (lc, rc), _ = params["dimension_numbers"]
        lspec = tuple(spec_entry(dims_in[0][d]) for d in lc)
        rspec = tuple(spec_entry(dims_in[1][d]) for d in rc)
        if any(e is not None for e in lspec) and any(e is not None for e in rspec):
            raise ShardingTypeError(
                "Contracting dimensions are sharded and it is ambiguous how the output "
                "should be sharded. Please specify the output sharding via the "
                f"`out_sharding` parameter. Got lhs_contracting_spec={lspec} and "
                f"rhs_contracting_spec={rspec}")
    outs = []
    for out_factors, aval in zip(factors.results, avals_out):
        dims = [axes_of.get(f, ()) if f is not None else () for f in out_factors]
        used = [a for axes in dims for a in axes]
        if len(used) != len(set(used)):
            inputs = ", ".join(_short_type(a, ds) for a, ds in zip(avals_in, dims_in))
            raise ShardingTypeError(
                f"{name} operation with inputs: {inputs} produces an illegally sharded "
                f"result: {_short_type(aval, dims)}")
        outs.append(dims)
    return outs


def _check_gather(avals_in, dims_in, params) -> None:
    """JAX's gather resolves its result's sharding only when the operand dimensions it
    indexes into are whole (or taken whole), operand and index batching dimensions agree,
    and the indices are split along batching dimensions alone; else ShardingTypeError."""
    dn = params.get("dimension_numbers")
    sizes = params.get("slice_sizes")
    if not isinstance(dn, dict) or sizes is None:
        return
    (operand, indices), (op_dims, idx_dims) = avals_in, dims_in
    if not any(op_dims) and not any(idx_dims):
        return
    batching = list(zip(dn["operand_batching_dims"], dn["start_indices_batching_dims"]))
    ok = (all(sizes[d] == operand.shape[d] or not op_dims[d] for d in dn["start_index_map"])
          and all(not op_dims[o] or not idx_dims[i] or op_dims[o] == idx_dims[i]
                  for o, i in batching)
          and all(not axes for d, axes in enumerate(idx_dims)
                  if d not in dn["start_indices_batching_dims"]))
    if not ok:
        raise ShardingTypeError(
            "Use `.at[...].get(out_sharding=)` to provide output PartitionSpec for the "
            "gather indexing as out sharding could not be resolved unambiguously (or would "
            f"require collectives on inputs). Got operand={_short_type(operand, op_dims)}, "
            f"indices={_short_type(indices, idx_dims)}")


# ---- types while tracing -------------------------------------------------------------
# A trace whose function got arrays of Explicit type keeps, per traced value, the mesh
# and the Explicit axes of each dimension (Trace.type_specs: ir.Value -> (abstract mesh,
# dims)); bind carries them through each op (result_dims), so typeof of a traced value
# answers as JAX's and the same ShardingTypeErrors come at the user's line.
def seed_trace_types(trace, leaves) -> None:
    """Records the types of the trace's arguments from the values it was given."""
    specs = None
    for t, x in zip(trace.args, leaves):
        found = _type_of_input(x)
        if found is not None:
            if specs is None:
                specs = {}
            specs[t.value] = found
    trace.type_specs = specs
    # (what the arguments are committed to: a jit over a mesh of one device lays its
    # results out from the first's, spmd/jit.py)
    trace.arg_shardings = [getattr(x, "_sharding", None) if getattr(x, "_committed", False)
                           else None for x in leaves]


def seed_region_types(body, values) -> None:
    """Types a loop or branch body's arguments from the values they start as (a scanned
    operand's type without its leading dimension; `Carry`-like wrappers give theirs
    by `.init`), when the enclosing trace keeps types."""
    parent = getattr(body, "parent", None)
    if parent is None or parent.type_specs is None:
        return
    specs = body.type_specs = {} if body.type_specs is None else body.type_specs
    for t, v in zip(body.args, values):
        found = _type_of_input(getattr(v, "init", v))
        if found is None:
            continue
        extra = len(found[1]) - t.aval.ndim
        if extra in (0, 1):
            specs[t.value] = (found[0], found[1][extra:]) + tuple(found[2:])


def seed_captured_type(body, outer, t) -> None:
    """Types the argument `t` a body made for the enclosing value `outer`."""
    if isinstance(outer, Tracer) and outer.trace.type_specs is not None:
        found = outer.trace.type_specs.get(outer.value)
        if found is not None:
            if body.type_specs is None:
                body.type_specs = {}
            body.type_specs[t.value] = found


def _type_of_input(x):
    if isinstance(x, Tracer):
        outer = x.trace.type_specs
        return None if outer is None else outer.get(x.value)
    sharding = getattr(x, "_sharding", None)
    if not isinstance(sharding, NamedSharding) or not isinstance(sharding.mesh,
                                                                  (Mesh, AbstractMesh)):
        return None
    dims = _explicit_dims(x, len(x.shape))
    spec = sharding.spec
    if spec.unreduced or spec.reduced:
        return (sharding.mesh.abstract_mesh, tuple(dims), frozenset(spec.unreduced),
                frozenset(spec.reduced))
    return (sharding.mesh.abstract_mesh, tuple(dims)) if any(dims) else None


def partial_axes(found) -> tuple:
    """(unreduced, reduced) mesh axes of a type-table entry (None: no entry)."""
    if found is None or len(found) == 2:
        return _NO_AXES
    return found[2], found[3]


_NO_AXES = (frozenset(), frozenset())


def _entry(mesh, dims, unreduced=frozenset(), reduced=frozenset()):
    return (mesh, tuple(dims), frozenset(unreduced), frozenset(reduced)) \
        if unreduced or reduced else (mesh, tuple(dims))


def trace_op_types(trace, opcls, tracers, outs, params) -> None:
    """Carries the operands' types to the results of one traced op."""
    if trace.varying is not None:
        _trace_op_varying(trace.varying, opcls, tracers, outs, params)
    specs = trace.type_specs
    if specs is None:
        return
    if opcls is ShardingConstraintOp:
        # (A constraint gives its result the Explicit axes of the context's mesh, and
        # the unreduced and reduced axes it names.)
        mesh = get_abstract_mesh()
        explicit = frozenset(mesh.explicit_axes)
        unreduced = frozenset(params.get("unreduced") or ())
        reduced = frozenset(params.get("reduced") or ())
        if explicit or unreduced or reduced:
            specs[outs[0].value] = _entry(mesh, (
                tuple(a for a in dim_axes(e) if a in explicit) for e in params["spec"]),
                unreduced, reduced)
        return
    found = [specs.get(t.value) for t in tracers]
    known = [f for f in found if f is not None]
    if not known:
        return
    mesh = known[0][0]
    partial = [partial_axes(f) for f in found]
    if any(u or r for u, r in partial):
        unreduced, reduced = partial_rule(opcls, tracers, found, params)
    else:
        unreduced = reduced = frozenset()
    dims_in = [_live(f[1]) if f is not None else ((),) * t.aval.ndim
               for f, t in zip(found, tracers)]
    if not any(any(d) for d in dims_in) and not (unreduced or reduced):
        return
    out_dims = result_dims(opcls, [t.aval for t in tracers], dims_in,
                           [o.aval for o in outs], params)
    if out_dims is None:
        return
    for o, dims in zip(outs, out_dims):
        if any(dims) or unreduced or reduced:
            specs[o.value] = _entry(mesh, dims, unreduced, reduced)


# ---- unreduced and reduced axes of a traced op's result (JAX's ur rules) -----------------
_ISSUE = "Please file an issue at https://github.com/jax-ml/jax/issues"


def _axes_text(axes) -> str:
    return "frozenset({" + ", ".join(repr(a) for a in sorted(axes)) + "})"


def check_add_unreduced(name, x_ur, y_ur) -> None:
    """JAX's rule for add with an unreduced operand: both unreduced over the same axes
    (eager arrays and traced values alike)."""
    if x_ur and y_ur and x_ur != y_ur:
        raise ShardingTypeError(f"lhs and rhs to `{name}` must be unreduced along the same "
                                f"mesh axes. Got lhs={_axes_text(x_ur)}, "
                                f"rhs={_axes_text(y_ur)}")
    if bool(x_ur) != bool(y_ur):
        lhs, rhs = ("lhs", "rhs") if x_ur else ("rhs", "lhs")
        raise ShardingTypeError(
            f"{lhs} is unreduced while {rhs} is not. `add` operation does not allow this "
            f"because there will be implicit communication. Please reduce {lhs} via "
            f"`reshard` before calling `add`.")


def check_mul_unreduced(x_ur, x_r, y_ur, y_r, x_type, y_type) -> None:
    """JAX's rule for mul, bilinear: at most one operand unreduced, the other reduced over
    its axes (each partial times the same replicated value). `x_type`/`y_type` give the
    operands' types for the message."""
    if x_ur and y_ur:
        raise ShardingTypeError(f"lhs and rhs to `mul` cannot be unreduced since mul is "
                                f"bilinear. Got lhs={_axes_text(x_ur)}, "
                                f"rhs={_axes_text(y_ur)}")
    if (x_ur and x_ur != y_r) or (y_ur and y_ur != x_r):
        side, other = ("RHS", "LHS") if x_ur else ("LHS", "RHS")
        raise ShardingTypeError(f"{side} should be reduced along the same axes {other} is "
                                f"unreduced on. Got lhs={x_type()} and rhs={y_type()}")


def _unreduced_of_result(opcls, tracers, partial) -> frozenset:
    """The unreduced axes of the result of an `opcls` op, by its PARTIAL_SUMS entry
    (JAX's errors for ops that cannot take unreduced operands)."""
    us = [u for u, _ in partial]
    if not any(us):
        return frozenset()
    name, kind = opcls.primitive, PARTIAL_SUMS.get(opcls)
    if kind == SUM:
        check_add_unreduced(name, us[0], us[1])
        return us[0]
    if kind == PRODUCT:
        (x_ur, x_r), (y_ur, y_r) = partial
        check_mul_unreduced(x_ur, x_r, y_ur, y_r, lambda: typeof_traced(tracers[0]),
                            lambda: typeof_traced(tracers[1]))
        return x_ur or y_ur
    if kind == CONTRACTION:
        raise ShardingTypeError(
            f"lhs or rhs passed to {name} cannot be unreduced. Got "
            f"lhs=ShapedArray({typeof_traced(tracers[0])}) and "
            f"rhs=ShapedArray({typeof_traced(tracers[1])})")
    if kind == PER_PARTIAL:
        return us[0]
    raise NotImplementedError(f"unreduced rule for {name} is not implemented. {_ISSUE}")


def _reduced_of_result(opcls, tracers, found, partial) -> frozenset:
    """The reduced axes of the result: those all reduced operands share (JAX's nary
    rule: operands reduced differently, or one replicated where another is reduced, are
    ShardingTypeErrors); none for a contraction."""
    if PARTIAL_SUMS.get(opcls) == CONTRACTION:
        return frozenset()
    reduced = {r for _, r in partial if r}
    if len(reduced) > 1:
        shown = "{" + ", ".join(_axes_text(r) for r in reduced) + "}"
        raise ShardingTypeError(f"All inputs should be reduced across the same mesh axes. "
                                f"Got specs: {shown}")
    if not reduced:
        return frozenset()
    axes = next(iter(reduced))
    for t, f, (u, r) in zip(tracers, found, partial):
        # (A typed operand neither split, unreduced nor reduced over the axes is
        # replicated over them; constants and untyped values pass.)
        if f is not None and not r and not u and \
                not axes & {a for dims in f[1] for a in dims}:
            raise ShardingTypeError(
                f"Inputs cannot be replicated on the same axes that another input is "
                f"reduced on. Got input type: {typeof_traced(t)} and reduced spec: "
                f"{_axes_text(axes)}")
    return axes


def partial_rule(opcls, tracers, found, params) -> tuple:
    """(unreduced, reduced) axes of the results of an op whose operands' type entries
    are `found`, by JAX's rules: add of operands unreduced alike, mul by a value reduced
    over the unreduced axes, and ops acting on each partial alone (casts, reduce_sum,
    structural ops) keep them; dot_general refuses unreduced operands; other array ops
    on unreduced values raise NotImplementedError as in JAX. Control flow and calls
    (no factor rule) give untyped results."""
    if SHARD.get(opcls) is None:
        return frozenset(), frozenset()
    partial = [partial_axes(f) for f in found]
    unreduced = _unreduced_of_result(opcls, tracers, partial)
    reduced = _reduced_of_result(opcls, tracers, found, partial)
    return unreduced, reduced - unreduced


def output_types(trace, leaves):
    """The type entries of a traced function's outputs, when one is unreduced or
    reduced, over a mesh of one device, or over another mesh than the function's (one
    `use_abstract_mesh` gave inside it): jit lays those out so (spmd/jit.py). Else
    None."""
    specs = trace.type_specs
    if specs is None:
        return None
    found = [specs.get(x.value) if isinstance(x, Tracer) and x.trace is trace else None
             for x in leaves]
    names = get_abstract_mesh().axis_names
    return found if any(f is not None and (any(partial_axes(f)) or f[0].size == 1 or (
        f[0].axis_names and f[0].axis_names != names)) for f in found) else None


def carry_types(inits, outs) -> None:
    """Types a loop's carry results as its initial carries (JAX's loops keep a carry's
    type from iteration to iteration)."""
    for x, o in zip(inits, outs):
        if isinstance(o, Tracer) and o.trace.type_specs is not None:
            found = _type_of_input(x)
            if found is not None and len(found[1]) == o.aval.ndim:
                o.trace.type_specs[o.value] = found


def set_cotangent_types(primals, cts) -> None:
    """Types the traced cotangents `cts` of `primals` as JAX types cotangents: the
    primal's layout, with its reduced axes unreduced and its unreduced axes reduced (the
    cotangent of a value each device holds whole is a partial sum per device)."""
    for x, ct in zip(primals, cts):
        found = _type_of_input(x)
        if found is None or not isinstance(ct, Tracer):
            continue
        if ct.trace.type_specs is None:
            ct.trace.type_specs = {}
        unreduced, reduced = partial_axes(found)
        ct.trace.type_specs[ct.value] = _entry(found[0], found[1], reduced, unreduced)


# ---- varying manual axes (shard_map bodies) ---------------------------------------------
# In a shard_map body JAX types each value with the mesh axes it varies along (its blocks
# differ between the devices of those axes): `float32[3]{V:i}`. mjax runs the body under
# one vmap per mesh axis; the shard_map records its arguments' axes (Trace.varying:
# ir.Value -> frozenset) and bind carries them: a result varies along its operands' axes,
# a reduction over axes (psum, pmax, pmin) no longer varies along them, and
# axis_index, psum_scatter and all_gather results vary along theirs.
_REDUCING = (C.PsumOp, C.PmaxOp, C.PminOp)
_VARYING_RESULT = (C.AxisIndexOp, C.PsumScatterOp, C.AllGatherOp)


def seed_varying(trace, tracers, axes_per_tracer, mesh) -> None:
    trace.varying = {t.value: frozenset(a) for t, a in zip(tracers, axes_per_tracer)}
    trace.varying_mesh = mesh


def _trace_op_varying(varying, opcls, tracers, outs, params) -> None:
    axes = frozenset().union(*[varying.get(t.value, frozenset()) for t in tracers])
    if opcls in _REDUCING:
        axes -= set(params["axes"])
    elif opcls in _VARYING_RESULT:
        axes |= set(params["axes"])
    if axes:
        for o in outs:
            varying[o.value] = axes


def typeof_traced(t) -> ShardedAval:
    specs = t.trace.type_specs
    found = None if specs is None else specs.get(t.value)
    if found is None:
        out = typed_aval(t.aval, None)
    else:
        mesh, dims = found[:2]
        unreduced, reduced = partial_axes(found)
        spec = PartitionSpec(*[spec_entry(axes) for axes in _live(dims)],
                             unreduced=unreduced, reduced=reduced)
        out = ShardedAval(t.aval.shape, t.aval.dtype, t.aval.weak_type,
                          NamedSharding(mesh, spec))
    varying = t.trace.varying
    if varying is not None:
        axes = varying.get(t.value, frozenset())
        order = t.trace.varying_mesh.axis_names
        unreduced, reduced = getattr(t.trace, "manual_partial", {}).get(t.value, _NO_AXES)
        axes = axes - unreduced       # (mjax holds an unreduced value's partials varying)
        out.manual_axis_type = ManualAxisType(varying=axes, unreduced=unreduced, reduced=reduced)
        out.varying_order = tuple(a for a in order if a in axes)
        if unreduced or reduced:
            spec, mesh = out.sharding.spec, out.sharding.mesh
            if mesh.empty:
                mesh = getattr(t.trace.varying_mesh, "abstract_mesh", t.trace.varying_mesh)
            out.sharding = NamedSharding(mesh, PartitionSpec(
                *spec, unreduced=spec.unreduced | unreduced, reduced=spec.reduced | reduced))
    return out


def mark_manual_partial(t, unreduced=frozenset(), reduced=frozenset()) -> None:
    """Types the shard_map body value `t` unreduced or reduced over manual axes (JAX's
    pcast(to='unreduced'/'reduced'): `{U:X}`, `{R:X}`)."""
    if isinstance(t, Tracer) and t.trace.varying is not None:
        table = t.trace.__dict__.setdefault("manual_partial", {})
        table[t.value] = (frozenset(unreduced), frozenset(reduced))


def spec_entry(axes) -> object:
    """A PartitionSpec entry for mesh axes: None, one axis name, or a tuple of them."""
    axes = tuple(axes)
    return None if not axes else axes[0] if len(axes) == 1 else axes


def _explicit_dims(x, ndim: int):
    """Per dimension, the Explicit mesh axes splitting it (() for none)."""
    sharding = getattr(x, "_sharding", None)
    if not isinstance(sharding, NamedSharding):
        return [()] * ndim
    spec = type_spec(sharding, ndim)
    return [spec.axes_of(d) for d in range(ndim)]


def typeof(x):
    """The abstract value of `x` (shape, dtype, weak type, and for arrays the sharding
    their type carries). JAX: jax.typeof."""
    hi = hi_aval(x)
    if hi is not None:
        return hi                               # (a hijax value: its registered type)
    if isinstance(getattr(x, "dtype", None), KeyType) and not isinstance(x, Tracer) \
            and type(getattr(x, "aval", None)) is not RefAval:
        return ShapedArray(x.shape, x.dtype)    # (a typed key array: key<fry>[...])
    # (Traced values: mjax decides layouts after tracing, so their types carry none.)
    return typeof_array(x)


# typeof of arrays on one device, by aval: libraries ask it of every leaf on every call
# (flax's nnx.jit asks whether each variable is a Ref), so it must not build a sharding.
_ONE_DEVICE_TYPES: dict = {}


def typeof_array(x) -> ShardedAval:
    """typeof of a concrete or traced value."""
    if isinstance(x, Tracer):
        return typeof_traced(x)
    aval = aval_of_value(x)
    sharding = getattr(x, "_sharding", None)
    if type(aval) is ShapedArray and getattr(sharding, "mesh", None) is None:
        found = _ONE_DEVICE_TYPES.get(aval)
        if found is None:
            if len(_ONE_DEVICE_TYPES) > 4096:
                _ONE_DEVICE_TYPES.clear()
            found = _ONE_DEVICE_TYPES[aval] = typed_aval(aval, None)
        return found
    if type(aval) is RefAval:       # (an mjax.Ref: Ref{float32[3]}, Ref{f32[8@x]})
        sharding = getattr(x, "_sharding", None)
        return TypedRefAval(typed_aval(aval.inner_aval, sharding)) if isinstance(
            sharding, NamedSharding) else aval
    return typed_aval(aval, getattr(x, "_sharding", None))


class TypedRefAval(RefAval):
    """typeof of a Ref whose value is laid out over a mesh: the ref's type with its
    value's type-level sharding (JAX: Ref{bfloat16[128@fsdp,256]})."""

    __slots__ = ("inner",)

    def __init__(self, inner: ShardedAval):
        super().__init__(inner.shape, inner.dtype)
        self.inner = inner

    @property
    def sharding(self):
        return self.inner.sharding

    def str_short(self) -> str:
        return f"Ref{{{self.inner.str_short()}}}"

    def __str__(self):
        return f"Ref{{{self.inner}}}"


__all__ = ["ShardedAval", "ShardingTypeError", "typed_aval", "type_spec", "partial_axes",
           "set_cotangent_types", "partial_rule", "output_types", "carry_types",
           "mark_manual_partial", "seed_region_types", "seed_captured_type",
           "check_explicit_op", "out_sharding_given", "get_abstract_mesh"]
