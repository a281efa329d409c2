"""Which cotangents of a reverse-mode differentiation are weakly typed, as in JAX.

JAX's gradient of an input is whatever its backward pass made: each transpose rule gives
its cotangent the weak type its computation has (a linear op keeps the incoming
cotangent's; a product is weak only if both factors are; `convert_element_type` gives
back its operand's own type; a custom_vjp the type its bwd returns, which for a
deserialized Exported's VJP is never weak), and cotangents summed from several uses are
weak only if all are. So a weakly typed input (a Python scalar) usually has a weak
gradient, but not through a call whose backward rule makes strong cotangents.

mjax stages the differentiation as one op and transposes in the passes, where types
carry no weak flag; this module follows the same rules over the traced function's ops
(the weak flags of its values come from the weakly typed literals and conversions the IR
marks, `mjax.weak_type`, and the arguments' types). Approximations: a custom_vjp's bwd
is traced by the passes after grad's types are set, so its cotangents are taken to
follow the generic rule unless its function declares them strong (`STRONG_COTANGENTS`),
as export.call does; control flow with regions counts as one generic op."""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.passes import custom_rules

_WEAK = "mjax.weak_type"
# The weak flags of a staged gradient's results (the ops' types carry none).
WEAK_RESULTS = "mjax.weak_results"
# An attribute of a custom_vjp function (the object) whose bwd returns strong cotangents.
STRONG_COTANGENTS = "_mjax_strong_cotangents"
_CALLS = ("jaxpr.call",)
_CUSTOM = ("jaxpr.custom_vjp_call", "jaxpr.custom_jvp_call")


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

    def __init__(self, module):
        self.table = ir.SymbolTable(module.operation)
        self.forward: dict = {}
        self.backward: dict = {}

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


def _backward(fns: _Functions, name: str, arg_weak: tuple, out_ct_weak: list) -> list:
    """Per argument of function `name`: whether its cotangent is weak (None: it gets
    none), given its results' (None: no cotangent)."""
    key = (name, arg_weak, tuple(out_ct_weak))
    hit = fns.backward.get(key)
    if hit is None:
        hit = fns.backward[key] = _transpose_weak(fns, name, arg_weak, out_ct_weak)
    return hit


def _transpose_weak(fns: _Functions, name: str, arg_weak: tuple, out_ct_weak: list) -> list:
    block = fns.body(name)
    weak = fns.weak_values(name, arg_weak)
    ops = list(block.operations)
    ct: dict = {}

    def give(v, w):
        if _inexact(v):
            ct[v] = w and ct.get(v, True)
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
                            [ct.get(r) for r in op.results])
            for v, w in zip(op.operands, got):
                if w is not None:
                    give(v, w)
        elif name == "jaxpr.custom_vjp_call" and _strong_rule(op):
            for v in op.operands:
                give(v, False)
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


def _strong_rule(op) -> bool:
    if "rule" not in op.attributes:
        return False
    call = custom_rules.source_of(ir.StringAttr(op.attributes["rule"]).value)
    return bool(getattr(getattr(call, "custom", None), STRONG_COTANGENTS, False))


def cotangent_weak_types(module, name: str, arg_avals, diff_args, out_ct_weak) -> list:
    """Per argument in `diff_args` of the traced function `name` of `module` (whose
    arguments have `arg_avals`): whether JAX's cotangent of it is weakly typed, when the
    cotangents of its results are weak per `out_ct_weak` (None: not differentiated)."""
    arg_weak = tuple(bool(getattr(a, "weak_type", False)) for a in arg_avals)
    if not any(arg_weak[i] for i in diff_args):
        return [False] * len(diff_args)     # (strong inputs: strong cotangents)
    try:
        got = _backward(_Functions(module), name, arg_weak, list(out_ct_weak))
    except (KeyError, IndexError):   # (a callee not in this module: inputs' own types)
        return [arg_weak[i] for i in diff_args]
    return [arg_weak[i] if got[i] is None else got[i] for i in diff_args]


def cotangent_weak_table(module, name: str, arg_avals, diff_args, n_out: int,
                         diff_results):
    """For a pullback (vjp) of the traced function `name`: a function from the weak
    flags of the user's cotangents (one per result in `diff_results`) to the weak flags
    of the cotangents of `diff_args` (computed now, while the function is intact)."""
    arg_weak = tuple(bool(getattr(a, "weak_type", False)) for a in arg_avals)
    if not any(arg_weak[i] for i in diff_args):
        return lambda seeds: [False] * len(diff_args)
    fns = _Functions(module)
    # (each result's cotangents reach the arguments apart and meet in an AND: one run
    # per result and weak flag)
    try:
        table = {(j, s): _backward(fns, name, arg_weak,
                                   [s if k == j else None for k in range(n_out)])
                 for j in diff_results for s in (True, False)}
    except (KeyError, IndexError):   # (a callee not in this module: inputs' own types)
        return lambda seeds: [arg_weak[i] for i in diff_args]

    def weak_of(seeds) -> list:
        out = []
        for i in diff_args:
            got = [table[(j, bool(s))][i] for j, s in zip(diff_results, seeds)]
            got = [g for g in got if g is not None]
            out.append(all(got) if got else arg_weak[i])
        return out
    return weak_of


__all__ = ["STRONG_COTANGENTS", "WEAK_RESULTS", "cotangent_weak_table", "cotangent_weak_types"]
