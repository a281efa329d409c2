"""Reductions with a custom computation: `jaxpr.reduce` and `jaxpr.reduce_window`.

The computation is a body region (isolated from above, ending in `jaxpr.yield`) that
combines two groups of scalars, the accumulators and the next elements, into new
accumulators. Layouts (n = number of reduced arrays):

    jaxpr.reduce         operands (*operands, *init_values)   results (*reduced)
                         attrs dimensions
                         region 0: block (*acc: scalars, *x: scalars) yields (*acc')
    jaxpr.reduce_window  operands (*operands, *init_values)   results (*windowed)
                         attrs window_dimensions, window_strides, padding,
                               base_dilation, window_dilation
                         region 0: as for jaxpr.reduce

JAX: lax.reduce_p and lax.reduce_window_p (the jaxpr is the region).
"""
from __future__ import annotations

from mjax.dialect import attributes as A
from mjax.dialect.ops.control_flow import RegionOp, _expect, _same, _strong, _types
from mjax.dialect.ops.reductions import reduce_shape
from mjax.dialect.ops.windowed import _WINDOW_ATTRS, reduce_window_shape
from mjax.dialect.types import ShapedArray


def _check_layout(op: str, avals, regions):
    """(operands, init values) after checking the operand and region layout."""
    if len(avals) % 2 or not avals:
        raise TypeError(f"{op} takes operands and as many init values, got {len(avals)} "
                        f"operands in all")
    n = len(avals) // 2
    operands, inits = avals[:n], avals[n:]
    for i, (x, init) in enumerate(zip(operands, inits)):
        if x.shape != operands[0].shape:
            raise TypeError(f"{op} operands must have equal shapes, got "
                            f"{_types(operands)}")
        if init.shape != () or init.dtype != x.dtype:
            raise TypeError(f"{op} init value {i} must be a scalar of its operand's dtype "
                            f"{x.dtype}, got {init.str_short()}")
    scalars = [ShapedArray((), x.dtype) for x in operands]
    ((body_in, body_out),) = regions
    _expect(op, "computation region arguments", body_in, scalars + scalars)
    if not _same(body_out, scalars):
        raise TypeError(f"{op} computation must yield {_types(scalars)}, got "
                        f"{_types(body_out)}")
    return operands, inits


class ReduceOp(RegionOp, name="reduce"):
    """Reduces `dimensions` of the operands with the region's computation, from the init
    values. JAX: lax.reduce_p."""
    num_regions = 1
    attributes = {"dimensions": A.Ints()}

    @classmethod
    def infer_regions(cls, avals, params, regions):
        operands, _ = _check_layout("jaxpr.reduce", avals, regions)
        shape = reduce_shape("jaxpr.reduce", operands[0].shape, tuple(params["dimensions"]))
        return tuple(ShapedArray(shape, _strong(x).dtype) for x in operands)


class ReduceWindowOp(RegionOp, name="reduce_window"):
    """Reduces each (padded, strided, dilated) window of the operands with the region's
    computation, from the init values (padding counts as the init value). JAX:
    lax.reduce_window_p."""
    num_regions = 1
    attributes = dict(_WINDOW_ATTRS)

    @classmethod
    def infer_regions(cls, avals, params, regions):
        operands, _ = _check_layout("jaxpr.reduce_window", avals, regions)
        shape = reduce_window_shape("jaxpr.reduce_window", operands[0].shape, **params)
        return tuple(ShapedArray(shape, _strong(x).dtype) for x in operands)


__all__ = ["ReduceOp", "ReduceWindowOp"]
