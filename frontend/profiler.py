"""`mjax.profiler`: JAX's profiling API over jaxlib's profiler (runtime/profiler.py).

    with mjax.profiler.trace("/tmp/trace"):
        f(x).block_until_ready()
    # tensorboard --logdir /tmp/trace   (or open the .xplane.pb in Perfetto via xprof)
"""
from __future__ import annotations

import contextlib
import functools

from mjax.runtime import profiler as _rt


def start_trace(log_dir, create_perfetto_link: bool = False,
                create_perfetto_trace: bool = False, profiler_options=None) -> None:
    """Starts collecting a trace into `log_dir`. JAX: jax.profiler.start_trace."""
    if create_perfetto_link or create_perfetto_trace:
        raise NotImplementedError("create_perfetto_link/create_perfetto_trace: mjax writes "
                                  "the XSpace trace only; open it with TensorBoard/xprof")
    if profiler_options is not None:
        raise NotImplementedError("profiler_options is not supported yet")
    _rt.start(str(log_dir))


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

__all__ = ["start_trace", "stop_trace", "trace", "TraceAnnotation", "StepTraceAnnotation",
           "annotate_function"]
