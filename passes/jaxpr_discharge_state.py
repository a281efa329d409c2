"""`--jaxpr-discharge-state`: a function over refs becomes a pure function over values.

Each ref argument (`memref<...>`) becomes a tensor argument, and its final value is
appended to the results; each ref op becomes value ops (rules in passes/rules/state.py,
table `DISCHARGE`). Control flow whose bodies use refs (`jaxpr.while`, `jaxpr.scan`,
`jaxpr.cond` holding a ref among their operands) threads each ref's value through: a
loop carries it, a cond returns it from every branch.

    func.func private @k(%x: memref<4xf32>, %o: memref<4xf32>) {
      %v = "jaxpr.ref_get"(%x, %z) {sizes = array<i64: 4>, squeezed = array<i64>}
      %s = "jaxpr.sin"(%v)
      %old = "jaxpr.ref_swap"(%o, %s, %z) {sizes = array<i64: 4>, squeezed = array<i64>}
      return
    }
  ==>
    func.func private @k(%x: tensor<4xf32>, %o: tensor<4xf32>)
        -> (tensor<4xf32>, tensor<4xf32>) {
      %s = "jaxpr.sin"(%x)
      return %x, %s
    }

`discharge_function` is the same transformation as a helper: it adds the pure function
under a new name and, for `--jaxpr-pallas-interpret`, can take the grid indices as
leading arguments (program_id -> that argument, num_programs -> a constant), followed
by the bounds of the grid's dynamic dimensions (-1 entries; num_programs -> that bound).
JAX: state/discharge.py (discharge_state), over func.func instead of a Jaxpr.
"""
from __future__ import annotations

import numpy as np
from dataclasses import dataclass

from jaxlib.mlir import ir

from mjax.dialect import OPS
from mjax.dialect.builder import Builder
from mjax.dialect.ops import control_flow as C
from mjax.dialect.ops import state as S
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import RefAval, ShapedArray, aval_of
from mjax.passes import analyses
from mjax.passes.interpreter import terminator
from mjax.passes.ir_util import (FunctionTable, callee_of, clone_into, entry_block, nested_ops,
                                 set_results)
from mjax.passes.registry import Pass, PassError, op_error, register_pass
from mjax.passes.rules.tables import DISCHARGE, DISCHARGE_NESTED


def is_ref(v: ir.Value) -> bool:
    return isinstance(v.type, ir.MemRefType)


# Discharge of a cond as predicated straight-line code, for interpreted kernels whose
# devices run in lockstep (passes/pallas_mesh.py): {"applies": cond -> bool, "rule",
# "syncs": op -> whether it holds DMAs or semaphore ops}
PREDICATED_COND: dict = {}


class Discharge:
    """Emits the value form of blocks at `ip`; `env` maps old values to new ones (a ref
    maps to its current value). `grid` (with `grid_ids`) replaces grid queries.
    `active` (an i1 scalar, or None: always) says whether the ops run: ref updates of an
    inactive run leave the refs as they were (a predicated branch, passes/pallas_mesh.py);
    region rules marked `masks_itself` take it into account themselves."""

    active = None

    def __init__(self, ip: ir.InsertionPoint, env: dict, grid=None, grid_ids=None,
                 grid_bounds=None):
        self.ip = ip
        self.env = env
        self.grid = grid
        self.grid_ids = grid_ids
        self.grid_bounds = grid_bounds or {}     # dynamic grid axis -> its bound (value)

    def run(self, block: ir.Block) -> list[ir.Value]:
        """Discharges `block`'s ops (its arguments already in env); gives the new values
        of its terminator's operands."""
        end = terminator(block)
        for op in list(block.operations)[:-1]:
            self.op(op.operation)
        return [self.env[v] for v in end.operands]

    def builder(self, op) -> Builder:
        return Builder(self.ip, op.location)

    def op(self, op: ir.Operation) -> None:
        view = op.opview
        cls = type(view)
        rule = DISCHARGE.get(cls)
        if rule is not None:
            ref, values, starts = cls.split([self.env[v] for v in op.operands])
            with op.location:
                new, results = rule(self.builder(op), ref, values, starts, **view.params)
            if new is not None:
                self.env[op.operands[0]] = self.masked(op.location, new,
                                                       self.env[op.operands[0]])
            self.env.update(zip(op.results, results))
            return
        if cls is S.RefNewOp:       # (a ref made inside the function: its initial value)
            self.env[op.results[0]] = self.env[op.operands[0]]
            return
        if self.grid is not None and cls in (S.ProgramIdOp, S.NumProgramsOp):
            axis = view.params["axis"]
            if axis >= len(self.grid):
                raise op_error(op, f"axis {axis} is out of range for a grid of rank "
                                   f"{len(self.grid)}")
            if cls is S.ProgramIdOp:
                if self.grid_ids is None:
                    raise op_error(op, "program_id inside a loop body or branch must take "
                                       "its value from the kernel's top level")
                value = self.grid_ids[axis]
            elif axis in self.grid_bounds:
                value = self.grid_bounds[axis]
            else:
                value = self.builder(op).constant(np.int32(self.grid[axis]))
            self.env[op.results[0]] = value
            return
        region_rule = DISCHARGE_NESTED.get(cls)
        # (jaxpr.run_scoped holds refs of its own even when no operand is one)
        if any(is_ref(v) for v in op.operands) or (region_rule is not None and (
                getattr(cls, "holds_refs", False) or _makes_refs_inside(op))):
            if region_rule is None:
                raise op_error(op, f"{DISCHARGE.why(cls)} (only ref ops and "
                                   f"jaxpr.while/scan/cond may use refs)")
            if cls is C.CondOp and PREDICATED_COND and PREDICATED_COND["applies"](op):
                region_rule = PREDICATED_COND["rule"]
            elif self.active is not None and PREDICATED_COND and PREDICATED_COND[
                    "syncs"](op) and not getattr(region_rule, "masks_itself", False):
                raise op_error(op, "a loop holding semaphore waits or remote DMAs inside "
                                   "a pl.when in an interpreted kernel on a shard_map's "
                                   "devices is not supported by mjax")
            refs = _refs_in(op.operands)
            before = [self.env[v] for v in refs]
            with op.location:
                region_rule(self, op)
            if not getattr(region_rule, "masks_itself", False):
                for v, old in zip(refs, before):
                    self.env[v] = self.masked(op.location, self.env[v], old)
            return
        if self.grid is not None and len(op.regions):
            _check_no_grid_queries(op)
        new = clone_into(op, self.ip, self.env)
        self.env.update(zip(op.results, new.results))

    def masked(self, loc, new, old):
        """`new` where this run is active, else `old`."""
        if self.active is None or new is old:
            return new
        return Builder(self.ip, loc).select_n(self.active, old, new)

    def nested(self, ip, env) -> "Discharge":
        # (a dynamic grid bound is a value of the enclosing function: not visible in an
        # isolated region, so num_programs of a dynamic axis must be read at top level)
        return Discharge(ip, env, self.grid, None)


def _makes_refs_inside(op) -> bool:
    """Whether a region op with no ref operand makes refs inside (a branch taking a
    barrier semaphore, a run_scoped) or holds an op discharged without refs (a kernel's
    print, which becomes its host callback): its regions are discharged too."""
    return bool(len(op.regions)) and any(
        any(is_ref(r) for r in inner.results) or
        getattr(OPS.get(inner.name), "discharged_without_refs", False)
        for inner in nested_ops(op))


def _check_no_grid_queries(op):
    for inner in nested_ops(op):
        if inner.name == "jaxpr.program_id":
            raise op_error(inner, "program_id inside a loop body or branch must take its "
                                  "value from the kernel's top level")


# ---- control flow over refs -------------------------------------------------------------
def _refs_in(values) -> list[ir.Value]:
    refs = []
    for v in values:
        if is_ref(v) and v not in refs:
            refs.append(v)
    return refs


def _new_block(d: Discharge, types, loc):
    with loc:
        holder = ir.Operation.create("mjax.region_holder", regions=1, ip=d.ip)
    return holder, ir.Block.create_at_start(holder.regions[0], list(types))


def _scan(d: Discharge, op):
    view = op.opview
    p = view.params
    n, k = p["num_consts"], p["num_carry"]
    ops = list(op.operands)
    consts, init, xs = ops[:n], ops[n:n + k], ops[n + k:]
    if any(is_ref(v) for v in init + xs):
        raise op_error(op, "a ref cannot be a loop carry or scanned over; close over it "
                           "instead")
    refs = _refs_in(consts)
    ref_vals = [d.env[r] for r in refs]
    keep = [v for v in consts if not is_ref(v)]
    old = op.regions[0].blocks[0]
    x_types = [a.type for a in old.arguments[n + k:]]
    types = ([d.env[v].type for v in keep] + [v.type for v in init]
             + [v.type for v in ref_vals] + x_types)
    sources = [v if is_ref(v) else None for v in consts] + [None] * (len(init) + len(xs))

    def arg_for(i, block):
        if i < n:
            v = consts[i]
            if is_ref(v):
                return block.arguments[len(keep) + len(init) + refs.index(v)]
            return block.arguments[sum(1 for w in consts[:i] if not is_ref(w))]
        if i < n + k:
            return block.arguments[len(keep) + (i - n)]
        return block.arguments[len(keep) + len(init) + len(refs) + (i - n - k)]

    holder, block = _new_block(d, types, op.location)
    env = {a: arg_for(i, block) for i, a in enumerate(old.arguments)}
    outs = d.nested(ir.InsertionPoint(block), env).run(old)
    ref_args = [block.arguments[len(keep) + len(init) + j] for j in range(len(refs))]
    finals = [_final(env, old, sources, r, a) for r, a in zip(refs, ref_args)]
    with op.location:
        ir.Operation.create("jaxpr.yield", operands=outs[:k] + finals + outs[k:],
                            ip=ir.InsertionPoint(block))
    operands = [d.env[v] for v in keep + init] + ref_vals + [d.env[v] for v in xs]
    params = dict(p, num_consts=len(keep), num_carry=k + len(refs))
    result_avals = ([aval_of(v.type) for v in operands[len(keep):len(keep) + k + len(refs)]]
                    + [aval_of(r.type) for r in op.results[k:]])
    new = C.ScanOp.build(operands, result_avals, params, [block], loc=op.location, ip=d.ip)
    holder.erase()
    res = list(new.results)
    d.env.update(zip(op.results[:k], res[:k]))
    d.env.update(zip(op.results[k:], res[k + len(refs):]))
    _update_refs(d, refs, ref_vals, res[k:k + len(refs)], [
        [f == a for f, a in zip(finals, ref_args)]])


def _final(env, old, sources, ref, default):
    """The value of `ref` at the end of a discharged body (its argument's last value, or
    `default` when the body has no argument for it)."""
    final = default
    for i, a in enumerate(old.arguments):
        if sources[i] is not None and sources[i] == ref:
            final = env[a]
    return final


def _cond(d: Discharge, op):
    ops = list(op.operands)
    index, args = ops[0], ops[1:]
    refs = _refs_in(args)
    ref_vals = [d.env[r] for r in refs]
    keep = [v for v in args if not is_ref(v)]
    types = [d.env[v].type for v in keep] + [v.type for v in ref_vals]
    sources = [v if is_ref(v) else None for v in args]

    def arg_for(i, block):
        v = args[i]
        if is_ref(v):
            return block.arguments[len(keep) + refs.index(v)]
        return block.arguments[sum(1 for w in args[:i] if not is_ref(w))]

    holders, blocks, unchanged = [], [], []
    for region in op.regions:
        old = region.blocks[0]
        holder, block = _new_block(d, types, op.location)
        env = {a: arg_for(i, block) for i, a in enumerate(old.arguments)}
        outs = d.nested(ir.InsertionPoint(block), env).run(old)
        ref_args = [block.arguments[len(keep) + j] for j in range(len(refs))]
        finals = [_final(env, old, sources, r, a) for r, a in zip(refs, ref_args)]
        unchanged.append([f == a for f, a in zip(finals, ref_args)])
        with op.location:
            ir.Operation.create("jaxpr.yield", operands=outs + finals,
                                ip=ir.InsertionPoint(block))
        holders.append(holder)
        blocks.append(block)
    result_avals = ([aval_of(r.type) for r in op.results]
                    + [aval_of(v.type) for v in ref_vals])
    new = C.CondOp.build([d.env[index]] + [d.env[v] for v in keep] + ref_vals, result_avals,
                         {}, blocks, loc=op.location, ip=d.ip)
    for h in holders:
        h.erase()
    res = list(new.results)
    n = len(op.results)
    d.env.update(zip(op.results, res[:n]))
    _update_refs(d, refs, ref_vals, res[n:], unchanged)


def _while(d: Discharge, op):
    view = op.opview
    nc, nb = view.params["cond_nconsts"], view.params["body_nconsts"]
    ops = list(op.operands)
    cc, bc, init = ops[:nc], ops[nc:nc + nb], ops[nc + nb:]
    if any(is_ref(v) for v in init):
        raise op_error(op, "a ref cannot be a loop carry; close over it instead")
    refs = _refs_in(cc + bc)
    ref_vals = [d.env[r] for r in refs]
    carry_types = [v.type for v in init] + [v.type for v in ref_vals]
    blocks, holders = [], []
    for region, consts, with_refs in ((op.regions[0], cc, False), (op.regions[1], bc, True)):
        old = region.blocks[0]
        keep = [v for v in consts if not is_ref(v)]
        types = [d.env[v].type for v in keep] + carry_types
        sources = [v if is_ref(v) else None for v in consts] + [None] * len(init)

        def arg_for(i, block, consts=consts, keep=keep):
            if i < len(consts):
                v = consts[i]
                if is_ref(v):
                    return block.arguments[len(keep) + len(init) + refs.index(v)]
                return block.arguments[sum(1 for w in consts[:i] if not is_ref(w))]
            return block.arguments[len(keep) + (i - len(consts))]

        holder, block = _new_block(d, types, op.location)
        env = {a: arg_for(i, block) for i, a in enumerate(old.arguments)}
        outs = d.nested(ir.InsertionPoint(block), env).run(old)
        if with_refs:
            ref_args = [block.arguments[len(keep) + len(init) + j] for j in range(len(refs))]
            finals = [_final(env, old, sources, r, a) for r, a in zip(refs, ref_args)]
            unchanged = [[f == a for f, a in zip(finals, ref_args)]]
            outs = outs + finals
        with op.location:
            ir.Operation.create("jaxpr.yield", operands=outs, ip=ir.InsertionPoint(block))
        holders.append(holder)
        blocks.append(block)
    n_cc = sum(1 for v in cc if not is_ref(v))
    n_bc = sum(1 for v in bc if not is_ref(v))
    operands = ([d.env[v] for v in cc if not is_ref(v)] + [d.env[v] for v in bc if not is_ref(v)]
                + [d.env[v] for v in init] + ref_vals)
    params = dict(view.params, cond_nconsts=n_cc, body_nconsts=n_bc)
    result_avals = [aval_of(v.type) for v in operands[n_cc + n_bc:]]
    new = C.WhileOp.build(operands, result_avals, params, blocks, loc=op.location, ip=d.ip)
    for h in holders:
        h.erase()
    res = list(new.results)
    d.env.update(zip(op.results, res[:len(init)]))
    _update_refs(d, refs, ref_vals, res[len(init):], unchanged)


def _update_refs(d: Discharge, refs, before, after, unchanged) -> None:
    """Each ref's value after a region op: its value before where no body changed it
    (so a ref a loop only reads stays recognizably unwritten), else the op's result."""
    for j, r in enumerate(refs):
        same = all(u[j] for u in unchanged)
        d.env[r] = before[j] if same else after[j]


def _call(d: Discharge, op):
    """A call taking refs (a jit inside a Pallas kernel closing over the kernel's refs,
    which its trace made operands): the callee's body discharged in place, as JAX's
    Mosaic lowering and interpreters run a jit's jaxpr inside a kernel."""
    refs = [v for v in op.operands if is_ref(v)]
    if len(set(refs)) != len(refs):
        raise op_error(op, "a call taking the same ref twice cannot be discharged")
    module = op.parent
    while module.name != "builtin.module":
        module = module.parent
    fn = ir.SymbolTable(getattr(module, "operation", module))[callee_of(op)]
    block = entry_block(fn.operation)
    for arg, v in zip(block.arguments, op.operands):
        d.env[arg] = d.env[v]
    outs = d.run(block)
    for arg, v in zip(block.arguments, op.operands):
        if is_ref(v):
            d.env[v] = d.env[arg]           # (the ref's value after the callee's writes)
    d.env.update(zip(op.results, outs))


DISCHARGE_NESTED.update({C.WhileOp: _while, C.ScanOp: _scan, C.CondOp: _cond,
                         T.CallOp: _call})


# ---- functions ----------------------------------------------------------------------------
def discharge_function(fns: FunctionTable, name: str, new_name: str, *, grid=None,
                       after=None) -> ir.Operation:
    """Adds @new_name, the value form of @name: (grid indices if `grid` is given, then
    @name's arguments with each ref as its value) -> (@name's results, then the final
    value of each ref argument, in order)."""
    fn = fns.get(name)
    old = entry_block(fn)
    i32 = ShapedArray((), np.int32)
    grid_avals = [i32] * len(grid) if grid is not None else []
    dynamic = [a for a, g in enumerate(grid or ()) if g < 0]   # (their bounds follow)
    grid_avals = grid_avals + [i32] * len(dynamic)
    arg_avals = [aval_of(a.type) for a in old.arguments]
    in_avals = grid_avals + [a.inner_aval if isinstance(a, RefAval) else a for a in arg_avals]
    new_fn, block = fns.create(new_name, in_avals, None, after or fn)
    args = list(block.arguments)
    env = dict(zip(old.arguments, args[len(grid_avals):]))
    n_grid = len(grid) if grid is not None else 0
    d = Discharge(ir.InsertionPoint(block), env, grid, args[:n_grid],
                  dict(zip(dynamic, args[n_grid:len(grid_avals)])))
    try:
        outs = d.run(old)
    except PassError:
        fns.erase(new_name)
        raise
    finals = [env[a] for a in old.arguments if is_ref(a)]
    set_results(new_fn, outs + finals)
    return new_fn


def has_refs(fn: ir.Operation) -> bool:
    return any(is_ref(a) for a in entry_block(fn).arguments)


def makes_refs(fn: ir.Operation) -> bool:
    """Whether `fn` makes refs of its own (jaxpr.ref_new)."""
    return any(op.name == "jaxpr.ref_new" for op in nested_ops(fn))


def passes_refs(fn: ir.Operation) -> bool:
    """Whether `fn` passes a ref to a `jaxpr.call` (as to the backward jit of
    VJP.with_refs, which adds into it)."""
    for op in nested_ops(fn):
        if op.name == "jaxpr.call" and any(is_ref(v) for v in op.operands):
            return True
    return False


@register_pass("jaxpr-discharge-state")
@dataclass
class JaxprDischargeStatePass(Pass):
    """Turn every function over refs into a pure function over values (refs' final values
    appended to its results).

    With local-only, only functions whose refs are all their own (made by jaxpr.ref_new,
    none among the arguments, none passed to a call): their signature stays, so it can
    run before the transformations (grad and vmap then see the functions over values)."""

    local_only: bool = False

    def run(self, module: ir.Module) -> None:
        fns = FunctionTable(module)
        # (no jaxpr.ref_new in the module: no function makes refs, none walked for one)
        makes_any = "jaxpr.ref_new" in analyses.op_names(module)
        changed = False
        for name, fn in list(fns.table.items()):
            takes = has_refs(fn)
            if takes and self.local_only or not (takes or makes_any and makes_refs(fn)):
                continue
            if self.local_only and passes_refs(fn):
                continue    # (its refs go into calls: discharged once those are inlined)
            changed = True
            tmp = fns.fresh_name(f"{name}_discharged")
            new = discharge_function(fns, name, tmp, after=fn)
            public = "sym_visibility" not in fn.attributes
            fns.erase(name)
            new.attributes["sym_name"] = ir.StringAttr.get(name)
            if public:
                del new.attributes["sym_visibility"]
            fns.table[name] = fns.table.pop(tmp)
        if not changed:
            analyses.preserve(module)


__all__ = ["Discharge", "JaxprDischargeStatePass", "discharge_function", "has_refs", "is_ref"]
