"""`--stablehlo-memory-kinds`: write the memory kind of every argument and result of a
lowered @main, as JAX's lowering does, and remove the marked device_put calls.

    func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
      %0 = stablehlo.custom_call @annotate_device_placement(%x) {mjax.device_put, ...
             mhlo.frontend_attributes = {_xla_buffer_placement = "pinned_host"}}
      return %0
  ==> (arg-kinds=device)
    func.func @main(%x: tensor<4xf32> {mhlo.memory_kind = "device"})
        -> (tensor<4xf32> {mhlo.memory_kind = "pinned_host"}) {
      return %x

A device_put inside the program lowers to XLA's `annotate_device_placement` marked
`mjax.device_put` (passes/rules/structural.py); the pass follows memory kinds through
@main from its arguments' (`arg-kinds`) and those calls (an op's result is in the memory
of its operands of rank > 0; constants go with any), then removes the marked calls (JAX's
CPU lowering of device_put is the identity), or with `keep-puts` (JAX's TPU and GPU
lowering) keeps them as XLA's placement calls, unmarked, where some memory is a host
one. Results given a kind (`out-kinds`, from
out_shardings) are moved there by an unmarked placement call (JAX:
mlir.wrap_with_memory_kind). An elementwise op over host and device values is JAX's
ValueError. Values in loop and branch bodies are not followed. Where no memory is a host
one, nothing is written.
"""
from __future__ import annotations

from dataclasses import dataclass

from jaxlib.mlir import ir

from mjax.dialect import ShapedArray
from mjax.dialect.ops.structural import MEMORY_KINDS
from mjax.dialect.types import dtype_of_element_type
from mjax.passes.ir_util import main_function
from mjax.passes.registry import Pass, register_pass
from mjax.passes.rules.structural import DEVICE_PUT_CALL, placement_call

HOST_KINDS = tuple(k for k in MEMORY_KINDS if k != "device")
ANY = "any"     # (an argument that takes the memory of the values it meets)


def type_string(aval, kind: str) -> str:
    """An array type as JAX's avals print with their memory space: float32<host>[2,4]."""
    space = "<host>" if kind == "pinned_host" else ""
    return f"{aval.dtype.name}{space}[{','.join(map(str, aval.shape))}]"


def annotate_memory_kinds(module: ir.Module, arg_kinds, out_kinds,
                          keep_puts: bool = False) -> None:
    """The pass's rewrite: `arg_kinds` one per @main argument (None where unknown, ANY
    for an operand that takes the others' memory), `out_kinds` per result (None where
    not given); `keep_puts`: device_puts stay placement calls where some memory is a
    host one (JAX's TPU and GPU lowering, _tpu_gpu_device_put_lowering)."""
    main = main_function(module)
    if main is None:
        return
    kinds = _propagate(main, list(arg_kinds or ()),
                       any(k in HOST_KINDS for k in (out_kinds or ())), keep_puts)
    if kinds is not None:
        _set_attrs(main, kinds[0], kinds[1], list(out_kinds or ()))


def _rank(value) -> int:
    try:
        return ir.RankedTensorType(value.type).rank
    except ValueError:    # (tokens, tuples)
        return 0


def _propagate(main, arg_kinds, asked_host: bool, keep_puts: bool = False):
    """(argument kinds, result kinds) of @main, the marked device_put calls removed
    (everywhere), or unmarked where `keep_puts` and some memory is a host one; None when
    no memory is a host one (then nothing is annotated)."""
    block = main.regions[0].blocks[0]
    args = list(block.arguments)
    arg_kinds = (arg_kinds + [None] * len(args))[:len(args)]
    kind = {}
    for a, k in zip(args, arg_kinds):
        # (JAX's avals: unpinned host memory counts as device memory inside programs)
        kind[a] = None if k == ANY else "pinned_host" if k == "pinned_host" else "device"
    seen_host = asked_host or any(k in HOST_KINDS for k in arg_kinds)
    results = []
    for op in block.operations:
        if op.operation.name == "func.return":
            results = [kind.get(v) or "device" for v in op.operands]
            continue
        put = _marked_kind(op)
        if put is not None:
            seen_host |= put in HOST_KINDS
            kind[op.results[0]] = "pinned_host" if put == "pinned_host" else "device"
            continue
        # (constants and values made from them alone: None, any memory)
        ins = {kind.get(v) for v in op.operands if _rank(v) > 0} - {None}
        if len(ins) > 1:
            _check_same_memory(op, kind)
        out = ins.pop() if len(ins) == 1 else "device" if ins else None
        for r in op.results:
            kind[r] = out
    if keep_puts and seen_host:
        _unmark_nested(main)
    else:
        _strip_nested(main)
    if not seen_host:
        return None
    return arg_kinds, results


# StableHLO's elementwise ops with JAX's primitive names: mixing host and device memory
# in them is JAX's ValueError (its avals' memory spaces must agree).
_ELEMENTWISE = {"add": "add", "subtract": "sub", "multiply": "mul", "divide": "div",
                "maximum": "max", "minimum": "min", "power": "pow", "remainder": "rem",
                "atan2": "atan2", "and": "and", "or": "or", "xor": "xor",
                "select": "select_n"}
_COMPARISONS = {"EQ": "eq", "NE": "ne", "LT": "lt", "LE": "le", "GT": "gt", "GE": "ge"}
PRIMITIVES = frozenset(_ELEMENTWISE.values()) | frozenset(_COMPARISONS.values())


def _check_same_memory(op, kind) -> None:
    """JAX's ValueError for an elementwise op over values in host and in device memory."""
    name = op.operation.name.split(".", 1)[-1]
    if name == "compare":
        text = str(op.attributes["comparison_direction"])
        prim = next((p for d, p in _COMPARISONS.items() if d in text), None)
    else:
        prim = _ELEMENTWISE.get(name)
    if prim is not None:
        check_operands(prim, op, kind)


def check_operands(prim: str, op, kind) -> None:
    """JAX's ValueError where two operands of rank > 0 of `op` (JAX's `prim`) are in
    different memories (`kind`: value -> its memory, None where unknown)."""
    prev = None
    for v in op.operands:
        if _rank(v) == 0:
            continue
        if prev is not None and kind.get(prev) is not None and kind.get(v) is not None \
                and kind[prev] != kind[v]:
            raise ValueError(f"memory_space of all inputs passed to `{prim}` must be the "
                             f"same. Got one operand with type: {_type_of(prev, kind)} "
                             f"and another operand with type: {_type_of(v, kind)}")
        prev = v


def _type_of(value, kind) -> str:
    t = ir.RankedTensorType(value.type)
    aval = ShapedArray(t.shape, dtype_of_element_type(t.element_type))
    return type_string(aval, kind[value])


def _marked_kind(op):
    if op.operation.name != "stablehlo.custom_call" or \
            DEVICE_PUT_CALL not in op.attributes:
        return None
    fa = ir.DictAttr(op.attributes["mhlo.frontend_attributes"])
    return ir.StringAttr(fa["_xla_buffer_placement"]).value


def _strip_nested(op):
    """Removes the marked device_put calls in the regions of `op` (loop and branch
    bodies: the memory kinds of their values stay inside)."""
    for region in op.regions:
        for b in region.blocks:
            for inner in list(b.operations):
                if _marked_kind(inner) is not None:
                    inner.results[0].replace_all_uses_with(inner.operands[0])
                    inner.operation.erase()
                else:
                    _strip_nested(inner)


def _unmark_nested(op):
    """The marked device_put calls in the regions of `op` made XLA's placement calls
    (JAX: mlir.wrap_with_memory_kind): unmarked, with a side effect, so kept."""
    for region in op.regions:
        for b in region.blocks:
            for inner in b.operations:
                if _marked_kind(inner) is not None:
                    del inner.attributes[DEVICE_PUT_CALL]
                    inner.attributes["has_side_effect"] = ir.BoolAttr.get(True)
                else:
                    _unmark_nested(inner)


def _set_attrs(main, arg_kinds, result_kinds, out_kinds):
    """`mhlo.memory_kind` on every argument and result; the results out_shardings gave a
    memory kind are moved there by XLA's annotate_device_placement."""
    block = main.regions[0].blocks[0]
    ret = block.operations[len(block.operations) - 1]
    out_kinds = (out_kinds + [None] * len(result_kinds))[:len(result_kinds)]
    final = [o or r for o, r in zip(out_kinds, result_kinds)]
    main.attributes["arg_attrs"] = _with_kinds(main, "arg_attrs", arg_kinds)
    main.attributes["res_attrs"] = _with_kinds(main, "res_attrs", final)
    with ir.InsertionPoint(ret), ret.location:
        for i, k in enumerate(out_kinds):
            if k is not None:
                ret.operands[i] = placement_call(ret.operands[i], k, marked=False)


def _with_kinds(main, name: str, kinds) -> ir.ArrayAttr:
    old = list(ir.ArrayAttr(main.attributes[name])) if name in main.attributes else []
    old += [ir.DictAttr.get({})] * (len(kinds) - len(old))
    out = []
    for attrs, k in zip(old, kinds):
        d = {a.name: a.attr for a in ir.DictAttr(attrs)}
        if k not in (None, ANY):
            d["mhlo.memory_kind"] = ir.StringAttr.get(k)
        out.append(ir.DictAttr.get(d))
    return ir.ArrayAttr.get(out)


def _kinds(value) -> tuple:
    """A kinds option as a tuple: from the command line `pinned_host,none,any`."""
    if isinstance(value, str):
        value = [None if k in ("", "none") else k for k in value.split(",")] if value else []
    return tuple(value or ())


@register_pass("stablehlo-memory-kinds")
@dataclass(frozen=True)
class StablehloMemoryKindsPass(Pass):
    """Writes @main's memory kinds (mhlo.memory_kind) and removes marked device_put calls."""

    point = "after-lowering"
    arg_kinds: tuple = ()    # per @main argument: a memory kind, `any` or none
    out_kinds: tuple = ()    # per result: the kind out_shardings asked for, or none
    keep_puts: bool = False  # device_puts stay placement calls (JAX's TPU/GPU lowering)

    def run(self, module: ir.Module) -> None:
        annotate_memory_kinds(module, _kinds(self.arg_kinds), _kinds(self.out_kinds),
                              self.keep_puts)


__all__ = ["ANY", "HOST_KINDS", "PRIMITIVES", "StablehloMemoryKindsPass",
           "annotate_memory_kinds", "check_operands", "type_string"]
