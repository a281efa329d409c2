"""Modules and their functions, looked up and made by name, for the frontend (which then
needs no MLIR bindings): a new or parsed module, a function by symbol, a private function
of given types, renaming a symbol's uses.

    module = new_module(); fn = lookup(module, "f"); "f" in symbols_of(module)
    fn, block = new_function(module, "g", arg_types, result_types, private=True)
    end_function(fn, block, results)          # func.return, function type set
"""
from __future__ import annotations

import contextlib

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from mjax.dialect.context import context


@contextlib.contextmanager
def building():
    """The context and an unknown location, entered: what making IR needs."""
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        yield


def new_module():
    with building():
        return ir.Module.create()


def parse_module(text: str):
    with building():
        return ir.Module.parse(text)


def symbols_of(module):
    """The symbol table of a module (an ir.Module or its operation): `name in table`,
    `table[name]`."""
    return ir.SymbolTable(module.operation)


def lookup(module, name: str):
    """The operation of `module`'s symbol `name` (KeyError if none)."""
    return ir.SymbolTable(module.operation)[name].operation


def rename_uses(old: str, new: str, root) -> None:
    """Every reference to @old inside `root` (an op) now names @new."""
    ir.SymbolTable.replace_all_symbol_uses(old, new, root)


def rename(module, fn, name: str) -> None:
    """Renames function `fn` of `module` (its uses in the module too)."""
    ir.SymbolTable(module.operation).set_symbol_name(fn, name)


def new_function(module, name: str, arg_types, result_types=(), private: bool = False,
                 at_start: bool = False):
    """A func.func @name in `module` (at its end, or its start) with an entry block of
    `arg_types`; returns (the function's op, the block)."""
    with building():
        body = module.body if hasattr(module, "body") else module.regions[0].blocks[0]
        ip = ir.InsertionPoint.at_block_begin(body) if at_start else ir.InsertionPoint(body)
        with ip:
            fn = func.FuncOp(name, (list(arg_types), list(result_types)))
            if private:
                fn.attributes["sym_visibility"] = ir.StringAttr.get("private")
        block = fn.regions[0].blocks.append(*arg_types)
    return fn.operation, block


def end_function(fn, block, results) -> None:
    """Ends `block` (fn's body) with func.return of `results` and sets fn's type to
    match."""
    with building():
        func.ReturnOp(list(results), ip=ir.InsertionPoint(block))
        set_function_type(fn, [a.type for a in block.arguments], [v.type for v in results])


def set_function_type(fn, arg_types, result_types) -> None:
    with building():
        fn.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(arg_types), list(result_types)))


def function_types(fn) -> tuple[list, list]:
    """(argument types, result types) of a func.func."""
    t = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    return list(t.inputs), list(t.results)


def clone_ops_into(block, ops, mapping: dict) -> None:
    """Copies `ops` (in order) to the end of `block`, their operands through `mapping`
    (value -> value), which gains their results."""
    ip = ir.InsertionPoint(block)
    with building():
        for o in ops:
            o = o.operation
            clone = o.clone(ip=ip)
            for i, x in enumerate(o.operands):
                if x in mapping:
                    clone.operands[i] = mapping[x]
            mapping.update(zip(o.results, clone.results))


__all__ = ["building", "clone_ops_into", "end_function", "function_types", "lookup",
           "new_function", "new_module", "parse_module", "rename", "rename_uses",
           "set_function_type", "symbols_of"]
