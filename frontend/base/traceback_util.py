"""Tracebacks without mjax's own frames, as JAX shows its users (jax_traceback_filtering).

An error raised below a public entry point (a jit call, grad, vmap, ...) reaches the user
with the frames of mjax's machinery removed (tracing, transformations, compiling; the
jnp/lax function the error is raised in stays, as in JAX), from the outermost entry
point inward, and a note saying so. The option's values are JAX's:
- "auto" (default): "tracebackhide" under IPython, else "quiet_remove_frames";
- "quiet_remove_frames": the frames removed, and a note appended to the error;
- "remove_frames": the frames removed; the unfiltered traceback is the error's cause;
- "tracebackhide": frames kept, each of mjax's marked `__tracebackhide__` (IPython and
  pytest hide them);
- "off": the traceback as it is.
Nothing is done unless an error is raised."""
from __future__ import annotations

import functools
import os
import sys
import types

from mjax import dialect, passes, runtime
from mjax.config import config

# The frames removed: the machinery of transformations, tracing, compiling and running
# (as JAX removes its api, pjit, core, interpreters, ...), not the library functions an
# error is raised in (jnp, lax, scipy: JAX keeps its own jnp and lax frames too).
_HERE = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_MACHINERY = tuple(os.path.join(_HERE, name) for name in (
    "ad" + os.sep, "spmd" + os.sep, "tracing/abstract_eval.py", "ad/ad_checkpoint.py", "jit/api.py",
    "api_util.py", "jit/cache_miss_log.py", "tracing/core.py", "custom_batching.py",
    "custom_derivatives.py", "specs/dtypes.py", "arrays/eager.py", "arrays/eager_fast.py", "vmap/batching.py",
    "tracing/hijax_lowering.py", "jaxpr/api.py", "jit/arguments.py", "jit/caches.py", "jit/fast.py",
    "jit/refs.py", "jit/traces.py", "jit/jitted.py", "tracing/lowering.py", "jit/nested_traces.py",
    "arrays/placement.py", "tracing/primitive.py", "ref.py", "specs/ref_slice.py", "tracing/region_cache.py",
    "tracing/registration.py", "tracing/source_info.py", "jit/stages.py", "tracing/staging.py", "base/trace_trees.py",
    "base/traceback_util.py", "tracing/tracer.py", "base/tree_util.py",
    os.path.join("experimental", "checkify.py"), os.path.join("experimental", "hijax.py"),
    os.path.join("experimental", "shard_map.py"))) + tuple(
    os.path.dirname(os.path.abspath(m.__file__)) + os.sep for m in (dialect, passes, runtime))
_NOTE = ("--------------------\nFor simplicity, JAX has removed its internal frames from "
         "the traceback of the following exception. Set JAX_TRACEBACK_FILTERING=off to "
         "include these.")
_UNFILTERED_NOTE = ("The stack trace below excludes JAX-internal frames.\nThe preceding is "
                    "the original exception that occurred, unmodified.\n\n"
                    "--------------------")


class UnfilteredStackTrace(Exception):
    """The cause of an error whose traceback was filtered with "remove_frames": the
    whole traceback. JAX: jax.errors.UnfilteredStackTrace's role."""


# Paths libraries register as theirs to hide too (JAX: jax._src.traceback_util's
# register_exclusion; flax and equinox register their transformation modules).
_exclude_paths: list[str] = []


def register_exclusion(path: str) -> None:
    _exclude_paths.append(path)


def _internal(frame) -> bool:
    name = frame.f_code.co_filename
    return name.startswith(_MACHINERY) or (
        bool(_exclude_paths) and name.startswith(tuple(_exclude_paths)))


def _mode() -> str:
    mode = config.read("jax_traceback_filtering") or "auto"
    if mode == "auto":
        return "tracebackhide" if "IPython" in sys.modules and _in_ipython() else \
            "quiet_remove_frames"
    return mode


def _in_ipython() -> bool:
    try:
        get_ipython()  # noqa: F821  (IPython's builtin, when running under it)
    except NameError:
        return False
    return True


def filter_traceback(tb):
    """`tb` without the frames of mjax's machinery."""
    kept = []
    while tb is not None:
        if not _internal(tb.tb_frame):
            kept.append((tb.tb_frame, tb.tb_lasti, tb.tb_lineno))
        tb = tb.tb_next
    out = None
    for frame, lasti, lineno in reversed(kept):
        out = types.TracebackType(out, frame, lasti, lineno)
    return out


def _under_boundary(tb) -> bool:
    """Whether an outer entry point is on the stack (it filters, once, for all)."""
    frame = tb.tb_frame.f_back
    while frame is not None:
        if frame.f_code is _BOUNDARY_CODE:
            return True
        frame = frame.f_back
    return False


def api_boundary(fun):
    """`fun`, an entry point of mjax's API, filtering the tracebacks of the errors it
    raises (see the module docstring)."""
    @functools.wraps(fun)
    def boundary(*args, **kwargs):
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            tb = e.__traceback__
            if tb is None or _under_boundary(tb):
                raise
            mode = _mode()
            if mode == "off":
                raise
            if mode == "tracebackhide":
                t = tb
                while t is not None:
                    if _internal(t.tb_frame):
                        t.tb_frame.f_locals["__tracebackhide__"] = True
                    t = t.tb_next
                raise
            e.with_traceback(filter_traceback(tb))
            if mode == "remove_frames":
                full = UnfilteredStackTrace("".join(
                    [f"{type(e).__name__}: {e}\n\n", _UNFILTERED_NOTE]))
                full.with_traceback(tb)
                full.__cause__, e.__cause__ = e.__cause__, full
            elif _NOTE not in getattr(e, "__notes__", ()):
                e.add_note(_NOTE)
            raise
    return boundary


_BOUNDARY_CODE = api_boundary(lambda: None).__code__


__all__ = ["UnfilteredStackTrace", "api_boundary", "filter_traceback", "register_exclusion"]
