"""JAX-private: jax._src.interpreters (jaxopt catches `ad.CustomVJPException`, reached as
an attribute: JAX has the module loaded). `batching` and `mlir` are mjax's public
jax.interpreters modules themselves (JAX's lax_control_flow_test imports them from here),
so a rule registered through either name is one registration; they load at first access."""
import importlib as _importlib

from mjax._src.interpreters import ad  # noqa: F401


def __getattr__(name):
    if name in ("batching", "mlir"):
        return _importlib.import_module(f"mjax.interpreters.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
