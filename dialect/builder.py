"""Emitting `jaxpr` ops: the one helper passes, rules and the tracer share.

    b = Builder(ir.InsertionPoint(block), loc)
    y = b.sin(x)                      # jaxpr.sin, result type inferred
    z = b.emit(MulOp, x, y)[0]
"""
from __future__ import annotations

import math
from types import MethodType

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.attributes import dense_elements
from mjax.dialect.context import context
from mjax.dialect.core import OPS, PURE_SHAPE_RULES, JaxprOp, encode_params, op_class
from mjax.dialect.shape_poly import is_symbolic_dim
from mjax.dialect.types import ShapedArray, aval_of, tensor_type


# (op class, operand types, raw parameters) -> (result types, encoded attributes), for
# ops without attributes and ops of the pure shape-rule modules with plain parameters,
# when every operand and result is an exact ShapedArray of static shape (no RefAval,
# no symbolic dimension): what check_params + infer + create would make of them again.
_EMITTED: dict = {}
# Builder.constant's splats: (context, shape, dtype, value bytes) -> (result type, value
# attribute), made once.
_SPLATS: dict = {}
_INT = frozenset({int})


def _keyable(v) -> bool:
    """A parameter value that keys the cache faithfully: an exact int, str or None, a
    NumPy dtype, or tuples of those (not a bool: True == 1, and an int attribute
    refuses True)."""
    t = type(v)
    if t is int or t is str or v is None:
        return True
    if t is tuple:
        return _INT.issuperset(map(type, v)) or all(map(_keyable, v))
    return t is not bool and isinstance(v, np.dtype)


def static_avals(avals) -> bool:
    """Whether every aval is an exact ShapedArray of static shape (no RefAval, no symbolic
    dimension, which belongs to the shape scope being traced): what the caches of made
    ops (_EMITTED here, the tracer's and eager vmap's) may key on."""
    return all(type(a) is ShapedArray and _INT.issuperset(map(type, a.shape))
               for a in avals)


class Builder:
    """Creates `jaxpr` ops at an insertion point, with types from each op's `infer`."""

    def __init__(self, ip: ir.InsertionPoint | None = None, loc: ir.Location | None = None):
        self.ip = ip
        self.loc = loc

    def emit(self, op: type[JaxprOp] | str, *operands: ir.Value, **params) -> list[ir.Value]:
        return self._emit(op_class(op) if isinstance(op, str) else op, operands, params)

    def _emit(self, cls: type[JaxprOp], operands: tuple, params: dict) -> list[ir.Value]:
        # (emit without repacking its arguments: `b.<name>(...)` and RoutedBuilder call
        # it; a Builder that places ops elsewhere overrides this)
        if not operands and cls.OPERATION_NAME == "jaxpr.constant":
            made = self._constant(params)
            if made is not None:
                return made
        types = tuple([v.type for v in operands])
        # (The passes emit the same ops on the same types again and again: an op whose
        # results and attributes follow from its operand types and plain parameters is
        # checked, inferred and encoded once; see _EMITTED.)
        if params:
            key = None
            if cls.__module__ in PURE_SHAPE_RULES:
                key = (cls, types, tuple(params.items()))
                for v in params.values():   # (_keyable, its common cases inline)
                    t = type(v)
                    if not (t is int or t is str or v is None or t is tuple and
                            _INT.issuperset(map(type, v)) or _keyable(v)):
                        key = None
                        break
        elif not cls.attributes or cls.__module__ in PURE_SHAPE_RULES:
            key = (cls, types, ())
        else:
            key = None
        if key is not None:
            hit = _EMITTED.get(key)
            if hit is not None:
                made = ir.Operation.create(cls.OPERATION_NAME, results=hit[0],
                                           operands=operands, attributes=hit[1],
                                           regions=cls.num_regions, loc=self.loc, ip=self.ip)
                # (one result, most ops: read without listing the results)
                return [made.result] if hit[2] else list(made.results)
        avals = [aval_of(t) for t in types]
        checked = cls.check_params(params)
        out_avals = cls.infer_checked(avals, checked, params_checked=True)
        results = list(cls.create(operands, out_avals, checked, loc=self.loc,
                                  ip=self.ip).results)
        if key is not None and type(cls.num_regions) is int and \
                static_avals((*avals, *out_avals)):
            if len(_EMITTED) >= 4096:
                _EMITTED.clear()
            _EMITTED[key] = ([r.type for r in results],
                             encode_params(checked) if checked else None, len(results) == 1)
        return results

    def _constant(self, params: dict) -> list[ir.Value] | None:
        # A jaxpr.constant of an ndarray (AD rules make zeros and ones again and again):
        # what check_params (the array as it is), infer (its shape and dtype) and create
        # (its dense_elements attribute, cached for splats) make, made directly; None
        # (the general path, with its errors) for anything else.
        value = params.get("value")
        if len(params) != 1 or type(value) is not np.ndarray:
            return None
        try:
            rtype = tensor_type(ShapedArray(value.shape, value.dtype))
            attr = dense_elements(value)
        except Exception:
            return None
        return [ir.Operation.create("jaxpr.constant", results=[rtype],
                                    attributes={"value": attr}, regions=0, loc=self.loc,
                                    ip=self.ip).result]

    def __getattr__(self, name: str):
        # b.sin(x) == b.emit(SinOp, x); single-result ops return the value itself.
        # (Made once per op name and kept as a method of the class, so the next
        # `b.<name>` finds it without coming here.)
        cls = OPS.get("jaxpr." + name)
        if cls is None:
            raise AttributeError(f"Builder has no op '{name}'")

        def emit_one(builder, *operands, **params):
            results = builder._emit(cls, operands, params)
            return results[0] if len(results) == 1 else results
        emit_one.__name__ = emit_one.__qualname__ = name
        setattr(Builder, name, emit_one)
        return MethodType(emit_one, self)

    # ---- conveniences used by rules -------------------------------------------
    def constant(self, value, dtype=None, shape=None) -> ir.Value:
        """A `jaxpr.constant` holding `value` (broadcast to `shape` if given)."""
        arr = np.asarray(value, dtype=dtype)
        if shape is not None and arr.ndim == 0 and type(shape) is tuple and \
                _INT.issuperset(map(type, shape)):
            # (One value broadcast to a static shape, as AD rules make zeros and ones:
            # its type and attribute are made once per shape, dtype and value bits.)
            key = (context(), shape, arr.dtype, arr.tobytes())
            made = _SPLATS.get(key)
            if made is not None:
                return self.emit_constant(*made, splat=(
                    shape, arr.dtype, arr.tobytes() if math.prod(shape) else b""))
            result = self._constant_of(arr, shape)
            if len(_SPLATS) >= 4096:
                _SPLATS.clear()
            _SPLATS[key] = (result.type, result.owner.operation.attributes["value"])
            return result
        return self._constant_of(arr, shape)

    def _constant_of(self, arr: np.ndarray, shape) -> ir.Value:
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

    def emit_constant(self, rtype: ir.Type, attr: ir.Attribute, splat=None) -> ir.Value:
        """A `jaxpr.constant` of result type `rtype` and value attribute `attr` (as
        `emit("constant", ...)` made them before; a Builder placing ops elsewhere
        overrides this too). `splat`: (shape, dtype, bytes of the one value) when the
        constant is one value broadcast, as SharingBuilder keys what it shares."""
        return ir.Operation.create("jaxpr.constant", results=[rtype],
                                   attributes={"value": attr}, regions=0, loc=self.loc,
                                   ip=self.ip).result

    def full_like(self, x: ir.Value, fill) -> ir.Value:
        aval = aval_of(x.type)
        return self.constant(np.full((), fill, dtype=aval.dtype), shape=aval.shape)

    def zeros_like(self, x: ir.Value) -> ir.Value:
        return self.full_like(x, 0)

    def zeros(self, aval: ShapedArray) -> ir.Value:
        return self.constant(np.zeros((), dtype=aval.dtype), shape=aval.shape)


class SharingBuilder(Builder):
    """A Builder appending to one block that makes each constant (value, type and
    location) once there, as AD rules would make the same zeros and ones again and
    again (copies lowering's CSE would merge). `consts` is the block's table, shared
    by the Builders appending to it."""

    def __init__(self, ip: ir.InsertionPoint | None, loc: ir.Location | None,
                 consts: dict):
        self.ip = ip
        self.loc = loc
        self.consts = consts

    def _constant(self, params: dict) -> list[ir.Value] | None:
        value = params.get("value")
        loc = self.loc
        if loc is None or len(params) != 1 or type(value) is not np.ndarray or \
                value.size > 1 and any(value.strides):
            return Builder._constant(self, params)
        # (one value, maybe broadcast: keyed by its bits, not the whole array's, as
        # emit_constant keys a splat)
        key = (value.shape, value.dtype, value.reshape(-1)[:1].tobytes(), loc.attr)
        res = self.consts.get(key)
        if res is None:
            made = Builder._constant(self, params)
            if made is not None:
                self.consts[key] = made[0]
            return made
        return [res]

    def emit_constant(self, rtype: ir.Type, attr: ir.Attribute, splat=None) -> ir.Value:
        loc = self.loc
        if loc is None:
            return Builder.emit_constant(self, rtype, attr)
        # (a splat keyed as _constant keys it: one constant whichever way it was asked)
        key = (*splat, loc.attr) if splat is not None else (attr, rtype, loc.attr)
        res = self.consts.get(key)
        if res is None:
            res = self.consts[key] = Builder.emit_constant(self, rtype, attr)
        return res
