"""Host callbacks at run time: the process-wide registry of the Python callables that
`jaxpr.callback` ops name by id, running one eagerly, and what compiling a program that
calls back needs (`callbacks_pass`: --stablehlo-host-callbacks for the backend's platform,
which numbers the program's calls; `host_callables`: one checked wrapper per call, which
XLA calls). The APIs that stage callbacks are in callbacks.py. JAX:
jax/_src/callback.py.
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

from mjax.specs import dtypes
from mjax.arrays.array import Array
from mjax.arrays.caller_errors import original_of, raise_in_caller  # noqa: F401  (re-exported)
from mjax.specs.dtypes import to_numpy
from mjax.passes.stablehlo_host_callbacks import StablehloHostCallbacksPass
from mjax.config import config
from mjax.arrays.placement import device_put, device_put_value
from mjax.runtime import get_backend
from mjax.runtime.host_effects import wait_for_effects
from mjax.runtime.backend import platform_record


# ---- the registry --------------------------------------------------------------------------
class _Entry:
    """A registered callable: `flat(*arrays)` returns the flat result leaves."""

    def __init__(self, flat: Callable, name: str):
        self.flat = flat
        self.name = name        # pure_callback, io_callback, debug.callback

    def call(self, *arrays):
        """Runs the callable; a failure is logged (with its traceback) before it
        propagates, as JAX does. Off the host CPU it runs with the host's CPU as the
        default device, where its arguments are (`_as_arrays`)."""
        host = _host_device()
        try:
            if host is None:
                return self.flat(*arrays)
            with config.override(jax_default_device=host):
                return self.flat(*arrays)
        except BaseException as e:
            if original_of(e, take=False) is e:
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


# ---- errors the caller raises as they are (caller_errors.py) -------------------------------
@contextlib.contextmanager
def errors_for_caller():
    """Around running a program: an error one of its callbacks raised with
    `raise_in_caller` is raised here as it is. (On an accelerator the callbacks run
    beside the program: it is waited for, so that their errors reach this caller.)"""
    try:
        yield
        wait_for_effects()
    except _jax.JaxRuntimeError as e:
        exc = original_of(e)
        if exc is not None:
            raise exc from None
        raise


# ---- running a callback ------------------------------------------------------------------
def _host_device():
    """The device callbacks' arrays live on when the default backend is an accelerator:
    the host's first CPU device, as in JAX. (A callback runs while the accelerator's
    program waits for it: arrays it made there would wait behind that program.) None on
    the host CPU itself, and on IREE."""
    platform = getattr(get_backend(), "platform", "cpu")
    return None if platform_record(platform).host else get_backend("cpu").devices()[0]


def _as_arrays(values) -> list:
    """Values as the mjax Arrays JAX hands callbacks: on the default device on the host
    CPU, else committed to the host's CPU device."""
    host = _host_device()
    if host is None:
        return [a if isinstance(a, Array) else device_put_value(np.asarray(to_numpy(a)))
                for a in values]
    return [device_put(a if isinstance(a, Array) else np.asarray(to_numpy(a)), host)
            for a in values]


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
        outs = check_results(entry.call(*_as_arrays(args)), out_avals)
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


class _RegisteredCallbacksPass(StablehloHostCallbacksPass):
    """--stablehlo-host-callbacks once this process has registered a callback, when it
    runs: a lowering rule may register one while the program lowers (mlir.
    emit_python_callback). Before any, no program calls Python and nothing is walked."""

    def run(self, module) -> None:
        if _REGISTRY:
            super().run(module)
        else:
            self.sites = []


def callbacks_pass(backend) -> StablehloHostCallbacksPass:
    """The pass readying a lowered program's host callbacks for `backend` (its platform
    record's call target)."""
    record = platform_record(getattr(backend, "platform", "cpu"))
    return _RegisteredCallbacksPass(target=record.host_callback_target or "",
                                    platform=record.name)


def host_callables(sites, backend) -> list | None:
    """The callables XLA calls for a program's host callbacks (`sites`: those
    --stablehlo-host-callbacks found, in order), made for `backend`; None for none."""
    if not sites:
        return None
    return [_HostCall(lookup(s.callback_id), s.out_avals, s.ordered)
            if s.transfers is None else _transfer_callable(s, backend) for s in sites]


def _transfer_callable(site, backend):
    """The client's callback object for a callback made host transfers: the values it
    receives in, the non-empty results (or a dummy) out."""
    entry, t = lookup(site.callback_id), site.transfers

    def run(*arrays):
        outs = check_results(entry.call(*_as_arrays(arrays if t.real else ())),
                             site.out_avals)
        if t.dummy_out:
            return (np.zeros((), np.float32),)
        return tuple(o for o, a in zip(outs, site.out_avals) if 0 not in a.shape)
    return backend.host_transfer_callback(run, t.sent, t.received, t.sends, t.recvs)
