"""`mjax.memory`: memory spaces. JAX: jax.memory.

    device_put(x, memory.Space.Host)    # x's devices, their pinned host memory
"""
from __future__ import annotations

from mjax.specs.memory_kinds import Space

__all__ = ["Space"]
