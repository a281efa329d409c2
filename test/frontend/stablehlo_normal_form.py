"""A StableHLO program in a form two libraries' lowerings can be compared in: its calls
inlined, then canonicalize + cse + symbol-dce (JAX's lowering keeps private functions and
duplicates that mjax's does not)."""
from __future__ import annotations


def normalized_main(text: str):
    """(context, @main) of `text` parsed, its calls inlined, and canonicalize + cse +
    symbol-dce run; read it inside `with context:`."""
    from jaxlib.mlir import ir, passmanager

    from mjax.dialect.context import context
    from mjax.passes.ir_util import clone_into

    with context():
        module = ir.Module.parse(text)
        funcs = {ir.StringAttr(op.operation.attributes["sym_name"]).value: op.operation
                 for op in module.body.operations if op.operation.name == "func.func"}
        while True:
            calls = []

            def visit(op):
                if op.name == "func.call":
                    calls.append(op)
                return ir.WalkResult.ADVANCE
            module.operation.walk(visit)
            if not calls:
                break
            for call in calls:
                callee = funcs[ir.FlatSymbolRefAttr(call.attributes["callee"]).value]
                body = callee.regions[0].blocks[0]
                mapping = dict(zip(body.arguments, call.operands))
                for op in body.operations:
                    op = op.operation
                    if op.name == "func.return":
                        for r, v in zip(call.results, op.operands):
                            r.replace_all_uses_with(mapping.get(v, v))
                        break
                    new = clone_into(op, ir.InsertionPoint(call), mapping)
                    mapping.update(zip(op.results, new.results))
                call.erase()
        passmanager.PassManager.parse(
            "builtin.module(canonicalize,cse,symbol-dce)").run(module.operation)
        main = next(op.operation for op in module.body.operations
                    if op.operation.name == "func.func"
                    and ir.StringAttr(op.operation.attributes["sym_name"]).value == "main")
    return context(), module, main
