"""Small StableHLO-building helpers shared by lowering rules."""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect import attributes as A
from mjax.dialect import dot_algorithms
from mjax.dialect.dtype_rules import is_bool, is_complex, is_float, is_unsigned
from mjax.dialect.types import ShapedArray, aval_of, tensor_type
from mjax.passes.rules.dynamic_shapes import is_static, shape_value


def ttype(shape, dtype) -> ir.Type:
    return tensor_type(ShapedArray(shape, dtype))


def constant(value, dtype, shape=()) -> ir.Value:
    """A stablehlo.constant of `value` broadcast to `shape` (splat); a broadcast of the
    scalar for a symbolic shape (made dynamic after lowering)."""
    if not is_static(shape):
        return hlo.broadcast_in_dim(ttype(shape, dtype), constant(value, dtype), [])
    # (a zero-stride view: dense_elements makes it a splat without materializing it; an
    # np.full of a large shape cost 16 ms per constant, 48 of them for one random.normal
    # of 4096x4096, a second of lowering)
    arr = np.broadcast_to(np.asarray(value, dtype=dtype), shape)
    return hlo.constant(A.dense_elements(arr))


def constant_like(x: ir.Value, value) -> ir.Value:
    aval = aval_of(x.type)
    return constant(value, aval.dtype, aval.shape)


def slice_(op: ir.Operation, x: ir.Value, starts, limits, strides=None) -> ir.Value:
    """x[starts:limits:strides]; `real_dynamic_slice` when a bound is a symbolic
    dimension (dynamic_shapes.py)."""
    strides = list(strides or [1] * len(starts))
    if is_static(tuple(starts) + tuple(limits)):
        return hlo.slice(x, list(starts), list(limits), strides)
    dtype = aval_of(x.type).dtype
    shape = tuple((hi - lo + st - 1) // st for lo, hi, st in zip(starts, limits, strides))
    return hlo.real_dynamic_slice(ttype(shape, dtype), x, shape_value(op, starts),
                                  shape_value(op, limits), shape_value(op, strides))


def compare_type(dtype) -> str:
    if is_float(dtype) or is_complex(dtype):
        return "FLOAT"
    if is_bool(dtype) or is_unsigned(dtype):
        return "UNSIGNED"
    return "SIGNED"


def compare(x: ir.Value, y: ir.Value, direction: str) -> ir.Value:
    dtype = aval_of(x.type).dtype
    return hlo.compare(x, y, hlo.ComparisonDirectionAttr.get(direction),
                       compare_type=hlo.ComparisonTypeAttr.get(compare_type(dtype)))


def convert(x: ir.Value, dtype) -> ir.Value:
    aval = aval_of(x.type)
    if aval.dtype == dtype:
        return x
    return hlo.convert(ttype(aval.shape, dtype), x)


def scalar_reduce(result_types, inputs, inits, dimensions, body) -> list[ir.Value]:
    """stablehlo.reduce whose body is `body(*lhs_scalars, *rhs_scalars) -> [values]`."""
    op = hlo.ReduceOp([t for t in result_types], inputs, inits, dimensions)
    scalar_types = [ttype((), aval_of(v.type).dtype) for v in inits]
    block = op.regions[0].blocks.append(*scalar_types, *scalar_types)
    with ir.InsertionPoint(block):
        hlo.return_(list(body(*block.arguments)))
    return list(op.results)


_PRECISION_CONFIGS: dict = {}   # (context, precision) -> its attribute


def precision_config(precision) -> ir.ArrayAttr:
    """A dot's or convolution's precision_config as JAX states it (lax.precision_attr):
    one entry per operand, [DEFAULT, DEFAULT] when no precision (or a dot algorithm)
    was asked for: JAX never leaves it out, and XLA gets the same program."""
    key = (ir.Context.current, precision)
    attr = _PRECISION_CONFIGS.get(key)
    if attr is None:
        names = ("DEFAULT", "DEFAULT") if precision is None or \
            dot_algorithms.is_algorithm(precision) else tuple(precision)
        if len(_PRECISION_CONFIGS) >= 256:
            _PRECISION_CONFIGS.clear()
        attr = _PRECISION_CONFIGS[key] = ir.ArrayAttr.get(
            [hlo.PrecisionAttr.get(p) for p in names])
    return attr


def is_real_number(dtype) -> bool:
    """A float (bf16 and float8 included) or an integer: not a bool, not a complex."""
    return np.dtype(dtype).kind in "iu" or (is_float(dtype) and not is_complex(dtype))
