"""The persistent compilation cache: compiled executables on disk, shared by processes.

    settings.directory = "/tmp/mjax-cache"      # config: jax_compilation_cache_dir
    key = cache_key(stablehlo_text, platform=..., ...)
    expected = program_signature(stablehlo_text)
    payload = get(key, platform="cpu", signature=expected)   # bytes, or None: a miss
    put(key, payload, platform="cpu", signature=expected)    # atomic

An entry proves what it is. It is `MAGIC | sha256(body) | body`, the body a JSON header
line (the full key, the platform, the program's signature) and the payload. `get` trusts
it only if the checksum holds and the header names the key, platform and signature asked
for; the backend then checks the deserialized executable's own parameter and result
types against the program's (`Signature.matches`). Anything else is a miss, never a wrong
program or a traceback: a renamed entry names another key, a damaged one fails the
checksum, a foreign executable has other types. After a miss the backend stores its fresh
compile over the unusable entry (`holds`).

Writers never share a temporary file and `os.replace` is atomic, so processes filling one
cache at once are safe (the last rename wins; every version is a complete entry) and a
writer killed mid-write leaves only its temporary file, removed by a later `put` once
stale. JAX: jax._src.compilation_cache (its option names).
"""
from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import tempfile
import time
from dataclasses import dataclass

import jaxlib

MAGIC = b"mjax-exe-v2\n"
_DIGEST = 32
_TEMP_PREFIX, _TEMP_SUFFIX = ".tmp-", ".part"
_STALE_TEMP_SECS = 3600.0    # a temporary file this old belongs to a writer that died


@dataclass
class Settings:
    """What the frontend's config sets (JAX's option names in brackets)."""

    directory: str | None = None           # jax_compilation_cache_dir
    min_compile_time_secs: float = 1.0     # jax_persistent_cache_min_compile_time_secs
    min_entry_size_bytes: int = 0          # jax_persistent_cache_min_entry_size_bytes
    enabled: bool = True                   # jax_enable_compilation_cache
    max_size: int = -1                     # jax_compilation_cache_max_size (bytes; -1: no
                                           # limit, 0: off)
    raise_errors: bool = False             # jax_raise_persistent_cache_errors

    def active(self) -> bool:
        return bool(self.directory) and self.enabled and self.max_size != 0


settings = Settings(directory=os.environ.get("MJAX_COMPILATION_CACHE_DIR")
                    or os.environ.get("JAX_COMPILATION_CACHE_DIR") or None)


# ---- keys and signatures -----------------------------------------------------------------
@functools.cache
def _version_salt() -> str:
    # (importlib.metadata takes ~0.1 s to import: only processes that use the cache pay.)
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


@dataclass(frozen=True)
class Signature:
    """The parameter and result types of a program's `@main`, spelled as MLIR does
    (`tensor<2x3xf32>`, `tensor<complex<f32>>`, `!stablehlo.token`)."""

    inputs: tuple[str, ...]
    outputs: tuple[str, ...]

    def __str__(self) -> str:
        return f"({', '.join(self.inputs)}) -> ({', '.join(self.outputs)})"

    def matches(self, other: "Signature | None", *, exact_shapes: bool = True) -> bool:
        """Same types; without `exact_shapes`, same element types and ranks (an SPMD
        executable's parameters are its per-device shards)."""
        if not isinstance(other, Signature):
            return False
        if exact_shapes:
            return self == other
        return (list(map(_rank_and_element, self.inputs)) ==
                list(map(_rank_and_element, other.inputs)) and
                list(map(_rank_and_element, self.outputs)) ==
                list(map(_rank_and_element, other.outputs)))


def _rank_and_element(mlir_type: str):
    """('tensor<4x?x2xf32>' ->) (3, 'f32'); other types as they are."""
    if not (mlir_type.startswith("tensor<") and mlir_type.endswith(">")):
        return mlir_type
    parts = mlir_type[len("tensor<"):-1].split("x")
    rank = 0
    while rank < len(parts) - 1 and (parts[rank].isdigit() or parts[rank] == "?"):
        rank += 1
    return rank, "x".join(parts[rank:])


_MAIN = re.compile(r"\bfunc\s+(?:public\s+|private\s+)?@main\(")


def program_signature(text: str) -> Signature | None:
    """The signature of `@main` in MLIR text (a StableHLO module, or IREE's
    `iree.abi.declaration`), read without parsing the module; None without one."""
    m = _MAIN.search(text)
    if m is None:
        return None
    inputs, i = _type_list(text, m.end())
    i = _skip_blanks(text, i)
    if not text.startswith("->", i):
        return Signature(inputs, ())
    i = _skip_blanks(text, i + 2)
    if text.startswith("(", i):
        outputs, _ = _type_list(text, i + 1)
    else:
        outputs = (_leading_type(text[i:_scan(text, i, "{\n")]),)
    return Signature(inputs, outputs)


def _type_list(text: str, i: int) -> tuple[tuple[str, ...], int]:
    """The types of the comma-separated items from `i` to the closing parenthesis, and
    the index after it. An item is `[%name:] type [{attributes}] [loc(...)]`."""
    types = []
    while i < len(text):
        j = _scan(text, i, ",)")
        item = text[i:j].strip()
        if item:
            types.append(_leading_type(item))
        i = j + 1
        if j >= len(text) or text[j] == ")":
            break
    return tuple(types), i


def _leading_type(item: str) -> str:
    item = item.strip()
    if item.startswith("%"):
        item = item[_scan(item, 0, ":") + 1:].strip()
    return item[:_scan(item, 0, " \t\n")]


def _scan(text: str, i: int, stops: str) -> int:
    """The index of the first character of `stops` outside brackets and strings."""
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
        elif depth == 0 and c in stops:
            return i
        elif c == "-" and text.startswith("->", i):
            i += 1                      # an arrow, not a closing bracket
        elif c in "<([{":
            depth += 1
        elif c in ">)]}":
            depth -= 1
        i += 1
    return n


def _skip_blanks(text: str, i: int) -> int:
    while i < len(text) and text[i] in " \t\n":
        i += 1
    return i


# ---- entries -----------------------------------------------------------------------------
@dataclass(frozen=True)
class Entry:
    key: str
    platform: str
    signature: str
    payload: bytes


def encode(entry: Entry) -> bytes:
    """An entry's bytes on disk."""
    header = json.dumps({"key": entry.key, "platform": entry.platform,
                         "signature": entry.signature, "size": len(entry.payload)},
                        sort_keys=True).encode()
    body = header + b"\n" + entry.payload
    return MAGIC + hashlib.sha256(body).digest() + body


def decode(data: bytes) -> Entry | None:
    """The entry in `data`, or None unless it is complete and undamaged."""
    start = len(MAGIC) + _DIGEST
    if len(data) < start or not data.startswith(MAGIC):
        return None
    body = data[start:]
    if hashlib.sha256(body).digest() != data[len(MAGIC):start]:
        return None
    header, newline, payload = body.partition(b"\n")
    try:
        fields = json.loads(header)
        entry = Entry(str(fields["key"]), str(fields["platform"]),
                      str(fields["signature"]), payload)
        size = int(fields["size"])
    except (ValueError, TypeError, KeyError):
        return None
    return entry if newline and size == len(payload) else None


def _path(key: str) -> str:
    return os.path.join(settings.directory, f"{key}.mjaxexe")


def get(key: str, *, platform: str, signature: Signature) -> bytes | None:
    """The payload stored for `key`, or None: absent, damaged, or recorded for another
    key, platform or signature."""
    if not settings.active():
        return None
    try:
        with open(_path(key), "rb") as f:
            data = f.read()
        if settings.max_size > 0:
            os.utime(_path(key))       # (recently used: evicted last)
    except OSError:
        if settings.raise_errors and os.path.exists(_path(key)):
            raise
        return None
    entry = decode(data)
    if entry is None or (entry.key, entry.platform, entry.signature) != \
            (key, platform, str(signature)):
        return None
    return entry.payload


def holds(key: str) -> bool:
    """Whether a file is stored under `key` (after a miss: an unusable one, which a fresh
    compile replaces whatever its compile time)."""
    return settings.active() and os.path.exists(_path(key))


def put(key: str, payload: bytes, *, platform: str, signature: Signature) -> None:
    """Stores `payload` atomically; failures to write are ignored (a cache is optional)."""
    if not settings.active() or len(payload) < settings.min_entry_size_bytes:
        return
    data = encode(Entry(key, platform, str(signature), payload))
    try:
        os.makedirs(settings.directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=settings.directory, prefix=_TEMP_PREFIX,
                                   suffix=_TEMP_SUFFIX)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
            os.replace(tmp, _path(key))
        except BaseException:
            try:
                os.unlink(tmp)
            except OSError:
                pass
            raise
        _remove_stale_temporaries()
        if settings.max_size > 0:
            _evict(settings.max_size)
    except OSError:
        if settings.raise_errors:
            raise


def _evict(limit: int) -> None:
    """Deletes the least recently used entries until the directory holds `limit` bytes
    or less (JAX's jax_compilation_cache_max_size)."""
    entries = []
    for name in os.listdir(settings.directory):
        if name.endswith(".mjaxexe"):
            try:
                st = os.stat(os.path.join(settings.directory, name))
            except OSError:
                continue
            entries.append((st.st_mtime, st.st_size, name))
    total = sum(size for _, size, _ in entries)
    for _, size, name in sorted(entries):
        if total <= limit:
            break
        try:
            os.unlink(os.path.join(settings.directory, name))
            total -= size
        except OSError:
            pass        # (another process removed it first)


def _remove_stale_temporaries() -> None:
    """Deletes temporary files left by writers that died before their rename."""
    now = time.time()
    for name in os.listdir(settings.directory):
        if name.startswith(_TEMP_PREFIX) and name.endswith(_TEMP_SUFFIX):
            path = os.path.join(settings.directory, name)
            try:
                if now - os.stat(path).st_mtime > _STALE_TEMP_SECS:
                    os.unlink(path)
            except OSError:
                pass        # (another process removed it first)


__all__ = ["Settings", "settings", "cache_key", "Signature", "program_signature", "Entry",
           "encode", "decode", "get", "holds", "put", "MAGIC"]
