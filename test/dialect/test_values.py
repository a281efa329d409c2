"""dialect.values, dialect.functions and dialect.blocks: the IR queries and edits the
frontend makes through named functions instead of MLIR's bindings."""
import numpy as np
from jaxlib.mlir import ir

from mjax.dialect import Builder, ShapedArray, tensor_type
from mjax.dialect.blocks import emit_return, end_of, new_holder, op_maker
from mjax.dialect.functions import (building, function_types, lookup, new_function,
                                    new_module, parse_module, set_function_type, symbols_of)
from mjax.dialect.values import (argument_number, attr, defining_op, function_arg_attrs,
                                 is_argument, is_value, mark, result_number, set_attr,
                                 set_bools, set_function_arg_attrs, set_strings, string_attr,
                                 strings, symbol_ref_attr, type_shape, value_shape)

F32 = ShapedArray((2, 3), np.float32)


def _function():
    module = new_module()
    with building():
        t = tensor_type(F32)
    fn, block = new_function(module, "f", [t, t], visibility="private")
    return module, fn, block


def test_values_and_their_ops():
    module, fn, block = _function()
    x, y = block.arguments
    with building():
        b = Builder(end_of(block))
        s = b.add(x, y)
        emit_return(end_of(block), [s])
        set_function_type(fn, [x.type, y.type], [s.type])
    assert is_value(s) and not is_value(3)
    assert is_argument(y) and not is_argument(s)
    assert argument_number(y) == 1 and argument_number(s) is None
    assert defining_op(s).name == "jaxpr.add" and defining_op(x) is None
    assert result_number(s) == 0
    assert value_shape(s) == (2, 3) and type_shape(x.type) == (2, 3)
    assert lookup(module, "f") == fn.operation and "f" in symbols_of(module)
    assert "g" not in symbols_of(module)
    assert string_attr(fn, "sym_visibility") == "private"
    assert string_attr(fn, "missing", "none") == "none"
    ins, outs = function_types(fn)
    assert len(ins) == 2 and len(outs) == 1
    assert parse_module(str(module)).operation.verify()


def test_attributes_round_trip():
    module, fn, block = _function()   # (the module kept: its ops die with it)
    op = fn.operation
    set_strings(op, "names", ["a", "b"])
    assert strings(op, "names") == ["a", "b"]
    set_strings(op, "none", [])            # (an empty list stays an array of strings)
    assert strings(op, "none") == [] and isinstance(op.attributes["none"], ir.ArrayAttr)
    assert strings(op, "absent") == []
    set_attr(op, "dims", (1, -1))
    assert attr(op, "dims") == (1, -1) and attr(op, "absent", 7) == 7
    set_bools(op, "weak", [True, False])
    assert list(ir.DenseBoolArrayAttr(op.attributes["weak"])) == [True, False]
    mark(op, "flag")
    assert "flag" in op.attributes
    set_function_arg_attrs(op, [{"mhlo.sharding": "{replicated}"}, {}])
    dicts = function_arg_attrs(op)
    assert [set(d) for d in dicts] == [{"mhlo.sharding"}, set()]
    with building():
        call = ir.Operation.create("func.call", operands=[], attributes={
            "callee": ir.FlatSymbolRefAttr.get("f")}, ip=end_of(block))
    assert symbol_ref_attr(call) == "f"


def test_op_maker_makes_what_create_makes():
    module, _, block = _function()    # (the module kept: its ops die with it)
    x = block.arguments[0]
    with building():
        t = tensor_type(F32)
        loc = ir.Location.unknown()
    make = op_maker("jaxpr.sin", [t], None, 0)
    op = make([x], loc, end_of(block))
    assert op.name == "jaxpr.sin" and list(op.operands) == [x]
    assert [r.type for r in op.results] == [t] and len(op.regions) == 0


def test_new_holder_holds_a_block_of_the_types():
    module, _, block = _function()    # (the module kept: its ops die with it)
    with building():
        t = tensor_type(F32)
    holder, inner = new_holder(end_of(block), "mjax.region_holder", [t])
    assert holder.name == "mjax.region_holder"
    assert [a.type for a in inner.arguments] == [t]
    holder.erase()
