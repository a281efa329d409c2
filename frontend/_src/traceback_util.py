"""JAX-private: jax._src.traceback_util (flax, equinox): frames of registered paths are
hidden from JAX's filtered tracebacks. mjax filters no tracebacks, so this only records
the paths and `api_boundary` returns the function as it is."""
_exclude_paths: list[str] = []


def register_exclusion(path: str) -> None:
    _exclude_paths.append(path)


def api_boundary(fun=None, *, repro_api_name=None, repro_user_func=False):
    return fun if fun is not None else (lambda f: f)


def include_frame(frame) -> bool:
    """Whether `frame` is the user's (not from a registered path): equinox walks the stack
    with it to name where an error was raised."""
    return not any(frame.f_code.co_filename.startswith(p) for p in _exclude_paths)
