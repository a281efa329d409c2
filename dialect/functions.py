"""Modules and their functions, looked up and made by name, for the frontend (which then
needs no MLIR bindings): a new or parsed module, a function by symbol, a private function
of given types, renaming a symbol's uses.

    module = new_module(); fn = lookup(module, "f"); "f" in symbols_of(module)
    fn, block = new_function(module, "g", arg_types, visibility="private")
"""
from __future__ import annotations

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func  # noqa: F401 - (FuncOp, func.func's op view)

from mjax.dialect.context import context


class building:
    """The context and an unknown location, entered: what making IR needs (`with
    building():`; a class, not a generator: tracing enters it a few times per op)."""

    __slots__ = ("_entered",)

    def __enter__(self):
        ctx = context()
        ctx.__enter__()
        try:
            loc = ir.Location.unknown(ctx)
            loc.__enter__()
        except BaseException:
            ctx.__exit__(None, None, None)
            raise
        self._entered = (ctx, loc)

    def __exit__(self, *exc):
        ctx, loc = self._entered
        try:
            loc.__exit__(*exc)
        finally:
            ctx.__exit__(*exc)
        return False


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


def new_function(module, name: str, arg_types, result_types=(), visibility=None):
    """A func.func @name at the end of `module` with an entry block of `arg_types` and
    `visibility` ("private", or None: public); returns (the func.func, its block).
    (Made as a generic operation, then viewed as a FuncOp: the op func.FuncOp's builder
    makes, at half its cost; tracing makes two per eager transformation call.)"""
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        attributes = {"sym_name": ir.StringAttr.get(name),
                      "function_type": ir.TypeAttr.get(
                          ir.FunctionType.get(list(arg_types), list(result_types)))}
        if visibility:
            attributes["sym_visibility"] = ir.StringAttr.get(visibility)
        op = ir.Operation.create("func.func", attributes=attributes, regions=1,
                                 ip=ir.InsertionPoint(module.body))
        # (add_entry_block() without reading the types back from the function type)
        block = op.regions[0].blocks.append(*arg_types)
    return op.opview, block


def set_function_type(fn, arg_types, result_types) -> None:
    with context():
        fn.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(arg_types), list(result_types)))


def function_types(fn) -> tuple[list, list]:
    """(argument types, result types) of a func.func."""
    t = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    return list(t.inputs), list(t.results)


__all__ = ["building", "function_types", "lookup", "new_function", "new_module",
           "parse_module", "rename_uses", "set_function_type", "symbols_of"]
