"""`--jaxpr-propagate-shardings`: carry argument and constraint shardings to every value.

Sources are `mjax.sharding` argument/result attributes of a function and
`jaxpr.sharding_constraint` ops (both name the mesh: axes, shape, per-dim spec). Each op's
sharding rule (passes/rules/sharding.py, table SHARD, Shardy's factor style) says which
operand dimensions index which result dimensions; the pass moves mesh axes along those
factors, between all operands and results of an op (forward sweeps prefer operands,
backward sweeps results), until nothing changes, and writes the decision on every op it
reached:

    func.func @f(%x: tensor<8x4xf32> {mjax.sharding = {mesh_axes = ["x"],
                 mesh_shape = array<i64: 8>, spec = ["x", ""]}}) -> tensor<8x4xf32> {
      %0 = "jaxpr.sin"(%x) : (tensor<8x4xf32>) -> tensor<8x4xf32>
  ==>
      %0 = "jaxpr.sin"(%x) {mjax.sharding = ["[{x}, {}]"]} : ...

`explain=true` adds, per result (and on arguments that received a sharding), e.g.
`mjax.sharding_explain = ["add (elementwise): from operand 0; dim 0 {x} <- argument #0
of @f"]`: the rule, the operand/result the axes came through, and for each sharded
dimension the annotation they came from. A reduced factor (a contracting or reduced
dimension) that ends up sharded is marked `mjax.sharding_reduced = ["x"]`: the op leaves partial results to be summed over
those mesh axes. `materialize=true` also writes every propagated decision as a
`jaxpr.sharding_constraint` after its value, so lowering passes our decisions to XLA.
`sdy=true` writes the result in Shardy's form instead, for XLA's Shardy partitioner (what
jit over a mesh compiles, frontend/spmd.py): an `sdy.mesh @mesh` op, `sdy.sharding` on
the annotated arguments and results, every propagated decision as an
`sdy.sharding_constraint` (closed dimensions: Shardy may not re-shard them), and each
`jaxpr.sharding_constraint` of the function replaced by its `sdy.sharding_constraint`
(`?` entries open). A scan whose carry starts unreduced and whose body adds partial sums
to it (gradients of a reduced weight, accumulated) keeps it so: each value of that chain
in its bodies is laid out unreduced too (passes/unreduced_loops.py), and the reshard
reducing it makes the one all-reduce, as in JAX. Mesh axes of size 1 are left out (they
split nothing).
Ops without a rule (see the SHARD column of the coverage table) are left
unannotated with their stated reason under explain.

Priority when sources disagree (documented, deterministic):
  1. user annotations (argument/result attributes, constraints) are never changed;
  2. for one factor, axes from a user-annotated value beat axes from a propagated one;
     among equals the lower operand (or result) index wins;
  3. forward sweeps (operands first) run before backward ones (results first), and a
     value keeps its first decision;
  4. a mesh axis is used once per value (a later dimension loses it), and axes whose
     tile count does not divide the dimension are dropped.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import sdy as sdy_d

from mjax.dialect import attributes as A
from mjax.dialect.core import OPS
from mjax.dialect.ops.sharding import UNCONSTRAINED, ShardingConstraintOp, check_layout, \
    dim_axes
from mjax.dialect.types import aval_of
from mjax.passes.ir_util import entry_block, is_terminator, symbol_name
from mjax.passes.registry import Pass, PassError, format_location, register_pass
from mjax.passes.rules.op_names import JIT_NAMES, SCOPES
from mjax.passes.rules.tables import CONTRACTION, PER_PARTIAL, PRODUCT, SHARD, SUM
from mjax.passes.unreduced_loops import SCAN, partial_sum_kind, scan_partials

Spec = tuple  # per dimension, a tuple of mesh axis names

_CONSTRAINT = ShardingConstraintOp.OPERATION_NAME
_FACTORS: dict = {}   # (rule, operand avals, result avals) -> Factors, for rules without params


@dataclass
class Decision:
    """A value's sharding, how it was reached, and from which annotation."""

    spec: Spec
    rule: str
    sources: tuple  # per dimension: the annotation its axes came from, or None
    fixed: bool = False


def spec_text(spec: Spec) -> str:
    """`[{x}, {}, {x,y}]` (the form written in the IR)."""
    return "[" + ", ".join("{" + ",".join(axes) + "}" for axes in spec) + "]"


_ANNOTATIONS: dict = {}   # (attribute text, shape) -> (mesh, spec): jit writes few kinds


def _read_annotation(attr, shape, where) -> tuple[tuple, Spec]:
    """(mesh, spec) from a `mjax.sharding` dictionary attribute."""
    key = (str(attr), tuple(shape))
    found = _ANNOTATIONS.get(key)
    if found is None:
        found = _decode_annotation(attr, shape, where)
        if len(_ANNOTATIONS) < 4096:
            _ANNOTATIONS[key] = found
    return found


def _decode_annotation(attr, shape, where) -> tuple[tuple, Spec]:
    try:
        d = A.decode(attr)
    except TypeError:       # (an attribute kind no annotation holds, e.g. array<i32>)
        d = None
    if not isinstance(d, dict) or not {"mesh_axes", "mesh_shape", "spec"} <= set(d):
        raise PassError(where, f"mjax.sharding must be a dictionary with mesh_axes, "
                               f"mesh_shape and spec, got {attr}")
    axes = tuple(d["mesh_axes"]) if isinstance(d["mesh_axes"], tuple) else (d["mesh_axes"],)
    spec = tuple(d["spec"]) if isinstance(d["spec"], tuple) else (d["spec"],)
    sizes = d["mesh_shape"]
    if not (isinstance(sizes, tuple) and all(isinstance(n, int) for n in sizes)
            and all(isinstance(a, str) for a in axes + spec)):
        raise PassError(where, f"mjax.sharding needs mesh_axes and spec of strings and "
                               f"mesh_shape of integers, got {attr}")
    try:
        check_layout("mjax.sharding", shape, axes, sizes, spec)
        return (axes, sizes), tuple(dim_axes(e) for e in spec)
    except (TypeError, ValueError) as e:
        raise PassError(where, f"{e} (in {attr})" if isinstance(e, TypeError)
                        else str(e)) from None


def _seed(spec: Spec, rule: str, source: str) -> Decision:
    return Decision(spec, rule, tuple(source if axes else None for axes in spec), fixed=True)


def _dict_attrs(fn, name) -> list:
    if name not in fn.attributes:
        return []
    return [ir.DictAttr(a) for a in ir.ArrayAttr(fn.attributes[name])]


class _Propagation:
    """Propagation over one function's top-level block."""

    def __init__(self, fn, explain: bool):
        self.fn = fn
        self.explain = explain
        self.block = entry_block(fn)
        # Values are numbered once (hashing and comparing an ir.Value goes through the
        # bindings, and the sweeps look values up thousands of times): decisions are kept
        # by number; `values` maps a number back to its value.
        self.ids: dict = {}
        self.values: list = []
        self.known: dict = {}
        self.ops = []          # the block's operations, listed once by seed
        self.mesh = None
        self._sizes = None     # mesh axis -> size, once the mesh is known
        self.reduced: dict = {}

    # -- sources ------------------------------------------------------------------------
    def _set_mesh(self, mesh, where):
        if self.mesh is not None and self.mesh != mesh:
            raise PassError(where, f"jaxpr-propagate-shardings: @{symbol_name(self.fn)} uses "
                                   f"two meshes, {self.mesh} and {mesh}")
        self.mesh = mesh

    def _id(self, v) -> int:
        n = self.ids.get(v)
        if n is None:
            n = self.ids[v] = len(self.values)
            self.values.append(v)
        return n

    def decision(self, v) -> Decision | None:
        """The decision reached for value `v`, or None."""
        n = self.ids.get(v)
        return None if n is None else self.known.get(n)

    def seed(self) -> bool:
        name = symbol_name(self.fn)
        for i, (arg, attrs) in enumerate(zip(self.block.arguments,
                                             _dict_attrs(self.fn, "arg_attrs"))):
            if "mjax.sharding" in attrs:
                mesh, spec = _read_annotation(attrs["mjax.sharding"],
                                              aval_of(arg.type).shape, self.fn)
                self._set_mesh(mesh, self.fn)
                self.known[self._id(arg)] = _seed(spec, "annotation",
                                                  f"argument #{i} of @{name}")
        # (Iterating a block makes an OpView per op: the list is made once and kept.)
        self.ops = ops = [op.operation for op in self.block.operations]
        for op in ops:
            if op.name == _CONSTRAINT:
                p = op.opview.params
                self._set_mesh((p["mesh_axes"], p["mesh_shape"]), op)
                self.known[self._id(op.results[0])] = _seed(
                    tuple(dim_axes(e) for e in p["spec"]), "sharding_constraint",
                    f"constraint at {format_location(op.location)}")
        ret = ops[-1]
        for i, attrs in enumerate(_dict_attrs(self.fn, "res_attrs")):
            if "mjax.sharding" in attrs:
                v = ret.operands[i]
                mesh, spec = _read_annotation(attrs["mjax.sharding"],
                                              aval_of(v.type).shape, self.fn)
                self._set_mesh(mesh, self.fn)
                n = self._id(v)
                if n not in self.known:
                    self.known[n] = _seed(spec, "annotation", f"result #{i} of @{name}")
        return self.mesh is not None

    # -- one op, one direction -------------------------------------------------------------
    def _factor_axes(self, entries):
        """factor -> (axes, source, label, fixed) from the decided values of `entries`
        ((value, dims, label) in priority order; a user annotation beats the rest)."""
        found = {}
        for v, dims, label, _ in entries:
            dec = self.known.get(v)
            if dec is None:
                continue
            for d, f in enumerate(dims):
                if f is None or not dec.spec[d]:
                    continue
                old = found.get(f)
                if old is None or (dec.fixed and not old[3]):
                    found[f] = (dec.spec[d], dec.sources[d], label, dec.fixed)
        return found

    def _spec_for(self, shape, dims, found):
        """(spec, per-dim sources) of a value whose dims are indexed by `dims`."""
        sizes = self._sizes
        if sizes is None:
            sizes = self._sizes = dict(zip(*self.mesh))
        used, spec, sources = set(), [], []
        for d, f in enumerate(dims):
            axes, source = (found[f][0], found[f][1]) if f in found else ((), None)
            axes = tuple(a for a in axes if a not in used)
            if axes and shape[d] % math.prod(sizes[a] for a in axes):
                axes = ()
            used.update(axes)
            spec.append(axes)
            sources.append(source if axes else None)
        return tuple(spec), tuple(sources)

    def _op_info(self, op, cls):
        """(primitive, factors, operand entries, result entries) of an op of class `cls`
        with a sharding rule, or None; computed once per op (its params and avals do not
        change). An entry is (value number, dims, label, shape)."""
        rule = SHARD.get(cls)
        if rule is None:
            return None
        operands, results = list(op.operands), list(op.results)
        avals_in = [aval_of(v.type) for v in operands]
        avals_out = [aval_of(r.type) for r in results]
        if getattr(rule, "uses_params", True):
            factors = rule(avals_in, avals_out, **op.opview.params)
        else:
            # (Such a rule reads avals only: its answer is remembered per avals.)
            key = (rule, tuple(avals_in), tuple(avals_out))
            factors = _FACTORS.get(key)
            if factors is None:
                factors = rule(avals_in, avals_out)
                if len(_FACTORS) < 4096:
                    _FACTORS[key] = factors
        ids = self._id
        ins = [(ids(v), m, f"operand {k}", a.shape) for k, (v, m, a) in
               enumerate(zip(operands, factors.operands, avals_in))]
        outs = [(ids(v), m, f"result {k}", a.shape) for k, (v, m, a) in
                enumerate(zip(results, factors.results, avals_out))]
        # (Both sweep orders and the sorted reduced factors, made once: apply is hot.)
        return (cls.primitive, factors, ins, outs, ins + outs, outs + ins,
                sorted(factors.reduced), len(ins))

    def apply(self, key, info, forward: bool) -> bool:
        """One op: axes of each factor, from whichever of its operands and results are
        decided (operands first in forward sweeps, results first in backward ones), go
        to its undecided operands and results, as in Shardy."""
        entries = info[4] if forward else info[5]
        known = self.known
        for e in entries:
            if e[0] in known:
                break
        else:
            return False
        found = self._factor_axes(entries)
        reduced = info[6]
        if reduced:
            partial = tuple(a for f in reduced if f in found for a in found[f][0])
            if partial:
                self.reduced[key] = partial
        operands_known = any(e[0] in known for e in info[2])   # (before any is decided)
        changed = False
        for v, dims, label, shape in entries:
            if v in known:
                continue
            spec, sources = self._spec_for(shape, dims, found)
            # A replicated decision only flows forward, from decided operands to results.
            if not any(spec) and not (operands_known and label[0] == "r"):
                continue
            rule = ""
            if self.explain:    # (the rule's text is only ever shown by explain)
                used = sorted({found[f][2] for d, f in enumerate(dims) if spec[d]})
                how = "from " + ", ".join(used) if used else "from replicated operands"
                rule = f"{info[0]} ({info[1].kind}): {how}"
            known[v] = Decision(spec, rule, sources)
            changed = True
        return changed

    def settled(self, info) -> bool:
        """Whether every operand and result of the op is decided: decisions never change,
        so applying its rule again cannot change anything (reduced factors come from
        operands only, in the same order either way)."""
        return all(e[0] in self.known for e in info[2]) and \
            all(e[0] in self.known for e in info[3])

    def run(self, write: bool = True):
        # (An op's class from its name: making its OpView costs more than the lookup.)
        ops, classes = [], []
        for op in self.ops:
            cls = OPS.get(op.name)
            if cls is not None and not is_terminator(op):
                ops.append(op)
                classes.append(cls)
        infos = [(k, info) for k, (op, cls) in enumerate(zip(ops, classes))
                 if (info := self._op_info(op, cls)) is not None]
        for _ in range(2 * len(ops) + 2):
            changed = False
            for k, info in infos:
                changed |= self.apply(k, info, forward=True)
            for k, info in reversed(infos):
                changed |= self.apply(k, info, forward=False)
            if not changed:
                break
            infos = [(k, info) for k, info in infos if not self.settled(info)]
        if write:
            self.write(ops)

    # -- output -------------------------------------------------------------------------------
    def _explain_text(self, dec: Decision) -> str:
        dims = [f"dim {d} {{{','.join(axes)}}} <- {src}"
                for d, (axes, src) in enumerate(zip(dec.spec, dec.sources)) if axes]
        return f"{dec.rule}; " + ("; ".join(dims) if dims else "replicated")

    def write(self, ops):
        for k, op in enumerate(ops):
            decs = [self.decision(r) for r in op.results]
            view = op.opview
            if any(d is not None for d in decs):
                op.attributes["mjax.sharding"] = ir.ArrayAttr.get([
                    ir.StringAttr.get(spec_text(d.spec) if d is not None else "?")
                    for d in decs])
            if k in self.reduced:
                op.attributes["mjax.sharding_reduced"] = ir.ArrayAttr.get(
                    [ir.StringAttr.get(a) for a in self.reduced[k]])
            if not self.explain:
                continue
            if any(d is not None for d in decs):
                op.attributes["mjax.sharding_explain"] = ir.ArrayAttr.get([
                    ir.StringAttr.get(self._explain_text(d) if d is not None else
                                      "no sharding reached this result") for d in decs])
            elif type(view) not in SHARD and len(op.results):
                why = SHARD.why(type(view))
                op.attributes["mjax.sharding_explain"] = ir.ArrayAttr.get(
                    [ir.StringAttr.get(why)])
        self._write_args()

    def _write_args(self):
        old = _dict_attrs(self.fn, "arg_attrs") or [None] * len(self.block.arguments)
        new, touched = [], False
        for arg, attrs in zip(self.block.arguments, old):
            d = {} if attrs is None else {attrs[i].name: attrs[i].attr
                                          for i in range(len(attrs))}
            dec = self.decision(arg)
            if dec is not None and not dec.fixed:
                d["mjax.sharding_propagated"] = ir.StringAttr.get(spec_text(dec.spec))
                if self.explain:
                    d["mjax.sharding_explain"] = ir.StringAttr.get(self._explain_text(dec))
                touched = True
            new.append(ir.DictAttr.get(d))
        if touched:
            self.fn.attributes["arg_attrs"] = ir.ArrayAttr.get(new)


    # -- materialize: decisions as constraints, so lowering hands them to XLA ------------
    def materialize(self):
        """A jaxpr.sharding_constraint after every value given a sharding by propagation
        (not by the user), so `--jaxpr-to-stablehlo` passes our decisions to XLA as
        custom_call @Sharding."""
        axes, shape = self.mesh
        for v, next_op in self._values():
            dec = self.decision(v)
            if dec is None or dec.fixed:
                continue
            spec = tuple(",".join(a) for a in dec.spec)
            is_arg = next_op is None
            ip = (ir.InsertionPoint.at_block_begin(self.block) if is_arg
                  else ir.InsertionPoint(next_op))
            c = ShardingConstraintOp.create(
                [v], [aval_of(v.type)], {"mesh_axes": axes, "mesh_shape": shape,
                                         "spec": spec},
                loc=self.fn.location if is_arg else v.owner.location, ip=ip)
            v.replace_all_uses_except(c.results[0], c)


    # -- sdy: the decisions in Shardy's form, for XLA's Shardy partitioner ----------------
    def to_sdy(self, module, mesh_name: str = "mesh"):
        """See the module docstring (`sdy=true`)."""
        axes, shape = self.mesh
        sizes = dict(zip(axes, shape))
        _ensure_sdy_mesh(module, mesh_name, axes, shape)
        cache: dict = {}

        def sharding(dims, unreduced=None) -> ir.Attribute:
            # dims: per dimension a tuple of axes, or None for an open ("?") dimension.
            attr = cache.get((dims, unreduced))
            if attr is None:
                attr = cache[dims, unreduced] = ir.Attribute.parse(
                    sdy_sharding_text(mesh_name, dims, sizes, unreduced))
            return attr

        ops = list(self.ops)
        nested: dict = {}
        partial, feeding = _unreduced_values(ops, self._unreduced_args(), self.decision,
                                             nested)
        for v, axes in nested.items():     # (inside loop bodies: no decisions there)
            _pin_after(v, sharding(tuple(() for _ in aval_of(v.type).shape), axes))
        replaced = set()
        for k, op in enumerate(ops):
            if op.name == _CONSTRAINT:
                spec = op.opview.params["spec"]
                dims = tuple(None if e == UNCONSTRAINED else dim_axes(e) for e in spec)
                x, loc, unreduced = op.operands[0], op.location, op.opview.params["unreduced"]
                first = None
                if partial.get(x) and not unreduced:
                    loc = _reshard_loc(module, op)
                if partial.get(x) and not unreduced and not _pinned(x):
                    # (a reshard of a partial sum: its operand pinned as it is first, as
                    # JAX pins its input, so the all-reduce is the reshard's)
                    rank = len(aval_of(x.type).shape)
                    dec = self.decision(x)
                    spec = dec.spec if dec is not None and len(dec.spec) == rank else \
                        tuple(() for _ in range(rank))
                    first = _sdy_constraint(x, sharding(spec, partial[x]), loc,
                                            ir.InsertionPoint(op))
                    x = first.results[0]
                new = _sdy_constraint(x, sharding(dims, unreduced), loc,
                                      ir.InsertionPoint(op))
                op.results[0].replace_all_uses_with(new.results[0])
                if op.results[0] in partial:    # (keyed by the value that stays)
                    partial[new.results[0]] = partial.pop(op.results[0])
                op.erase()
                ops[k] = new if first is None else first    # (what follows the op before)
                replaced.add(k)
        # Every argument and top-level result (the constraints' excepted) that has a
        # propagated decision gets a closed constraint right after its definition.
        values = [(a, None, None) for a in self.block.arguments]
        for k, (op, next_op) in enumerate(zip(ops, ops[1:])):  # (the last: terminator)
            if k not in replaced:
                values += [(r, op, next_op) for r in op.results]
        for v, op, next_op in values:
            dec = self.decision(v)
            unreduced = partial.get(v) if partial else None
            if unreduced is not None and op is not None:
                # (A partial sum: laid out unreduced, as JAX lays out each such value.)
                spec = dec.spec if dec is not None else \
                    tuple(() for _ in aval_of(v.type).shape)
                c = _sdy_constraint(v, sharding(spec, unreduced), op.location,
                                    ir.InsertionPoint(next_op))
                v.replace_all_uses_except(c.results[0], c)
                continue
            # (A scalar has one layout, replicated: nothing to pin. A value on its way
            # into an unreduced layout is left to Shardy, which keeps its partials.)
            if dec is None or dec.fixed or not dec.spec or v in feeding:
                continue
            if op is None:    # an argument
                c = _sdy_constraint(v, sharding(dec.spec), self.fn.location,
                                    ir.InsertionPoint.at_block_begin(self.block))
            else:
                c = _sdy_constraint(v, sharding(dec.spec), op.location,
                                    ir.InsertionPoint(next_op))
            v.replace_all_uses_except(c.results[0], c)
        self._pin_unreduced_results(ops[-1], partial, sharding)
        by_annotation: dict = {}
        for name in ("arg_attrs", "res_attrs"):
            attrs = _dict_attrs(self.fn, name)
            if not attrs:
                continue
            new = []
            for a in attrs:
                d = {a[i].name: a[i].attr for i in range(len(a))}
                for key in ("mjax.sharding_propagated", "mjax.sharding_explain"):
                    d.pop(key, None)
                ann = d.pop("mjax.sharding", None)
                if ann is not None:
                    # (Arguments and results share a few annotations: each decoded once.)
                    sdy = by_annotation.get(ann)
                    if sdy is None:
                        fields = A.decode(ann)
                        spec = fields["spec"]
                        spec = spec if isinstance(spec, tuple) else (spec,)
                        partial = fields.get("unreduced")
                        partial = (partial if isinstance(partial, tuple) or partial is None
                                   else (partial,))
                        sdy = by_annotation[ann] = sharding(
                            tuple(dim_axes(e) for e in spec), partial)
                    d["sdy.sharding"] = sdy
                new.append(ir.DictAttr.get(d))
            self.fn.attributes[name] = ir.ArrayAttr.get(new)

    def _unreduced_args(self) -> dict:
        """{argument: its unreduced axes} of the arguments annotated unreduced."""
        found = {}
        for arg, attrs in zip(self.block.arguments, _dict_attrs(self.fn, "arg_attrs")):
            if "mjax.sharding" in attrs:
                fields = A.decode(attrs["mjax.sharding"])
                axes = fields.get("unreduced") if isinstance(fields, dict) else None
                if axes:
                    found[arg] = axes if isinstance(axes, tuple) else (axes,)
        return found

    def _pin_unreduced_results(self, ret, partial, sharding) -> None:
        """A result laid out unreduced whose value the block computes whole: pinned
        whole, then unreduced (Shardy keeps one device's value and zeros the others only
        when the value before the change of layout is pinned)."""
        for i, attrs in enumerate(_dict_attrs(self.fn, "res_attrs")):
            if "mjax.sharding" not in attrs:
                continue
            fields = A.decode(attrs["mjax.sharding"])
            axes = fields.get("unreduced") if isinstance(fields, dict) else None
            v = ret.operands[i]
            if not axes or v in partial:
                continue
            axes = axes if isinstance(axes, tuple) else (axes,)
            # (The result's own layout: values made here have no decision to read.)
            spec = fields["spec"] if isinstance(fields["spec"], tuple) else (fields["spec"],)
            spec = tuple(dim_axes(e) for e in spec)
            ip = ir.InsertionPoint(ret)
            whole = _sdy_constraint(v, sharding(spec), ret.location, ip)
            c = _sdy_constraint(whole.results[0], sharding(spec, axes), ret.location, ip)
            ret.operands[i] = c.results[0]

    def _values(self) -> list:
        """(value, the op after its definition, None for an argument) for the function's
        arguments and top-level results, sharding constraints' results excepted."""
        values = [(a, None) for a in self.block.arguments]
        ops = [op.operation for op in self.block.operations]
        for op, next_op in zip(ops, ops[1:]):   # (the last op is the terminator)
            if op.name != ShardingConstraintOp.OPERATION_NAME:
                values += [(r, next_op) for r in op.results]
        return values


def _unreduced_values(ops, args: dict, decision, nested: dict) -> tuple[dict, set]:
    """({value: its unreduced axes} for the values of the block that hold partial sums,
    forward from the arguments `args` and the constraints naming unreduced axes through
    the ops that keep them, scans carrying them included; the set of values that reach
    such a constraint linearly from contractions, see _from_contractions). `nested` gets
    the values inside scan bodies that carry partial sums (passes/unreduced_loops.py)."""
    partial: dict = dict(args)
    feeding: set = set()
    for op in ops:
        name = op.name
        if name == SCAN and partial:
            scan_partials(op, partial, nested)
            continue
        if name == _CONSTRAINT:
            axes = op.opview.params["unreduced"]
            if axes:
                partial[op.results[0]] = tuple(axes)
                feeding |= _from_contractions(op.operands[0], decision)
            continue
        if not partial or not len(op.results):
            continue
        found = [partial.get(v) for v in op.operands]
        kind = partial_sum_kind(op)     # (tables.PARTIAL_SUMS: JAX's unreduced rules)
        if kind == PER_PARTIAL and found and found[0]:
            axes = found[0]
        elif kind == SUM and found and all(found) and len(set(found)) == 1:
            axes = found[0]
        elif kind == PRODUCT and sum(f is not None for f in found) == 1:
            axes = next(f for f in found if f)
        else:
            continue
        for r in op.results:
            partial[r] = axes
    return partial, feeding


def _from_contractions(v, decision) -> set:
    """The values from which `v` is computed linearly out of contractions' results
    (dot_generals, reduce_sums over split dimensions; themselves included), when every
    path back from `v` ends at one, else the empty set. Left unpinned, Shardy keeps such a contraction's partial sums up to an
    unreduced layout of `v`; a value computed whole must stay pinned (replicated)
    before it, or Shardy would lay the op computing it out unreduced."""
    chain, todo = set(), [v]
    while todo:
        v = todo.pop()
        if v in chain:
            continue
        if not isinstance(v, ir.OpResult):
            return set()
        chain.add(v)
        owner = v.owner
        if owner.name == "jaxpr.reduce_sum" and _splits(
                decision(owner.operands[0]), owner.opview.params["axes"]):
            continue
        kind = partial_sum_kind(owner)
        if kind == PER_PARTIAL:
            todo.append(owner.operands[0])
        elif kind == SUM:
            todo.extend(owner.operands)
        elif kind != CONTRACTION:
            return set()
    return chain


def _reshard_loc(module, op) -> ir.Location:
    """The location of the constraints standing for the jaxpr.sharding_constraint `op`
    that reduces a partial sum (only jax.reshard does) in a jit's module: named as JAX
    names the op, "jit(f)/reshard" (XLA keeps it as the all-reduce's op_name)."""
    attrs = module.operation.attributes
    name = ir.StringAttr(attrs["sym_name"]).value if "sym_name" in attrs else ""
    if not name.startswith("jit_"):
        return op.location
    scope = SCOPES.get(op.location.attr) if SCOPES else None
    path = f"{scope}/reshard" if scope else "reshard"
    return ir.Location.name(f"jit({JIT_NAMES.get(name, name[4:])})/{path}",
                            childLoc=op.location)


def _pinned(v) -> bool:
    """Whether `v` is an sdy constraint's result (its layout already stated)."""
    return isinstance(v, ir.OpResult) and v.owner.operation.name == "sdy.sharding_constraint"


def _pin_after(v, sharding) -> None:
    """`v` (an op's result) laid out as `sharding` by a constraint right after its op."""
    owner = v.owner
    c = _sdy_constraint(v, sharding, owner.location, ir.InsertionPoint.after(owner))
    v.replace_all_uses_except(c.results[0], c)


def _splits(dec, dims) -> bool:
    return dec is not None and any(dec.spec[d] for d in dims)


def _sdy_constraint(v, sharding, loc, ip) -> ir.Operation:
    """`sdy.sharding_constraint` of `v` (the generic builder: the generated one does the
    same, more slowly)."""
    return ir.Operation.create("sdy.sharding_constraint", results=[v.type], operands=[v],
                               attributes={"sharding": sharding}, loc=loc, ip=ip)


def sdy_sharding_text(mesh_name: str, dims, sizes: dict, unreduced=None) -> str:
    """`#sdy.sharding<@mesh, [{"x"}, {}, {?}]>` (dims: axes per dimension, None = open);
    axes of size 1 are dropped. `unreduced` axes (each device a partial sum over them)
    follow as `unreduced={"x"}`, in mesh order."""
    parts = []
    for axes in dims:
        if axes is None:
            parts.append("{?}")
        else:
            parts.append("{" + ", ".join(f'"{a}"' for a in axes if sizes[a] != 1) + "}")
    extra = ""
    partial = [a for a in sizes if a in (unreduced or ()) and sizes[a] != 1]
    if partial:
        extra = ", unreduced={" + ", ".join(f'"{a}"' for a in partial) + "}"
    return f"#sdy.sharding<@{mesh_name}, [{', '.join(parts)}]{extra}>"


def _ensure_sdy_mesh(module, name, axes, shape) -> None:
    """An `sdy.mesh @name` at the top of `module` (an existing one must be the same)."""
    body = module.body
    for op in body.operations:
        if op.operation.name == "sdy.mesh" and \
                ir.StringAttr(op.operation.attributes["sym_name"]).value == name:
            want = _sdy_mesh_attr(axes, shape)
            if str(op.operation.attributes["mesh"]) != str(want):
                raise PassError(op, f"jaxpr-propagate-shardings: sdy.mesh @{name} is "
                                    f"{op.operation.attributes['mesh']}, expected {want}")
            return
    first = next(iter(body.operations), None)
    ip = ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(body)
    sdy_d.MeshOp(name, _sdy_mesh_attr(axes, shape), ip=ip)


def _sdy_mesh_attr(axes, shape) -> ir.Attribute:
    inner = ", ".join(f'"{a}"={n}' for a, n in zip(axes, shape))
    return ir.Attribute.parse(f"#sdy.mesh<[{inner}]>")


def propagate_shardings(module, explain: bool = False, materialize: bool = False,
                        sdy: bool = False) -> None:
    """Runs the propagation on every function of `module` that has a sharding source."""
    with module.context, ir.Location.unknown(module.context):
        for fn in list(module.body.operations):
            if fn.operation.name != "func.func":
                continue
            prop = _Propagation(fn.operation, explain)
            if prop.seed():
                # In Shardy's form the decisions go to sdy ops; the per-op mjax.sharding
                # attributes (read by tests and explain) would only be lowered away.
                prop.run(write=not sdy or explain)
                if sdy:
                    prop.to_sdy(module)
                elif materialize:
                    prop.materialize()


@register_pass("jaxpr-propagate-shardings")
@dataclass(frozen=True)
class JaxprPropagateShardingsPass(Pass):
    """Propagate argument/constraint shardings to every value through per-op rules."""

    explain: bool = False      # --jaxpr-propagate-shardings="explain=true"
    materialize: bool = False  # "materialize=true": decisions as sharding_constraint ops
    sdy: bool = False          # "sdy=true": everything in Shardy's form (sdy.* ops, attrs)

    def run(self, module):
        propagate_shardings(module, self.explain, self.materialize, self.sdy)
