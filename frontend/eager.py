"""Eager mode: an op on concrete arrays compiles once per (op, params, avals) and runs."""
from __future__ import annotations

import logging

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func

from mjax.array import Array
from mjax.config import config
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


def _reject_tracer(x):
    """A tracer reaching eager mode outlived its trace (a leaked tracer)."""
    from mjax.core import Tracer, escaped_tracer_message
    if isinstance(x, Tracer):
        from mjax.errors import UnexpectedTracerError
        raise UnexpectedTracerError(escaped_tracer_message(x))


def device_buffer(x, aval):
    """The device buffer for a concrete value (an Array's own, else a fresh copy)."""
    buf = getattr(x, "_buf", None)
    if buf is not None:
        return buf
    _reject_tracer(x)
    return get_backend().put(np.asarray(x, dtype=aval.dtype))


def default_device():
    """jax_default_device as a device of the backend (None: the backend's first)."""
    dev = config.read("jax_default_device")
    if isinstance(dev, str):      # a platform name, as JAX accepts
        return get_backend(dev).devices()[0]
    return getattr(dev, "_device", dev)


def on_device(bufs, device) -> list:
    """bufs, each one not on `device` copied there (through the host)."""
    from mjax.runtime import buffer_to_numpy
    return [b if device in _devices_of(b) else get_backend().put(buffer_to_numpy(b), device)
            for b in bufs]


def args_device(args, default):
    """The device a computation on `args` runs on when that is not `default`, else None.
    As in JAX, committed operands (placed by `device_put(x, device)`, or computed from
    such) decide; the others are copied there. Committed operands on two devices raise
    JAX's ValueError."""
    found = None   # (index, array, device) of the first committed operand
    for k, x in enumerate(args):
        if type(x) is not Array or not getattr(x, "_committed", False) or (
                x._sharding is not None and x._sharding.num_devices > 1):
            continue
        devices = _devices_of(x._buf)
        if len(devices) != 1 or (found is not None and devices[0] == found[2]):
            continue
        if found is not None:
            j, y, other = found
            raise ValueError(
                "Received incompatible devices for jitted computation. Got argument "
                f"{j} with shape {y.aval} and with device ids {[other.id]} on "
                f"platform {other.platform.upper()} and argument {k} with shape "
                f"{x.aval} and with device ids {[devices[0].id]} on platform "
                f"{devices[0].platform.upper()}")
        found = (k, x, devices[0])
    return None if found is None or found[2] == default else found[2]


def commit(arrays):
    """Marks `arrays` (a list) committed to their device: results of a computation placed
    by committed operands are committed too, as in JAX."""
    for x in arrays:
        x._committed = True
    return arrays


def _devices_of(buf) -> tuple:
    sharding = getattr(buf, "_sharding", None)
    return tuple(getattr(sharding, "_internal_device_list", ()))


def _compile_single_op(opcls, avals, params, out_avals, device=None):
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
    level = logging.WARNING if config.read("jax_log_compiles") else logging.DEBUG
    # (One logger for every compilation, jit or eager op: as JAX's log_compiles.)
    logging.getLogger("mjax.api").log(
        level, "Compiling jit(%s) with global shapes and types %s.", opcls.primitive,
        tuple(avals))
    with ctx:
        run_pipeline(module, [("jaxpr-to-stablehlo", "")])  # one op: nothing to clean up
    from mjax.callbacks import backend_host_callbacks
    text, callbacks = backend_host_callbacks(str(module), get_backend())
    return get_backend().compile(text, None if device is None else [device],
                                 out_avals=out_avals, host_callbacks=callbacks)


def apply_eager(opcls, args, avals, params, weak=None):
    """Runs one op on concrete values. The cache key is taken before checking params and
    inferring types, so a repeated op costs one dict lookup plus the XLA call."""
    # (Most ops on the hot path have no params: skip hashable's dict walk for them.)
    key = (opcls, hashable(params) if params else (), weak, *avals)
    # Config reads straight from the process-wide values unless some thread overrides.
    overridden = config._n_overrides
    dev = _read("jax_default_device") if overridden else _VALUES["jax_default_device"]
    if dev is not None:
        key += (dev,)
    hit = _CACHE.get(key)
    if hit is None:
        hit = _CACHE[key] = _compile_entry(opcls, args, avals, params, weak, dev)
    exe, out_avals, run, handlers = hit
    # Arrays on their one default device (no sharding object yet): their buffers as they
    # are. Anything else (NumPy values, sharded arrays) takes the general path.
    bufs = []
    for x in args:
        if type(x) is not Array or x._sharding is not None:
            for x in args:
                if type(x) is Array and x._sharding is not None and \
                        x._sharding.num_devices > 1:
                    return _apply_sharded(opcls, args, params, out_avals)
            bufs = [x._buf if type(x) is Array else device_buffer(x, a)
                    for x, a in zip(args, avals)]
            break
        bufs.append(x._buf)
    if dev is not None:
        bufs = on_device(bufs, exe.devices[0])
    try:
        if run is None:
            results = exe.execute(bufs)
        else:
            try:
                results = run(bufs)
            except Exception:  # (execute explains errors and moves buffers between devices)
                target = None if dev is not None else args_device(args, exe.devices[0])
                if target is not None:
                    with config.override(jax_default_device=target):
                        return commit(apply_eager(opcls, args, avals, params, weak))
                results = exe.execute(bufs)
            else:
                results = results.consume_with_handlers(handlers)
    except Exception:
        for x in args:   # (an op on a deleted or donated array: the Array's RuntimeError,
            if type(x) is Array:   # as JAX's eager ops raise, not Execute()'s ValueError)
                x._check_alive()
        raise
    if len(results) == 1:
        outs = [Array(results[0], out_avals[0])]
    else:
        outs = [Array(b, a) for b, a in zip(results, out_avals)]
    if (_read("jax_debug_nans") or _read("jax_debug_infs")) if overridden else (
            _VALUES["jax_debug_nans"] or _VALUES["jax_debug_infs"]):
        _check_nonfinite(opcls, outs)
    return outs


_read = config.read
_VALUES = config._values   # option -> process-wide value (config.read, minus overrides)


def _compile_entry(opcls, args, avals, params, weak, dev) -> tuple:
    """(executable, result avals, run, handlers) of one op on avals: checks the operands
    and params, infers result types (errors name the user's line) and compiles. `run`
    and `handlers`: the executable's direct call (see Executable.direct_call), or None."""
    from mjax.core import infer_avals
    for x in args:
        _reject_tracer(x)
    checked, out_avals = infer_avals(opcls, avals, params, weak)
    strong_in = [a.strip_weak_type() for a in avals]
    exe = _compile_single_op(opcls, strong_in, checked,
                             [a.strip_weak_type() for a in out_avals],
                             None if dev is None else default_device())
    direct = getattr(exe, "direct_call", None)
    direct = direct() if direct is not None else None
    return (exe, out_avals) + (direct if direct is not None else (None, None))


def _apply_sharded(opcls, args, params, out_avals):
    """An op on arrays laid out over several devices: run as a jit of the op, so it
    compiles SPMD for their mesh and the result keeps a sharded layout (as JAX). On
    Explicit mesh axes the operands' shardings are part of their types, checked first."""
    from mjax.api import jit
    from mjax.core import bind
    from mjax.sharding_types import check_explicit_op
    check_explicit_op(opcls, args, out_avals, params)
    key = (opcls, hashable(params) if params else ())
    jitted = _SHARDED_CACHE.get(key)
    if jitted is None:
        def one_op(*xs):
            out = bind(opcls, *xs, **params)
            return list(out) if isinstance(out, (list, tuple)) else [out]
        jitted = _SHARDED_CACHE[key] = jit(one_op)
    return jitted(*args)


_SHARDED_CACHE: dict = {}


def nonfinite_kind(x) -> str | None:
    """'nan' or 'inf' when x holds one that jax_debug_nans / jax_debug_infs asks about."""
    from mjax.dialect.dtype_rules import is_inexact
    dtype = getattr(getattr(x, "aval", None), "dtype", None)
    if dtype is None or not is_inexact(dtype) or not getattr(x, "size", 1):
        return None
    value = np.asarray(x)
    if config.read("jax_debug_nans") and np.isnan(value).any():
        return "nan"
    if config.read("jax_debug_infs") and np.isinf(value).any():
        return "inf"
    return None


def _check_nonfinite(opcls, outs):
    """JAX's debug_nans message, plus the user's line."""
    from mjax.core import at_user_line
    for out in outs:
        kind = nonfinite_kind(out)
        if kind is not None:
            raise FloatingPointError(at_user_line(
                f"invalid value ({kind}) encountered in {opcls.primitive}"))


def locate_nonfinite(module, inputs) -> None:
    """debug_nans/infs for functions that cannot be re-run op by op in Python (grad, vmap):
    runs @main of their traced module op by op instead, once its transformations are
    expanded and calls inlined, and raises FloatingPointError at the first op with a
    NaN/inf output, naming its primitive and the user's line. Returns quietly when it
    meets an op that cannot run alone (control flow with regions)."""
    from mjax.core import aval_of_value, describe_location
    from mjax.dialect.core import JaxprOp
    from mjax.passes import run_pipeline
    ctx = context()
    with ctx, ir.Location.unknown(ctx):
        run_pipeline(module, [(p, "") for p in ("jaxpr-expand-transforms", "jaxpr-inline",
                                                "jaxpr-dce")])
        main = next(op for op in module.body.operations
                    if getattr(op, "sym_name", None) is not None and
                    ir.StringAttr(op.sym_name).value == "main")
        block = main.regions[0].blocks[0]
        env = dict(zip(block.arguments, inputs))
        for op in block.operations:
            view = op.opview if hasattr(op, "opview") else op
            if not isinstance(view, JaxprOp) or len(op.operation.regions):
                return
            args = [env[v] for v in op.operation.operands]
            with config.override(jax_debug_nans=False, jax_debug_infs=False):
                outs = apply_eager(type(view), args, [aval_of_value(a) for a in args],
                                   dict(view.params))
            for out in outs:
                kind = nonfinite_kind(out)
                if kind is not None:
                    raise FloatingPointError(
                        f"invalid value ({kind}) encountered in {view.primitive} (at "
                        f"{describe_location(op.location)})")
            env.update(zip(op.operation.results, outs))
