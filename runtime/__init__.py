"""Backends that compile StableHLO and run it: XLA (default, via jaxlib PJRT) and IREE.

This package knows nothing of tracing: it takes StableHLO text and device buffers.
"""
from mjax.runtime.xla import XlaBackend, Executable, get_backend

__all__ = ["XlaBackend", "Executable", "get_backend"]
