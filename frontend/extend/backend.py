"""JAX: jax.extend.backend: the process's backends (PJRT clients) and their caches."""
from __future__ import annotations

from jaxlib import xla_client

from mjax.jit.api import devices
from mjax.runtime import get_backend as _runtime_backend

__all__ = ["get_backend", "backends", "get_default_device", "backend_xla_version",
           "clear_backends", "clear_in_memory_compilation_cache", "get_compile_options"]


def get_backend(platform=None):
    """The jaxlib PJRT client of `platform` (default: the default backend), as JAX's
    (`.platform`, `.platform_version`, `.devices()`, ...)."""
    backend = _runtime_backend(platform)
    client = getattr(backend, "client", None)
    if client is None:
        raise NotImplementedError(f"jax.extend.backend.get_backend: mjax's "
                                  f"{backend.platform!r} backend is not a PJRT client")
    return client


def backends() -> dict:
    """{platform: client} of the backends made so far (the default one at least)."""
    client = get_backend()
    return {client.platform: client}


def get_default_device():
    return devices()[0]


def backend_xla_version(platform=None) -> int | None:
    return getattr(get_backend(platform), "xla_version", None)


def get_compile_options(num_replicas: int, num_partitions: int, device_assignment=None,
                        env_options_overrides=None, fdo_profile=None,
                        detailed_logging: bool = True,
                        backend=None) -> xla_client.CompileOptions:
    """XLA compile options for an SPMD program of the given size."""
    options = xla_client.CompileOptions()
    build = options.executable_build_options
    build.num_replicas, build.num_partitions = num_replicas, num_partitions
    return options


def clear_backends():
    raise NotImplementedError("jax.extend.backend.clear_backends: mjax's backends live "
                              "for the whole process (mjax.runtime)")


def clear_in_memory_compilation_cache():
    raise NotImplementedError("jax.extend.backend.clear_in_memory_compilation_cache: "
                              "mjax has no process-wide clear of its jit caches yet "
                              "(each jitted function's .clear_cache() works)")
