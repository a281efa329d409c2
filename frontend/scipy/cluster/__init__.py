"""`mjax.scipy.cluster`: vector quantisation, as `jax.scipy.cluster`."""
from mjax.scipy.cluster import vq  # noqa: F401
