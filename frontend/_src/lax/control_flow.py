"""jax._src.lax.control_flow (JAX's lax_control_flow_test imports it): mjax.lax's control
flow functions. JAX's internals under it (`common`, the loop primitives) have no mjax
counterpart and are missing on purpose."""
from mjax.lax import (  # noqa: F401
    associative_scan, cond, cumlogsumexp, cummax, cummin, cumprod, cumsum, fori_loop, map,
    platform_dependent, scan, switch, while_loop)
