"""The IR side of calling exports with symbolic dimensions (mjax.export.shapes): the
shape assertions an export's @main makes of its own arguments, and a module's @main given
static argument types and StableHLO's shape refinement run on it."""
from __future__ import annotations

import functools

import numpy as np
from jaxlib import _jax
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func as func_d
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect import attributes as A
from mjax.dialect.context import context
from mjax.dialect.shape_poly import SymbolicScope, fold, is_symbolic_dim
from mjax.dialect.types import ShapedArray, tensor_type
from mjax.passes.ir_util import main_function
from mjax.passes.rules.dynamic_shapes import emit_dim


def scope_of(avals) -> SymbolicScope | None:
    for a in avals:
        for d in a.shape:
            if is_symbolic_dim(d):
                return d._scope
    return None


# ---- shape assertions ---------------------------------------------------------------------
# The module checks its own arguments, as JAX's exports do, for callers that are not mjax
# (TensorFlow's XlaCallModule, JAX): `shape_assertion` custom calls, which shape
# refinement evaluates (and drops) once the argument shapes are known.
_I64 = np.dtype("int64")
_MISMATCH = "Input shapes do not match the polymorphic shapes specification. "


def add_shape_assertions(module: ir.Module, in_avals) -> None:
    """Asserts at @main's start: each dimension variable >= 1 (and within its
    constraints), each symbolic argument dimension equal to its expression."""
    main = main_function(module)
    block = main.regions[0].blocks[0]
    args = list(block.arguments)[len(block.arguments) - len(in_avals):]
    first = block.operations[0] if len(block.operations) else None
    with ir.InsertionPoint(first) if first is not None else ir.InsertionPoint(block), \
            main.location:
        sizes, where, values = {}, {}, {}
        for i, (arg, aval) in enumerate(zip(args, in_avals)):
            for j, d in enumerate(aval.shape):
                if is_symbolic_dim(d):
                    sizes[i, j] = hlo.convert(tensor_type(ShapedArray((), _I64)),
                                              hlo.get_dimension_size(arg, j))
                    single = d._single_variable()
                    if single is not None and single[0] not in values:
                        name, coeff, const = single
                        values[name] = sizes[i, j] if (coeff, const) == (1, 0) else \
                            hlo.divide(hlo.subtract(sizes[i, j], _scalar(const)),
                                       _scalar(coeff))
                        where[name] = f"args[{i}].shape[{j}]"
        for name, value in values.items():
            _assert(_compare(value, _scalar(1), "GE"), [value],
                    f"{_MISMATCH}Expected value >= 1 for dimension variable '{name}'. "
                    f"Obtained dimension variable '{name}' = {{0}} from "
                    f"{where[name]}.")
        var = values.__getitem__
        for (i, j), size in sizes.items():
            d = in_avals[i].shape[j]
            expected = emit_dim(d, var)
            _assert(_compare(size, expected, "EQ"), [size, expected],
                    f"{_MISMATCH}Found inconsistency between dimension size "
                    f"args[{i}].shape[{j}] (= {{0}}) and the specification '{d}' (= {{1}}).")
        scope = scope_of(in_avals)
        for e, kind in (scope._facts if scope is not None else ()):
            if not variables(e) <= values.keys():
                continue        # (a constraint on variables these arguments do not have)
            value = emit_dim(e, var)
            _assert(_compare(value, _scalar(0), "EQ" if kind == "==" else "GE"), [value],
                    f"{_MISMATCH}The dimension variables do not meet the constraints "
                    f"{list(scope._constraints_str)} ('{e}' is {{0}}).")


def _scalar(value: int) -> ir.Value:
    return hlo.constant(A.dense_elements(np.array(value, _I64)))


def _compare(a, b, direction: str) -> ir.Value:
    return hlo.compare(a, b, hlo.ComparisonDirectionAttr.get(direction),
                       compare_type=hlo.ComparisonTypeAttr.get("SIGNED"))


def _assert(pred, values, message: str) -> None:
    ir.Operation.create("stablehlo.custom_call", results=[], operands=[pred, *values],
                        attributes={
                            "call_target_name": ir.StringAttr.get("shape_assertion"),
                            "api_version": ir.IntegerAttr.get(
                                ir.IntegerType.get_signless(32), 2),
                            "has_side_effect": ir.BoolAttr.get(True),
                            "error_message": ir.StringAttr.get(message)})


def variables(e) -> set:
    names = set()
    fold(e, names.add, lambda c: None, lambda a, b: None, lambda a, b: None,
         lambda op, a, b: None)
    return names


@functools.lru_cache(maxsize=64)
def refined_module(text: str, arg_avals: tuple) -> str:
    """The module `text` with @main's array arguments given static types (`arg_avals`,
    after any leading platform index) and StableHLO's shape refinement run."""
    with context(), ir.Location.unknown(context()):
        module = ir.Module.parse(text)
        _static_main(module, arg_avals)
        try:
            refined = ir.Module.parse(_jax.mlir.refine_polymorphic_shapes(
                module.operation.get_asm(binary=True), enable_shape_assertions=True,
                validate_static_shapes=True))
        except _jax.JaxRuntimeError as e:   # (a shape assertion of the module, say)
            raise ValueError(f"Error refining shapes for the arguments {list(arg_avals)}: "
                             f"{e}") from None
        for op in refined.body.operations:
            if op.operation.name == "func.func":
                _retype(op.operation)
        return refined.operation.get_asm(enable_debug_info=True)


def _static_main(module: ir.Module, arg_avals) -> None:
    """Renames @main and adds a @main of static argument types that converts its
    arguments to the old one's dynamic types and calls it: a valid module, which shape
    refinement specializes for the static types (JAX's exports call their
    `_wrapped_jax_export_main` so too)."""
    old = main_function(module)
    ir.SymbolTable(module.operation).set_symbol_name(old, "_mjax_polymorphic_main")
    old.attributes["sym_visibility"] = ir.StringAttr.get("private")
    ftype = ir.FunctionType(ir.TypeAttr(old.attributes["function_type"]).value)
    inputs = list(ftype.inputs)
    first = len(inputs) - len(arg_avals)
    static = inputs[:first] + [tensor_type(a) for a in arg_avals]
    with ir.InsertionPoint.at_block_begin(module.body):
        new = func_d.FuncOp("main", (static, list(ftype.results)))
    for attr in ("arg_attrs", "res_attrs"):
        if attr in old.attributes:
            new.attributes[attr] = old.attributes[attr]
    block = new.add_entry_block()
    with ir.InsertionPoint(block):
        args = [a if a.type == t else hlo.convert(t, a)
                for a, t in zip(block.arguments, inputs)]
        func_d.ReturnOp(func_d.CallOp(list(ftype.results),
                                      ir.FlatSymbolRefAttr.get("_mjax_polymorphic_main"),
                                      args).results)


def _retype(fn: ir.Operation) -> None:
    """A function's type from its arguments and returned values (refinement leaves the
    result types of values it does not refine, such as a returned argument)."""
    block = fn.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
        [a.type for a in block.arguments], [v.type for v in ret.operands]))


__all__ = ["add_shape_assertions", "refined_module", "scope_of", "variables"]
