"""The persistent compilation cache: compiled executables on disk, shared by processes.

    settings.directory = "/tmp/mjax-cache"      # config: jax_compilation_cache_dir
    key = cache_key(stablehlo_text, backend, devices, num_partitions, options_fingerprint)
    payload = get(key)          # bytes, or None (absent, truncated or corrupt)
    put(key, payload)           # atomic: a temporary file renamed into place

An entry is `MAGIC | sha256(payload) | payload`. A reader checks both before trusting the
payload, so a truncated or corrupt file is a miss (and is rewritten by the next put),
never a crash or a wrong program. Writers never share a temporary file and `os.replace`
is atomic, so processes filling one cache at once are safe: the last rename wins and
every version is a complete entry. JAX: jax._src.compilation_cache (its option names).
"""
from __future__ import annotations

import hashlib
import os
import tempfile
from dataclasses import dataclass

import jaxlib

MAGIC = b"mjax-exe-v1\n"
_DIGEST = 32


@dataclass
class Settings:
    """What the frontend's config sets (JAX's option names in brackets)."""

    directory: str | None = None           # jax_compilation_cache_dir
    min_compile_time_secs: float = 1.0     # jax_persistent_cache_min_compile_time_secs
    min_entry_size_bytes: int = 0          # jax_persistent_cache_min_entry_size_bytes


settings = Settings(directory=os.environ.get("MJAX_COMPILATION_CACHE_DIR")
                    or os.environ.get("JAX_COMPILATION_CACHE_DIR") or None)


def _version_salt() -> str:
    from importlib import metadata
    try:
        mjax_version = metadata.version("mjax")
    except metadata.PackageNotFoundError:
        mjax_version = "dev"
    return f"jaxlib={jaxlib.__version__};mjax={mjax_version}"


def cache_key(text: str, *, platform: str, platform_version: str, device_kinds,
              num_devices: int, num_partitions: int, options: str = "") -> str:
    """A hex key naming the program, how it is compiled and by which libraries."""
    h = hashlib.sha256()
    for part in (_version_salt(), platform, platform_version, ",".join(device_kinds),
                 str(num_devices), str(num_partitions), options, text):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _path(key: str) -> str:
    return os.path.join(settings.directory, f"{key}.mjaxexe")


def get(key: str) -> bytes | None:
    """The stored payload for `key`, or None if absent or damaged."""
    if not settings.directory:
        return None
    try:
        with open(_path(key), "rb") as f:
            data = f.read()
    except OSError:
        return None
    head = len(MAGIC) + _DIGEST
    if len(data) < head or not data.startswith(MAGIC):
        return None
    digest, payload = data[len(MAGIC):head], data[head:]
    if hashlib.sha256(payload).digest() != digest:
        return None
    return payload


def put(key: str, payload: bytes) -> None:
    """Stores `payload` atomically; failures to write are ignored (a cache is optional)."""
    if not settings.directory or len(payload) < settings.min_entry_size_bytes:
        return
    try:
        os.makedirs(settings.directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=settings.directory, prefix=".tmp-", suffix=".part")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(MAGIC + hashlib.sha256(payload).digest() + payload)
            os.replace(tmp, _path(key))
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
    except OSError:
        pass


__all__ = ["Settings", "settings", "cache_key", "get", "put", "MAGIC"]
