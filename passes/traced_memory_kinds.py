"""Memory kinds in the traced program: JAX's ValueError for an elementwise op over values
in host and in device memory, found in @main's jaxpr ops (mjax.specs.memory_kinds.check_traced
calls it while the process uses host memory)."""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.context import context
from mjax.dialect.ops.structural import DevicePutOp
from mjax.dialect.symbols import main_function
from mjax.passes.stablehlo_memory_kinds import ANY, PRIMITIVES, check_operands


def _memory(kind: str) -> str:
    """The memory a kind's value is in, as check_traced tells them apart."""
    return "pinned_host" if kind == "pinned_host" else "device"


def _rank(value) -> int:
    try:
        return ir.RankedTensorType(value.type).rank
    except ValueError:    # (tokens, tuples)
        return 0


def check_main(module, arg_kinds) -> None:
    """JAX's ValueError for an elementwise op of the traced program (jaxpr ops, before
    the passes drop unused ones: JAX checks as it traces) over values in host and in
    device memory, where the kinds are known from @main's arguments (`arg_kinds`, as
    memory_kinds_pass's) and device_puts; values of other ops (calls, loops,
    transforms) are left to --stablehlo-memory-kinds's walk of the lowered program."""
    with context():
        main = main_function(module)
        if main is None:
            return
        args = list(main.regions[0].blocks[0].arguments)
        arg_kinds = (list(arg_kinds or ()) + [None] * len(args))[:len(args)]
        kind = {a: None if k == ANY else _memory(k) for a, k in zip(args, arg_kinds)}
        for op in main.regions[0].blocks[0].operations:
            op = op.operation
            name = op.name
            if name == DevicePutOp.OPERATION_NAME:
                kind[op.results[0]] = _memory(ir.StringAttr(op.attributes["memory_kind"]).value)
                continue
            ranked = [v for v in op.operands if _rank(v) > 0]
            if not name.startswith("jaxpr.") or len(op.regions) or \
                    "callee" in op.attributes or any(v not in kind for v in ranked):
                continue        # (results of unknown memory)
            ins = {kind[v] for v in ranked} - {None}
            if len(ins) > 1 and name.split(".", 1)[-1] in PRIMITIVES:
                check_operands(name.split(".", 1)[-1], op, kind)
            for r in op.results:
                kind[r] = ins.pop() if len(ins) == 1 else "device" if ins else None


__all__ = ["check_main"]
