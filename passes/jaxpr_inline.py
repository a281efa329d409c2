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
from mjax.passes.autodiff import callee_of, clone_into, entry_block, symbol_name
from mjax.passes.registry import Pass, PassError, register_pass

_CALLS = ("func.call", "jaxpr.call")


def _is_private(fn) -> bool:
    return ("sym_visibility" in fn.attributes
            and ir.StringAttr(fn.attributes["sym_visibility"]).value == "private")


def inline_calls(module, max_rounds: int = 1000) -> int:
    """Inlines calls of private single-block functions until none is left; returns how
    many calls were inlined."""
    body = module.operation.regions[0].blocks[0]
    count = 0
    with context(), ir.Location.unknown(context()):
        for _ in range(max_rounds):
            fns = {symbol_name(op.operation): op.operation for op in body.operations
                   if op.operation.name == "func.func"}
            calls = []
            for fn in fns.values():
                def visit(op):
                    if op.name in _CALLS:
                        callee = fns.get(callee_of(op))
                        if (callee is not None and _is_private(callee)
                                and len(callee.regions[0].blocks) == 1 and callee != fn):
                            calls.append((op, callee))
                    return ir.WalkResult.ADVANCE
                fn.walk(visit)
            if not calls:
                return count
            for call, callee in calls:
                _inline_one(call, callee)
                count += 1
    raise PassError(None, "jaxpr-inline: calls still left after "
                          f"{max_rounds} rounds (recursive functions?)")


def _inline_one(call: ir.Operation, callee: ir.Operation) -> None:
    block = entry_block(callee)
    env = dict(zip(block.arguments, call.operands))
    ip = ir.InsertionPoint(call)
    for op in block.operations:
        op = op.operation
        if op.name == "func.return":
            for old, new in zip(call.results, [env[v] for v in op.operands]):
                old.replace_all_uses_with(new)
            call.erase()
            return
        new = clone_into(op, ip, env)
        env.update(zip(op.results, new.results))


@register_pass("jaxpr-inline")
@dataclass
class JaxprInlinePass(Pass):
    """Inline jaxpr.call/func.call of private functions (upstream inline refuses jaxpr ops)."""

    def run(self, module: ir.Module) -> None:
        inline_calls(module)
