"""Profiling over jaxlib's profiler (XLA's TSL profiler): a session collects host and
device activity and writes an XSpace trace (`*.xplane.pb` under
`<log_dir>/plugins/profile/<run>/`) that TensorBoard's profile plugin and Perfetto open.
`annotate(name)` marks a region of host time in it (TraceMe)."""
from __future__ import annotations

import threading

from jaxlib import _profiler

_lock = threading.Lock()
_session = {"active": None, "log_dir": None}


def start(log_dir: str, *, host_tracer_level: int = 2, python_tracer_level: int = 1) -> None:
    with _lock:
        if _session["active"] is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be "
                               "run at a time.")
        options = _profiler.ProfileOptions()
        options.host_tracer_level = host_tracer_level
        options.python_tracer_level = python_tracer_level
        _session["active"] = _profiler.ProfilerSession(options)
        _session["log_dir"] = str(log_dir)


def stop() -> str:
    """Stops the running session and writes its trace; returns the log directory."""
    with _lock:
        session, log_dir = _session["active"], _session["log_dir"]
        if session is None:
            raise RuntimeError("No profile started")
        _session["active"] = _session["log_dir"] = None
    session.stop_and_export(log_dir)
    return log_dir


def annotate(name: str, **metadata):
    """A context manager marking host time as `name` in any running trace."""
    return _profiler.TraceMe(name, **metadata)


__all__ = ["start", "stop", "annotate"]
