"""JAX-private: jax._src.core (numpyro): whether any transformation is tracing."""
from mjax.core import current_trace as _current_trace


def trace_state_clean() -> bool:
    return _current_trace() is None
