"""JAX-private: jax._src.xla_bridge. chex's `set_n_cpu_devices` reads `_backends` (the
platforms whose backend is already made, which can no longer take a new device count)."""
from mjax.runtime import backend as _runtime


def backends_are_initialized() -> bool:
    return _runtime.backends_are_initialized()


def __getattr__(name):
    if name == "_backends":     # (a snapshot, by platform name: 'cpu', 'cuda', ...)
        return {str(p): b for p, b in _runtime._BACKENDS.items()}
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
