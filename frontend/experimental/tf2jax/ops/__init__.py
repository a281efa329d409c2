"""The conversion rules of TensorFlow ops, one module per family, registered in
registry.py's table when imported."""
from mjax.experimental.tf2jax.ops import (array, control_flow, linalg, math,  # noqa: F401
                                          nn, random, variables)
from mjax.experimental.tf2jax.ops.registry import (RULES,  # noqa: F401
                                                   UnsupportedOperationError, register,
                                                   static, static_ints, xp)

__all__ = ["RULES", "UnsupportedOperationError", "register", "static", "static_ints", "xp"]
