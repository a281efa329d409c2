"""Reverse mode = linearize (JVP) + partial evaluation + transpose, over func.func.

    linearize_functions(ex, "f", diff_args, diff_results) -> LinearizeInfo
        @f_fwd(primals...) -> (outs..., residuals...)
        @f_lin(tangents of diff_args..., residuals...) -> tangents of diff_results
    transpose_function(ex, "f_lin", linear_args, "f_bwd") -> "f_bwd"
        @f_bwd(residuals..., cotangents of diff_results...) -> cotangents of diff_args
    vjp_functions(ex, "f", ...) -> VjpInfo(fwd, bwd, ...)       # both of the above

1. linearize: the JVP transformation (passes/forward_mode.py, linearize=True), calls
   inlined so that every tangent op is visible;
2. partial evaluation (passes/partial_eval.py) with the tangents unknown: the known ops
   form @f_fwd, the unknown (linear) ones @f_lin, the known values they read are the
   residuals (constants are copied instead). Both steps in one walk (direct linearize,
   passes/linearize_direct.py: each op placed as partial evaluation would place it, as
   the JVP emits it); with a selective checkpoint, the JVP builds a temporary function
   which partial evaluation then splits (the same functions either way);
3. transpose: non-linear ops of @f_lin are evaluated first (partial evaluation again;
   not needed when direct linearize made @f_lin and knows them: the constants), then
   `transpose_block` walks it backwards (the interpreter's `reverse=True` walk, with the
   cotangents kept in a dict), each linear op through its rule in `TRANSPOSE`,
   cotangents summed with `jaxpr.add`.

JAX: ad.linearize_jaxpr + partial_eval + ad.backward_pass.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from jaxlib.mlir import ir

from mjax.dialect.builder import Builder, SharingBuilder
from mjax.dialect.core import OPS
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import ShapedArray, aval_of
from mjax.passes.forward_mode import (CustomVjpJvpError, Jvp, NeedsRegions, diff_suffix,
                                      jvp_function, prepare)
from mjax.passes.interpreter import Env
from mjax.passes.ir_util import (calls_before, clone_into, entry_block, has_effects,
                                 is_terminator, nested_ops, replace_op, set_results, symbol_name)
from mjax.passes.linearize_direct import DirectJvp
from mjax.passes.name_stacks import name_primal_call, wrap_scopes
from mjax.passes.partial_eval import PartialEval
from mjax.passes.registry import PassError, op_error
from mjax.passes.rules.ad_util import Linear, Unknown, add_any, instantiate
from mjax.passes.rules.callbacks import drop_rerun_callbacks, prints_anywhere
from mjax.passes.rules.tables import TRANSPOSE, TRANSPOSE_NESTED


class Linearize:
    """Derived-function kind: f -> its forward part (`part="fwd"`) and linear part
    (`part="lin"`)."""


class Transpose:
    """Derived-function kind: a linear function -> its transpose."""


@dataclass(frozen=True)
class LinearizeInfo:
    fwd: str
    lin: str
    num_outputs: int
    residual_avals: tuple[ShapedArray, ...]
    diff_args: tuple[int, ...]
    diff_results: tuple[int, ...]
    # Why @lin cannot run forward (it holds a custom_vjp function's linear map), if so.
    unevaluable: Exception | None = None
    # @lin's ops that read no linear value (constants), when it was just made by direct
    # linearize and they are known: its transposition then needs no partial evaluation.
    constants: list | None = field(default=None, compare=False, repr=False)

    @property
    def num_residuals(self) -> int:
        return len(self.residual_avals)


@dataclass(frozen=True)
class VjpInfo:
    """fwd: primals -> (outs, residuals); bwd: (residuals, cotangents of diff_results)
    -> cotangents of diff_args."""

    fwd: str
    bwd: str
    num_outputs: int
    residual_avals: tuple[ShapedArray, ...]
    diff_args: tuple[int, ...]
    diff_results: tuple[int, ...]

    @property
    def num_residuals(self) -> int:
        return len(self.residual_avals)


# ---- linearize + partial evaluation --------------------------------------------------
def linearize_functions(ex, name: str, diff_args=None, diff_results=None,
                        where=None) -> LinearizeInfo:
    """Materializes (or reuses) @name's forward and linear parts (see module doc)."""
    fn, ins, outs, da, dr = prepare(ex, "vjp", name, diff_args, diff_results, where)
    keys = dict(diff_args=da, diff_results=dr)
    fwd = ex.derived.get(name, Linearize, part="fwd", **keys)
    lin = ex.derived.get(name, Linearize, part="lin", **keys)
    if fwd and lin:
        fwd_outs = T.function_signature(ex.fns.get(fwd))[1]
        return LinearizeInfo(fwd, lin, len(outs), tuple(fwd_outs[len(outs):]), da, dr)

    try:
        fwd_fn, lin_fn, residuals, consts = _linearize_direct(ex, name, fn, ins, outs, da, dr)
    except NeedsRegions:
        fwd_fn, lin_fn, residuals, consts = _linearize_split(ex, name, fn, ins, outs, da, dr)
    wrap_scopes(fwd_fn, "jvp")
    wrap_scopes(lin_fn, "jvp")
    fwd, lin = symbol_name(fwd_fn), symbol_name(lin_fn)
    ex.derived.add(fwd, name, Linearize, part="fwd", **keys)
    ex.derived.add(lin, name, Linearize, part="lin", **keys)
    res_avals = tuple(aval_of(v.type) for v in residuals)
    return LinearizeInfo(fwd, lin, len(outs), res_avals, da, dr, constants=consts)


def _linearize_direct(ex, name, fn, ins, outs, da, dr):
    """One walk: primal ops into the forward part, tangent ops into the linear part
    (passes/linearize_direct.py); NeedsRegions for a selective checkpoint, with
    nothing left behind."""
    suffix = diff_suffix(da, dr, ins, outs)
    fwd_fn, fblock = ex.fns.create(ex.fns.fresh_name(f"{name}_fwd{suffix}"), ins, None, fn)
    lin_fn, lblock = ex.fns.create(ex.fns.fresh_name(f"{name}_lin{suffix}"),
                                   [ins[i] for i in da], None, fwd_fn)
    scratch = []

    def make_scratch():     # (the temporary function, only if a rule needs it)
        scratch.append(ex.fns.create(ex.fns.fresh_name(f"{name}_linearized"), [], None,
                                     fn)[0])
        return entry_block(scratch[0])
    try:
        jvp = DirectJvp(ex, fblock, lblock, make_scratch)
        tangents = [None] * len(ins)
        for k, i in enumerate(da):
            tangents[i] = lblock.arguments[k]
        results = jvp.run(entry_block(fn), list(fblock.arguments), tangents)
        if jvp.regions:
            raise NeedsRegions()
        b = jvp.builder_at(fn.location)
        tangent_outs = [instantiate(b, results[j][1], outs[j]) for j in dr]
        results = jvp.settle(results)
        tangent_outs = [t for t, _ in jvp.settle([(t, None) for t in tangent_outs])]
        primal_outs = [p for p, _ in results]
        if any(p in jvp.unknown for p in primal_outs):
            raise PassError(fn.location, f"cannot linearize @{name}: a primal output "
                                         f"depends on a tangent")
        pe = jvp.pe
        set_results(lin_fn, [t if t in jvp.unknown else pe.unknown_value(t, t)
                             for t in tangent_outs])
        set_results(fwd_fn, primal_outs + pe.residuals)
        drop_rerun_callbacks(jvp, fwd_fn, name)
    except BaseException:     # (NeedsRegions: the general path makes them again)
        if scratch:           # (first: its ops may read the parts' values)
            ex.fns.erase(symbol_name(scratch.pop()))
        ex.fns.erase(symbol_name(lin_fn))
        ex.fns.erase(symbol_name(fwd_fn))
        raise
    finally:
        if scratch:
            ex.fns.erase(symbol_name(scratch[0]))
    return fwd_fn, lin_fn, pe.residuals, jvp.linear_constants()


def _linearize_split(ex, name, fn, ins, outs, da, dr):
    """The general path: the whole linearized function, split by partial evaluation."""
    # 1. linearize into a temporary function.
    tmp, block = ex.fns.create(ex.fns.fresh_name(f"{name}_linearized"),
                               list(ins) + [ins[i] for i in da], None, fn)
    try:
        args = list(block.arguments)
        tangents = [None] * len(ins)
        for k, i in enumerate(da):
            tangents[i] = args[len(ins) + k]
        jvp = Jvp(ex, ir.InsertionPoint(block), linearize=True)
        results = jvp.run(entry_block(fn), args[:len(ins)], tangents)
        b = Builder(jvp.ip, fn.location)
        set_results(tmp, [p for p, _ in results]
                    + [instantiate(b, results[j][1], outs[j]) for j in dr])

        # 2. partial evaluation: tangents unknown.
        suffix = diff_suffix(da, dr, ins, outs)
        fwd_fn, fblock = ex.fns.create(ex.fns.fresh_name(f"{name}_fwd{suffix}"), ins, None, fn)
        lin_fn, lblock = ex.fns.create(ex.fns.fresh_name(f"{name}_lin{suffix}"),
                                       [ins[i] for i in da], None, fwd_fn)
        pe = PartialEval(ir.InsertionPoint(fblock), lblock, jvp.regions, move=True)
        entries = list(fblock.arguments) + [Unknown(a) for a in lblock.arguments]
        outs_pe = pe.run(block, entries)
        primal_outs, tangent_outs = outs_pe[:len(outs)], outs_pe[len(outs):]
        if any(isinstance(e, Linear) for e in primal_outs):
            # (A custom_jvp rule computing a primal output from its tangents, say.)
            raise PassError(fn.location, f"cannot linearize @{name}: a primal output "
                                         f"depends on a tangent")
        term = block.operations[-1].operation     # (the last op, without listing the block)
        lin_outs = [pe.unknown_value(v, e) for v, e in
                    zip(list(term.operands)[len(outs):], tangent_outs)]
        set_results(lin_fn, lin_outs)
        set_results(fwd_fn, list(primal_outs) + pe.residuals)
        pe.erase_dead_recomputed()
        drop_rerun_callbacks(jvp, fwd_fn, name)
    finally:
        ex.fns.erase(symbol_name(tmp))
    return fwd_fn, lin_fn, pe.residuals, None


# ---- transpose -----------------------------------------------------------------------
class Transposer:
    """Transposition as the rules of ops with bodies (scan, cond) see it, in
    TRANSPOSE_NESTED: rule(tr, op, cts of results (None: zero), entries of operands
    (value | Linear), b) -> one cotangent (or None) per operand; `tr.run` transposes a
    region's block; `tr.ex` is the Expander of the transpose being built (None outside
    `transpose_function`), for rules that trace functions into the module."""

    ex = None

    @staticmethod
    def run(block: ir.Block, entries, out_cts, ip: ir.InsertionPoint,
            loc: ir.Location) -> list:
        return transpose_block(block, entries, out_cts, ip, loc)


_TRANSPOSER = Transposer()


def transpose_function(ex, lin_name: str, linear_args, new_name: str, where=None,
                       constants=None) -> str:
    """Materializes (or reuses) the transpose of @lin_name with respect to `linear_args`:
    (other args..., cotangents of results...) -> cotangents of linear_args. `constants`:
    see `transpose_block`."""
    linear_args = tuple(linear_args)
    existing = ex.derived.get(lin_name, Transpose, linear_args=linear_args)
    if existing:
        return existing
    lin = ex.fns.get(lin_name, where)
    ins, outs = T.function_signature(lin)
    others = [i for i in range(len(ins)) if i not in linear_args]
    bwd, bblock = ex.fns.create(ex.fns.fresh_name(new_name), [ins[i] for i in others]
                                + list(outs), None, lin)
    ex.derived.add(symbol_name(bwd), lin_name, Transpose, linear_args=linear_args)
    bargs = list(bblock.arguments)
    entries = [None] * len(ins)
    for k, i in enumerate(others):
        entries[i] = bargs[k]
    for i in linear_args:
        entries[i] = Linear(ins[i])
    bip = ir.InsertionPoint(bblock)
    previous, _TRANSPOSER.ex = _TRANSPOSER.ex, ex
    try:
        arg_cts = transpose_block(entry_block(lin), entries, bargs[len(others):], bip,
                                  lin.location, constants)
    finally:
        _TRANSPOSER.ex = previous
    b = Builder(bip, lin.location)
    set_results(bwd, [instantiate(b, arg_cts[i], ins[i]) for i in linear_args])
    wrap_scopes(bwd, "transpose")
    # Transposed checkpoints emit jaxpr.vjp ops (rematerialization): expand them too.
    ex.expand_function(symbol_name(bwd))
    return symbol_name(bwd)


class _LinearUnlessKnown(Env):
    """Entries of a linear part's values for its transposition: those given, else
    `Linear` (made when first read)."""

    def read(self, v: ir.Value):
        entry = self.entries.get(v)
        if entry is None:
            entry = self.entries[v] = Linear(aval_of(v.type))
        return entry


def transpose_block(block: ir.Block, entries, out_cts, ip: ir.InsertionPoint,
                    loc: ir.Location, constants=None) -> list:
    """Transposes `block`, linear in the arguments whose entry is `Linear(aval)` (the
    others are values available at `ip`), given cotangents of its terminator's operands
    (None: zero); emits at `ip` and returns one cotangent (or None) per argument. Rules
    for ops with bodies (scan, cond) can call it on a region's block. `constants`: the
    ops of the block that read no linear value, when known (then they are the only
    ones: each other op reads a linear value)."""
    # Non-linear ops first (constants, ops on non-linear values only).
    if constants is None:
        pe = PartialEval(ip)
        results = pe.run(block, entries)
        primal = pe.env
        linear_ops = set(pe.unknown_ops)
        is_linear = linear_ops.__contains__
    else:   # (known to be these: every other op is linear)
        primal = _LinearUnlessKnown(zip(block.arguments, entries))
        for c in constants:
            primal.entries[c.result] = clone_into(c, ip, {}).result
        known = set(constants)
        is_linear = lambda op: op not in known     # noqa: E731
        results = [primal.read(v) for v in block.operations[-1].operation.operands]

    def add(x, y):
        want, got = aval_of(x.type), aval_of(y.type)
        if (got.shape, got.dtype) != (want.shape, want.dtype):
            raise PassError(loc, f"internal error: cotangents of types {want.str_short()} "
                                 f"and {got.str_short()} for one value")
        return add_any(Builder(ip, loc), x, y)
    cts: dict = {}      # value -> its cotangent (absent: zero), summed as written
    consts: dict = {}   # the constants the rules made at ip (SharingBuilder's table)
    term = block.operations[-1].operation     # (the last op, without listing the block)
    for v, e, ct in zip(term.operands, results, out_cts):
        if isinstance(e, Linear) and ct is not None:
            old = cts.get(v)
            cts[v] = ct if old is None else add(old, ct)
    read = primal.read
    known_entries = primal.entries if constants is not None else None
    get = cts.get

    def operand_entries(op):
        if known_entries is None:
            return [read(v) for v in op.operands]
        args = []
        for v in op.operands:      # (_LinearUnlessKnown.read, inline: this runs per operand)
            e = known_entries.get(v)
            if e is None:
                e = known_entries[v] = Linear(aval_of(v.type))
            args.append(e)
        return args

    # The ops backwards (the interpreter's reverse walk, with the cotangents read and
    # summed in place): an op whose results have no cotangent gives none.
    for op in reversed(_body(block)):
        if not is_linear(op):
            continue
        cts_of_results = [get(r) for r in op.results]
        for c in cts_of_results:
            if c is not None:
                break
        else:
            continue
        cls = OPS.get(op.name)     # (None for a non-jaxpr op; no OpView made)
        args = operand_entries(op)
        op_loc = op.location
        nested = TRANSPOSE_NESTED.get(cls)
        if nested is not None:   # ops with bodies: the rule transposes its regions
            with op_loc:
                got = nested(_TRANSPOSER, op, cts_of_results, args, Builder(ip, op_loc))
        else:
            rule = TRANSPOSE.get(cls)
            if rule is None:
                raise op_error(op, f"cannot transpose for reverse-mode autodiff: "
                                   f"{TRANSPOSE.why(cls)}")
            ct = cts_of_results[0] if len(cts_of_results) == 1 else cts_of_results
            with op_loc:
                got = rule(SharingBuilder(ip, op_loc, consts), ct, *args,
                           **cls.params_of(op))
            if len(got) != len(args):
                raise op_error(op, f"internal error: transpose rule returned {len(got)} "
                                   f"cotangents for {len(args)} operands")
        if len(got) < len(args):
            raise op_error(op, f"internal error: transpose rule gave {len(got)} entries "
                               f"for {len(args)} operands")
        for v, a, c in zip(op.operands, args, got):
            if c is not None and isinstance(a, Linear):
                old = get(v)
                cts[v] = c if old is None else add(old, c)
    return [get(a) for a in block.arguments]


def _body(block: ir.Block) -> list:
    """The ops of `block` before its terminator (checked to be one)."""
    ops = [op.operation for op in block.operations]
    if not ops or not is_terminator(ops[-1]):
        raise PassError(block.owner.location, "block has no func.return or jaxpr.yield "
                                              "terminator")
    ops.pop()
    return ops


# ---- vjp -----------------------------------------------------------------------------
def vjp_functions(ex, name: str, diff_args=None, diff_results=None, where=None) -> VjpInfo:
    """@name's forward part and backward function (the transposed linear part)."""
    fn, ins, outs, da, dr = prepare(ex, "vjp", name, diff_args, diff_results, where)
    keys = dict(diff_args=da, diff_results=dr)
    fwd = ex.derived.get(name, Linearize, part="fwd", **keys)
    bwd = ex.derived.get(name, T.VjpOp, **keys)
    if not (fwd and bwd):
        had_lin = ex.derived.get(name, Linearize, part="lin", **keys)
        li = linearize_functions(ex, name, da, dr, where)
        fwd = li.fwd
        bwd = transpose_function(ex, li.lin, tuple(range(len(da))),
                                 f"{name}_bwd{diff_suffix(da, dr, ins, outs)}", where,
                                 None if had_lin else li.constants)
        ex.derived.forget(bwd)
        ex.derived.add(bwd, name, T.VjpOp, **keys)
        if not had_lin:   # it holds ops internal to reverse mode: it must not outlive it
            ex.derived.forget(li.lin)
            ex.fns.erase(li.lin)
    fwd_outs = T.function_signature(ex.fns.get(fwd))[1]
    return VjpInfo(fwd, bwd, len(outs), tuple(fwd_outs[len(outs):]), da, dr)


def expand_vjp_op(ex, op) -> None:
    """`jaxpr.vjp @f(primals, cts)` -> `call @f_fwd(primals)`, `call @f_bwd(res, cts)`."""
    p = op.opview.params
    info = vjp_functions(ex, str(p["callee"]), p["diff_args"], p["diff_results"], where=op)
    n_in = len(ex.fns.signature(str(p["callee"]))[0])
    operands = list(op.operands)
    callee = str(p["callee"])
    calls = calls_before(op, callee, operands[:n_in])
    twin = None
    if calls and not prints_anywhere(ex, callee):
        fwd_outs = ex.fns.signature(info.fwd)[1][:info.num_outputs]
        twin = _primal_twin(ex, calls, fwd_outs, info.diff_results)
    fwd_out = ex.call(Builder(ir.InsertionPoint(twin or op), op.location), info.fwd,
                      operands[:n_in])
    if twin is not None:
        replace_op(twin, fwd_out[:info.num_outputs])
        operands = list(op.operands)     # (a cotangent may have used the twin's results)
    elif calls:
        other = calls[-1]
        if (ex.lowering and ex.effect_free()
                and all(next(iter(r.uses), None) is None for r in other.results)):
            # (grad's unused value call: shown by make_jaxpr, and --jaxpr-dce would drop
            # it and its renamed copy, untouched, from the lowered program)
            other.erase()
        else:
            name_primal_call(ex, other, callee)
    res = fwd_out[info.num_outputs:]
    b = Builder(ir.InsertionPoint(op), op.location)
    replace_op(op, ex.call(b, info.bwd, res + operands[n_in:]))


def _primal_twin(ex, calls, fwd_outs, diff_results) -> ir.Operation | None:
    """Of `calls`, the earlier `jaxpr.call @callee(primals)` ops in a vjp's block
    (value_and_grad stages the value so), the one whose results are the forward part's
    primal outputs, so the forward part runs in its place and the function is evaluated
    once, as in JAX (a loop is not run twice, a callback not called twice). Not when the function prints (the forward part
    leaves debug prints to the primal run), nor when the differentiated value is unused,
    as grad's is (--jaxpr-dce drops that call; make_jaxpr shows it, as JAX's jaxpr),
    unless the call has effects DCE keeps (an io_callback would run twice)."""
    twin = None
    for other in calls:
        # (the cheap tests first: grad's value call is unused and, mostly, pure)
        if ((any(next(iter(other.results[j].uses), None) is not None
                 for j in diff_results)
             or (not ex.effect_free() and has_effects(other)))
                and [aval_of(r.type) for r in other.results] == fwd_outs):
            twin = other
    return twin


def evaluable_linear(ex, lin_name: str) -> None:
    """Makes @lin_name runnable forward: each `checkpoint_tangent` becomes the tangent
    part of a `jaxpr.jvp`; a `custom_vjp_tangent` is an error (custom_vjp functions have
    no forward-mode derivative, as in JAX)."""
    for op in nested_ops(ex.fns.get(lin_name)):
        view = op.opview
        if isinstance(view, T.CustomVjpTangentOp):
            raise CustomVjpJvpError(op, "'jaxpr.custom_vjp_tangent' op cannot evaluate "
                                        "the linear map of a custom_vjp function forward "
                                        "(jvp of custom_vjp); use custom_jvp")
        if isinstance(view, T.CheckpointTangentOp):
            # (a call of the callee's JVP, not a jaxpr.jvp: that would differentiate
            # the original of a vjp's forward part, whose custom_vjp calls refuse it)
            p = view.params
            b = Builder(ir.InsertionPoint(op), op.location)
            jvp = jvp_function(ex, str(p["callee"]), p["diff_args"], p["diff_results"],
                               where=op)
            res = ex.call(b, jvp, list(op.operands))
            n_out = len(ex.fns.signature(str(p["callee"]))[1])
            replace_op(op, res[n_out:])
    ex.expand_function(lin_name)


__all__ = ["Linearize", "LinearizeInfo", "Transpose", "Transposer", "VjpInfo", "evaluable_linear",
           "expand_vjp_op", "linearize_functions", "transpose_block", "transpose_function",
           "vjp_functions"]
