"""`mjax.scipy.spatial`: rotations, as `jax.scipy.spatial`."""
from mjax.scipy.spatial import transform  # noqa: F401
