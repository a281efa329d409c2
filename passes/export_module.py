"""The StableHLO module of an export, as mjax.export reads and edits it: portable
artifacts written and read, @main's captured arguments made constants and its
arguments named, JAX's multi-platform calling convention (a platform index first), the
custom calls a module makes, @main's signature."""
from __future__ import annotations

import io

import numpy as np
from jaxlib import _jax
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func as func_d
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.context import context
from mjax.dialect.ops.structural import ConstantOp
from mjax.dialect.symbols import main_function
from mjax.dialect.types import ShapedArray


def portable_artifact(module, with_sdy: bool = False) -> bytes:
    """A StableHLO portable artifact (CHLO legalized), readable by StableHLO consumers at
    least four weeks older than this jaxlib; `with_sdy`: Shardy's meshes and shardings
    kept as such (as JAX serializes for a backend using Shardy)."""
    target = hlo.get_version_from_compatibility_requirement(
        hlo.StablehloCompatibilityRequirement.WEEK_4)
    buf = io.BytesIO()
    module.operation.write_bytecode(buf)
    return _jax.mlir.serialize_portable_artifact(buf.getvalue(), target, with_sdy)


def read_artifact(artifact: bytes):
    """The module of a portable artifact."""
    with context():
        return hlo.deserialize_portable_artifact(context(), artifact)


def read_stablehlo(module):
    """The module of StableHLO text, a portable artifact or plain bytecode."""
    with context(), ir.Location.unknown(context()):
        if isinstance(module, str):
            return ir.Module.parse(module)
        try:
            return hlo.deserialize_portable_artifact(context(), bytes(module))
        except Exception:   # noqa: BLE001  (not an artifact: plain bytecode)
            return ir.Module.parse(bytes(module))


def module_strings(module, name: str) -> tuple:
    """The texts of the module's array-of-strings attribute `name` (() if none)."""
    attrs = module.operation.attributes
    if name not in attrs:
        return ()
    return tuple(ir.StringAttr(a).value for a in ir.ArrayAttr(attrs[name]))


def static_inputs(main) -> bool:
    """Whether every argument of func.func `main` has a static shape."""
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    return all(ir.ShapedType(t).has_static_shape for t in ftype.inputs)


def signature_text(main) -> str:
    return str(ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value))


def first_global_constant(main):
    """The `jax.global_constant` name of @main's first argument (the platform index of a
    multi-platform module), or None."""
    if "arg_attrs" not in main.attributes:
        return None
    attrs = list(ir.ArrayAttr(main.attributes["arg_attrs"]))
    if attrs and "jax.global_constant" in ir.DictAttr(attrs[0]):
        return ir.DictAttr(attrs[0])["jax.global_constant"]
    return None


def inline_captured(main, n_in: int, arrays) -> None:
    """@main's arguments after its first `n_in` (captured values) become constants of
    `arrays` (NumPy arrays, in order)."""
    with context(), ir.Location.unknown(context()):
        block = main.regions[0].blocks[0]
        for j, value in enumerate(arrays):
            const = ConstantOp.create([], [ShapedArray(value.shape, value.dtype)],
                                      {"value": np.asarray(value)},
                                      ip=ir.InsertionPoint.at_block_begin(block))
            block.arguments[n_in + j].replace_all_uses_with(const.results[0])
        for _ in arrays:
            block.erase_argument(n_in)
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        main.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [a.type for a in block.arguments], list(ftype.results)))


def name_arguments(main, names) -> None:
    """Gives @main's arguments the locations loc("<name>"), as JAX's exported modules
    (nothing unless there is a name per argument)."""
    block = main.regions[0].blocks[0]
    n = len(block.arguments)
    if names is None or len(names) != n:
        return
    with context():
        for arg, name in zip(list(block.arguments), names):
            new = block.add_argument(arg.type, ir.Location.name(name))
            arg.replace_all_uses_with(new)
        for _ in range(n):
            block.erase_argument(0)


def add_platform_index(module) -> None:
    """Multi-platform calling convention: @main takes an i32 platform index first (our
    lowering is the same on every platform, so it is unused)."""
    with context(), ir.Location.unknown(context()):
        main = main_function(module)
        table = ir.SymbolTable(module.operation)
        table.set_symbol_name(main, "_main_one_platform")
        main.attributes["sym_visibility"] = ir.StringAttr.get("private")
        ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
        i32 = ir.RankedTensorType.get([], ir.IntegerType.get_signless(32))
        with ir.InsertionPoint(module.body):
            new = func_d.FuncOp("main", ([i32] + list(ftype.inputs), list(ftype.results)))
            attrs = [ir.DictAttr.get({"jax.global_constant":
                                      ir.StringAttr.get("_platform_index")})]
            new.arg_attrs = ir.ArrayAttr.get(attrs + [ir.DictAttr.get({})] *
                                             len(ftype.inputs))
            block = new.add_entry_block()
        with ir.InsertionPoint(block):
            call = func_d.CallOp(list(ftype.results), ir.FlatSymbolRefAttr.get(
                "_main_one_platform"), list(block.arguments)[1:])
            func_d.ReturnOp(list(call.results))


def custom_call_targets(module) -> list[tuple[str, str]]:
    """(target, location text) of every stablehlo.custom_call in `module`."""
    found = []

    def visit(op):
        if op.name == "stablehlo.custom_call":
            found.append((ir.StringAttr(op.attributes["call_target_name"]).value,
                          str(op.location)))
        return ir.WalkResult.ADVANCE
    module.operation.walk(visit)
    return found


__all__ = ["add_platform_index", "custom_call_targets", "first_global_constant",
           "inline_captured", "module_strings", "name_arguments", "portable_artifact",
           "read_artifact", "read_stablehlo", "signature_text", "static_inputs"]
