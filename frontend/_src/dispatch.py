"""JAX-private: jax._src.dispatch (equinox: waiting for pending effects; JAX's tests:
applying a primitive eagerly)."""
from mjax.callbacks import effects_barrier as wait_for_tokens  # noqa: F401


def apply_primitive(prim, *args, **params):
    """`prim` applied to concrete arguments, as an eager op (JAX's dispatch of a
    primitive bound outside every trace)."""
    return prim.bind(*args, **params)
