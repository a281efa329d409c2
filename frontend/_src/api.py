"""jax._src.api: the transformations, as JAX's private module holds them (JAX's
"primitives" documentation page imports them from here)."""
from mjax import (checkpoint, eval_shape, grad, hessian, jacfwd, jacrev, jit,  # noqa: F401
                  jvp, linearize, make_jaxpr, pmap, value_and_grad, vjp, vmap)
