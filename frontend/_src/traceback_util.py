"""JAX-private: jax._src.traceback_util (flax, equinox): libraries register their files
to be hidden from filtered tracebacks as mjax's machinery is, and wrap their entry points
in the same boundary as mjax's (mjax/base/traceback_util.py filters)."""
from mjax.base.traceback_util import (UnfilteredStackTrace, _exclude_paths,  # noqa: F401
                                      _internal, register_exclusion)
from mjax.base.traceback_util import api_boundary as _api_boundary


def api_boundary(fun=None, *, repro_api_name=None, repro_user_func=False):
    """JAX's signature (the repro arguments are for JAX's repro tool: ignored)."""
    return _api_boundary(fun) if fun is not None else _api_boundary


def include_frame(frame) -> bool:
    """Whether `frame` is the user's: neither mjax's machinery nor a registered path
    (equinox walks the stack with it to name where an error was raised)."""
    return not _internal(frame)
