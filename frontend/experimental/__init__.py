"""`mjax.experimental`: JAX's experimental APIs that mjax provides."""
from mjax.callbacks import io_callback

__all__ = ["io_callback"]
