"""Which operands of an op a value surely or maybe depends on, through calls (each
callee's result -> argument dependencies, memoized): the IR side of the frontend's
question whether a differentiation perturbs a value (mjax.ad.symbolic_zeros)."""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.ops.structural import StopGradientOp
from mjax.dialect.ops.transforms import CallOp


def operands_reaching(v, deps) -> tuple[list, list]:
    """(the operands of `v`'s op that `v` surely depends on if they are perturbed, those
    it may depend on): none through stop_gradient; for a `jaxpr.call`, those its callee's
    result depends on; all, but only maybe, for ops with regions (not looked into); all
    for other ops."""
    op = v.owner.operation
    if op.name == StopGradientOp.OPERATION_NAME:
        return [], []
    operands = list(op.operands)
    if len(op.regions):
        return [], operands
    if op.name == CallOp.OPERATION_NAME:
        callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
        exact, inexact = deps.reaching(op, callee, v.result_number)
        return [operands[i] for i in exact], [operands[i] for i in inexact]
    return operands, []


class Dependencies:
    """Which arguments of the functions each of their results depends on (surely, maybe),
    memoized. (A walk may cross from a trace into an enclosing one of another module:
    eval_shape traces into a module of its own.)"""

    def __init__(self):
        self.tables: dict = {}
        self.memo: dict = {}

    def _function(self, call: ir.Operation, name: str) -> ir.Operation:
        module = call.parent
        while module.name != "builtin.module":
            module = module.parent
        table = self.tables.get(module)
        if table is None:
            table = self.tables[module] = ir.SymbolTable(module)
        return table[name].operation

    def reaching(self, call: ir.Operation, name: str, j: int) -> tuple[frozenset, frozenset]:
        fn = self._function(call, name)
        key = (fn, j)
        if key not in self.memo:
            self.memo[key] = (frozenset(), frozenset(range(
                len(fn.regions[0].blocks[0].arguments))))   # (a recursive call: maybe all)
            ops = fn.regions[0].blocks[0].operations
            ret = ops[len(ops) - 1].operation
            exact, inexact, todo, seen = set(), set(), [(ret.operands[j], True)], set()
            while todo:
                v, sure = todo.pop()
                if (v, sure) in seen or (v, True) in seen:
                    continue
                seen.add((v, sure))
                if isinstance(v, ir.BlockArgument):
                    (exact if sure else inexact).add(v.arg_number)
                else:
                    e, i = operands_reaching(v, self)
                    todo.extend((o, sure) for o in e)
                    todo.extend((o, False) for o in i)
            self.memo[key] = (frozenset(exact), frozenset(inexact - exact))
        return self.memo[key]


__all__ = ["Dependencies", "operands_reaching"]
