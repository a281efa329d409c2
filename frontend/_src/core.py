"""JAX-private: jax._src.core (numpyro, flax.nnx): whether any transformation is
tracing; the aval class."""
from mjax.tracing.core import current_trace as _current_trace
from mjax.dialect import ShapedArray  # noqa: F401  (flax.nnx reads it from here)
from mjax.tracing.primitive import Primitive  # noqa: F401  (JAX's Pallas tests define one)
from mjax.base.errors import ConcretizationTypeError  # noqa: F401  (JAX's nn_test reads it here)


def trace_state_clean() -> bool:
    return _current_trace() is None
