"""Questions the frontend asks of the IR it traces, and the marks it leaves on ops, as
named functions: which value is a block argument and its number, which op made a value,
an op's string attribute, a value's shape, locations. With these the frontend's tracing
code needs no MLIR bindings of its own.

    argument_number(v)       # 2 for the third block argument, None for an op's result
    defining_op(v)           # the op whose result `v` is (None for a block argument)
    string_attr(op, "memory_kind")
    mark(op, "mjax.seed"); set_attr(op, "names", ("x", "y"))   # any encode()-able value
"""
from __future__ import annotations

import functools

from jaxlib.mlir import ir

from mjax.dialect.attributes import decode, encode
from mjax.dialect.context import context


# ---- values -----------------------------------------------------------------------------
def is_value(x) -> bool:
    return isinstance(x, ir.Value)


def is_argument(v) -> bool:
    """Whether `v` is a block argument (not an op's result). (The bindings hand out values
    as BlockArgument or OpResult.)"""
    return isinstance(v, ir.BlockArgument)


def argument_number(v) -> int | None:
    """`v`'s position among its block's arguments; None for an op's result."""
    if isinstance(v.owner, ir.Block):
        return ir.BlockArgument(v).arg_number
    return None


def result_number(v) -> int:
    """`v`'s position among its op's results."""
    return ir.OpResult(v).result_number


def defining_op(v):
    """The operation `v` is a result of; None for a block argument."""
    owner = v.owner
    return None if isinstance(owner, ir.Block) else owner.operation


def defining_op_of(x):
    """The operation whose result `x` is, when `x` is an IR value; None for a block
    argument or anything else (a Python or NumPy number)."""
    return defining_op(x) if isinstance(x, ir.Value) else None


def value_shape(v) -> tuple:
    return tuple(ir.ShapedType(v.type).shape)


def type_shape(t) -> tuple:
    return tuple(ir.ShapedType(t).shape)


# ---- attributes ---------------------------------------------------------------------------
def string_attr(op, name: str, default=None):
    """The text of `op`'s string attribute `name` (`default` if it has none)."""
    attrs = op.attributes
    if name not in attrs:
        return default
    return ir.StringAttr(attrs[name]).value


def symbol_ref_attr(op, name: str = "callee") -> str:
    """The symbol `op`'s attribute `name` refers to (`@f` -> "f")."""
    return ir.FlatSymbolRefAttr(op.attributes[name]).value


def attr(op, name: str, default=None):
    """`op`'s attribute `name` as a Python value (dialect.attributes.decode)."""
    attrs = op.attributes
    return decode(attrs[name]) if name in attrs else default


def set_attr(op, name: str, value) -> None:
    """Sets `op`'s attribute `name` to `value` (dialect.attributes.encode: a str, int,
    tuple of them, dict, ...)."""
    with context():
        op.attributes[name] = encode(value)


def set_strings(op, name: str, texts) -> None:
    """Sets `op`'s attribute `name` to an array of strings (empty too)."""
    ctx = context()
    op.attributes[name] = ir.ArrayAttr.get([ir.StringAttr.get(t, ctx) for t in texts], ctx)


def set_bools(op, name: str, flags) -> None:
    """Sets `op`'s attribute `name` to a dense array of booleans."""
    op.attributes[name] = ir.DenseBoolArrayAttr.get([bool(f) for f in flags], context())


def strings(op, name: str) -> list[str]:
    """The texts of `op`'s array-of-strings attribute `name` (empty if it has none)."""
    attrs = op.attributes
    if name not in attrs:
        return []
    return [ir.StringAttr(a).value for a in ir.ArrayAttr(attrs[name])]


def mark(op, name: str) -> None:
    """Gives `op` the unit attribute `name` (a flag other code tests with `in`)."""
    op.attributes[name] = ir.UnitAttr.get(context())


def function_arg_attrs(fn) -> list[dict]:
    """{name: attribute} per argument of a func.func."""
    return _attr_dicts(fn, "arg_attrs", len(ir.FunctionType(
        ir.TypeAttr(fn.attributes["function_type"]).value).inputs))


def function_result_attrs(fn) -> list[dict]:
    """{name: attribute} per result of a func.func."""
    return _attr_dicts(fn, "res_attrs", len(ir.FunctionType(
        ir.TypeAttr(fn.attributes["function_type"]).value).results))


def _attr_dicts(fn, key: str, n: int) -> list[dict]:
    if key not in fn.attributes:
        return [{} for _ in range(n)]
    return [{a.name: a.attr for a in ir.DictAttr(d)} for d in ir.ArrayAttr(fn.attributes[key])]


def set_function_arg_attrs(fn, dicts) -> None:
    """Sets a func.func's per-argument attributes, {name: attribute or encode()-able
    value} each."""
    fn.attributes["arg_attrs"] = _dicts_attr(dicts)


def set_function_result_attrs(fn, dicts) -> None:
    fn.attributes["res_attrs"] = _dicts_attr(dicts)


def _dicts_attr(dicts):
    with context():
        return ir.ArrayAttr.get([ir.DictAttr.get({k: encode(v) for k, v in d.items()})
                                 for d in dicts])


def i32_attr(value: int):
    """A 32-bit integer attribute (encode() makes 64-bit ones)."""
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32, context()), value)


# ---- locations ----------------------------------------------------------------------------
@functools.cache
def unknown_location():
    """The unknown location (one object: entered as the default location, often)."""
    return ir.Location.unknown(context())


def file_location(path: str, line: int, col: int):
    return ir.Location.file(path, line, col, context())


def named_location(name: str, child):
    return ir.Location.name(name, childLoc=child, context=context())


__all__ = ["argument_number", "attr", "defining_op", "defining_op_of", "file_location",
           "function_arg_attrs", "function_result_attrs", "i32_attr", "is_argument",
           "is_value", "mark", "named_location", "result_number", "set_attr", "set_bools",
           "set_function_arg_attrs", "set_function_result_attrs", "set_strings",
           "string_attr", "strings", "symbol_ref_attr", "type_shape", "unknown_location",
           "value_shape"]
