"""Configuration: one registry of options with defaults, docs and validation.

    mjax.config.update("jax_enable_x64", True)      # JAX's option names
    MJAX_ENABLE_X64=1 python prog.py                # or JAX_ENABLE_X64=1
    with mjax.config.override(jax_enable_x64=True): ...
"""
from __future__ import annotations

import contextlib
import os
import threading
from dataclasses import dataclass
from typing import Any, Callable


@dataclass
class Option:
    name: str
    default: Any
    doc: str
    parse: Callable[[Any], Any]
    # Options that change what tracing produces are part of jit's cache key.
    affects_tracing: bool = False


def _bool(v) -> bool:
    if isinstance(v, str):
        if v.lower() in ("1", "true", "yes", "on"):
            return True
        if v.lower() in ("0", "false", "no", "off", ""):
            return False
        raise ValueError(f"expected a boolean, got {v!r}")
    if isinstance(v, (bool, int)):
        return bool(v)
    raise ValueError(f"expected a boolean, got {v!r}")


def _choice(v, *choices):
    if v not in choices:
        raise ValueError(f"expected one of {', '.join(map(repr, choices))}, got {v!r}")
    return v


def _str(v) -> str:
    if not isinstance(v, str):
        raise ValueError(f"expected a string, got {v!r}")
    return v


_OPTIONS = [
    Option("jax_enable_x64", False, "Enable 64-bit types (int64, float64, complex128).",
           _bool, affects_tracing=True),
    Option("jax_disable_jit", False, "Run jit-decorated functions op by op (debugging).",
           _bool),
    Option("jax_numpy_rank_promotion", "allow",
           "Implicit rank promotion in mjax.numpy: 'allow', 'warn' or 'raise'.",
           lambda v: _choice(v, "allow", "warn", "raise"), affects_tracing=True),
    Option("jax_default_matmul_precision", "default",
           "Default precision of matmuls (accepted for compatibility).", _str,
           affects_tracing=True),
    Option("jax_platforms", "cpu", "Comma-separated platforms to use.", _str),
    Option("mjax_verify_each_pass", False,
           "Run jaxpr-verify after every pass when compiling (debugging).", _bool),
    Option("mjax_log_compiles", False, "Print a line each time jit compiles.", _bool),
    Option("jax_compilation_cache_dir", "",
           "Directory of the persistent (on-disk) compilation cache; empty disables it.",
           _str),
]


class Config:
    """Holds option values; attribute access reads (`config.jax_enable_x64`)."""

    def __init__(self):
        object.__setattr__(self, "_options", {o.name: o for o in _OPTIONS})
        object.__setattr__(self, "_values", {})
        object.__setattr__(self, "_local", threading.local())
        for o in _OPTIONS:
            env = None
            for prefix in ("MJAX_", "JAX_"):
                key = prefix + o.name.split("_", 1)[1].upper()
                if key in os.environ:
                    env = os.environ[key]
                    break
            if o.name.upper() in os.environ:
                env = os.environ[o.name.upper()]
            self._values[o.name] = o.parse(env) if env is not None else o.default

    def _check(self, name: str) -> Option:
        try:
            return self._options[name]
        except KeyError:
            raise AttributeError(f"Unrecognized config option: {name}") from None

    def update(self, name: str, value) -> None:
        """Sets option `name` (JAX spelling) for this process."""
        opt = self._check(name)
        try:
            self._values[name] = opt.parse(value)
            self._values.pop("_trace_state", None)
        except ValueError as e:
            raise ValueError(f"invalid value for config option {name}: {e}") from None

    def read(self, name: str):
        overrides = getattr(self._local, "overrides", None)
        if overrides and name in overrides:
            return overrides[name]
        try:
            return self._values[name]
        except KeyError:
            self._check(name)
            raise

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return self.read(name)

    def __setattr__(self, name, value):
        raise AttributeError("use config.update(name, value)")

    @contextlib.contextmanager
    def override(self, **values):
        """Temporarily sets options in this thread: `with config.override(jax_enable_x64=True)`."""
        parsed = {k: self._check(k).parse(v) for k, v in values.items()}
        old = getattr(self._local, "overrides", None)
        self._local.overrides = {**(old or {}), **parsed}
        try:
            yield
        finally:
            self._local.overrides = old

    def trace_state(self) -> tuple:
        """Values of the options that change tracing (part of jit's cache key)."""
        if getattr(self._local, "overrides", None):
            return tuple(self.read(o.name) for o in _OPTIONS if o.affects_tracing)
        cached = self._values.get("_trace_state")
        if cached is None:
            cached = self._values["_trace_state"] = tuple(
                self._values[o.name] for o in _OPTIONS if o.affects_tracing)
        return cached

    def options(self) -> list[Option]:
        return list(self._options.values())


config = Config()
