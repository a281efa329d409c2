"""The part of a block that computes one value, as a function of its own: `prefix_ops`
lists the ops the value depends on, `prefix_function` copies them into a private function
of the module. (The frontend transforms that function alone: mjax.tracing.value_prefix.)
"""
from __future__ import annotations

import itertools

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from mjax.dialect.context import context


def prefix_ops(v, done=()):
    """The ops of v's block computing `v`, in dependency order, and the block arguments
    they (or v itself) read, in argument order; values in `done` (and what only they
    need) are left out. (Region bodies take their values as operands, so the ops'
    operands are all they read.)"""
    order, seen, args = [], set(), {}
    if isinstance(v, ir.BlockArgument):
        return [], [v]
    stack = [(v.owner, False)]
    while stack:
        op, expanded = stack.pop()
        key = op.operation
        if expanded:
            order.append(op)
            continue
        if key in seen:
            continue
        seen.add(key)
        stack.append((op, True))
        for x in key.operands:
            if x in done:
                continue
            if isinstance(x, ir.BlockArgument):
                args[x.arg_number] = x
            else:
                stack.append((x.owner, False))
    return order, [args[n] for n in sorted(args)]


def prefix_function(module, ops, used, v, base: str) -> str:
    """A private function `{base}_k` of `module`: `ops` on arguments `used`, returning
    v."""
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        # (The first name free in the module, not a process-wide count: an eager
        # transformation traces again at each call, and the same text finds the
        # executables compiled for it, mjax.ad.concrete's included.)
        symbols = ir.SymbolTable(module.operation)
        name = next(n for n in (f"{base}_{k}" for k in itertools.count())
                    if n not in symbols)
        with ir.InsertionPoint(module.body):
            fn = func.FuncOp(name, ([a.type for a in used], [v.type]))
            fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
        block = fn.add_entry_block()
        new = dict(zip(used, block.arguments))
        ip = ir.InsertionPoint(block)
        for o in ops:
            clone = o.operation.clone(ip=ip)
            for i, x in enumerate(o.operation.operands):
                clone.operands[i] = new[x]
            new.update(zip(o.operation.results, clone.results))
        func.ReturnOp([new[v]], ip=ip)
    return name


__all__ = ["prefix_function", "prefix_ops"]
