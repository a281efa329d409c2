"""Backends that compile StableHLO and run it: XLA (default, via jaxlib PJRT) and IREE.

This package knows nothing of tracing: it takes StableHLO text and device buffers.
runtime/backend.py is the interface and the registry; importing the package registers
both backends (IREE itself loads only when an IREE backend is made).
"""
import importlib
import os

from mjax.runtime.backend import (Platform, buffer_to_numpy, default_platform,
                                  get_backend, set_default_platform)
from mjax.runtime.xla import Executable, XlaBackend
from mjax.runtime import iree  # noqa: F401  (registers the 'iree' backend)



def c_fast_path(name: str):
    """The optional C extension `mjax.runtime.<name>` (a fast path setup.py builds when a
    C compiler is there), or None: not built, or MJAX_NO_C_FASTPATH=1 (Python paths only)."""
    if os.environ.get("MJAX_NO_C_FASTPATH", "") not in ("", "0"):
        return None
    try:
        return importlib.import_module(f"mjax.runtime.{name}")
    except ImportError:
        return None


__all__ = ["Platform", "XlaBackend", "Executable", "buffer_to_numpy", "c_fast_path",
           "default_platform", "get_backend", "set_default_platform"]
