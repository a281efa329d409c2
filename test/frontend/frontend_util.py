"""Helpers shared by the frontend tests."""
import contextlib

import mjax


@contextlib.contextmanager
def x64(enabled=True):
    """Turns x64 on in both mjax and the jax oracle, restoring both afterwards."""
    import jax
    old_m, old_j = mjax.config.read("jax_enable_x64"), jax.config.jax_enable_x64
    mjax.config.update("jax_enable_x64", enabled)
    jax.config.update("jax_enable_x64", enabled)
    try:
        yield
    finally:
        mjax.config.update("jax_enable_x64", old_m)
        jax.config.update("jax_enable_x64", old_j)
