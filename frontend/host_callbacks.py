"""Host callbacks at run time: the process-wide registry of the Python callables that
`jaxpr.callback` ops name by id, running one eagerly, and what compiling a program that
calls back needs (`host_callbacks`: the program's host custom calls renumbered 0..k-1 and
one checked wrapper per call, which XLA calls). The APIs that stage callbacks are in
callbacks.py. JAX: jax/_src/callback.py.
"""
from __future__ import annotations

import contextlib
import itertools
import logging
import threading
import traceback
from typing import Callable

import numpy as np
from jaxlib import _jax
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax import dtypes
from mjax.array import Array
from mjax.dialect import aval_of, context
from mjax.dialect.types import ShapedArray, tensor_type
from mjax.dtypes import to_numpy
from mjax.passes.rules.callbacks import CALL_TARGET
from mjax.placement import device_put_value
from mjax.runtime.backend import platform_record


# ---- the registry --------------------------------------------------------------------------
class _Entry:
    """A registered callable: `flat(*arrays)` returns the flat result leaves."""

    def __init__(self, flat: Callable, name: str):
        self.flat = flat
        self.name = name        # pure_callback, io_callback, debug.callback

    def call(self, *arrays):
        """Runs the callable; a failure is logged (with its traceback) before it
        propagates, as JAX does."""
        try:
            return self.flat(*arrays)
        except BaseException as e:
            if _FOR_CALLER.get(str(e)) is e:
                raise       # (the caller raises it as it is: no log of a failure)
            # (JAX's debug.print and debug.breakpoint are debug callbacks: it names
            # every failed one jax.debug.callback)
            what = "debug.callback" if self.name.startswith("debug") else self.name
            _logger(self.name).exception("jax.%s failed", what)
            raise


def _logger(name: str) -> logging.Logger:
    """The logger JAX reports a failed callback to (by its name: libraries filter these
    records, as equinox does to replace them with its own message)."""
    return logging.getLogger("jax._src.debugging" if name.startswith("debug")
                             else "jax._src.callback")


_REGISTRY: dict[int, _Entry] = {}
_KEYS: dict = {}              # hashable description of a callable -> its id
_IDS = itertools.count()
_LOCK = threading.Lock()


def register(flat: Callable, name: str, key=None) -> int:
    """The id of `flat` in the registry. Equal `key`s (the same user function with the
    same argument structure) share an id, so retracing gives the same IR."""
    with _LOCK:
        if key is not None:
            try:
                hit = _KEYS.get(key)
            except TypeError:   # unhashable static arguments
                key = None
                hit = None
            if hit is not None:
                return hit
        cid = next(_IDS)
        _REGISTRY[cid] = _Entry(flat, name)
        if key is not None:
            _KEYS[key] = cid
        return cid


def lookup(callback_id: int) -> _Entry:
    try:
        return _REGISTRY[callback_id]
    except KeyError:
        raise ValueError(f"no host callback with id {callback_id} is registered in this "
                         f"process (jaxpr.callback ops only run in the process that "
                         f"traced them)") from None


# ---- errors the caller raises as they are --------------------------------------------------
# The errors callbacks raised with raise_in_caller that their callers have not raised yet,
# by text: a callback runs on one of XLA's threads, not its caller's, and the caller finds
# its own by the text XLA's error carries (two programs failing at once each find theirs).
_FOR_CALLER: dict = {}
_FOR_CALLER_LOCK = threading.Lock()
_FOR_CALLER_MAX = 64        # (errors whose call never looked for them go, oldest first)


def raise_in_caller(exc: BaseException):
    """Raises `exc` from a callback so that the call of the program that ran it raises
    `exc` itself (in `errors_for_caller`), not XLA's JaxRuntimeError wrapping its text,
    as JAX's eagerly evaluated checkify.check does."""
    with _FOR_CALLER_LOCK:
        _FOR_CALLER.pop(str(exc), None)
        _FOR_CALLER[str(exc)] = exc
        while len(_FOR_CALLER) > _FOR_CALLER_MAX:
            del _FOR_CALLER[next(iter(_FOR_CALLER))]
    raise exc


@contextlib.contextmanager
def errors_for_caller():
    """Around running a program: an error one of its callbacks raised with
    `raise_in_caller` is raised here as it is."""
    try:
        yield
    except _jax.JaxRuntimeError as e:
        text = str(e)
        with _FOR_CALLER_LOCK:
            found = max((k for k in _FOR_CALLER if k and k in text), key=len, default=None)
            exc = _FOR_CALLER.pop(found) if found is not None else None
        if exc is not None:
            raise exc from None
        raise


# ---- running a callback ------------------------------------------------------------------
def _as_arrays(values) -> list:
    """Host values as mjax Arrays, which JAX hands callbacks."""
    return [device_put_value(np.asarray(v)) for v in values]


def check_results(outs, avals) -> tuple[np.ndarray, ...]:
    """`outs` as NumPy arrays of exactly `avals`' shapes and dtypes; RuntimeError with
    JAX's text otherwise. JAX: callback.emit_python_callback's result checks."""
    outs = list(outs)
    if len(outs) != len(avals):
        raise RuntimeError(f"Mismatched number of outputs from callback. Expected: "
                           f"{len(avals)}, Actual: {len(outs)}")
    checked = []
    for i, (out, aval) in enumerate(zip(outs, avals)):
        arr = np.asarray(out)
        arr = arr.astype(dtypes.canonicalize_dtype(arr.dtype), copy=False)
        if arr.shape != tuple(aval.shape):
            raise RuntimeError(f"Incorrect output shape for return value #{i}: Expected: "
                               f"{tuple(aval.shape)}, Actual: {arr.shape}")
        if arr.dtype != aval.dtype:
            raise RuntimeError(f"Incorrect output dtype for return value #{i}: Expected: "
                               f"{aval.dtype}, Actual: {arr.dtype}")
        checked.append(np.asarray(arr, order="C"))  # (ascontiguousarray makes 0-d 1-d)
    return tuple(checked)


def _runtime_error(e: BaseException) -> Exception:
    """The error a failed callback raises in the caller: JAX's JaxRuntimeError (a
    RuntimeError) carrying the callback's traceback and message."""
    tb = "".join(traceback.format_exception(type(e), e, e.__traceback__))
    return _jax.JaxRuntimeError(f"INTERNAL: CpuCallback error calling callback: {tb}")


def run_now(callback_id: int, args, out_avals) -> list:
    """Eager mode: runs the callback on concrete values, returns mjax Arrays."""
    entry = lookup(callback_id)
    try:
        arrays = [a if isinstance(a, Array) else _as_arrays([to_numpy(a)])[0] for a in args]
        outs = check_results(entry.call(*arrays), out_avals)
    except Exception as e:  # noqa: BLE001 - reaches the caller as in jit
        raise _runtime_error(e) from e
    return [device_put_value(o) for o in outs]


class _HostCall:
    """What XLA calls for one custom call: NumPy in, a tuple of checked NumPy out (the
    token first and back for ordered callbacks)."""

    def __init__(self, entry: _Entry, out_avals, ordered: bool):
        self.entry, self.out_avals, self.ordered = entry, out_avals, ordered

    def __call__(self, *arrays):
        if self.ordered:
            token, *arrays = arrays
        outs = check_results(self.entry.call(*_as_arrays(arrays)), self.out_avals)
        return (token, *outs) if self.ordered else outs


def host_callbacks(text: str, platform: str = "cpu", backend=None) -> tuple[str, list | None]:
    """(text, callables) for compiling a lowered program on `platform` (its record's
    host-callback target): its host callback custom calls renumbered 0..k-1, the k-th one
    calling `callables[k]`; on a platform of host transfers (a TPU) each call becomes
    send/recv ops and `backend` makes the callables. (text, None) when the program calls
    no Python."""
    if CALL_TARGET not in text:
        return text, None
    target = platform_record(platform).host_callback_target
    if target is None:
        raise NotImplementedError(
            f"host callbacks (pure_callback, io_callback, debug.print, ...) on the "
            f"'{platform}' platform: mjax has no way to call Python from its programs")
    with context():
        module = ir.Module.parse(text)
        calls = []

        def visit(op):
            if (op.name == "stablehlo.custom_call" and ir.StringAttr(
                    op.attributes["call_target_name"]).value == CALL_TARGET):
                calls.append(op)
            return ir.WalkResult.ADVANCE
        module.operation.walk(visit)
        u64 = ir.IntegerType.get_unsigned(64)
        callables = []
        channels = iter(range(1, 1 << 30))
        for k, op in enumerate(calls):
            cid = ir.IntegerAttr(ir.DictAttr(op.attributes["backend_config"])["index"]).value
            types = [r.type for r in op.results]
            ordered = len(op.operands) > 0 and "token" in str(op.operands[0].type)
            if ordered:
                types = types[1:]
            call = _HostCall(lookup(cid), [aval_of(t) for t in types], ordered)
            if target == HOST_TRANSFERS:
                callables.append(_as_host_transfers(op, call, backend, channels))
                continue
            callables.append(call)
            op.attributes["backend_config"] = ir.DictAttr.get(
                {"index": ir.IntegerAttr.get(u64, k)})
            if target != CALL_TARGET:
                op.attributes["call_target_name"] = ir.StringAttr.get(target)
        text = module.operation.get_asm(enable_debug_info=True)
    return text, callables


# The record's host_callback_target of platforms that call Python through host transfers
# (send/recv ops XLA hands to a callback object of the client), as JAX does on a TPU.
HOST_TRANSFERS = "send-recv"
_SEND_TO_HOST, _RECV_FROM_HOST = 2, 3     # StableHLO channel types


def _transfer(op_class, types, operands, token, channel: int, kind: int):
    """A send (kind 2) or recv (kind 3) host transfer on `channel`, as XLA's PJRT
    rendezvous handler expects it."""
    handle = ir.Attribute.parse(f"#stablehlo.channel_handle<handle = {channel}, "
                                f"type = {kind}>")
    args = (operands, token, handle) if op_class is hlo.SendOp else (types, token, handle)
    op = op_class(*args, is_host_transfer=ir.BoolAttr.get(True))
    op.operation.attributes["mhlo.frontend_attributes"] = ir.DictAttr.get({
        "_xla_host_transfer_handler_name": ir.StringAttr.get("pjrt_rendezvous"),
        "_xla_host_transfer_rendezvous": ir.StringAttr.get(str(channel))})
    return op


def _as_host_transfers(op: ir.Operation, call: "_HostCall", backend, channels):
    """Replaces one callback custom call with a send per operand and a recv per result
    (JAX: callback._emit_tpu_python_callback); returns the client's callback object.
    A call without operands sends a dummy f32[1], one that gives only its token receives
    a dummy f32[] (so the program waits for it), and empty results are constants (a TPU
    receives no empty array)."""
    loc = op.location
    with ir.InsertionPoint(op), loc:
        operands = list(op.operands)
        token = operands.pop(0) if call.ordered else hlo.create_token()
        avals = [aval_of(v.type) for v in operands]
        real = bool(operands)
        if not real:
            operands = [hlo.constant(ir.DenseElementsAttr.get(np.zeros(1, np.float32)))]
            avals = [ShapedArray((1,), np.dtype(np.float32))]
        sends = []
        for v in operands:
            sends.append(next(channels))
            token = _transfer(hlo.SendOp, None, [v], token, sends[-1], _SEND_TO_HOST).result
        wanted = [a for a in call.out_avals if 0 not in a.shape]
        dummy_out = call.ordered and not wanted
        if dummy_out:
            wanted = [ShapedArray((), np.dtype(np.float32))]
        recvs, received = [], []
        token_type = ir.Type.parse("!stablehlo.token")
        for a in wanted:
            recvs.append(next(channels))
            recv = _transfer(hlo.RecvOp, [tensor_type(a), token_type], None, token,
                             recvs[-1], _RECV_FROM_HOST)
            received.append(recv.results[0])
            token = recv.results[1]
        got = iter(received)
        values = [hlo.constant(ir.DenseElementsAttr.get(np.zeros(a.shape, a.dtype)))
                  if 0 in a.shape else next(got) for a in call.out_avals]
    results = ([token] if call.ordered else []) + values
    for old, new in zip(op.results, results):
        old.replace_all_uses_with(new)
    op.erase()

    def run(*arrays):
        outs = check_results(call.entry.call(*_as_arrays(arrays if real else ())),
                             call.out_avals)
        if dummy_out:
            return (np.zeros((), np.float32),)
        return tuple(o for o, a in zip(outs, call.out_avals) if 0 not in a.shape)
    return backend.host_transfer_callback(run, avals, wanted, sends, recvs)


def backend_host_callbacks(text: str, backend) -> tuple[str, list | None]:
    """`host_callbacks` for a backend object (its platform picks the call target)."""
    return host_callbacks(text, getattr(backend, "platform", "cpu"), backend)
