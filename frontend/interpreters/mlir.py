"""JAX: jax.interpreters.mlir: lowering rules of user-defined primitives, and helpers
that build MLIR types and attributes with jaxlib's bindings.

`register_lowering` fills the table as in JAX, read for user-defined primitives
(mjax/tracing/primitive.py): a `lower_fun` rule is traced into the jaxpr module by
--jaxpr-expand-transforms and lowered as the rest; a rule written with MLIR's builders
is called by --jaxpr-to-stablehlo with a `LoweringRuleContext` and the operands' StableHLO
values. mjax's own primitives keep their lowering rules in mjax.passes.rules. The type
and attribute helpers build in the current MLIR context (`with mjax.dialect.context:`, or any context).
"""
from __future__ import annotations

import io
from typing import Any, Callable

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo

from mjax.dialect.context import context
from mjax.dialect.types import element_type
from mjax.arrays import host_callbacks
from mjax.passes.rules.callbacks import host_call
from mjax.tracing.primitive import LOWERINGS, LowerFun, LoweringRuleContext

__all__ = ["register_lowering", "lower_fun", "LoweringRuleContext", "ir",
           "dtype_to_ir_type", "aval_to_ir_type", "aval_to_ir_types", "dense_int_array",
           "dense_int_elements", "i32_attr", "i64_attr", "ir_constant", "ir_constants",
           "flatten_ir_types", "flatten_ir_values", "unflatten_ir_values_like_types",
           "module_to_string", "module_to_bytecode", "make_ir_context",
           "emit_python_callback"]

# primitive -> {platform or None: rule}
_lowerings: dict = LOWERINGS

LoweringRule = Callable[..., Any]
Value = Any


def register_lowering(prim, rule, platform: str | None = None, inline: bool = True,
                      cacheable: bool = True):
    """Records `rule` as `prim`'s lowering (for `platform`, or every platform); returns
    None, as JAX's."""
    _lowerings.setdefault(prim, {})[platform] = rule


def lower_fun(fun: Callable, multiple_results: bool = True) -> Callable:
    """A lowering rule that lowers `fun(*operands, **params)` in the primitive's place."""
    return LowerFun(fun, multiple_results)


def emit_python_callback(ctx, callback, token, operands, operand_avals, result_avals, *,
                         has_side_effect, returns_token=True, partitioned=False,
                         sharding=None, operand_layouts=None, result_layouts=None):
    """Calls the Python function `callback` on the host from a lowering rule written
    with MLIR's builders: `callback(*arrays)` returns one array per result aval. Returns
    (results, token, keepalive) as JAX's. Token-ordered callbacks (a `token`) are not
    supported: pass None (order effects with jax.experimental.io_callback)."""
    if token is not None:
        raise NotImplementedError("mlir.emit_python_callback with a token (an ordered "
                                  "effect): mjax's lowering rules get no token; pass "
                                  "token=None")
    if partitioned or operand_layouts is not None or result_layouts is not None:
        raise NotImplementedError("mlir.emit_python_callback: partitioned callbacks and "
                                  "explicit layouts")
    del operand_avals, sharding    # (the operands' types say it; one device runs it)
    avals = list(result_avals)

    def flat(*arrays):
        return list(callback(*arrays))
    cid = host_callbacks.register(flat, getattr(callback, "__name__", "python_callback"))
    types = [aval_to_ir_type(ctx, a) for a in avals]
    results = host_call(list(operands), types, cid, bool(has_side_effect))
    return results, None, None


def dtype_to_ir_type(dtype) -> ir.Type:
    """The MLIR element type of a dtype (f32, i32, ui8, bf16, complex<f32>, ...)."""
    return element_type(np.dtype(dtype))


def aval_to_ir_type(ctx, aval) -> ir.Type:
    """tensor<SHAPExELT> of an aval (`ctx`, JAX's module context, is not used)."""
    return ir.RankedTensorType.get(list(aval.shape), dtype_to_ir_type(aval.dtype))


def aval_to_ir_types(ctx, aval) -> tuple[ir.Type, ...]:
    return (aval_to_ir_type(ctx, aval),)


def flatten_ir_types(xs) -> list:
    return [t for x in xs for t in (x if isinstance(x, (tuple, list)) else (x,))]


def flatten_ir_values(xs) -> list:
    return flatten_ir_types(xs)


def unflatten_ir_values_like_types(xs, ys) -> list:
    xs, out = list(xs), []
    for y in ys:
        n = len(y) if isinstance(y, (tuple, list)) else 1
        out.append(xs[:n] if isinstance(y, (tuple, list)) else xs[0])
        xs = xs[n:]
    return out


def dense_int_array(xs) -> ir.DenseI64ArrayAttr:
    return ir.DenseI64ArrayAttr.get(np.asarray(xs, np.int64).tolist())


def dense_int_elements(xs) -> ir.DenseIntElementsAttr:
    return ir.DenseIntElementsAttr.get(np.asarray(xs, np.int64))


def i32_attr(i) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(32), int(i))


def i64_attr(i) -> ir.IntegerAttr:
    return ir.IntegerAttr.get(ir.IntegerType.get_signless(64), int(i))


def ir_constant(val, *, const_lowering=None, aval=None) -> ir.Value:
    """A stablehlo.constant of a NumPy value, at the current insertion point."""
    val = np.asarray(val)
    return stablehlo.constant(ir.DenseElementsAttr.get(val, type=dtype_to_ir_type(val.dtype)))


def ir_constants(val, *, const_lowering=None, aval=None) -> tuple[ir.Value, ...]:
    return (ir_constant(val),)


def module_to_string(module: ir.Module, enable_debug_info=None) -> str:
    return str(module)


def module_to_bytecode(module: ir.Module) -> bytes:
    out = io.BytesIO()
    module.operation.write_bytecode(out)
    return out.getvalue()


def make_ir_context() -> ir.Context:
    """mjax's MLIR context (every dialect mjax uses is loaded in it)."""
    return context()
