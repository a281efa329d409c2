"""Interpreted Pallas TPU kernels whose instances (a chip's cores, passes/pallas_cores.py;
a shard_map's devices, passes/pallas_mesh.py) wait for what another instance does LATER
in its program: the instances run in rounds instead of in lockstep.

Lockstep runs every instance at the same op: a wait that only a later op of another
instance satisfies finds too small a count (JAX's interpreter, one thread per instance,
lets the waiting one sleep while the other runs on). JAX 0.10.2's
test_allocate_shared_buffer_in_core_map: core 1 waits inside `pl.when(core == 1)`, both
copy, then core 0 signals core 1 inside `pl.when(core == 0)`.

Such a kernel -- a wait inside a pl.when whose index may differ across the instances,
on a semaphore that an op later in the program may signal from another instance (a
semaphore_signal naming one, a DMA to one: its receive semaphore, the barrier
semaphore) -- is discharged by `rounds_function` instead of discharge_function, with
the same signature (`use_rounds`). Lockstep is exact for the others (every op before a
wait has run on every instance when it runs), and they keep it.

The kernel's top-level program is flattened: a run_scoped holding such a wait is
hoisted (its scratch made once, at the start), a cond holding one is opened (each
branch's ops carry a guard: the enclosing guards and `index == k`, computed where the
cond was). It is cut into steps at each such wait, each step led by its wait. The
instances then run a `jaxpr.while` of rounds carrying a
program counter `pc`, every ref's value and each value one step makes and another uses:

    round: for step s in order:
             run = pc == s and (the leading wait's guard is off, or the wait finds
                   enough: the wait discharged as a probe, pallas_remote.probing)
             the step's ops discharged with `active` = run and their guard
             (predicated: updates only where active, remote writes land wherever
             they name, as _predicated_cond runs a branch; conds that synchronize
             run predicated too), the values it makes kept where run
             pc = s + 1 where run
           loop while some instance has pc < steps (pmax over the mesh axes, the same on
           every instance) and the round moved some pc

Each round is a valid interleaving of the instances' programs (a step runs for all
instances at it at once, as lockstep runs every op), so a race-free kernel gets JAX's
values; an instance runs on through its steps in one round until a wait blocks it, so
a kernel nothing blocks takes one round. A round that moves no pc is a true deadlock
(JAX's interpreter hangs): every instance still running reports, and the frontend's
callback raises PallasDeadlockError. Kernels without such a wait keep lockstep.

Kept in lockstep (so a wait there that needs a later op still raises its lockstep
error): kernels where a loop (fori_loop, while, scan) or a called function holds DMAs
or semaphore ops (a step runs predicated, which such a loop cannot), where a cond with
results holds such a wait, or that return values; and waits outside any pl.when that
differs (a true deadlock there is the usual case: the lockstep error reports it).
Semaphores scoped in a hoisted run_scoped are not reported at exit; a print in a
kernel that needs rounds is refused (each round would print it again).
JAX: pallas/mosaic/interpret (threads per device and core).
"""
from __future__ import annotations

from contextlib import nullcontext

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.builder import Builder
from mjax.dialect.ops import control_flow as C
from mjax.dialect.ops.callbacks import CallbackOp
from mjax.dialect.ops.collectives import PmaxOp
from mjax.dialect.ops.pallas import SEMAPHORE_SPACES, scratch_memory_spaces
from mjax.dialect.types import RefAval, ShapedArray, aval_of
from mjax.passes.interpreter import terminator
from mjax.passes.ir_util import (FunctionTable, callee_of, entry_block, nested_ops,
                                 reachable_functions, set_results, used_values)
from mjax.passes.jaxpr_discharge_state import PREDICATED_COND, Discharge, is_ref
from mjax.passes.jaxpr_pallas_interpret import _barrier_as_scratch, uninitialized
from mjax.passes.pallas_bounds import bounds_checked
from mjax.passes.pallas_skip_float import skipping_float_ops
from mjax.passes.rules.pallas_remote import (REPORT, current_cores, current_mesh,
                                             in_rounds, on_mesh, probing)

_SYNC = ("jaxpr.dma_start", "jaxpr.dma_wait", "jaxpr.semaphore_signal",
         "jaxpr.semaphore_wait", "jaxpr.get_barrier_semaphore")
_BOOL = ShapedArray((), np.bool_)
_I32 = ShapedArray((), np.int32)


class _Unfit(Exception):
    """The kernel cannot run in rounds (it keeps lockstep)."""


class _Key:
    """A value of the rounds with no IR value of its own (a guard, the pc)."""

    def __init__(self, aval):
        self.aval = aval


def _named(op, what: str) -> bool:
    return what in op.attributes and ir.IntegerAttr(op.attributes[what]).value != 0


def _remote_waits(fn) -> frozenset:
    """The names of the wait ops of kernel `fn` another instance may satisfy."""
    waits = set()
    for op in nested_ops(fn):
        remote = _named(op, "device_ids") or _named(op, "core_ids")
        if op.name == "jaxpr.get_barrier_semaphore" or (
                op.name == "jaxpr.semaphore_signal" and remote):
            waits.add("jaxpr.semaphore_wait")
        if op.name == "jaxpr.dma_start" and remote:
            waits.add("jaxpr.dma_wait")
    return frozenset(waits)


def _sem_root(v):
    """The semaphore ref `v` stands for, through the regions passing it in; "barrier"
    for the barrier semaphore (every get_barrier_semaphore names the one)."""
    while isinstance(v, ir.BlockArgument):
        block = v.owner
        parent = block.owner.operation
        k, ops = v.arg_number, list(parent.operands)
        if parent.name == "jaxpr.cond":
            v = ops[1 + k]
        elif parent.name in ("jaxpr.run_scoped", "jaxpr.scan") and k < len(ops):
            v = ops[k]
        elif parent.name == "jaxpr.while":
            nc = int(parent.opview.params.get("cond_nconsts", 0) or 0)
            v = ops[k] if block.region == parent.regions[0] else ops[nc + k]
        else:
            return v
    return "barrier" if v.owner.name == "jaxpr.get_barrier_semaphore" else v


def _signalled(op):
    """The root of the semaphore `op` signals on another instance, or None."""
    if not (_named(op, "device_ids") or _named(op, "core_ids")):
        return None
    if op.name == "jaxpr.semaphore_signal":
        return _sem_root(op.operands[0])
    if op.name == "jaxpr.dma_start":            # (src, dst, dst_sem, ...)
        return _sem_root(op.operands[2])
    return None


class _Plan:
    """Kernel `fn` flattened: `steps`, each a list of entries (kind, what, guard): "wait"
    and "op" (an op of the kernel), "enter" ((cond, branch, enclosing guard): the guard
    of a branch); `alias` maps a hoisted region's arguments (and a run_scoped's
    results) to the values they stand for; `scratch` the hoisted scratch buffers."""

    def __init__(self, fns, fn, waits):
        self.fns = fns
        self.waits = waits
        self.alias: dict = {}
        self.scratch: list = []       # (block argument, aval, memory space, fill mode)
        self.entries: list = []
        self.waited: list = []          # (entry, semaphore) of waits in conds that differ
        self.signals: list = []         # (entry, semaphore) of signals to other instances
        block = entry_block(fn)
        if len(terminator(block).operands):
            raise _Unfit("a kernel returning values")
        self._check_fits(fn)
        self._flatten(block, None, False)
        # (lockstep runs every op before such a wait on every instance first: it is
        # exact unless a signal to the wait's semaphore may come later in the program)
        self.needed = any(at > w and sem == waited for w, waited in self.waited
                          for at, sem in self.signals)
        self.steps: list = [[]]
        for e in self.entries:
            if e[0] == "wait" and self.steps[-1]:
                self.steps.append([])
            self.steps[-1].append(e)

    def root(self, v):
        while v in self.alias:
            v = self.alias[v]
        return v

    def _check_fits(self, fn) -> None:
        """Raises _Unfit where a loop or a called function holds sync ops (a step runs
        predicated: Discharge refuses such a loop there)."""
        for op in nested_ops(fn):
            if len(op.regions) and op.name not in ("jaxpr.run_scoped", "jaxpr.cond") and (
                    any(i.name in _SYNC for i in nested_ops(op))):
                raise _Unfit(f"{op.name} holding DMAs or semaphore ops")
            callee = callee_of(op)
            if callee is not None and callee in self.fns and any(
                    x.name in _SYNC for name in reachable_functions(
                        self.fns.table, roots=[callee])
                    for x in nested_ops(self.fns.get(name))):
                raise _Unfit("a call holding DMAs or semaphore ops")

    def _waits_in(self, op) -> bool:
        return any(inner.name in self.waits for inner in nested_ops(op))

    def _flatten(self, block, guard, differs):
        for op in list(block.operations)[:-1]:
            op = op.operation
            if op.name == "jaxpr.run_scoped" and self._waits_in(op):
                self._hoist(op, guard, differs)
            elif op.name == "jaxpr.cond" and self._waits_in(op):
                if len(op.results):
                    raise _Unfit("a cond with results holding a wait")
                index, *args = list(op.operands)
                here = differs or PREDICATED_COND["applies"](op)
                for k, region in enumerate(op.regions):
                    inner = region.blocks[0]
                    self.alias.update(zip(inner.arguments, args))
                    g = _Key(_BOOL)
                    self.entries.append(("enter", (index, k, guard), g))
                    self._flatten(inner, g, here)
            else:
                at = len(self.entries)
                if op.name in self.waits and differs:
                    self.waited.append((at, _sem_root(op.operands[0])))
                for inner in [op] + (nested_ops(op) if len(op.regions) else []):
                    sem = _signalled(inner)
                    if sem is not None:
                        self.signals.append((at, sem))
                kind = "wait" if op.name in self.waits else "op"
                self.entries.append((kind, op, guard))

    def _hoist(self, op, guard, differs):
        p = op.opview.params
        inner = op.regions[0].blocks[0]
        n = len(op.operands)
        self.alias.update(zip(inner.arguments[:n], op.operands))
        mode = p.get("uninitialized_memory") or ""
        for a, s, sp in zip(inner.arguments[n:], p["scratch_shapes"] or (),
                            scratch_memory_spaces(p)):
            self.scratch.append((a, s, sp, mode))
        self._flatten(inner, guard, differs)
        self.alias.update(zip(op.results, terminator(inner).operands))


def plan_of(fns: FunctionTable, kernel: str):
    """The plan to run kernel @kernel in rounds (call under its on_mesh), or None where
    lockstep runs it: no wait inside a pl.when that differs across the instances whose
    semaphore an op later in the program may signal from another instance, or a kernel
    rounds cannot run."""
    fn = fns.get(kernel)
    waits = _remote_waits(fn)
    if not waits or current_mesh() is None:
        return None
    try:
        plan = _Plan(fns, fn, waits)
    except _Unfit:
        return None
    if plan.needed and any(op.name == "jaxpr.debug_print" for op in nested_ops(fn)):
        raise NotImplementedError(
            "a print (pl.debug_print) in an interpreted Pallas kernel whose cores or "
            "devices must run in rounds (a wait inside a pl.when that a later op of "
            "another one satisfies) is not supported by mjax: every round would print "
            "it again")
    return plan if plan.needed else None


class _Env(dict):
    """The discharge environment of the rounds: a hoisted region's arguments are the
    values they stand for (one entry, whichever name an op reads or writes it by)."""

    def __init__(self, plan, *args):
        super().__init__(*args)
        self.plan = plan

    def __getitem__(self, v):
        return super().__getitem__(self.plan.root(v))

    def __setitem__(self, v, value):
        super().__setitem__(self.plan.root(v), value)

    def __contains__(self, v):
        return super().__contains__(self.plan.root(v))

    def get(self, v, default=None):
        return super().get(self.plan.root(v), default)

    def update(self, pairs=()):
        for k, v in (pairs.items() if isinstance(pairs, dict) else pairs):
            self[k] = v

    def copy(self):
        return _Env(self.plan, dict(self))


def _value_aval(v):
    a = v.aval if isinstance(v, _Key) else aval_of(v.type)
    return a.inner_aval if isinstance(a, RefAval) else a


def _carried(plan, old):
    """The values the rounds carry: the pc, the kernel's ref arguments, the hoisted
    scratch, and each value a step makes (a guard, a result) that another step uses."""
    made = {}
    for s, step in enumerate(plan.steps):
        for kind, what, guard in step:
            for r in ([guard] if kind == "enter" else
                      [] if kind == "wait" else list(what.results)):
                made[plan.root(r)] = s
    crossing = []
    for s, step in enumerate(plan.steps):
        for kind, what, guard in step:
            used = ([what[0], what[2]] if kind == "enter" else used_values(what))
            for u in used + [guard]:
                u = plan.root(u) if u is not None else None
                if u is not None and made.get(u, s) != s and u not in crossing:
                    crossing.append(u)
    refs = [a for a in old.arguments if is_ref(a)]
    return refs, [e[0] for e in plan.scratch], crossing, made


def rounds_function(fns: FunctionTable, plan, name: str, new_name: str, grid,
                    after=None) -> ir.Operation:
    """@new_name: kernel @name discharged for instances running in rounds; the
    signature of discharge_function(fns, name, new_name, grid=grid)'s."""
    fn = fns.get(name)
    old = entry_block(fn)
    dynamic = [a for a, g in enumerate(grid) if g < 0]
    n_grid = len(grid) + len(dynamic)
    arg_avals = [_value_aval(a) for a in old.arguments]
    new_fn, block = fns.create(new_name, [_I32] * n_grid + arg_avals, None, after or fn)
    args = list(block.arguments)
    b = Builder(ir.InsertionPoint(block), fn.location)
    refs, scratch, crossing, made = _carried(plan, old)
    pc = _Key(_I32)
    state = [pc] + refs + scratch + [v for v in crossing if v not in refs + scratch]
    consts = args[:n_grid] + [v for a, v in zip(old.arguments, args[n_grid:])
                              if not is_ref(a)]
    const_keys = [a for a in old.arguments if not is_ref(a)]
    inits = {a: v for a, v in zip(old.arguments, args[n_grid:])}
    inits[pc] = b.constant(np.int32(0))
    for a, s, sp, mode in plan.scratch:     # (as the run_scoped rule makes them)
        fill = uninitialized(s.dtype, mode) if mode else uninitialized(s.dtype)
        inits[a] = b.constant(np.zeros(s.shape, s.dtype) if sp in SEMAPHORE_SPACES else
                              np.broadcast_to(fill, s.shape))
    init = [inits[v] if v in inits else b.zeros(_value_aval(v)) for v in state]
    true = b.constant(np.array(True))
    finals = _rounds_loop(b, plan, grid, dynamic, consts, const_keys, state, init, true,
                          made, fn.location)
    _report_stuck(b, finals[0], len(plan.steps))
    set_results(new_fn, finals[1:1 + len(refs)])
    return new_fn


def _rounds_loop(b, plan, grid, dynamic, consts, const_keys, state, init, true, made,
                 loc):
    """The while loop of rounds; gives the final state."""
    n_grid = len(grid) + len(dynamic)
    carry = [true, true] + init         # (some instance running, the last round moved)
    with loc:
        holder = ir.Operation.create("mjax.region_holder", regions=2, ip=b.ip)
    types = [v.type for v in carry]
    cond = ir.Block.create_at_start(holder.regions[0], types)
    cb = Builder(ir.InsertionPoint(cond), loc)
    go = cb.emit("and", cond.arguments[0], cond.arguments[1])[0]
    with loc:
        ir.Operation.create("jaxpr.yield", operands=[go], ip=cb.ip)
    body = ir.Block.create_at_start(holder.regions[1], [v.type for v in consts] + types)
    bb = Builder(ir.InsertionPoint(body), loc)
    cargs = list(body.arguments)[:len(consts)]
    sargs = list(body.arguments)[len(consts) + 2:]
    env = _Env(plan, zip(state, sargs))
    env.update(zip(const_keys, cargs[n_grid:]))
    d = Discharge(bb.ip, env, grid, cargs[:len(grid)],
                  dict(zip(dynamic, cargs[len(grid):n_grid])))
    pc = state[0]
    start = env[pc]
    with in_rounds():
        for s, step in enumerate(plan.steps):
            _step(d, bb, s, step, [v for v in state if made.get(v) == s], pc)
    count = np.int32(len(plan.steps))
    axes = current_mesh()[0]

    def anywhere(flag):
        x = bb.convert_element_type(flag, new_dtype=np.dtype(np.int32))
        x = bb.emit(PmaxOp, x, axes=axes)[0]
        return bb.gt(x, bb.constant(np.int32(0)))
    running = anywhere(bb.lt(env[pc], bb.constant(count)))
    moved = anywhere(bb.emit("not", bb.eq(env[pc], start))[0])
    with loc:
        ir.Operation.create("jaxpr.yield", operands=[running, moved] +
                            [env[v] for v in state], ip=bb.ip)
    op = C.WhileOp.build(consts + carry, [aval_of(v.type) for v in carry],
                         {"cond_nconsts": 0, "body_nconsts": len(consts)},
                         [cond, body], loc=loc, ip=b.ip)
    holder.erase()
    return list(op.results)[2:]


def _step(d, b, s, step, mine, pc):
    """Step `s` of the rounds for the instances at it (whose leading wait finds enough);
    `mine`: the carried values it makes (kept only where it runs: a ref's updates are
    masked op by op, and another instance's remote writes land whether or not this
    one runs)."""
    at = b.eq(d.env[pc], b.constant(np.int32(s)))
    run = at
    kind, first, guard = step[0]
    if kind == "wait":
        probe = Discharge(d.ip, d.env.copy(), d.grid, d.grid_ids, d.grid_bounds)
        with probing() as shorts:
            probe.op(first)
        ok = true_ = b.constant(np.array(True))
        for short in shorts:
            ok = b.emit("and", ok, b.emit("not", short)[0])[0]
        if guard is not None:
            ok = b.emit("or", ok, b.emit("not", d.env[guard])[0])[0]
        if ok is not true_:
            run = b.emit("and", at, ok)[0]
    before = {v: d.env[v] for v in mine}
    actives = {None: run}
    for kind, what, g in step:
        if kind != "enter" and g not in actives:
            actives[g] = b.emit("and", run, d.env[g])[0]
        if kind == "enter":
            index, k, outer = what
            idx = d.env[index]
            hit = b.eq(idx, b.constant(np.array(k, aval_of(idx.type).dtype)))
            d.env[g] = hit if outer is None else b.emit("and", d.env[outer], hit)[0]
        else:
            d.active = actives[g]
            d.op(what)
    d.active = None
    for v, old in before.items():        # (values this step made: kept where it ran)
        if d.env[v] is not old:
            d.env[v] = b.select_n(run, old, d.env[v])
    d.env[pc] = b.select_n(run, d.env[pc], b.constant(np.int32(s + 1)))


def _report_stuck(b, pc, steps: int) -> None:
    """Instances left before their last step: a deadlock (the frontend's callback
    raises PallasDeadlockError)."""
    if "stuck_id" not in REPORT:
        return
    stuck = b.lt(pc, b.constant(np.int32(steps)))
    b.emit(CallbackOp, stuck, pc, callback_id=REPORT["stuck_id"], effect="unordered",
           result_shapes=None, result_dtypes=None, vmap_method=None)


_MARK = "pallas_rounds"       # (on a discharged kernel already run in rounds)


def use_rounds(fns: FunctionTable, callee: str, discharged: str, grid, checks=None,
               skip: bool = False) -> None:
    """Where kernel @callee needs rounds, replaces @discharged (its discharge_function
    form, for the call being expanded) by its rounds form under the same name,
    discharged as expand_pallas_call discharged it: under the kernel's on_mesh and
    dma_counts_in_bytes (the caller's), with bounds `checks` and float ops skipped if
    `skip`."""
    if _MARK in fns.get(discharged).attributes or plan_of(fns, callee) is None:
        return                      # (the barrier semaphore's copy would decide the same)
    source = skipping_float_ops(fns, callee) if skip else callee
    kernel = _barrier_as_scratch(fns, source)     # (as expand_pallas_call made it)
    cores = current_cores()        # (the cores' kernel is the one discharged: its copy)
    mesh = (nullcontext() if cores is None or kernel is None and not skip else
            on_mesh(*current_mesh(), (*cores[:2], kernel or source)))
    try:
        with mesh, bounds_checked(checks):
            plan = plan_of(fns, kernel or source)
            old = fns.get(discharged)
            tmp = fns.fresh_name(f"{discharged}_rounds")
            new = rounds_function(fns, plan, kernel or source, tmp, tuple(grid),
                                  after=old)
        fns.erase(discharged)
        new.attributes["sym_name"] = ir.StringAttr.get(discharged)
        new.attributes[_MARK] = ir.UnitAttr.get()
        fns.table[discharged] = fns.table.pop(tmp)
    finally:
        for copy in (kernel, source if skip else None):
            if copy is not None:
                fns.erase(copy)


__all__ = ["plan_of", "rounds_function", "use_rounds"]
