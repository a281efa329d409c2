"""`mjax.experimental`: JAX's experimental APIs that mjax provides."""
from mjax.callbacks import io_callback
from mjax.experimental import checkify
# (JAX's device_put imports multihost_utils, so `jax.experimental.multihost_utils` reads
# work in JAX programs without an import of their own: docs/multi_process.md)
from mjax.experimental import multihost_utils
from mjax.tracing.hijax_lowering import cur_qdd

__all__ = ["checkify", "cur_qdd", "io_callback", "multihost_utils"]
