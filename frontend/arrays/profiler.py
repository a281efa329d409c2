"""`mjax.profiler`: JAX's profiling API over jaxlib's profiler (runtime/profiler.py).

    with mjax.profiler.trace("/tmp/trace"):
        f(x).block_until_ready()
    # tensorboard --logdir /tmp/trace   (or open the .xplane.pb in Perfetto via xprof)
"""
from __future__ import annotations

import contextlib
import functools

from mjax.runtime import get_backend
from mjax.runtime import profiler as _rt
from mjax.runtime.profiler import (ProfileData, ProfileEvent, ProfileOptions, ProfilePlane,
                                   register_subprocess)


def start_trace(log_dir, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False,
                profiler_options: ProfileOptions | None = None) -> None:
    """Starts collecting a trace into `log_dir` (what it collects: `profiler_options`).
    JAX: jax.profiler.start_trace."""
    if create_perfetto_link or create_perfetto_trace:
        raise NotImplementedError("create_perfetto_link/create_perfetto_trace: mjax writes "
                                  "the XSpace trace only; open it with TensorBoard/xprof")
    get_backend()    # (devices up first, so their tracers are part of the session)
    _rt.start(str(log_dir), profiler_options)


def start_server(port: int, requires_backend: bool = True):
    """Starts the profiler server on `port`, for TensorBoard's profile plugin or xprof
    to collect traces from. JAX: jax.profiler.start_server."""
    if requires_backend:
        get_backend()
    return _rt.start_server(port)


def stop_server() -> None:
    """Stops the running profiler server. JAX: jax.profiler.stop_server."""
    _rt.stop_server()


def device_memory_profile(backend: str | None = None) -> bytes:
    """A snapshot of the device memory in use (arrays and executables, with where they
    were allocated) as a gzipped pprof protocol buffer (`pprof` reads it).
    JAX: jax.profiler.device_memory_profile."""
    client = getattr(get_backend(backend), "client", None)
    if client is None:
        raise NotImplementedError(f"device_memory_profile: the {backend or 'default'} "
                                  f"backend has no XLA client to take the profile of")
    return _rt.heap_profile(client)


def save_device_memory_profile(filename, backend: str | None = None) -> None:
    """Writes device_memory_profile() to `filename`. JAX: same name."""
    profile = device_memory_profile(backend)
    with open(filename, "wb") as f:
        f.write(profile)


def stop_trace() -> None:
    """Stops the trace and writes it. JAX: jax.profiler.stop_trace."""
    _rt.stop()


@contextlib.contextmanager
def trace(log_dir, create_perfetto_link: bool = False, create_perfetto_trace: bool = False,
          profiler_options=None):
    """Context manager around start_trace/stop_trace. JAX: jax.profiler.trace."""
    start_trace(log_dir, create_perfetto_link, create_perfetto_trace, profiler_options)
    try:
        yield
    finally:
        stop_trace()


class TraceAnnotation:
    """Marks a region of host time in the trace. JAX: jax.profiler.TraceAnnotation."""

    def __init__(self, name: str, **kwargs):
        self._name, self._kwargs, self._ctx = name, kwargs, None

    def __enter__(self):
        self._ctx = _rt.annotate(self._name, **self._kwargs)
        self._ctx.__enter__()
        return self

    def __exit__(self, *exc):
        return self._ctx.__exit__(*exc)


def annotate_function(func=None, name=None, **kwargs):
    """Decorator: each call of `func` is a TraceAnnotation. JAX: same name."""
    if func is None:
        return functools.partial(annotate_function, name=name, **kwargs)

    @functools.wraps(func)
    def wrapper(*args, **kw):
        with TraceAnnotation(name or getattr(func, "__qualname__", "fn"), **kwargs):
            return func(*args, **kw)
    return wrapper


StepTraceAnnotation = TraceAnnotation

__all__ = ["ProfileData", "ProfileEvent", "ProfileOptions", "ProfilePlane",
           "StepTraceAnnotation", "TraceAnnotation", "annotate_function",
           "device_memory_profile", "register_subprocess", "save_device_memory_profile",
           "start_server", "start_trace", "stop_server", "stop_trace", "trace"]
