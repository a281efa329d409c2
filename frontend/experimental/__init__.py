"""`mjax.experimental`: JAX's experimental APIs that mjax provides."""
from mjax.callbacks import io_callback
from mjax.experimental import checkify
from mjax.hijax_lowering import cur_qdd

__all__ = ["checkify", "cur_qdd", "io_callback"]
