"""JAX: jax.version: the JAX release whose API mjax follows.

`mjax.__version__` (and so `jax.__version__` under mjax.alias_jax) is that release, since
libraries check it to pick code paths; mjax's own version is `mjax_version`."""
__version__ = "0.10.2"
_version = __version__
__version_info__ = (0, 10, 2)
mjax_version = "0.1.0"
