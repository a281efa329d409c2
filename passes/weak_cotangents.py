"""Which cotangents of a reverse-mode differentiation are weakly typed, as in JAX.

JAX's backward pass transposes each primitive with cotangents that are tracers: each gets
its cotangent the weak type its computation has (a linear op keeps the incoming
cotangent's; a product is weak only if both factors are; `convert_element_type` gives
the input's own type; a custom_vjp's bwd gives what it returns; a jit's transpose or a
deserialized Exported's VJP is never weak). Cotangents of one value from several uses
are summed: by an eager backward pass (grad outside jit) as arrays, weak only if all
are; by a traced one (under jit, or inside a jit's transpose) with add_any, whose type
is its first operand's: the first cotangent met walking back. So a weakly typed input
(a Python scalar) usually has a weak gradient, but not through a call whose backward
pass mixes it with strongly typed values.

mjax's transposition emits StableHLO-bound IR whose types carry no weak flag; this
analysis follows the same rules over the traced function's ops (the weak flags of its
values come from the weakly typed literals and conversions the IR marks, `mjax.weak_type`,
and the arguments' types). The per-op rules are two columns of the rule tables
(rules/tables.py): `WEAK_TYPES` (the weak flags of an op's results) and
`WEAK_COTANGENTS` (the weak flags of its operands' cotangents), stated with the ops'
other rules; an op without an entry takes the generic rules (its results are weak as the
op's own `weak_result` says, the rule the tracer follows; each operand's cotangent is
weak when every incoming cotangent and every inexact operand is).

A custom_vjp's bwd is traced by the passes; its cotangents' weak types are known once it
was traced seeing cotangents of the weak types this analysis gives them (the call's
`ct_weak_hint`, frontend/ad/custom.py): until then the analysis asks for that
(`pending`), and the caller traces the bwd rules and asks again. A bwd that got symbolic
zeros (mjax instantiates them as strong zeros) is taken to be strong (a bwd may return a
weak one).
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect import context
from mjax.dialect.core import JaxprOp
from mjax.passes.ir_util import functions_text
from mjax.passes.rules.tables import WEAK_COTANGENTS, WEAK_TYPES, has_zero_derivative

# The attribute marking a weakly typed literal or conversion.
WEAK_MARK = "mjax.weak_type"
# The weak flags of a staged gradient's results (the ops' types carry none).
WEAK_RESULTS = "mjax.weak_results"
# An attribute of a custom_vjp function (the object) whose bwd returns strong cotangents.
STRONG_COTANGENTS = "_mjax_strong_cotangents"


def is_inexact(value) -> bool:
    t = value.type
    if not isinstance(t, ir.RankedTensorType):
        return False
    return isinstance(t.element_type, (ir.FloatType, ir.ComplexType))


def symbol(op, name: str) -> str:
    return ir.FlatSymbolRefAttr(op.attributes[name]).value


class _Weak:
    """What JaxprOp.weak_result reads of an operand's aval: its weak flag."""

    __slots__ = ("weak_type",)

    def __init__(self, weak_type: bool):
        self.weak_type = weak_type


class WeakTypes:
    """The weak types of a module's values and cotangents: its functions by name, and
    the weak flags of their values per argument weak flags (memoized). Rules of the
    WEAK_TYPES and WEAK_COTANGENTS tables get it as their first argument."""

    def __init__(self, module, eager: bool = False):
        self.table = ir.SymbolTable(module.operation)
        self.eager = eager      # (the outermost backward pass runs op by op)
        self.forward: dict = {}
        self.backward_memo: dict = {}
        self.pending = False    # (a custom_vjp call's bwd not traced for its cotangents)

    def body(self, name: str) -> ir.Block:
        return self.table[name].regions[0].blocks[0]

    def weak_values(self, name: str, arg_weak: tuple) -> dict:
        """value -> whether it is weakly typed, for function `name`'s values."""
        key = (name, arg_weak)
        hit = self.forward.get(key)
        if hit is None:
            hit = self.forward[key] = self._forward(self.body(name), arg_weak)
        return hit

    def callee_results(self, op, weak: dict) -> list:
        """The weak flags of the results of the function `op` calls, on its operands."""
        callee = symbol(op, "callee")
        inner = self.weak_values(callee, tuple(weak.get(v, False) for v in op.operands))
        ret = self.body(callee).operations
        return [inner.get(v, False) for v in ret[len(ret) - 1].operands]

    def backward(self, name: str, arg_weak: tuple, out_ct_weak: list,
                 top: bool = False) -> list:
        """Per argument of function `name`: whether its cotangent is weak (None: it gets
        none), given its results' (None: no cotangent)."""
        key = (name, arg_weak, tuple(out_ct_weak), top)
        hit = self.backward_memo.get(key)
        if hit is None:
            hit = self.backward_memo[key] = self._transpose(name, arg_weak, out_ct_weak,
                                                            top)
        return hit

    def _forward(self, block: ir.Block, arg_weak) -> dict:
        weak = {arg: w for arg, w in zip(block.arguments, arg_weak)}
        for op in block.operations:
            op = op.operation
            if WEAK_RESULTS in op.attributes:   # (a gradient's, as its API typed it)
                flags = list(ir.DenseBoolArrayAttr(op.attributes[WEAK_RESULTS]))
            else:
                view = op.opview
                rule = WEAK_TYPES.get(type(view))
                if rule is not None:
                    flags = rule(self, op, weak)
                elif isinstance(view, JaxprOp):     # (the op's own weak-type rule)
                    w = type(view).weak_result([_Weak(weak.get(v, False))
                                                for v in op.operands])
                    flags = [w] * len(op.results)
                else:
                    floats = [weak.get(v, False) for v in op.operands if is_inexact(v)]
                    flags = [bool(floats) and all(floats)] * len(op.results)
            for r, w in zip(op.results, flags):
                weak[r] = w
        return weak

    def _transpose(self, name: str, arg_weak: tuple, out_ct_weak: list,
                   top: bool) -> list:
        return self.transpose_block(self.body(name), self.weak_values(name, arg_weak),
                                    out_ct_weak, top)

    def weak_values_of_block(self, block: ir.Block, arg_weak) -> dict:
        """weak_values for a region's block."""
        return self._forward(block, arg_weak)

    def region_backward(self, block: ir.Block, arg_weak, out_ct_weak: list) -> list:
        """backward for a region's block (its arguments' weak flags `arg_weak`; a traced
        transposition, as inside a cond or scan)."""
        return self.transpose_block(block, self._forward(block, arg_weak), out_ct_weak,
                                    False)

    def transpose_block(self, block: ir.Block, weak: dict, out_ct_weak: list,
                        top: bool) -> list:
        ops = list(block.operations)
        ct: dict = {}

        # Cotangents of one value summed: an eager backward pass adds them as arrays
        # (weak if all are); a traced one (under jit, or a jit's inside) keeps the type
        # of the one met first, walking back (JAX's add_any takes its first operand's).
        summed = self.eager and top

        def give(v, w):
            if is_inexact(v):
                ct[v] = w and ct.get(v, True) if summed else ct.get(v, w)
        for v, w in zip(ops[-1].operands, out_ct_weak):
            if w is not None:
                give(v, w)
        for op in reversed(ops[:-1]):
            op = op.operation
            outs = [ct[r] for r in op.results if r in ct]
            if not outs or has_zero_derivative(type(op.opview)):
                continue    # (JAX's JVP gives it a symbolic zero: nothing to transpose)
            rule = WEAK_COTANGENTS.get(type(op.opview))
            got = None if rule is None else rule(self, op, weak, ct, outs, top)
            if got is None:
                incoming = generic_incoming(op.operands, outs, weak)
                got = [incoming] * len(op.operands)
            for v, w in zip(op.operands, got):
                if w is not None:
                    give(v, w)
        return [ct.get(a) for a in block.arguments]


def generic_incoming(operands, outs: list, weak: dict) -> bool:
    """The generic rule: an operand's cotangent is weak when every incoming cotangent
    (`outs`) and every inexact one of `operands` is."""
    return all(outs) and all(weak.get(v, False) for v in operands if is_inexact(v))


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
        types = WeakTypes(module, eager)
        got = types.backward(name, arg_weak, list(out_ct_weak), True)
        if types.pending and trace_bwd_rules is not None:
            trace_bwd_rules()       # (as JAX's grad runs them: bwd's own types now known)
            got = WeakTypes(module, eager).backward(name, arg_weak, list(out_ct_weak),
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
        types = WeakTypes(module, eager)
        table = _seed_table(types, name, arg_weak, diff_results, n_out)
    except (KeyError, IndexError):   # (a callee not in this module: inputs' own types)
        return lambda seeds: [arg_weak[i] for i in diff_args]
    text = functions_text(module, [name]) if types.pending else None

    def weak_of(seeds) -> list:
        got = table
        if text is not None:
            with context(), ir.Location.unknown(context()):
                copy = ir.Module.parse(text)
                got = _seed_table(WeakTypes(copy, eager), name, arg_weak, diff_results,
                                  n_out, [bool(s) for s in seeds])
        out = []
        for i in diff_args:
            flags = [got[(j, bool(s))][i] for j, s in zip(diff_results, seeds)]
            flags = [g for g in flags if g is not None]
            out.append(all(flags) if flags else arg_weak[i])
        return out
    return weak_of


def _seed_table(types, name, arg_weak, diff_results, n_out, seeds=None) -> dict:
    """(result, its cotangent's weak flag) -> per argument, its cotangent's weak flag
    (None: none): each result's cotangents reach the arguments apart and meet in an AND;
    for the flags in `seeds` (one per result in diff_results) if given, else both."""
    pairs = [(j, s) for j, s in zip(diff_results, seeds)] if seeds is not None else \
        [(j, s) for j in diff_results for s in (True, False)]
    return {(j, s): types.backward(name, arg_weak, [s if k == j else None
                                                    for k in range(n_out)], True)
            for j, s in pairs}


__all__ = ["STRONG_COTANGENTS", "WEAK_MARK", "WEAK_RESULTS", "WeakTypes",
           "cotangent_weak_table", "cotangent_weak_types", "generic_incoming",
           "is_inexact", "symbol"]
