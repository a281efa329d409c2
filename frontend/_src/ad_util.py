"""JAX-private: jax._src.ad_util (lineax, equinox): the stop_gradient primitive and
symbolic zero tangents."""
from mjax.interpreters.ad import Zero, add_jaxvals, instantiate_zeros, zeros_like_aval  # noqa: F401
from mjax.lax import add_p as add_jaxvals_p, stop_gradient_p  # noqa: F401
