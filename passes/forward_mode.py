"""Forward mode: the JVP transformation of a block, and JVP functions.

    jvp_function(ex, "f", diff_args, diff_results) -> "f_jvp"
        @f_jvp(primals..., tangents of diff_args...) -> (outs..., tangents of diff_results...)

The block interpreter (passes/interpreter.py) runs with entries `(primal, tangent)`, the
tangent `None` being a symbolic zero. Ops whose tangents are all zero are copied
unchanged (so zeros emit nothing); others go through their rule in `JVP`
(passes/rules/*.py). Ops with bodies (calls, and ops with regions such as `jaxpr.cond`)
have rules in `JVP_NESTED` (passes/rules/tables.py), keyed by op class, that get the
transformation itself, so they can transform a callee or interpret a region into a new
block (`jvp.into(block).run(region_block, primals, tangents)`); a transformation op
without one (e.g. an unexpanded `jaxpr.vmap`) is an error.

With `linearize=True` (the first step of reverse mode), calls are inlined so that every
tangent op is visible to partial evaluation, and `checkpoint` / `custom_vjp_call` emit
their linear tangent ops (`checkpoint_tangent`, `custom_vjp_tangent`).

JAX: interpreters/ad.py (jvp_jaxpr), over func.func instead of a Jaxpr.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect.builder import Builder, SharingBuilder
from mjax.dialect.core import OPS, op_class_of
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import aval_of
from mjax.passes.custom_rules import (bwd_part, custom_attribute, has_jvp_rule,
                                      materialize, rule_function, symbolic_zero_results)
from mjax.passes.default_precision import READERS, under
from mjax.passes.interpreter import Env, interpret
from mjax.passes.ir_util import (OUTER_PERTURBED, VJP_FORWARD, callee_of, clone_into,
                                 dependent_results, entry_block, forward_copy, set_results)
from mjax.passes.jaxpr_discharge_state import discharge_function
from mjax.passes.jaxpr_inline import inline_body
from mjax.passes.name_stacks import wrap_scopes
from mjax.passes.registry import PassError, format_location, op_error
from mjax.passes.rules.ad_util import has_tangent, instantiate
from mjax.passes.rules.callbacks import drop_printing_when_linearizing
from mjax.passes.rules.op_names import callee_named
from mjax.passes.rules.tables import JVP, JVP_NESTED
from mjax.passes.rules.remat import SELECTIVE, mark_region


class NeedsRegions(Exception):
    """Direct linearize (passes/linearize_direct.py) cannot place what it met: a
    selective checkpoint, whose recomputation partial evaluation of the whole linearized
    function decides (reverse mode then takes that path)."""


class Jvp:
    """The JVP transformation, emitting at `ip`; entries are (primal, tangent | None)."""

    direct = False      # (DirectJvp: primal and tangent ops placed as they are emitted)

    def __init__(self, ex, ip: ir.InsertionPoint, linearize: bool, regions=None):
        self.ex = ex                  # the Expander: functions, derived table
        self.ip = ip
        self.linearize = linearize
        # op -> Region of the selective checkpoints linearized (passes/rules/remat.py)
        self.regions = {} if regions is None else regions
        self.in_selective = 0         # depth of selective checkpoints being linearized
        self._rules: dict = {}        # op name -> the interpreter's rule (see rule_for)
        # (the block's constants, each made once: the rules make the same zeros and ones
        # again and again, as direct linearize's shared table also merges them)
        self.consts: dict = {}

    def into(self, block: ir.Block) -> "Jvp":
        return Jvp(self.ex, ir.InsertionPoint(block), self.linearize, self.regions)

    def builder(self, op) -> Builder:
        return self.builder_at(op.location)

    def builder_at(self, loc: ir.Location) -> Builder:
        return SharingBuilder(self.ip, loc, self.consts)

    def run(self, block: ir.Block, primals, tangents) -> list[tuple]:
        env = Env(zip(block.arguments, zip(primals, tangents)))
        return interpret(block, self.rule_for, env)

    # -- callees, for JVP_NESTED rules ---------------------------------------------------
    def function(self, name: str, diff_args, diff_results, where=None) -> str:
        """The JVP of @name (derived once, see `jvp_function`); returns its name."""
        return jvp_function(self.ex, name, diff_args, diff_results, where)

    def discharged(self, name: str) -> ir.Operation:
        """A new function: @name over refs as a function over values
        (--jaxpr-discharge-state's form), placed after @name."""
        fns = self.ex.fns
        return discharge_function(fns, name, fns.fresh_name(f"{name}_discharged"))

    def inline(self, name: str, args, ip: ir.InsertionPoint) -> list[ir.Value]:
        """@name's body copied at `ip` with `args` for its arguments; its results."""
        return inline_body(self.ex.fns, name, args, ip)

    def rule_for(self, op: ir.Operation):
        # (Found once per op name: which rule follows from the op's class, which follows
        # from its name.)
        name = op.name
        rule = self._rules.get(name)
        if rule is None:
            rule = self._rules[name] = self._rule_for(op)
        return rule

    def _rule_for(self, op: ir.Operation):
        cls = T.CallOp if op.name == "func.call" else op_class_of(op)
        rule = JVP_NESTED.get(cls)
        if rule is not None:
            return self.nested_rule(rule)
        if issubclass(cls, T.TransformOp):
            raise op_error(op, "cannot differentiate: no JVP rule for this transformation "
                               "op (it must be expanded first)")
        return self.op_rule

    def nested_rule(self, rule):
        """The interpreter's rule for an op with a JVP_NESTED `rule`."""
        return lambda op, pairs: rule(self, op, pairs)

    @property
    def op_rule(self):
        """The interpreter's rule for the other ops (through their JVP rules)."""
        return self._op_rule

    def copy(self, op, pairs) -> list[tuple]:
        new = clone_into(op, self.ip, {v: p for v, (p, _) in zip(op.operands, pairs)})
        if len(new.regions):
            drop_printing_when_linearizing(self, new)
        return [(r, None) for r in new.results]

    def _op_rule(self, op, pairs):
        for _, t in pairs:
            if t is not None:
                break
        else:
            return self.copy(op, pairs)
        cls = OPS.get(op.name)     # (a jaxpr op's class: no OpView made)
        if cls is None:
            raise op_error(op, "cannot differentiate a non-jaxpr op that has tangent inputs")
        rule = JVP.get(cls)
        if rule is None:
            raise NoDerivativeError(op, f"'{op.name}' op cannot differentiate: "
                                        f"{JVP.why(cls)}")
        loc = op.location
        with loc:
            if cls in READERS:    # (its rule's dots: the default recorded on the op)
                outs, touts = under(op, lambda: rule(
                    self.builder_at(loc), [p for p, _ in pairs], [t for _, t in pairs],
                    **cls.params_of(op)))
            else:
                outs, touts = rule(self.builder_at(loc), [p for p, _ in pairs],
                                   [t for _, t in pairs], **cls.params_of(op))
        return with_tangents(outs, touts)


_HAS_TANGENT: dict = {}    # ir.Type -> whether its values carry tangents


def with_tangents(outs, touts) -> list[tuple]:
    """(primal, tangent) pairs; values of non-differentiable types get no tangent."""
    out = []
    for p, t in zip(outs, touts):
        if t is not None:
            ty = p.type
            keep = _HAS_TANGENT.get(ty)
            if keep is None:
                if len(_HAS_TANGENT) >= 4096:
                    _HAS_TANGENT.clear()
                keep = _HAS_TANGENT[ty] = has_tangent(aval_of(ty))
            if not keep:
                t = None
        out.append((p, t))
    return out


# ---- ops with bodies: calls (and region ops, registered by their rule modules) -------
# JVP_NESTED rule(jvp, op, [(primal, tangent | None)] per operand) -> [(primal, tangent)]
# per result


def _split(pairs):
    return [p for p, _ in pairs], [t for _, t in pairs]


def _tangent_pairs(outs, res, which) -> list[tuple]:
    """Pairs for outs, taking tangents from `res` in order for the indices in `which`."""
    it = iter(res)
    return [(p, next(it) if j in which else None) for j, p in enumerate(outs)]


def _call_jvp(jvp: Jvp, op, pairs, callee=None):
    ps, ts = _split(pairs)
    if all(t is None for t in ts):
        return jvp.copy(op, pairs)
    ex, callee = jvp.ex, callee or callee_of(op)
    ex.expand_function(callee)
    if jvp.linearize:   # inline the callee's JVP so partial evaluation sees its ops
        fn = ex.fns.get(callee, op)
        with callee_named(fn, op.location):    # (a nested jit's: jvp(jit(g))/cos)
            return jvp.run(entry_block(fn), ps, ts)
    da, dr, outs = _diff_of_call(ex, op, callee, ts)
    new = jvp_function(ex, callee, da, dr, where=op)
    res = ex.call(jvp.builder(op), new, ps + [t for t in ts if t is not None])
    return _tangent_pairs(res[:len(outs)], res[len(outs):], dr)


def _checkpoint_jvp(jvp: Jvp, op, pairs):
    ps, ts = _split(pairs)
    if all(t is None for t in ts):
        return jvp.copy(op, pairs)
    ex, callee, b = jvp.ex, callee_of(op), jvp.builder(op)
    ex.expand_function(callee)
    da, dr, outs = _diff_of_call(ex, op, callee, ts)
    nz = [t for t in ts if t is not None]
    prevent_cse, policy = op.opview.params["prevent_cse"], op.opview.params["policy"]
    if jvp.linearize and (policy == "everything_saveable" or jvp.in_selective):
        # Every residual may be saved: linearized as a plain call (nothing recomputed).
        # Inside a selective checkpoint, the enclosing policy decides for this one's
        # ops too (as JAX's partial evaluation of the outer checkpoint does).
        return jvp.run(entry_block(ex.fns.get(callee, op)), ps, ts)
    if jvp.linearize and policy in SELECTIVE:
        if jvp.direct:
            raise NeedsRegions()
        # Linearized inline; its ops form a region whose non-saveable values partial
        # evaluation recomputes (passes/rules/remat.py).
        block = jvp.ip.block
        before = {o.operation for o in block.operations}
        jvp.in_selective += 1
        try:
            pairs_out = jvp.run(entry_block(ex.fns.get(callee, op)), ps, ts)
        finally:
            jvp.in_selective -= 1
        emitted = [o.operation for o in block.operations if o.operation not in before]
        mark_region(jvp.regions, emitted, policy, op.opview.params["names"], prevent_cse)
        return pairs_out
    if jvp.linearize:
        prim = clone_into(op, jvp.ip, dict(zip(op.operands, ps)))
        # (its primal outputs are computed as JAX's partial evaluation of the remat's
        # JVP computes them: custom_vjp functions by their fwd rules)
        prim.operation.attributes["callee"] = ir.FlatSymbolRefAttr.get(forward_copy(ex.fns,
                                                                               callee))
        tout = T.emit_transform(b, T.CheckpointTangentOp, *ps, *nz,
                                signature=ex.fns.signature, callee=A.Symbol(callee),
                                diff_args=da, diff_results=dr, prevent_cse=prevent_cse)
        return _tangent_pairs(list(prim.results), tout, dr)
    new = jvp_function(ex, callee, da, dr, where=op)
    kept = {"policy": policy, "names": op.opview.params["names"]}
    res = ex.call(b, new, ps + nz, cls=T.CheckpointOp, prevent_cse=prevent_cse,
                  **{k: v for k, v in kept.items() if v is not None})
    return _tangent_pairs(res[:len(outs)], res[len(outs):], dr)


class NoDerivativeError(PassError, NotImplementedError):
    """An op with no derivative rule reached differentiation: JAX's NotImplementedError
    ("Differentiation rule for ... not implemented")."""


class NoReverseModeError(PassError, ValueError):
    """Reverse mode reached a custom call whose JVP it cannot split into primal and
    linear parts (a custom_vmap function's): JAX's ValueError."""


def _custom_jvp_call_jvp(jvp: Jvp, op, pairs):
    ps, ts = _split(pairs)
    if all(t is None for t in ts):
        return jvp.copy(op, pairs)
    why = custom_attribute(op, "no_reverse_mode") if jvp.linearize else None
    if why:    # (mjax.custom_batching: its JVP is one opaque custom_vmap call)
        raise NoReverseModeError(op, f"Linearization failed to produce known values for "
                                     f"all output primals: {why}")
    if not custom_attribute(op, "differentiable_consts"):   # (custom_vmap's are)
        _check_closed_over_tangents(op, ts)
    ex, b = jvp.ex, jvp.builder(op)
    ins, outs = ex.fns.signature(callee_of(op))
    # (traced now if only its handle is known; the inputs without tangents: symbolic zeros)
    g = rule_function(ex, op, "jvp", tuple(i for i, t in enumerate(ts) if t is None))
    ex.expand_function(g)
    tin = [instantiate(b, t, a) for t, a in zip(ts, ins) if has_tangent(a)]
    if jvp.linearize:
        res = jvp.inline(g, ps + tin, jvp.ip)
    else:
        res = ex.call(b, g, ps + tin)
    diff = {j for j, a in enumerate(outs) if has_tangent(a)}
    pairs = _tangent_pairs(res[:len(outs)], res[len(outs):], diff)
    # (the results whose tangent the rule gave as a symbolic zero stay unperturbed)
    zeros = symbolic_zero_results(ex.fns.get(g))
    return [(p, None if j in zeros else t) for j, (p, t) in enumerate(pairs)]


class CustomVjpJvpError(PassError, TypeError):
    """JAX's TypeError: its text is JAX's; where it happened is a note (and, for
    mjax-opt, the PassError's location and message)."""

    def __init__(self, where, message):
        super().__init__(where, message)
        self.add_note(f"{format_location(self.location)}: {message}")

    def __str__(self):
        return "can't apply forward-mode autodiff (jvp) to a custom_vjp function."


class CustomLinError(PassError, NotImplementedError):
    """JAX's NotImplementedError for a JVP of a custom_vjp function inside another
    differentiation that perturbs it (its linear part, custom_lin, has no derivative
    rule); where it happened is a note."""

    def __init__(self, where, message):
        super().__init__(where, message)
        self.add_note(f"{format_location(self.location)}: {message}")

    def __str__(self):
        return "Differentiation rule for 'custom_lin' not implemented"


def _original(ex, name: str) -> str:
    """The function a vjp's forward part copied as @name (VJP_FORWARD), where it is
    still there; else @name."""
    mark = ex.fns.get(name).attributes
    if VJP_FORWARD in mark and ir.StringAttr(mark[VJP_FORWARD]).value in ex.fns:
        return ir.StringAttr(mark[VJP_FORWARD]).value
    return name


def _in_vjp_forward(op) -> bool:
    """Whether `op` is in a function marked VJP_FORWARD (a vjp's forward part)."""
    parent = op.operation.parent
    while parent is not None and parent.name != "func.func":
        parent = parent.parent
    return parent is not None and VJP_FORWARD in parent.attributes


def _custom_vjp_call_jvp(jvp: Jvp, op, pairs):
    ps, ts = _split(pairs)
    if all(t is None for t in ts):
        return jvp.copy(op, pairs)
    _check_closed_over_tangents(op, ts)
    callee = callee_of(op)
    if not jvp.linearize and has_jvp_rule(op):
        # (a hijax primitive with both rules: forward mode uses its jvp, as JAX's)
        return _custom_jvp_call_jvp(jvp, op, pairs)
    if _in_vjp_forward(op):
        # A vjp's forward part runs fwd (JAX's primal outputs there are fwd's): an
        # enclosing jvp or vjp differentiates fwd, its residuals dropped (jacfwd(jacrev(
        # f)), jacrev of vjp's primal outputs). (fwd itself is not a forward part: the
        # custom_vjp calls in it refuse a jvp, and a vjp of them uses their rules)
        fwd = _original(jvp.ex, rule_function(
            jvp.ex, op, "fwd", tuple(i for i, t in enumerate(ts) if t is None)))
        jvp.ex.expand_function(fwd)
        return _call_jvp(jvp, op, pairs, callee=fwd)[:len(op.results)]
    if not jvp.linearize:
        raise CustomVjpJvpError(op, f"'{op.operation.name}' op cannot apply forward-mode "
                                    f"autodiff (jvp) to the custom_vjp function @{callee}; "
                                    f"use custom_jvp (JAX has the same restriction)")
    ex, b, p = jvp.ex, jvp.builder(op), op.opview.params
    ins, outs = ex.fns.signature(callee)
    # (traced now if only its handle is known; the inputs without tangents unperturbed)
    fwd = rule_function(ex, op, "fwd", tuple(i for i, t in enumerate(ts) if t is None))
    ex.expand_function(fwd)
    fwd_out = ex.call(b, fwd, ps)
    res = fwd_out[len(outs):]
    tin = [instantiate(b, t, a) for t, a in zip(ts, ins) if has_tangent(a)]
    if p["bwd"] is not None:
        ex.expand_function(str(p["bwd"]))
        bwd = dict(bwd=p["bwd"])
    else:   # bwd stays untraced until the transpose is compiled (JAX: at transpose time)
        bwd = dict(rule=p["rule"], callee=A.Symbol(callee))
    tout = T.emit_transform(b, T.CustomVjpTangentOp, *res, *tin, signature=ex.fns.signature,
                            num_residuals=len(res), **bwd)
    diff = {j for j, a in enumerate(outs) if has_tangent(a)}
    return _tangent_pairs(fwd_out[:len(outs)], tout, diff)


def _diff_of_call(ex, op, callee, ts):
    """diff_args (nonzero tangents) and diff_results (the results that depend on them:
    asking for the others would turn their symbolic zeros into real zero arrays)."""
    ins, outs = ex.fns.signature(callee)
    da = tuple(i for i, t in enumerate(ts) if t is not None)
    dependent = dependent_results(ex.fns.get(callee, op), da)
    dr = tuple(j for j in T.default_diff(outs) if j in dependent)
    return da, dr, outs


class CustomVJPException(PassError):
    """JAX's exception (jax._src.interpreters.ad.CustomVJPException, a plain Exception)
    for differentiating a custom_vjp call by its closed-over values; its text is JAX's,
    located at the op for mjax-opt."""

    def __str__(self):
        return self.message


def _check_closed_over_tangents(op, ts) -> None:
    view = op.opview
    n = view.params["num_consts"] or 0
    if not n or all(t is None for t in ts[len(ts) - n:]):
        return
    vjp = isinstance(view, T.CustomVjpCallOp)
    kind, rule = ("custom_vjp", "VJP") if vjp else ("custom_jvp", "JVP")
    message = (f"Detected differentiation of a {kind} function with respect to a "
               f"closed-over value. That isn't supported because the custom {rule} rule "
               f"only specifies how to differentiate the {kind} function with respect to "
               f"explicit input parameters. Try passing the closed-over value into the "
               f"{kind} function as an argument, and adapting the "
               f"{'custom_vjp fwd and bwd rules' if vjp else 'custom_jvp rule'}.")
    raise CustomVJPException(op, message) if vjp else op_error(op, message)


def _custom_vjp_bwd_jvp(jvp: Jvp, op, pairs):
    """A bwd rule not traced yet, differentiated (e.g. grad of a pullback): traced now and
    differentiated as a call of it."""
    if all(t is None for _, t in pairs):
        return jvp.copy(op, pairs)
    p = op.opview.params
    bwd = materialize(jvp.ex, p["rule"], bwd_part(p["zero_cotangents"]), op)
    return _call_jvp(jvp, op, pairs, callee=bwd)


def _internal(jvp, op, pairs):
    raise op_error(op, "is internal to --jaxpr-vjp and cannot be differentiated")


JVP_NESTED.update({
    T.CallOp: _call_jvp,
    T.CheckpointOp: _checkpoint_jvp,
    T.CustomJvpCallOp: _custom_jvp_call_jvp,
    T.CustomVjpCallOp: _custom_vjp_call_jvp,
    T.CheckpointTangentOp: _internal,
    T.CustomVjpTangentOp: _internal,
    T.CustomVjpBwdOp: _custom_vjp_bwd_jvp,
})


# ---- JVP functions -------------------------------------------------------------------
def prepare(ex, kind: str, name: str, diff_args, diff_results, where):
    """@name with its transformation ops expanded: (fn, ins, outs, diff_args,
    diff_results), the indices checked (PassError at `where`)."""
    fn = ex.fns.get(name, where)
    ex.expand_function(name)
    ins, outs = T.function_signature(fn)
    loc = where.location if where is not None else fn.location
    da = _check_diff(name, kind, "diff_args", diff_args, ins, loc)
    dr = _check_diff(name, kind, "diff_results", diff_results, outs, loc)
    return fn, ins, outs, da, dr


def _check_diff(name, kind, what, idx, avals, loc) -> tuple[int, ...]:
    try:
        return T._check_diff(f"jaxpr.{kind}", what, idx, avals)
    except T.InferError as e:
        raise PassError(loc, f"differentiating @{name}: {e}") from None


def diff_suffix(da, dr, ins, outs) -> str:
    """Name suffix of derived functions for non-default diff_args/diff_results."""
    if da == T.default_diff(ins) and dr == T.default_diff(outs):
        return ""
    return f"_a{'_'.join(map(str, da)) or 'none'}_r{'_'.join(map(str, dr)) or 'none'}"


def jvp_function(ex, name: str, diff_args=None, diff_results=None, where=None) -> str:
    """Materializes (or reuses) the JVP of @name; returns the new function's name."""
    fn, ins, outs, da, dr = prepare(ex, "jvp", name, diff_args, diff_results, where)
    existing = ex.derived.get(name, T.JvpOp, diff_args=da, diff_results=dr)
    if existing:
        return existing
    new_name = ex.fns.fresh_name(f"{name}_jvp{diff_suffix(da, dr, ins, outs)}")
    new_fn, block = ex.fns.create(new_name, list(ins) + [ins[i] for i in da], None, fn)
    ex.derived.add(new_name, name, T.JvpOp, diff_args=da, diff_results=dr)
    args = list(block.arguments)
    tangents = [None] * len(ins)
    for k, i in enumerate(da):
        tangents[i] = args[len(ins) + k]
    jvp = Jvp(ex, ir.InsertionPoint(block), linearize=False)
    results = jvp.run(entry_block(fn), args[:len(ins)], tangents)
    b = Builder(jvp.ip, fn.location)
    tangent_outs = [instantiate(b, results[j][1], outs[j]) for j in dr]
    set_results(new_fn, [p for p, _ in results] + tangent_outs)
    wrap_scopes(new_fn, "jvp")
    return new_name


def expand_jvp_op(ex, op) -> None:
    """`jaxpr.jvp @f(primals, tangents)` -> `jaxpr.call @f_jvp(primals, tangents)`."""
    p = op.opview.params
    # (the user's jvp in a vjp's forward part differentiates the original, which JAX
    # refuses where it reaches a custom_vjp call)
    callee = _original(ex, str(p["callee"]))
    try:
        new = jvp_function(ex, callee, p["diff_args"], p["diff_results"], where=op)
    except CustomVjpJvpError as e:
        if OUTER_PERTURBED not in op.attributes:
            raise
        raise CustomLinError(op, f"'{op.name}' op: a custom_vjp function's JVP inside a "
                                 f"differentiation that perturbs it") from e
    ex.replace(op, ex.call(Builder(ir.InsertionPoint(op), op.location), new, op.operands))


__all__ = ["Jvp", "NeedsRegions", "diff_suffix", "expand_jvp_op", "jvp_function", "prepare",
           "with_tangents"]
