"""Backends that compile StableHLO and run it: XLA (default, via jaxlib PJRT) and IREE.

This package knows nothing of tracing: it takes StableHLO text and device buffers.
"""
from mjax.runtime.xla import (XlaBackend, Executable, buffer_to_numpy, get_backend,
                               set_default_platform)

__all__ = ["XlaBackend", "Executable", "buffer_to_numpy", "get_backend",
           "set_default_platform"]
