"""The sharding types a printed jaxpr shows in explicit mode: `b:f32[8@X,4]`,
`c:f32[4,2]{R:X}`, `j:f32[2,4]{U:X}`.

On a mesh with Explicit axes JAX's jaxprs carry each value's type-level sharding. mjax's
trace keeps those types beside its values (sharding_types: Trace.type_specs), but the
printed function of a grad is a copy whose transformations the passes expanded
(pretty_expand), and the backward part's values have no entry there. So the printer
types the printed function again:

  - forward, from its arguments' types, with the rules tracing uses (trace_op_types:
    the ops' factor rules, the unreduced/reduced rules, constraints' own types), into
    nested jits, cond branches and loop bodies (a loop's carries keep their types);
  - backward, for the equations the expansion made (a transposition's): grad's
    cotangents (its vjp's results) have the types the trace gave them (a cotangent is
    typed as its primal, reduced and unreduced axes swapped: mark_cotangent_types), and
    JAX's transposes type their results as the cotangents of their primals, so a value
    the expansion made takes the type the equations using it imply (an elementwise op,
    a transpose, a loop's carry, the operand of a transposed constraint: the
    constraint's own type; a reduction says nothing of its reduced dimensions);
  - sideways, for the broadcasts the expansion made (the cotangent seed's): JAX
    broadcasts to the primal's type, which the other operands of the op consuming the
    broadcast say.

grad's cotangent seed prints as JAX's `reshard 1.0:f32[]` (SEED), and a constraint
naming no Auto axis as JAX's `reshard` (pretty.py). Without Explicit axes nothing is
typed: the printed text stays as it was.
"""
from __future__ import annotations

from mjax.dialect import aval_of
from mjax.dialect.ops.sharding import ShardingConstraintOp, dim_axes
from mjax.dialect.ops.shard_map import ShardMapOp, entry_axes
from mjax.dialect.values import is_argument, set_strings, strings
from mjax.passes.ir_util import function_named
from mjax.passes.print_expansion import FWD, SEED, USER
from mjax.passes.rules.tables import SHARD
from mjax.specs.sharding_impls import (AbstractMesh, AxisType, NamedSharding, PartitionSpec,
                                       use_abstract_mesh)
from mjax.arrays.sharding_types import ShardedAval, partial_axes, spec_entry, trace_op_types

# Discardable marks on the printed copy (the printer skips them): passes/print_expansion's
# USER, FWD, SEED, and:
CT_TYPES = "mjax.print_ct_types"  # on an op using a vjp's results: their traced types

# Ops acting on each partial alone (and adds): a cotangent's unreduced axes pass through.
_LINEAR = ("add", "add_any", "sub", "neg", "mul", "convert_element_type", "copy",
           "reduce_sum", "transpose", "reshape", "broadcast_in_dim", "squeeze",
           "expand_dims", "rev", "slice", "dynamic_slice", "select_n", "pad")


class _Value:
    """A traced-value stand-in for trace_op_types: an IR value and its aval."""

    __slots__ = ("value", "aval", "trace")

    def __init__(self, value, trace):
        self.value = value
        self.aval = aval_of(value.type)
        self.trace = trace


class _Table:
    """What trace_op_types reads of a trace: its type table (no shard_map body here)."""

    varying = None

    def __init__(self):
        self.type_specs: dict = {}


def explicit_mesh(traced, mesh) -> AbstractMesh | None:
    """The abstract mesh whose Explicit axes the printed types name: the one the trace
    ran under, or the one its typed values name; None when no axis is Explicit."""
    if mesh is not None and not mesh.empty and mesh.explicit_axes:
        return mesh
    specs = getattr(getattr(traced, "trace", None), "type_specs", None) or {}
    for found in specs.values():
        m = found[0]
        if not m.empty and m.explicit_axes:
            return m
    return None


class PrintTypes:
    """Per printed value, its explicit-mode type (`type_text`), for one printed function."""

    def __init__(self, func_op, traced, mesh: AbstractMesh, n_consts: int = 0,
                 expanded: bool = False):
        self.mesh = mesh
        self.table = _Table()
        self.fixed: dict = {}     # value -> entry (or None: plain) the backward pass set
        block = func_op.regions[0].blocks[0]
        trace = traced.trace
        specs = trace.type_specs or {}
        seeds = [specs.get(t.value) for t in trace.args]
        for arg, found in zip(list(block.arguments)[:len(block.arguments) - n_consts], seeds):
            if found is not None:
                self.table.type_specs[arg] = found
        with use_abstract_mesh(mesh):
            self._forward(block, everything=True)
            if expanded:     # (the equations the expansion made: see the docstring)
                self._backward(block)
                self._sideways(block)
                self._forward(block, everything=False)

    # ---- the passes ---------------------------------------------------------------------
    def _forward(self, block, everything: bool) -> None:
        specs = self.table.type_specs
        for op in block.operations:
            op = op.operation
            if op.name == "jaxpr.call":
                self._call(op)
                continue
            if op.name in _REGIONS:
                self._regions(op)
                continue
            if not everything and (_is_user(op) or all(r in self.fixed for r in op.results)):
                continue
            if not op.name.startswith("jaxpr.") or op.name == "jaxpr.constant":
                continue
            view = op.opview
            cls = type(view)
            if cls is ShardingConstraintOp:
                self._set(op.results[0], self._constraint_type(op))
                continue
            if cls is ShardMapOp:     # (results laid out as out_specs say)
                self._shard_map(op, view.params)
                continue
            for r in op.results:
                specs.pop(r, None)
            try:
                trace_op_types(self.table, cls,
                               [_Value(v, self.table) for v in op.operands],
                               [_Value(r, self.table) for r in op.results], view.params)
            except Exception:  # noqa: BLE001
                pass   # (a type JAX's out_sharding= would give: left plain or to below)
            for r in op.results:
                if r in self.fixed:
                    self._set(r, self.fixed[r])

    def _shard_map(self, op, params) -> None:
        explicit = set(self.mesh.explicit_axes)
        unreduced = params.get("out_unreduced") or [()] * len(op.results)
        for r, spec, u in zip(op.results, params["out_specs"], unreduced):
            dims = [tuple(a for a in entry_axes(spec[d]) if a in explicit)
                    if d < len(spec) else () for d in range(aval_of(r.type).ndim)]
            self._set(r, self._entry(dims, u, ()))

    def _shard_map_operands(self, op, made) -> None:
        """The operands a transposition made for a shard_map: typed as its in_specs (the
        Explicit axes) and in_reduced say."""
        params = op.opview.params
        explicit = set(self.mesh.explicit_axes)
        reduced = params.get("in_reduced") or [()] * len(params["in_specs"])
        for v, spec, red in zip(op.operands, params["in_specs"], reduced):
            if v not in made or v in self.fixed:
                continue
            dims = [tuple(a for a in entry_axes(spec[d]) if a in explicit)
                    if d < len(spec) else () for d in range(aval_of(v.type).ndim)]
            self.fixed[v] = self._entry(dims, (), red)

    def _call(self, op) -> None:
        """A nested jit: its body typed from the call's operands; results as the body's."""
        block = _callee_block(op)
        if block is None:
            return
        specs = self.table.type_specs
        for arg, v in zip(block.arguments, op.operands):
            self._set(arg, specs.get(v))
        self._forward(block, everything=True)
        for r, v in zip(op.results, _returned(block)):
            self._set(r, specs.get(v))

    def _regions(self, op) -> None:
        """cond, while and scan: their bodies typed from the operands (a scanned operand
        without its leading dimension); results as the bodies' (a loop's carries keep
        their types, a scan's stacked outputs are whole along the new dimension)."""
        specs = self.table.type_specs
        ins = [specs.get(v) for v in op.operands]
        blocks = [r.blocks[0] for r in op.regions]
        params = op.opview.params
        if op.name == "jaxpr.cond":
            seeds = [ins[1:]] * len(blocks)
        elif op.name == "jaxpr.while":
            nc, nb = params["cond_nconsts"], params["body_nconsts"]
            seeds = [ins[:nc] + ins[nc + nb:], ins[nc:]]
        else:
            n = params["num_consts"] + params["num_carry"]
            seeds = [ins[:n] + [_drop_leading(f) for f in ins[n:]]]
        for block, seed in zip(blocks, seeds):
            for arg, found in zip(block.arguments, seed):
                self._set(arg, found)
            self._forward(block, everything=True)
        yields = [specs.get(v) for v in _returned(blocks[-1])]
        if op.name == "jaxpr.while":
            outs = ins[params["cond_nconsts"] + params["body_nconsts"]:]
        elif op.name == "jaxpr.scan":
            nc, ncarry = params["num_consts"], params["num_carry"]
            outs = ins[nc:nc + ncarry] + [_add_leading(f) for f in yields[ncarry:]]
        else:
            outs = [specs.get(v) for v in _returned(blocks[0])]
        for r, found in zip(op.results, outs):
            self._set(r, found)

    def _constraint_type(self, op):
        """A constraint's result type: the one the backward pass gave it, else its own
        (_declared)."""
        r = op.results[0]
        return self.fixed[r] if r in self.fixed else self._declared(op)

    def _declared(self, op):
        """The type a constraint names: the Explicit axes of its spec, and its unreduced
        and reduced axes."""
        params = op.opview.params
        return self._entry([tuple(a for a in dim_axes(e) if a in self.mesh.explicit_axes)
                            for e in params["spec"]],
                           params.get("unreduced") or (), params.get("reduced") or ())

    def _backward(self, block) -> None:
        """Types the values the expansion made, from the cotangents grad & co. return
        (the types the trace gave them: mark_cotangent_types) back through the
        equations computing them."""
        made = _made_values(block)
        for op in block.operations:       # (the cotangents grad & co. return)
            op = op.operation
            if CT_TYPES in op.attributes:
                for text in strings(op, CT_TYPES):
                    k, found = _decode(text, self.mesh)
                    if op.operands[k] in made:
                        self.fixed[op.operands[k]] = found
        for op in reversed(list(block.operations)):
            op = op.operation
            if op.name == "jaxpr.shard_map" and not _is_user(op):
                self._shard_map_operands(op, made)    # (laid out as its in_specs say)
                continue
            if _is_user(op) or not op.name.startswith("jaxpr.") or \
                    not all(r in self.fixed for r in op.results) or not len(op.results):
                continue
            view = op.opview
            cls = type(view)
            if cls is ShardingConstraintOp:
                # (mjax transposes a constraint into one naming the cotangent's own
                # axes; JAX into a reshard from that type to the primal's)
                if op.operands[0] in made:
                    self.fixed.setdefault(op.operands[0], self._declared(op))
                continue
            if op.name in ("jaxpr.while", "jaxpr.scan"):
                # (a loop's carries keep their types: each result's is its initial value's)
                p = view.params
                first = p["cond_nconsts"] + p["body_nconsts"] if op.name == "jaxpr.while" \
                    else p["num_consts"]
                n = len(op.results) if op.name == "jaxpr.while" else p["num_carry"]
                for operand, r in zip(list(op.operands)[first:first + n], op.results):
                    if operand in made and operand not in self.fixed:
                        self.fixed[operand] = self.fixed[r]
                continue
            result = self.fixed[op.results[0]]
            for k, operand in enumerate(op.operands):
                if operand not in made or operand in self.fixed:
                    continue
                dims = _operand_dims(cls, op, view.params, k, result)
                if dims is None:
                    continue
                unreduced, reduced = partial_axes(result) if cls.primitive in _LINEAR \
                    else (frozenset(), frozenset())
                self.fixed[operand] = self._entry(dims, unreduced, reduced)
        for v, found in self.fixed.items():
            self._set(v, found)

    def _sideways(self, block) -> None:
        """The broadcasts the expansion made (the cotangent seed's, a reduction's
        transpose) take the layout the other operands of their first user give."""
        specs = self.table.type_specs
        for op in block.operations:
            op = op.operation
            if op.name not in ("jaxpr.broadcast_in_dim", "jaxpr.expand_dims") or \
                    _is_user(op) or op.results[0] in self.fixed:
                continue
            r = op.results[0]
            user = next((u.owner for u in r.uses), None)   # (an OpView)
            if user is None or type(user) is ShardingConstraintOp:
                continue
            dims = _dims_from_user(user, r, specs)
            if dims is None or not any(dims):
                continue
            own = specs.get(r)
            if own is not None:
                dims = [a or b for a, b in zip(own[1], dims)]
            self.fixed[r] = self._entry(dims, (), ())
            self._set(r, self.fixed[r])

    # ---- helpers ------------------------------------------------------------------------
    def _entry(self, dims, unreduced, reduced):
        dims = tuple(tuple(d) for d in dims)
        if not any(dims) and not unreduced and not reduced:
            return None
        if unreduced or reduced:
            return (self.mesh, dims, frozenset(unreduced), frozenset(reduced))
        return (self.mesh, dims)

    def _set(self, v, found) -> None:
        if found is None:
            self.table.type_specs.pop(v, None)
        else:
            self.table.type_specs[v] = found

    def type_text(self, v) -> str | None:
        """`f32[8@X,2]{U:X}`: the value's type as JAX prints it (None: untyped)."""
        found = self.table.type_specs.get(v)
        if found is None:
            return None
        aval = aval_of(v.type)
        mesh, dims = found[:2]
        if len(dims) != aval.ndim:
            return None
        unreduced, reduced = partial_axes(found)
        spec = PartitionSpec(*[spec_entry(d) for d in dims], unreduced=unreduced,
                             reduced=reduced)
        return ShardedAval(aval.shape, aval.dtype, aval.weak_type,
                           NamedSharding(mesh, spec)).str_short()

    def names_explicit(self, op) -> bool:
        """Whether a constraint prints as JAX's reshard: it names no Auto axis."""
        params = op.opview.params
        auto = {n for n, t in zip(self.mesh.axis_names, self.mesh.axis_types)
                if t == AxisType.Auto}
        return not any(a in auto for e in params["spec"] for a in dim_axes(e))


def mark_cotangent_types(traced_fn, copy_fn, type_specs) -> None:
    """Before the copy `copy_fn` of the traced function `traced_fn` is expanded: notes on
    each op using a vjp's result the type the trace gave that result (a cotangent typed
    as its primal), which the expansion's values in its place then take (_backward)."""
    if type_specs is None:
        return
    for orig, op in zip(_walk(traced_fn), _walk(copy_fn)):
        if op.name != "jaxpr.vjp" or not any(
                not is_argument(v) and SEED in v.owner.operation.attributes
                for v in op.operands):
            continue     # (grad's vjps: the trace typed their results, set_cotangent_types)
        for mine, r in zip(orig.results, op.results):
            text = _encode(type_specs.get(mine))
            for use in r.uses:
                user = use.owner.operation
                set_strings(user, CT_TYPES,
                            strings(user, CT_TYPES) + [f"{use.operand_number}:{text}"])


def _walk(fn) -> list:
    return [op.operation for op in fn.regions[0].blocks[0].operations]


def _encode(found) -> str:
    """`X;;Y,Z|U|R`: a type-table entry's dimensions' axes, unreduced and reduced axes."""
    if found is None:
        return ""
    unreduced, reduced = partial_axes(found)
    return "|".join([";".join(",".join(d) for d in found[1]), ",".join(sorted(unreduced)),
                     ",".join(sorted(reduced))])


def _decode(text: str, mesh):
    k, text = text.split(":", 1)
    if not text:
        return int(k), None
    dims, unreduced, reduced = text.split("|")
    axes = lambda t: tuple(a for a in t.split(",") if a)   # noqa: E731
    dims = tuple(axes(d) for d in dims.split(";")) if dims else ()
    if unreduced or reduced:
        return int(k), (mesh, dims, frozenset(axes(unreduced)), frozenset(axes(reduced)))
    return int(k), (mesh, dims)


def print_types(func_op, traced, mesh, n_consts: int, expanded: bool):
    """The PrintTypes of a printed function (None outside explicit mode)."""
    mesh = explicit_mesh(traced, mesh)
    if mesh is None:
        return None
    try:
        return PrintTypes(func_op, traced, mesh, n_consts, expanded)
    except Exception:  # noqa: BLE001
        return None    # (printing never fails for want of types: they print without)


_REGIONS = ("jaxpr.cond", "jaxpr.while", "jaxpr.scan")


def _drop_leading(found):
    if found is None or not found[1]:
        return None
    return (found[0], found[1][1:]) + tuple(found[2:])


def _add_leading(found):
    return None if found is None else (found[0], ((),) + tuple(found[1])) + tuple(found[2:])


def _is_user(op) -> bool:
    return USER in op.attributes or FWD in op.attributes


def _returned(block) -> list:
    ops = list(block.operations)
    return list(ops[-1].operation.operands) if ops else []


def _made_values(block) -> set:
    """The results of the equations the expansion made (neither the user's nor a
    forward part's)."""
    return {r for op in block.operations for r in op.operation.results
            if op.operation.name.startswith("jaxpr.") and not _is_user(op.operation)
            and op.operation.name != "jaxpr.constant"}


def _callee_block(op):
    fn = function_named(op, str(op.attributes["callee"]).lstrip("@").strip('"'))
    return fn.regions[0].blocks[0] if fn is not None else None


def _factors(cls, op, params):
    rule = SHARD.get(cls)
    if rule is None:
        return None
    try:
        return rule([aval_of(v.type) for v in op.operands],
                    [aval_of(r.type) for r in op.results], **params)
    except Exception:  # noqa: BLE001
        return None


def _operand_dims(cls, op, params, k, result):
    """The axes of operand k's dimensions that the result's type implies (through the
    op's factor rule), or None where the result says nothing of them (dot_general)."""
    factors = _factors(cls, op, params)
    if factors is None or factors.kind == "dot_general":
        return None
    by_factor = {}
    dims_out = result[1] if result is not None else ((),) * len(factors.results[0])
    for f, axes in zip(factors.results[0], dims_out):
        if f is not None:
            by_factor[f] = axes
    if any(f is not None and f not in by_factor for f in factors.operands[k]):
        return None   # (a reduction's: the result says nothing of the reduced dimensions)
    return [by_factor.get(f, ()) if f is not None else () for f in factors.operands[k]]


def _dims_from_user(view, v, specs):
    """The axes of `v`'s dimensions that the other operands and the results of `view`
    (an op using v) give through its factor rule."""
    op = view.operation
    factors = _factors(type(view), op, view.params)
    if factors is None:
        return None
    by_factor: dict = {}
    for values, fs in ((op.operands, factors.operands), (op.results, factors.results)):
        for w, wf in zip(values, fs):
            found = specs.get(w)
            if w == v or found is None:
                continue
            for f, axes in zip(wf, found[1]):
                if f is not None and axes:
                    by_factor.setdefault(f, axes)
    k = list(op.operands).index(v)
    return [by_factor.get(f, ()) if f is not None else () for f in factors.operands[k]]


__all__ = ["PrintTypes", "explicit_mesh", "print_types", "mark_cotangent_types", "CT_TYPES",
           "SEED", "USER", "FWD"]
