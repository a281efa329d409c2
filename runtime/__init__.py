"""Backends that compile StableHLO and run it: XLA (default, via jaxlib PJRT) and IREE.

This package knows nothing of tracing: it takes StableHLO text and device buffers.
runtime/backend.py is the interface and the registry; importing the package registers
both backends (IREE itself loads only when an IREE backend is made).
"""
from mjax.runtime.backend import (Platform, buffer_to_numpy, default_platform,
                                  get_backend, set_default_platform)
from mjax.runtime.xla import Executable, XlaBackend
from mjax.runtime import iree  # noqa: F401  (registers the 'iree' backend)

__all__ = ["Platform", "XlaBackend", "Executable", "buffer_to_numpy", "default_platform",
           "get_backend", "set_default_platform"]
