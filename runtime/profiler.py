"""Profiling over jaxlib's profiler (XLA's TSL profiler): a session collects host and
device activity and writes an XSpace trace (`*.xplane.pb` under
`<log_dir>/plugins/profile/<run>/`) that TensorBoard's profile plugin and Perfetto open.
`annotate(name)` marks a region of host time in it (TraceMe)."""
from __future__ import annotations

import gzip
import threading

from jaxlib import _profile_data, _profiler

_lock = threading.Lock()
_session = {"active": None, "log_dir": None}
_server = {"active": None}

# A collected profile read back (its planes, lines and events), as jaxlib gives it.
ProfileData = _profile_data.ProfileData
ProfileEvent = _profile_data.ProfileEvent
ProfilePlane = _profile_data.ProfilePlane


class ProfileOptions(_profiler.ProfileOptions):
    """What a trace collects (host_tracer_level, python_tracer_level, device options, ...):
    jaxlib's options, defaults as jaxlib sets them."""


def start(log_dir: str, options: ProfileOptions | None = None) -> None:
    with _lock:
        if _session["active"] is not None:
            raise RuntimeError("Profile has already been started. Only one profile may be "
                               "run at a time.")
        if options is None:
            options = ProfileOptions()
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


def start_server(port: int):
    """Starts a profiler server on `port` (TensorBoard's profile plugin and xprof
    connect to it and collect traces on demand); one per process."""
    with _lock:
        if _server["active"] is not None:
            raise ValueError("Only one profiler server can be active at a time.")
        _server["active"] = _profiler.start_server(port)
        return _server["active"]


def stop_server() -> None:
    """Stops the server start_server started (dropping it shuts it down)."""
    with _lock:
        if _server["active"] is None:
            raise ValueError("No active profiler server.")
        _server["active"] = None


def register_subprocess(pid: int, port: int):
    """Profiles the process `pid`'s server (on `port`) with this one's; returns the
    function that unregisters it."""
    return _profiler.register_subprocess(pid, port)


def heap_profile(client) -> bytes:
    """The live device buffers and executables of an XLA client, as a gzipped pprof
    protocol buffer."""
    return gzip.compress(client.heap_profile())


def annotate(name: str, **metadata):
    """A context manager marking host time as `name` in any running trace."""
    return _profiler.TraceMe(name, **metadata)


__all__ = ["ProfileData", "ProfileEvent", "ProfileOptions", "ProfilePlane", "annotate",
           "heap_profile", "register_subprocess", "start", "start_server", "stop",
           "stop_server"]
