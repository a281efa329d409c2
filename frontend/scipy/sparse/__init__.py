"""`mjax.scipy.sparse`: iterative linear solvers, as `jax.scipy.sparse`."""
from mjax.scipy.sparse import linalg  # noqa: F401
