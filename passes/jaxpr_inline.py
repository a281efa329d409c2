"""`--jaxpr-inline`: inline `jaxpr.call` / `func.call` of private functions.

Upstream `inline` refuses to move unregistered ops, so mjax inlines itself. Public
functions are entry points and stay called; `jaxpr.checkpoint` is not inlined (its
boundary is what rematerialization keys on).

    func.func private @sq(%x: tensor<f32>) -> tensor<f32> {
      %0 = "jaxpr.mul"(%x, %x) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    }
    func.func @main(%a: tensor<f32>) -> tensor<f32> {
      %0 = "jaxpr.call"(%a) {callee = @sq} : (tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    }
  ==>
    func.func @main(%a: tensor<f32>) -> tensor<f32> {
      %0 = "jaxpr.mul"(%a, %a) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    }
    (@sq stays until --jaxpr-dce or symbol-dce removes it)
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir

from mjax.dialect.context import context
from mjax.passes.interpreter import Env, interpret
from mjax.passes.ir_util import (FunctionTable, callee_of, clone_into, entry_block,
                                 functions, is_private, nested_ops, replace_op, symbol_name)
from mjax.passes.registry import Pass, PassError, register_pass

_CALLS = ("func.call", "jaxpr.call")


class Inline:
    """The copying transformation: entries are new values; ops are cloned at `ip`, and
    with `fns`, calls are inlined recursively as well."""

    def __init__(self, ip: ir.InsertionPoint, fns: FunctionTable | None = None):
        self.ip = ip
        self.fns = fns

    def into(self, block: ir.Block) -> "Inline":
        return Inline(ir.InsertionPoint(block), self.fns)

    def run(self, block: ir.Block, args) -> list[ir.Value]:
        return interpret(block, self.rule_for, Env(zip(block.arguments, args)))

    def rule_for(self, op):
        if self.fns is not None and op.name in _CALLS and callee_of(op) in self.fns:
            return self._inline_call
        return self._copy

    def _copy(self, op, values):
        return list(clone_into(op, self.ip, dict(zip(op.operands, values))).results)

    def _inline_call(self, op, values):
        return self.run(entry_block(self.fns.get(callee_of(op), op)), values)


def inline_body(fns: FunctionTable, name: str, args, ip: ir.InsertionPoint) -> list[ir.Value]:
    """Copies @name's body at `ip` with `args` for its arguments (calls inside inlined
    too); returns the values it returns."""
    return Inline(ip, fns).run(entry_block(fns.get(name)), args)


def inline_calls(module, max_rounds: int = 1000) -> int:
    """Inlines calls of private single-block functions until none is left; returns how
    many calls were inlined."""
    count = 0
    with context(), ir.Location.unknown(context()):
        for _ in range(max_rounds):
            fns = functions(module)
            calls, calling = [], set()
            for name, fn in fns.items():
                for op in nested_ops(fn):
                    if op.name in _CALLS:
                        calling.add(name)
                        callee = fns.get(callee_of(op))
                        if (callee is not None and is_private(callee)
                                and len(callee.regions[0].blocks) == 1 and callee != fn):
                            calls.append((op, callee))
            if not calls:
                return count
            for call, callee in calls:
                replace_op(call, Inline(ir.InsertionPoint(call)).run(entry_block(callee),
                                                                     list(call.operands)))
                count += 1
            # Only the bodies just copied can have brought new calls in (the calls not
            # inlined stay so, the functions being the same): without any, we are done.
            if not any(symbol_name(callee) in calling for _, callee in calls):
                return count
    raise PassError(None, "jaxpr-inline: calls still left after "
                          f"{max_rounds} rounds (recursive functions?)")


@register_pass("jaxpr-inline")
@dataclass
class JaxprInlinePass(Pass):
    """Inline jaxpr.call/func.call of private functions (upstream inline refuses jaxpr ops)."""

    def run(self, module: ir.Module) -> None:
        inline_calls(module)
