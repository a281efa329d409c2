"""JAX-private: jax._src.interpreters (jaxopt catches `ad.CustomVJPException`, reached as
an attribute: JAX has the module loaded)."""
from mjax._src.interpreters import ad  # noqa: F401
