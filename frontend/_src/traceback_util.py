"""JAX-private: jax._src.traceback_util (flax, equinox): frames of registered paths are
hidden from JAX's filtered tracebacks. mjax filters no tracebacks, so this only records
the paths and `api_boundary` returns the function as it is."""
_exclude_paths: list[str] = []


def register_exclusion(path: str) -> None:
    _exclude_paths.append(path)


def api_boundary(fun=None, *, repro_api_name=None, repro_user_func=False):
    return fun if fun is not None else (lambda f: f)
