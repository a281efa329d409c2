"""`mjax.scipy.optimize`: unconstrained minimization (JAX's `jax.scipy.optimize`)."""
from mjax.scipy.optimize.minimize import OptimizeResults, minimize  # noqa: F401

__all__ = ["OptimizeResults", "minimize"]
