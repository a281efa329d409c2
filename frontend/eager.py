"""Eager mode: an op on concrete arrays compiles once per (op, params, avals) and runs."""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from mjax.dialect import context, tensor_type
from mjax.runtime import get_backend

_CACHE: dict = {}


def hashable(value):
    """A hashable stand-in for an op parameter (dicts, arrays, nested tuples)."""
    if isinstance(value, dict):
        return tuple(sorted((k, hashable(v)) for k, v in value.items()))
    if isinstance(value, (tuple, list)):
        return tuple(hashable(v) for v in value)
    if isinstance(value, np.ndarray):
        return (value.shape, str(value.dtype), value.tobytes())
    return value


def device_buffer(x, aval):
    """The device buffer for a concrete value (an Array's own, else a fresh copy)."""
    buf = getattr(x, "_buf", None)
    if buf is not None:
        return buf
    return get_backend().put(np.asarray(x, dtype=aval.dtype))


def _compile_single_op(opcls, avals, params, out_avals):
    from mjax.passes import run_pipeline
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        module = ir.Module.create()
        with ir.InsertionPoint(module.body):
            types = [tensor_type(a) for a in avals]
            f = func.FuncOp("main", (types, [tensor_type(a) for a in out_avals]))
            block = f.add_entry_block()
            op = opcls.create(list(block.arguments), out_avals, params,
                              ip=ir.InsertionPoint(block))
            func.ReturnOp(list(op.results), ip=ir.InsertionPoint(block))
    with ctx:
        run_pipeline(module, [("jaxpr-to-stablehlo", "")])  # one op: nothing to clean up
    return get_backend().compile(str(module))


def apply_eager(opcls, args, avals, params, out_avals):
    from mjax.array import Array
    from mjax.core import Tracer, escaped_tracer_message
    from mjax.errors import UnexpectedTracerError
    for a in args:
        if isinstance(a, Tracer):
            raise UnexpectedTracerError(escaped_tracer_message(a))
    strong_in = tuple(a.strip_weak_type() for a in avals)
    key = (opcls, hashable(params), strong_in)
    exe = _CACHE.get(key)
    if exe is None:
        exe = _CACHE[key] = _compile_single_op(opcls, strong_in, params,
                                               [a.strip_weak_type() for a in out_avals])
    bufs = [device_buffer(x, a) for x, a in zip(args, strong_in)]
    return [Array(b, a) for b, a in zip(exe.execute(bufs), out_avals)]
