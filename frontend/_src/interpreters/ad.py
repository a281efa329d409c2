"""JAX-private: jax._src.interpreters.ad (jaxopt): the exception raised when a custom_vjp
call is differentiated by its closed-over values."""
from mjax.passes.forward_mode import CustomVJPException  # noqa: F401
