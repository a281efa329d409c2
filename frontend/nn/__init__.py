"""`mjax.nn`: activation functions and friends over `mjax.numpy` (JAX's `jax.nn`):
functions.py, attention.py (dot_product_attention), block_scaled.py (scaled_matmul,
scaled_dot_general) and initializers.py."""
from mjax.nn import initializers  # noqa: F401
from mjax.nn.attention import dot_product_attention  # noqa: F401
from mjax.nn.functions import *  # noqa: F401,F403
from mjax.nn.functions import __all__ as _functions

__all__ = _functions + ["dot_product_attention", "initializers"]
