"""`mjax.experimental`: JAX's experimental APIs that mjax provides."""
from mjax.callbacks import io_callback
from mjax.experimental import checkify

__all__ = ["checkify", "io_callback"]
