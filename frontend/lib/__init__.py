"""JAX: jax.lib: JAX's jaxlib shim (no public names in JAX 0.10.2 but `__version__`, the
jaxlib release, which libraries compare). mjax uses jaxlib directly (mjax.runtime)."""
from jaxlib.version import __version__  # noqa: F401
