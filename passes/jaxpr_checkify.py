"""`--jaxpr-checkify`: functionalize checks; `jaxpr.checkify @f` becomes a call of a copy
of @f that threads an error state through every op, region and call.

    func.func private @f(%x: tensor<f32>) -> tensor<f32> {
      %ok = "jaxpr.gt"(%x, %zero) ...
      "jaxpr.check"(%ok, %x) {msg = "{} must be positive"} : (tensor<i1>, tensor<f32>) -> ()
      %y = "jaxpr.log"(%x) ...
    %p, %c, %v, %y = "jaxpr.checkify"(%x) {callee = @f, errors = ["user"],
                                           error_payloads = [["tensor<f32>"]]} : ...
  ==>
    func.func private @f_checkify(%p0: tensor<i1>, %c0: tensor<i32>, %v0: tensor<f32>,
                                  %x: tensor<f32>) -> (tensor<i1>, tensor<i32>, ...)
      // failed = not %ok; pred = p0 or failed; code = p0 ? c0 : 1; payload = p0 ? v0 : x
    %p, %c, %v, %y = "jaxpr.call"(%false, %minus_one, %zero, %x) {callee = @f_checkify}

The error state has one slot per kind of error (JAX's error effects: the error class and
its payload types), `(pred: i1, code: i32, payload...)`. Within a slot the first error
in program order wins; across slots the smallest code (JAX's `Error.get`). Codes number
the checks of @f from 1: the user checks in program order (callees and cond/while/scan
bodies where they occur), then the automatic checks in program order (JAX numbers a
`check` while tracing f, before checkify adds the automatic ones). `analyze` gives them
with what each message needs; the frontend (frontend/experimental/checkify.py) calls it
to build its `Error`. Checks are
`jaxpr.check` ops ("user") and the automatic checks of passes/rules/checkify.py ("nan",
"index", "div"). Ops with no check inside are copied unchanged. custom_jvp/custom_vjp
calls keep their rules, which pass the state through (so, as in JAX, checks inside the
function are not seen while differentiating it). Difference from JAX: a while loop's
condition is checked with the same codes before the loop and after each step.
"""
from __future__ import annotations

import dataclasses

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.attributes import Symbol
from mjax.dialect.builder import Builder
from mjax.dialect.context import context
from mjax.dialect.ops import checkify as C
from mjax.dialect.ops import control_flow as CF
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import aval_of
from mjax.passes.autodiff import expand_transforms
from mjax.passes.custom_rules import rule_function
from mjax.passes.expansion import Expander
from mjax.passes.interpreter import Env, interpret
from mjax.passes.ir_util import (callee_of, clone_into, entry_block, nested_ops, replace_op,
                                 set_results)
from mjax.passes.jaxpr_dce import remove_dead_functions
from mjax.passes.registry import Pass, format_location, op_error, register_pass
from mjax.passes.rules import checkify as R
from mjax.passes.rules.control_flow_ad import _build, _Scratch
from mjax.passes.rules.tables import CHECKS, EXPAND

CALLS = (T.CallOp, T.CheckpointOp, T.CustomJvpCallOp, T.CustomVjpCallOp)
REGION_OPS = (CF.CondOp, CF.WhileOp, CF.ScanOp)


@dataclasses.dataclass(frozen=True)
class Site:
    """One check: its code, error kind, payload types and what its message needs."""
    code: int
    kind: str                  # "user", "nan", "index", "div"
    payload: tuple[str, ...]   # MLIR type texts of the payload values
    prim: str                  # the checked op's primitive name ("check" for user checks)
    shape: tuple[int, ...]     # index checks: the indexed operand's shape
    msg: str | None            # user checks: the format string
    fmt: int | None            # user checks: the frontend's key for the format arguments
    where: str                 # file:line:col of the op

    @property
    def slot_key(self) -> tuple:
        return (self.kind, self.payload)


def _type_text(v: ir.Value) -> str:
    return str(v.type)


class Analysis:
    """The checks reachable from @root with `errors` enabled, numbered (user checks
    first, each in program order), and the error slots they need."""

    def __init__(self, fns, root: str, errors):
        self.fns, self.root = fns, str(root)
        self.errors = tuple(k for k in C.ERROR_KINDS if k in set(errors))
        self.sites: dict[ir.Operation, list[Site]] = {}
        self.dropped: set[ir.Operation] = set()     # checks of a disabled kind
        self.slots: list[tuple] = []
        self._visited: set[str] = set()
        self._with_sites: dict = {}
        self._visit_function(self.root)
        self._number()

    # -- numbering -------------------------------------------------------------------------
    def _visit_function(self, name: str) -> None:
        if name in self._visited:
            return
        self._visited.add(name)
        self._visit_block(entry_block(self.fns.get(name)))

    def _visit_block(self, block: ir.Block) -> None:
        for op in block.operations:
            op = op.operation
            view = op.opview
            for site in self._sites_of(op, view):
                self.sites.setdefault(op, []).append(site)
                if site.slot_key not in self.slots:
                    self.slots.append(site.slot_key)
            if isinstance(view, REGION_OPS):
                for region in op.regions:
                    self._visit_block(region.blocks[0])
            elif op.name == "func.call" or isinstance(view, CALLS):
                self._visit_function(callee_of(op))

    def _sites_of(self, op, view) -> list[Site]:
        where = format_location(op.location)
        if isinstance(view, C.CheckOp):
            if "user" not in self.errors:
                self.dropped.add(op)       # (still rewritten: dropped, as JAX does)
                return []
            p = view.params
            return [self._site("user", tuple(_type_text(v) for v in op.operands[1:]), "check",
                               (), p["msg"], p["fmt"], where)]
        kinds = [k for k in CHECKS.get(type(view), ()) if k in self.errors]
        shape = tuple(aval_of(op.operands[0].type).shape) if op.operands else ()
        return [self._site(k, R.PAYLOAD_TYPES[k], view.primitive, shape, None, None, where)
                for k in kinds]

    def _site(self, *fields) -> Site:
        return Site(0, *fields)

    def _number(self) -> None:
        # JAX numbers a `check` when f is traced, before checkify adds its automatic
        # checks: user checks come first, then the automatic ones, each in program order.
        order = [(op, k) for op, sites in self.sites.items() for k in range(len(sites))]
        order.sort(key=lambda ok: self.sites[ok[0]][ok[1]].kind != "user")
        for code, (op, k) in enumerate(order, 1):
            self.sites[op][k] = dataclasses.replace(self.sites[op][k], code=code)

    # -- queries -----------------------------------------------------------------------------
    @property
    def table(self) -> dict[int, Site]:
        return {s.code: s for sites in self.sites.values() for s in sites}

    @property
    def payloads(self) -> tuple[tuple[str, ...], ...]:
        """Each slot's payload types (the `error_payloads` attribute)."""
        return tuple(payload for _, payload in self.slots)

    def slot_kinds(self) -> list[str]:
        return [kind for kind, _ in self.slots]

    def has_sites(self, op: ir.Operation) -> bool:
        """Whether `op` is a check or holds one (in its regions or its callee)."""
        op = op.operation
        if op in self.sites or op in self.dropped:
            return True
        view = op.opview
        if isinstance(view, REGION_OPS):
            return any(self.has_sites(inner) for region in op.regions
                       for inner in region.blocks[0].operations)
        if op.name == "func.call" or isinstance(view, CALLS):
            if isinstance(view, (T.CustomJvpCallOp, T.CustomVjpCallOp)) and any(
                    _has_checks(self.fns, str(view.params[a]))
                    for a in view.callee_attributes[1:] if view.params[a] is not None):
                return True                # its rules' checks must be dropped
            return self.function_has_sites(callee_of(op))
        return False

    def function_has_sites(self, name: str) -> bool:
        if name not in self._with_sites:
            self._with_sites[name] = False      # (recursion guard)
            self._with_sites[name] = any(
                self.has_sites(op) for op in entry_block(self.fns.get(name)).operations)
        return self._with_sites[name]


# ---- the transformation ---------------------------------------------------------------
class Checkifier:
    """Derives checked functions (`@f_checkify`: (state..., args...) -> (state...,
    outs...)) for one analysis."""

    def __init__(self, ex: Expander, an: Analysis):
        self.ex, self.an = ex, an
        self.avals = C.state_avals(an.payloads)
        self.offsets, k = [], 0
        for payload in an.payloads:
            self.offsets.append(k)
            k += 2 + len(payload)

    def initial_state(self, b: Builder) -> list[ir.Value]:
        """No error yet: pred false, code -1, payloads zero."""
        out = []
        for payload in self.an.payloads:
            out += [b.constant(False), b.constant(-1, np.int32)]
            out += [b.zeros(a) for a in C.parse_types(payload)]
        return out

    def function(self, name: str) -> str:
        """@name's checked function (derived once per analysis)."""
        key = dict(root=self.an.root, errors=self.an.errors, payloads=self.an.payloads)
        found = self.ex.derived.get(name, C.CheckifyOp, **key)
        if found is not None:
            return found
        fns = self.ex.fns
        orig = fns.get(name)
        ins, outs = fns.signature(name)
        new_name = fns.fresh_name(f"{name}_checkify")
        fn, block = fns.create(new_name, self.avals + list(ins), None, orig)
        self.ex.derived.add(new_name, name, C.CheckifyOp, **key)
        n = len(self.avals)
        with orig.location:
            state, results = self.run(entry_block(orig), list(block.arguments[:n]),
                                      list(block.arguments[n:]), ir.InsertionPoint(block))
        set_results(fn, state + results)
        return new_name

    def passing_state(self, name: str, rule: str, k: int, m: int = 0) -> str:
        """A custom rule @name lifted to the checked function's signature, the state
        passed through unchanged (JAX: lift_jvp, checkified_fwd). With S the state and
        F its float values (which count as differentiable):
          "jvp" (k primals, m outs): (S, primals, dF, tangents) -> (S, outs, dF, tangents)
          "fwd": (S, primals) -> (S, outs, residuals)
          "bwd" (k residuals): (residuals, ctF, cotangents) -> (ctF, cotangents)"""
        key = dict(root=self.an.root, errors=self.an.errors, payloads=self.an.payloads,
                   rule=rule)
        found = self.ex.derived.get(name, C.CheckifyOp, **key)
        if found is not None:
            return found
        fns = self.ex.fns
        orig = fns.get(name)
        ins, _ = fns.signature(name)
        rule_fn = without_checks(self.ex, name)
        n = len(self.avals)
        floats = [a for a in self.avals if T.differentiable(a)]
        nf = len(floats)
        if rule == "jvp":
            avals = self.avals + list(ins[:k]) + floats + list(ins[k:])
        elif rule == "fwd":
            avals = self.avals + list(ins)
        else:
            avals = list(ins[:k]) + floats + list(ins[k:])
        new_name = fns.fresh_name(f"{name}_checkify")
        fn, block = fns.create(new_name, avals, None, orig)
        self.ex.derived.add(new_name, name, C.CheckifyOp, **key)
        args = list(block.arguments)
        b = Builder(ir.InsertionPoint(block), orig.location)
        with orig.location:
            if rule == "jvp":
                state, primals = args[:n], args[n:n + k]
                dstate, tangents = args[n + k:n + k + nf], args[n + k + nf:]
                res = list(self.ex.call(b, rule_fn, primals + tangents))
                results = state + res[:m] + dstate + res[m:]
            elif rule == "fwd":
                results = args[:n] + list(self.ex.call(b, rule_fn, args[n:]))
            else:
                ct_state = args[k:k + nf]
                results = ct_state + list(self.ex.call(b, rule_fn, args[:k] + args[k + nf:]))
        set_results(fn, results)
        return new_name

    def run(self, block, state, args, ip):
        """Checks `block` with `state` and `args` for its arguments, emitting at `ip`;
        returns (state, the values its terminator gives)."""
        walk = _Walk(self, ip, list(state))
        outs = interpret(block, walk.rule_for, Env(zip(block.arguments, args)))
        return walk.state, outs


class _Walk:
    """One walk over a block: the current error state and where to emit."""

    def __init__(self, ck: Checkifier, ip: ir.InsertionPoint, state: list):
        self.ck, self.an, self.ip, self.state = ck, ck.an, ip, state

    def rule_for(self, op):
        view = op.opview
        if isinstance(view, C.CheckOp):
            # JAX: check_discharge_rule drops the checks of disabled kinds
            return self._check if op in self.an.sites else (lambda op, vals: [])
        if not self.an.has_sites(op):
            return self._copy
        if isinstance(view, CF.CondOp):
            return self._cond
        if isinstance(view, CF.WhileOp):
            return self._while
        if isinstance(view, CF.ScanOp):
            return self._scan
        if op.name == "func.call" or isinstance(view, CALLS):
            return self._call
        return self._automatic

    def _copy(self, op, vals):
        return list(clone_into(op, self.ip, dict(zip(op.operands, vals))).results)

    def _builder(self, op) -> Builder:
        return Builder(self.ip, op.location)

    def _record(self, b: Builder, site: Site, failed: ir.Value, payload) -> None:
        """Merges one check into its slot: the first error of a slot is kept."""
        k = self.ck.offsets[self.an.slots.index(site.slot_key)]
        pred, code = self.state[k], self.state[k + 1]
        old = self.state[k + 2:k + 2 + len(payload)]
        new = [b.emit("or", pred, failed)[0],
               b.select_n(pred, b.constant(site.code, np.int32), code)]
        new += [b.select_n(pred, v, o) for v, o in zip(payload, old)]
        self.state[k:k + 2 + len(payload)] = new

    def _check(self, op, vals):
        b = self._builder(op)
        with op.location:
            self._record(b, self.an.sites[op][0], b.emit("not", vals[0])[0], vals[1:])
        return []

    def _automatic(self, op, vals):
        results = self._copy(op, vals)
        b = self._builder(op)
        with op.location:
            for site in self.an.sites[op]:
                failed, payload = R.SITE_RULES[site.kind](b, op, vals, results)
                self._record(b, site, failed, payload)
        return results

    def _call(self, op, vals):
        name = self.ck.function(callee_of(op))
        b = self._builder(op)
        view = op.opview
        extra = {}
        cls = T.CallOp
        if isinstance(view, (T.CheckpointOp, T.CustomJvpCallOp, T.CustomVjpCallOp)):
            cls, extra = type(view), {k: v for k, v in view.params.items() if k != "callee"}
        # Custom rules get the state as extra arguments and results, passed through.
        # (Rules known only by their handle are traced here: the lifted rule is a new
        # function of this module. JAX lifts them lazily.)
        ex = self.ck.ex
        ins, outs = ex.fns.signature(callee_of(op))
        if isinstance(view, T.CustomJvpCallOp):
            extra["jvp"] = Symbol(self.ck.passing_state(rule_function(ex, op, "jvp"), "jvp",
                                                        len(ins), len(outs)))
            extra["rule"] = None
        if isinstance(view, T.CustomVjpCallOp):
            fwd, bwd = rule_function(ex, op, "fwd"), rule_function(ex, op, "bwd")
            num_res = len(ex.fns.signature(fwd)[1]) - len(outs)
            extra["fwd"] = Symbol(self.ck.passing_state(fwd, "fwd", 0))
            extra["bwd"] = Symbol(self.ck.passing_state(bwd, "bwd", num_res))
            extra["rule"] = None
        with op.location:
            res = self.ck.ex.call(b, name, self.state + list(vals), cls=cls, **extra)
        n = len(self.state)
        self.state = list(res[:n])
        return list(res[n:])

    # -- region ops: the state is an extra operand / carry of the op ----------------------
    def _body(self, block, state_first: int, arg_avals, run_after=None, skip: int = 0):
        """A scratch block taking `arg_avals` with the state inserted at `state_first`,
        running `block` checked on those arguments but the first `skip`; yields (state,
        outs)."""
        n = len(self.state)
        avals = arg_avals[:state_first] + self.ck.avals + arg_avals[state_first:]
        s = _Scratch(self.ip, avals, block.owner.location)
        args = s.args
        state, plain = args[state_first:state_first + n], args[:state_first] + args[
            state_first + n:]
        st, outs = self.ck.run(block, state, plain[skip:], s.ip)
        if run_after is not None:
            st = run_after(s, plain, st, outs)
        s.finish(list(st) + list(outs))
        return s

    def _cond(self, op, vals):
        index, ops = vals[0], vals[1:]
        avals = [aval_of(v.type) for v in ops]
        scratches = [self._body(r.blocks[0], 0, avals) for r in op.regions]
        out_avals = self.ck.avals + [aval_of(r.type) for r in op.results]
        res = _build(CF.CondOp, [index] + self.state + list(ops), out_avals, {}, scratches,
                     self.ip, op.location)
        return self._split(res)

    def _scan(self, op, vals):
        p = dict(op.opview.params)
        nc = p["num_consts"]
        body = op.regions[0].blocks[0]
        avals = [aval_of(a.type) for a in body.arguments]
        s = self._body(body, nc, avals)
        out_avals = self.ck.avals + [aval_of(r.type) for r in op.results]
        n = len(self.state)
        p["num_carry"] += n
        res = _build(CF.ScanOp, list(vals[:nc]) + self.state + list(vals[nc:]), out_avals, p,
                     [s], self.ip, op.location)
        return self._split(res)

    def _while(self, op, vals):
        # JAX: while_loop_error_check: the condition's checks run on the initial carry,
        # then after every body step on the new carry.
        p = op.opview.params
        nc, nb = p["cond_nconsts"], p["body_nconsts"]
        cconsts, bconsts, init = vals[:nc], vals[nc:nc + nb], vals[nc + nb:]
        cond_blk, body_blk = op.regions[0].blocks[0], op.regions[1].blocks[0]
        cond_checks = any(self.an.has_sites(o) for o in cond_blk.operations)
        if cond_checks:
            self.state, _ = self.ck.run(cond_blk, self.state, list(cconsts) + list(init),
                                        self.ip)
        n = len(self.state)
        carry_avals = [aval_of(v.type) for v in init]
        c_avals = [aval_of(v.type) for v in cconsts]
        b_avals = [aval_of(v.type) for v in bconsts]
        # the loop's own predicate: the condition run on a state nobody reads
        cond = _Scratch(self.ip, c_avals + self.ck.avals + carry_avals, op.location)
        args = cond.args
        _, pred = self.ck.run(cond_blk, args[nc:nc + n], args[:nc] + args[nc + n:], cond.ip)
        cond.finish(pred)

        def check_cond(s, plain, st, outs):
            if not cond_checks:
                return st
            st, _ = self.ck.run(cond_blk, st, list(plain[:nc]) + list(outs), s.ip)
            return st
        # body block: (cond consts, body consts, state, carry); the old body takes
        # (body consts, carry)
        body = self._body(body_blk, nc + nb, c_avals + b_avals + carry_avals,
                          run_after=check_cond, skip=nc)
        out_avals = self.ck.avals + carry_avals
        params = {"cond_nconsts": nc, "body_nconsts": nc + nb}
        res = _build(CF.WhileOp, list(cconsts) + list(cconsts) + list(bconsts) + self.state
                     + list(init), out_avals, params, [cond, body], self.ip, op.location)
        return self._split(res)

    def _split(self, res):
        n = len(self.state)
        self.state = list(res[:n])
        return list(res[n:])


def _has_checks(fns, name: str, seen: set | None = None) -> bool:
    """Whether @name or a function it names holds a jaxpr.check."""
    seen = set() if seen is None else seen
    if name in seen:
        return False
    seen.add(name)
    for op in nested_ops(fns.get(name)):
        if op.name == "jaxpr.check":
            return True
        view = op.opview
        names = ([str(view.params[a]) for a in view.callee_attributes]
                 if isinstance(view, T.TransformOp) else
                 [callee_of(op)] if callee_of(op) is not None else [])
        if any(n in fns and _has_checks(fns, n, seen) for n in names):
            return True
    return False


def without_checks(ex: Expander, name: str) -> str:
    """@name with its jaxpr.check ops dropped (in the functions it names too): custom
    rules run under checkify, whose checks JAX does not see."""
    if not _has_checks(ex.fns, name):
        return name
    found = ex.derived.get(name, C.CheckOp, stripped=True)
    if found is not None:
        return found
    orig = ex.fns.get(name)
    new_name = ex.fns.fresh_name(f"{name}_unchecked")
    fn = orig.clone(ip=ir.InsertionPoint.after(orig))
    fn.attributes["sym_name"] = ir.StringAttr.get(new_name)
    fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
    ex.fns.table[new_name] = fn
    ex.derived.add(new_name, name, C.CheckOp, stripped=True)
    for op in nested_ops(fn):
        if op.name == "jaxpr.check":
            op.erase()
            continue
        view = op.opview
        attrs = (view.callee_attributes if isinstance(view, T.TransformOp) else
                 ("callee",) if op.name == "func.call" else ())
        for attr in attrs:
            if attr not in op.attributes:      # (a rule known only by its handle)
                continue
            callee = ir.FlatSymbolRefAttr(op.attributes[attr]).value
            if callee in ex.fns:
                op.attributes[attr] = ir.FlatSymbolRefAttr.get(without_checks(ex, callee))
    return new_name


# ---- entry points ---------------------------------------------------------------------
def analyze(module, name: str, errors) -> Analysis:
    """Expands the transformation ops @name reaches (inner-first), then numbers its checks
    with `errors` enabled. The frontend calls this while tracing, before it emits
    `jaxpr.checkify @name`: the pass later finds the same checks and codes."""
    with context(), ir.Location.unknown(context()):
        ex = Expander(module)
        ex.expand_function(name)
        return Analysis(ex.fns, name, errors)


def expand_checkify_op(ex: Expander, op: ir.Operation) -> None:
    """EXPAND rule: `jaxpr.checkify @f(args)` -> `jaxpr.call @f_checkify(init, args)`."""
    p = op.opview.params
    an = Analysis(ex.fns, str(p["callee"]), p["errors"])
    if an.payloads != p["error_payloads"]:
        raise op_error(op, f"error_payloads {list(map(list, p['error_payloads']))} do not "
                           f"match the checks of @{p['callee']}, which need "
                           f"{list(map(list, an.payloads))}")
    ck = Checkifier(ex, an)
    name = ck.function(str(p["callee"]))
    ex.state.setdefault(CHECKIFIED, set()).add(str(p["callee"]))
    b = Builder(ir.InsertionPoint(op), op.location)
    with op.location:
        replace_op(op, ex.call(b, name, ck.initial_state(b) + list(op.operands)))


EXPAND[C.CheckifyOp] = expand_checkify_op

# Expander.state key: the functions jaxpr.checkify ops named.
CHECKIFIED = "checkified"


def remove_checkified(module, ex: Expander) -> None:
    """Erases the private functions checkify consumed that nothing runs any more, with
    the functions only they ran: their jaxpr.checks cannot be lowered outside checkify
    (JAX's "not functionalized" error), and nothing needs them."""
    if ex.state.get(CHECKIFIED):
        remove_dead_functions(module, among=ex.state[CHECKIFIED])


@register_pass("jaxpr-checkify")
class JaxprCheckifyPass(Pass):
    """Expand jaxpr.checkify ops: thread an error state through their functions."""

    def run(self, module: ir.Module) -> None:
        remove_checkified(module, expand_transforms(module, only=[C.CheckifyOp],
                                                    lower_leftovers=False))


__all__ = ["Analysis", "Checkifier", "JaxprCheckifyPass", "Site", "analyze",
           "expand_checkify_op"]
