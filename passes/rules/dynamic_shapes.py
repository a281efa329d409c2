"""StableHLO for symbolic dimensions (shape polymorphism).

A value of type `tensor<?x4xf32, "b, 4">` lowers to `tensor<?x4xf32>`. Rules build the
static ops; `make_dynamic` turns iota/broadcast_in_dim/reshape of symbolic result types
into their dynamic forms, and rules whose ops take shapes as attributes compute them
here (`dim_value`, `shape_value`). A dimension variable is read off a function argument
that has it as a dimension, once per function, at the function's start:

    %0 = stablehlo.get_dimension_size %arg0, dim = 0 : (tensor<?x4xf32>) -> tensor<i32>
    %b = stablehlo.convert %0 {mjax.dim_var = "b"} : (tensor<i32>) -> tensor<i64>

so StableHLO's shape refinement, given the arguments' static shapes, folds every
dynamic shape back to a static one (frontend/export/shapes.py).
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect import attributes as A
from mjax.dialect.shape_poly import UnexpectedDimVar, fold, is_symbolic_dim
from mjax.dialect.types import ShapedArray, aval_of, tensor_type
from mjax.passes.registry import op_error

_MARK = "mjax.dim_var"
_I64 = np.dtype("int64")


def is_static(shape) -> bool:
    return not any(map(is_symbolic_dim, shape))


def _scalar(value: int) -> ir.Value:
    return hlo.constant(A.dense_elements(np.array(value, _I64)))


def _function_of(op: ir.Operation) -> ir.Operation:
    if op.name == "func.func":
        return op
    parent = op.parent
    while parent is not None and parent.name != "func.func":
        parent = parent.parent
    if parent is None:
        raise op_error(op, "uses symbolic dimensions outside a function")
    return parent.operation


def _dim_var(op: ir.Operation, name: str) -> ir.Value:
    """The value of dimension variable `name` in op's function (an i64 scalar)."""
    func = _function_of(op)
    entry = func.regions[0].blocks[0]
    for o in entry.operations:     # (the prologue: one marked convert per variable)
        if _MARK in o.attributes and ir.StringAttr(o.attributes[_MARK]).value == name:
            return o.result
    found = None
    for arg in entry.arguments:
        for i, d in enumerate(_shape(arg)):
            single = d._single_variable() if is_symbolic_dim(d) else None
            if single is not None and single[0] == name and (
                    found is None or single[1:] == (1, 0)):
                found = (arg, i, single[1], single[2])
    if found is None:
        if not any(name in str(d) for arg in entry.arguments for d in _shape(arg)):
            raise UnexpectedDimVar(
                f"Encountered dimension variable '{name}' that is not appearing in the "
                f"shapes of the function arguments ({op_error(op, 'uses it').args[0]})")
        raise op_error(op, f"the dimension variable '{name}' is not a dimension of any "
                           f"argument of its function (mjax reads each variable off an "
                           f"argument of shape (..., {name}, ...) or (..., k*{name} + c, ...))")
    arg, i, coeff, const = found
    with ir.InsertionPoint.at_block_begin(entry), func.location:
        size = hlo.get_dimension_size(arg, i)
        value = hlo.convert(tensor_type(ShapedArray((), _I64)), size)
        if (coeff, const) != (1, 0):
            value = hlo.divide(hlo.subtract(value, _scalar(const)), _scalar(coeff))
        value.owner.attributes[_MARK] = ir.StringAttr.get(name)
    return value


def _shape(arg: ir.Value) -> tuple:
    try:
        return aval_of(arg.type).shape
    except TypeError:    # (a token, ...)
        return ()


_BINARY = {"floordiv": None, "mod": None, "max": hlo.maximum, "min": hlo.minimum}


def _floordiv(a: ir.Value, b: ir.Value) -> ir.Value:
    # Dimensions are >= 1 and divisors of dimension expressions positive, but a dividend
    # such as b - 5 may be negative: round toward -inf, as Python (and JAX) do.
    q = hlo.divide(a, b)
    r = hlo.remainder(a, b)
    zero = _scalar(0)
    adjust = hlo.and_(hlo.compare(r, zero, hlo.ComparisonDirectionAttr.get("NE")),
                      hlo.compare(hlo.compare(r, zero, hlo.ComparisonDirectionAttr.get("LT")),
                                  hlo.compare(b, zero, hlo.ComparisonDirectionAttr.get("LT")),
                                  hlo.ComparisonDirectionAttr.get("NE")))
    return hlo.select(adjust, hlo.subtract(q, _scalar(1)), q)


def _binary(op: str, a: ir.Value, b: ir.Value) -> ir.Value:
    if op == "floordiv":
        return _floordiv(a, b)
    if op == "mod":
        return hlo.subtract(a, hlo.multiply(_floordiv(a, b), b))
    return _BINARY[op](a, b)


def emit_dim(d, var) -> ir.Value:
    """A dimension (int or expression) as an i64 scalar computed where the insertion
    point is; `var(name)` gives each variable's value."""
    return fold(d, var, _scalar, hlo.add, hlo.multiply, _binary)


def dim_value(op: ir.Operation, d) -> ir.Value:
    """A dimension as an i64 scalar, from op's function's dimension variables."""
    return emit_dim(d, lambda name: _dim_var(op, name))


def defining_op(value: ir.Value) -> ir.Operation:
    """An op in the function where `value` lives (for dim_value and shape_value)."""
    owner = value.owner
    return owner.owner.operation if isinstance(owner, ir.Block) else owner.operation


def shape_value(op: ir.Operation, shape) -> ir.Value:
    """A shape as a 1-D i64 tensor (the shape operand of StableHLO's dynamic ops)."""
    one = tensor_type(ShapedArray((1,), _I64))
    parts = [hlo.reshape(one, dim_value(op, d)) for d in shape]
    if not parts:
        return hlo.constant(A.dense_elements(np.zeros((0,), _I64)))
    return parts[0] if len(parts) == 1 else hlo.concatenate(parts, 0)


# ---- static forms made dynamic -------------------------------------------------------------
# Rules build StableHLO's static ops with result types from avals; with symbolic
# dimensions those types spell the dimensions in their encoding. One walk after lowering
# turns such ops into the dynamic forms, computing the shape from the encoding, so rules
# need not know about symbolic dimensions.

def _dynamic_iota(op, shape):
    return hlo.dynamic_iota(op.result.type, shape_value(op, shape),
                            ir.IntegerAttr(op.attributes["iota_dimension"]).value)


def _dynamic_broadcast(op, shape):
    return hlo.dynamic_broadcast_in_dim(
        op.result.type, op.operands[0], shape_value(op, shape),
        list(ir.DenseI64ArrayAttr(op.attributes["broadcast_dimensions"])))


def _dynamic_reshape(op, shape):
    return hlo.dynamic_reshape(op.result.type, op.operands[0], shape_value(op, shape))


_DYNAMIC_FORMS = {"stablehlo.iota": _dynamic_iota,
                  "stablehlo.broadcast_in_dim": _dynamic_broadcast,
                  "stablehlo.reshape": _dynamic_reshape}


def make_dynamic(root: ir.Operation) -> None:
    """Replaces static-form ops (iota, broadcast_in_dim, reshape) whose result type has
    symbolic dimensions with StableHLO's dynamic forms."""
    todo = []

    def visit(op: ir.Operation):
        for region in op.regions:
            for block in region.blocks:
                for inner in block.operations:
                    inner = inner.operation
                    if inner.name in _DYNAMIC_FORMS and len(inner.results) == 1 and \
                            isinstance(inner.result.type, ir.RankedTensorType) and \
                            inner.result.type.encoding is not None:
                        todo.append(inner)
                    visit(inner)
    visit(root)
    for op in todo:
        shape = aval_of(op.result.type).shape
        with ir.InsertionPoint(op), op.location:
            new = _DYNAMIC_FORMS[op.name](op, shape)
        op.result.replace_all_uses_with(new)
        op.erase()


def stripped(t: ir.Type) -> ir.Type:
    """A tensor type without the encoding that spells its symbolic dimensions."""
    if isinstance(t, ir.RankedTensorType) and t.encoding is not None:
        return ir.RankedTensorType.get(t.shape, t.element_type)
    return t


def strip_encodings(root: ir.Operation) -> None:
    """Drops the symbolic-dimension encodings from every type under root (StableHLO
    knows no such encodings): results, block arguments and function types."""
    def visit(op: ir.Operation):
        for r in op.results:
            t = stripped(r.type)
            if t != r.type:
                r.set_type(t)
        for region in op.regions:
            for block in region.blocks:
                for a in block.arguments:
                    t = stripped(a.type)
                    if t != a.type:
                        a.set_type(t)
                for inner in block.operations:
                    visit(inner.operation)
        if op.name == "func.func":
            ftype = ir.FunctionType(ir.TypeAttr(op.attributes["function_type"]).value)
            new = ir.FunctionType.get([stripped(t) for t in ftype.inputs],
                                      [stripped(t) for t in ftype.results])
            if new != ftype:
                op.attributes["function_type"] = ir.TypeAttr.get(new)
    visit(root)
