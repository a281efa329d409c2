"""Emitting `jaxpr` ops: the one helper passes, rules and the tracer share.

    b = Builder(ir.InsertionPoint(block), loc)
    y = b.sin(x)                      # jaxpr.sin, result type inferred
    z = b.emit(MulOp, x, y)[0]
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.core import OPS, JaxprOp, op_class
from mjax.dialect.shape_poly import is_symbolic_dim
from mjax.dialect.types import ShapedArray, aval_of


class Builder:
    """Creates `jaxpr` ops at an insertion point, with types from each op's `infer`."""

    def __init__(self, ip: ir.InsertionPoint | None = None, loc: ir.Location | None = None):
        self.ip = ip
        self.loc = loc

    def emit(self, op: type[JaxprOp] | str, *operands: ir.Value, **params) -> list[ir.Value]:
        cls = op_class(op) if isinstance(op, str) else op
        avals = [aval_of(v.type) for v in operands]
        params = cls.check_params(params)
        out_avals = cls.infer_checked(avals, params, params_checked=True)
        return list(cls.create(operands, out_avals, params, loc=self.loc, ip=self.ip).results)

    def __getattr__(self, name: str):
        # b.sin(x) == b.emit(SinOp, x); single-result ops return the value itself.
        cls = OPS.get("jaxpr." + name)
        if cls is None:
            raise AttributeError(f"Builder has no op '{name}'")

        def emit_one(*operands, **params):
            results = self.emit(cls, *operands, **params)
            return results[0] if len(results) == 1 else results
        return emit_one

    # ---- conveniences used by rules -------------------------------------------
    def constant(self, value, dtype=None, shape=None) -> ir.Value:
        """A `jaxpr.constant` holding `value` (broadcast to `shape` if given)."""
        arr = np.asarray(value, dtype=dtype)
        if shape is not None and any(map(is_symbolic_dim, shape)):
            # (a symbolic shape: the scalar broadcast by the op, not in the attribute)
            scalar = self.emit("constant", value=np.asarray(arr.reshape(())))[0]
            return self.emit("broadcast_in_dim", scalar, shape=tuple(shape),
                             broadcast_dimensions=())[0]
        if shape is not None:
            arr = np.broadcast_to(arr, shape)
            if arr.size > 1 and not any(arr.strides):
                # (one value broadcast: encoded as a splat without materializing it)
                return self.emit("constant", value=arr)[0]
        # np.asarray keeps 0-d values 0-d (np.ascontiguousarray would make them shape (1,)).
        return self.emit("constant", value=np.asarray(arr, order="C"))[0]

    def full_like(self, x: ir.Value, fill) -> ir.Value:
        aval = aval_of(x.type)
        return self.constant(np.full((), fill, dtype=aval.dtype), shape=aval.shape)

    def zeros_like(self, x: ir.Value) -> ir.Value:
        return self.full_like(x, 0)

    def zeros(self, aval: ShapedArray) -> ir.Value:
        return self.constant(np.zeros((), dtype=aval.dtype), shape=aval.shape)
