"""Which cotangents of a reverse-mode differentiation are weakly typed, as in JAX.

JAX's gradient of an input is whatever its backward pass made: each transpose rule gives
its cotangent the weak type its computation has (a linear op keeps the incoming
cotangent's; a product is weak only if both factors are; `convert_element_type` gives
back its operand's own type; a custom_vjp the type its bwd returns, which for a
deserialized Exported's VJP is never weak). Cotangents of one value from several uses
are summed: by an eager backward pass (grad outside jit) as arrays, weak only if all
are; by a traced one (under jit, and inside a jit's function) with `add_any`, whose type
is its first operand's: the first cotangent met walking back. So a weakly typed input
(a Python scalar) usually has a weak gradient, but not through a call whose backward
rule makes strong cotangents.

mjax stages the differentiation as one op and transposes in the passes, where types
carry no weak flag; this module follows the same rules over the traced function's ops
(the weak flags of its values come from the weakly typed literals and conversions the IR
marks, `mjax.weak_type`, and the arguments' types). A custom_vjp's bwd is traced by the
passes; its cotangents' weak types are known once it was traced seeing cotangents of
the weak types this analysis gives them (the call's `ct_weak_hint`, mjax.ad.custom):
grad outside other differentiations traces the rules then (as JAX's grad runs them), a
vjp's pullback when it is called. Approximations: a custom_vjp's bwd traced otherwise
(under another differentiation), or given symbolic zeros, follows the generic rule
unless its function declares its cotangents strong (`STRONG_COTANGENTS`, as export.call
does); control flow with regions counts as one generic op; a strong input's cotangent is
taken to be strong (a bwd may return a weak one)."""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from mjax import trace_trees
from mjax.ad.symbolic_zeros import SymbolicZero
from mjax.core import aval_of_value
from mjax.dialect import context
from mjax.float0 import is_float0
from mjax.passes import custom_rules
from mjax.passes.ir_util import functions_text

_WEAK = "mjax.weak_type"
# The weak flags of a staged gradient's results (the ops' types carry none).
WEAK_RESULTS = "mjax.weak_results"
# An attribute of a custom_vjp function (the object) whose bwd returns strong cotangents.
STRONG_COTANGENTS = "_mjax_strong_cotangents"
_CALLS = ("jaxpr.call",)
_CUSTOM = ("jaxpr.custom_vjp_call", "jaxpr.custom_jvp_call")
_REF_READS = ("jaxpr.ref_get", "jaxpr.ref_swap")


def _inexact(value) -> bool:
    t = value.type
    if not isinstance(t, ir.RankedTensorType):
        return False
    element = t.element_type
    return isinstance(element, (ir.FloatType, ir.ComplexType))


def _symbol(op, name: str) -> str:
    return ir.FlatSymbolRefAttr(op.attributes[name]).value


class _Functions:
    """The module's functions by name, and the weak flags of their values per argument
    weak flags (memoized)."""

    def __init__(self, module, eager: bool = False):
        self.table = ir.SymbolTable(module.operation)
        self.eager = eager      # (the outermost backward pass runs op by op)
        self.forward: dict = {}
        self.backward: dict = {}
        self.pending = False    # (a custom_vjp call's bwd not traced for its cotangents)

    def body(self, name: str) -> ir.Block:
        return self.table[name].regions[0].blocks[0]

    def weak_values(self, name: str, arg_weak: tuple) -> dict:
        key = (name, arg_weak)
        hit = self.forward.get(key)
        if hit is None:
            hit = self.forward[key] = _forward(self, self.body(name), arg_weak)
        return hit


def _forward(fns: _Functions, block: ir.Block, arg_weak) -> dict:
    """value -> whether it is weakly typed, for the values of `block`."""
    weak = {arg: w for arg, w in zip(block.arguments, arg_weak)}
    for op in block.operations:
        op = op.operation
        name = op.name
        if WEAK_RESULTS in op.attributes:   # (a gradient's, as its API typed it)
            flags = list(ir.DenseBoolArrayAttr(op.attributes[WEAK_RESULTS]))
        elif name in ("jaxpr.constant", "jaxpr.convert_element_type"):
            flags = [_WEAK in op.attributes] * len(op.results)
        elif name in ("jaxpr.vmap", "jaxpr.jvp"):
            # (a batched function's results keep their types; a tangent its primal's)
            flags = _callee_results(fns, op, weak)
            if name == "jaxpr.jvp":
                diff = ir.DenseI64ArrayAttr(op.attributes["diff_results"]) if \
                    "diff_results" in op.attributes else range(len(flags))
                flags = flags + [flags[j] for j in diff]
        elif name in _CALLS or name in _CUSTOM:
            flags = _callee_results(fns, op, weak)
        elif name in _REF_READS:    # (what a ref holds has the ref's type)
            flags = [weak.get(op.operands[0], False)] * len(op.results)
        else:
            floats = [weak.get(v, False) for v in op.operands if _inexact(v)]
            flags = [bool(floats) and all(floats)] * len(op.results)
        for r, w in zip(op.results, flags):
            weak[r] = w
    return weak


def _callee_results(fns: _Functions, op, weak: dict) -> list:
    """The weak flags of the results of the function `op` calls, on its operands."""
    callee = _symbol(op, "callee")
    inner = fns.weak_values(callee, tuple(weak.get(v, False) for v in op.operands))
    ret = fns.body(callee).operations
    return [inner.get(v, False) for v in ret[len(ret) - 1].operands]


def _backward(fns: _Functions, name: str, arg_weak: tuple, out_ct_weak: list,
              top: bool = False) -> list:
    """Per argument of function `name`: whether its cotangent is weak (None: it gets
    none), given its results' (None: no cotangent)."""
    key = (name, arg_weak, tuple(out_ct_weak), top)
    hit = fns.backward.get(key)
    if hit is None:
        hit = fns.backward[key] = _transpose_weak(fns, name, arg_weak, out_ct_weak, top)
    return hit


def _transpose_weak(fns: _Functions, name: str, arg_weak: tuple, out_ct_weak: list,
                    top: bool) -> list:
    block = fns.body(name)
    weak = fns.weak_values(name, arg_weak)
    ops = list(block.operations)
    ct: dict = {}

    # Cotangents of one value summed: an eager backward pass adds them as arrays (weak
    # if all are); a traced one (under jit, or a jit's inside) keeps the type of the one
    # met first, walking back (JAX's add_any takes its first operand's).
    summed = fns.eager and top

    def give(v, w):
        if _inexact(v):
            ct[v] = w and ct.get(v, True) if summed else ct.get(v, w)
    for v, w in zip(ops[-1].operands, out_ct_weak):
        if w is not None:
            give(v, w)
    for op in reversed(ops[:-1]):
        op = op.operation
        outs = [ct[r] for r in op.results if r in ct]
        if not outs:
            continue
        name = op.name
        if name == "jaxpr.convert_element_type":
            give(op.operands[0], weak.get(op.operands[0], False))
        elif name in _CALLS or name == "jaxpr.vmap":   # (vmap: as the function does)
            got = _backward(fns, _symbol(op, "callee"),
                            tuple(weak.get(v, False) for v in op.operands),
                            [ct.get(r) for r in op.results], top and name == "jaxpr.vmap")
            for v, w in zip(op.operands, got):
                if w is not None:
                    give(v, w)
        elif name == "jaxpr.custom_vjp_call" and _strong_rule(op):
            for v in op.operands:
                give(v, False)
        elif name == "jaxpr.custom_vjp_call" and (got := _bwd_weak(fns, op, weak, ct)):
            for v, w in zip(op.operands, got):
                if w is not None:
                    give(v, w)
        else:
            operands = list(op.operands)
            if name == "jaxpr.vjp":     # (its trailing cotangent seeds are no factor)
                seeds = ir.DenseI64ArrayAttr(op.attributes["diff_results"]) if \
                    "diff_results" in op.attributes else _callee_results(fns, op, weak)
                operands = operands[:len(operands) - len(seeds)]
            elif name == "jaxpr.jvp":   # (nor a jvp's tangents: the primals only)
                operands = operands[:len(fns.body(_symbol(op, "callee")).arguments)]
            incoming = all(outs) and all(weak.get(v, False) for v in operands
                                          if _inexact(v))
            for v in op.operands:
                give(v, incoming)
    return [ct.get(a) for a in block.arguments]


def _bwd_weak(fns: _Functions, op, weak: dict, ct: dict):
    """Per operand of the custom_vjp call `op`: the weak type of the cotangent its bwd
    returned (None: none), when bwd was traced seeing cotangents of the weak types the
    op's results have in `ct`; else None, after asking that it be traced so (the call's
    `ct_weak_hint`: mjax.ad.custom)."""
    if "rule" not in op.attributes:
        return None
    call = custom_rules.source_of(ir.StringAttr(op.attributes["rule"]).value)
    in_avals = getattr(call, "in_avals", None)
    if in_avals is None or not hasattr(call, "bwd_weak"):
        return None
    # (a result without a cotangent: bwd sees zeros, weak as the result is)
    hint = tuple(bool(ct.get(r, weak.get(r, False))) for r in op.results if _inexact(r))
    if call.bwd_weak is None or call.bwd_weak[0] != hint or call.bwd_weak[1] is None:
        if call.bwd_weak is None:
            call.ct_weak_hint = hint
            fns.pending = True
        return None
    flags = iter(call.bwd_weak[1])
    got = [next(flags, None) if getattr(a, "dtype", None) is not None and
           _inexact_aval(a) else None for a in in_avals]
    return got + [None] * (len(op.operands) - len(got))


def record_bwd(call, ct_avals, cts, g_leaves) -> None:
    """Notes on `call` (mjax.ad.custom's record of a custom_vjp call) the weak types of
    the cotangents its bwd, traced on cotangents of `ct_avals` (`cts`: as it got them,
    per output), returned (`g_leaves`, per input leaf): per inexact input, None for a
    zero. Unknown (the generic rule then) when bwd got symbolic zeros: mjax's
    instantiate as strong zeros where JAX's keep the output's weak type."""
    seen = tuple(a.weak_type for a in ct_avals)
    if any(isinstance(c, SymbolicZero) for c in trace_trees.tree_leaves(
            cts, is_leaf=lambda c: isinstance(c, SymbolicZero))):
        call.bwd_weak = (seen, None)
        return
    call.bwd_weak = (seen, tuple(
        None if g is None or is_float0(g) or isinstance(g, SymbolicZero) else
        bool(getattr(aval_of_value(g), "weak_type", False))
        for g, a in zip(g_leaves, call.in_avals) if _inexact_aval(a)))


def _inexact_aval(aval) -> bool:
    return np.issubdtype(aval.dtype, np.inexact)


def _strong_rule(op) -> bool:
    if "rule" not in op.attributes:
        return False
    call = custom_rules.source_of(ir.StringAttr(op.attributes["rule"]).value)
    return bool(getattr(getattr(call, "custom", None), STRONG_COTANGENTS, False))


def cotangent_weak_types(module, name: str, arg_avals, diff_args, out_ct_weak,
                         trace_bwd_rules=None, eager: bool = False) -> list:
    """Per argument in `diff_args` of the traced function `name` of `module` (whose
    arguments have `arg_avals`): whether JAX's cotangent of it is weakly typed, when the
    cotangents of its results are weak per `out_ct_weak` (None: not differentiated).
    `trace_bwd_rules()`, if given, traces the custom_vjp bwd rules `name` reaches now:
    called when the answer depends on what one of them returns. `eager`: the gradient
    is taken outside jit (JAX's backward pass then runs op by op)."""
    arg_weak = tuple(bool(getattr(a, "weak_type", False)) for a in arg_avals)
    if not any(arg_weak[i] for i in diff_args):
        return [False] * len(diff_args)     # (strong inputs: strong cotangents)
    try:
        fns = _Functions(module, eager)
        got = _backward(fns, name, arg_weak, list(out_ct_weak), True)
        if fns.pending and trace_bwd_rules is not None:
            trace_bwd_rules()       # (as JAX's grad runs them: bwd's own types now known)
            got = _backward(_Functions(module, eager), name, arg_weak, list(out_ct_weak),
                            True)
    except (KeyError, IndexError):   # (a callee not in this module: inputs' own types)
        return [arg_weak[i] for i in diff_args]
    return [arg_weak[i] if got[i] is None else got[i] for i in diff_args]


def cotangent_weak_table(module, name: str, arg_avals, diff_args, n_out: int,
                         diff_results, eager: bool = False):
    """For a pullback (vjp) of the traced function `name`: a function from the weak
    flags of the user's cotangents (one per result in `diff_results`) to the weak flags
    of the cotangents of `diff_args` (computed now, while the function is intact; when
    they depend on custom_vjp bwd rules not traced yet, from a copy of the function,
    each time it is called: after the pullback traced them, from their own types)."""
    arg_weak = tuple(bool(getattr(a, "weak_type", False)) for a in arg_avals)
    if not any(arg_weak[i] for i in diff_args):
        return lambda seeds: [False] * len(diff_args)
    try:
        fns = _Functions(module, eager)
        table = _seed_table(fns, name, arg_weak, diff_results, n_out)
    except (KeyError, IndexError):   # (a callee not in this module: inputs' own types)
        return lambda seeds: [arg_weak[i] for i in diff_args]
    text = functions_text(module, [name]) if fns.pending else None

    def weak_of(seeds) -> list:
        got = table
        if text is not None:
            with context(), ir.Location.unknown(context()):
                copy = ir.Module.parse(text)
                got = _seed_table(_Functions(copy, eager), name, arg_weak, diff_results, n_out,
                                  [bool(s) for s in seeds])
        out = []
        for i in diff_args:
            flags = [got[(j, bool(s))][i] for j, s in zip(diff_results, seeds)]
            flags = [g for g in flags if g is not None]
            out.append(all(flags) if flags else arg_weak[i])
        return out
    return weak_of


def _seed_table(fns, name, arg_weak, diff_results, n_out, seeds=None) -> dict:
    """(result, its cotangent's weak flag) -> per argument, its cotangent's weak flag
    (None: none): each result's cotangents reach the arguments apart and meet in an AND;
    for the flags in `seeds` (one per result in diff_results) if given, else both."""
    pairs = [(j, s) for j, s in zip(diff_results, seeds)] if seeds is not None else \
        [(j, s) for j in diff_results for s in (True, False)]
    return {(j, s): _backward(fns, name, arg_weak, [s if k == j else None
                                                    for k in range(n_out)], True)
            for j, s in pairs}


__all__ = ["STRONG_COTANGENTS", "WEAK_RESULTS", "record_bwd", "cotangent_weak_table", "cotangent_weak_types"]


def input_cotangent(g, aval, convert, zeros):
    """A bwd rule's cotangent `g` for an input of type `aval`: zeros for None, a float0
    or a symbolic zero; converted to the input's dtype only when its dtype differs (a
    weak cotangent of the input's dtype stays weak, as JAX keeps the rule's own type)."""
    if g is None or is_float0(g) or isinstance(g, SymbolicZero):
        return zeros(aval, False)
    return g if aval_of_value(g).dtype == aval.dtype else convert(g, aval.dtype)
