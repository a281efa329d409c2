"""Where the user's code is: the location every traced op carries, and `named_scope`.

An op's location is the innermost Python frame outside the mjax package (its
`file:line:col`), wrapped in the names of the enclosing `named_scope`s, which StableHLO
and XLA keep as op names. Errors raised in mjax's own code name that line too.
"""
from __future__ import annotations

import contextlib
import functools
import os
import re
import sys
import threading
import types

from mjax.config import config
from mjax.dialect.values import file_location, named_location, unknown_location
from mjax.passes.jaxpr_to_stablehlo import SCOPES
from mjax.passes.registry import format_location
from mjax.passes.rules.xla_metadata import tag_location

_PKG_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
_LOC_CACHE: dict = {}
FUNCTION_AT: dict = {}   # (file, line, col) of a user location -> its function's qualname


def in_mjax(filename: str) -> bool:
    """Whether a source file is mjax's own (not the user's)."""
    return filename.startswith(_PKG_DIR)


def user_frame():
    """The innermost Python frame outside the mjax package (the user's line)."""
    f = sys._getframe(1)
    pkg = _PKG_DIR      # (in_mjax inlined: this runs per traced op, ~9 frames each)
    while f is not None and f.f_code.co_filename.startswith(pkg):
        f = f.f_back
    return f


def frame_position(f) -> tuple[int, int | None]:
    """(line, column counted from 0) of the instruction frame `f` is at (column None
    when Python does not know it)."""
    try:
        pos = list(f.f_code.co_positions())[f.f_lasti // 2]
    except (IndexError, AttributeError):
        return f.f_lineno, None
    return (pos[0] if pos[0] is not None else f.f_lineno), pos[2]


class _NameStack(threading.local):
    def __init__(self):
        self.names: tuple[str, ...] = ()


_names = _NameStack()


def name_stack() -> tuple[str, ...]:
    """The named scopes around the current line, outermost first."""
    return _names.names


@contextlib.contextmanager
def named_scope(name: str):
    """Ops traced inside get `name` in their location (`outer/inner`), which StableHLO
    and XLA keep as the op name that profiles and HLO dumps show. JAX: jax.named_scope."""
    if not isinstance(name, str):
        raise TypeError("named_scope name argument must be a string.")
    previous = _names.names
    _names.names = previous + (name,)
    try:
        yield
    finally:
        _names.names = previous


def named_call(fun, *, name: str | None = None):
    """`fun` with the ops it traces inside `named_scope(name)` (default: its __name__).
    JAX: jax.named_call."""
    if name is None:
        name = getattr(fun, "__name__", None) or type(fun).__name__

    @functools.wraps(fun)
    def named(*args, **kwargs):
        with named_scope(name):
            return fun(*args, **kwargs)
    return named


def user_location():
    f = user_frame()
    if f is None:
        return unknown_location()
    scope = _names.names
    metadata = config.read("_xla_metadata")
    strip = config.read("jax_hlo_source_file_canonicalization_regex")
    code = f.f_code
    # (keyed by the code object's id, not the object: hashing a code object hashes its
    # bytecode and constants, per traced op; the entry keeps the code alive and checks it)
    key = (id(code), f.f_lasti, scope, metadata, strip)
    hit = _LOC_CACHE.get(key)
    if hit is not None and hit[0] is code:
        return hit[1]
    line, col0 = frame_position(f)
    col = (col0 or 0) + 1
    path = code.co_filename if not strip else re.sub(strip, "", code.co_filename)
    loc = file_location(path, line, col)
    # The Python function of each position (JAX's print_saved_residuals shows it),
    # keyed as the location spells it (errors look it up by location).
    FUNCTION_AT[(path, line, col)] = getattr(code, "co_qualname", code.co_name)
    if scope:
        loc = named_location("/".join(scope), loc)
    if metadata:
        loc = tag_location(loc, metadata)
    if scope:
        SCOPES[loc.attr] = "/".join(scope)   # (lowering names its ops with it)
    _LOC_CACHE[key] = (code, loc)
    return loc


def describe_location(loc) -> str:
    return format_location(loc)


def at_user_line(message: str) -> str:
    """`message` plus the user's `file:line:col`, for errors raised in mjax's own code."""
    return f"{message} (at {describe_location(user_location())})"


def wraps(fun):
    """functools.wraps for a transformation's wrapper of the user's `fun`: its string
    names and doc (a callable object may have a `__name__` that is not a string, as
    equinox modules do: left out, as JAX's wrapping does), `__wrapped__`, and, for a
    wrapper that is a plain function, fun's `__dict__` as JAX copies it (`vmap(module)`
    answers the module's attribute reads), unless fun is mjax's own object (a jit's
    attributes must not leak)."""
    def wrap(wrapper):
        for name in ("__module__", "__name__", "__qualname__", "__doc__"):
            value = getattr(fun, name, None)
            if isinstance(value, str):
                setattr(wrapper, name, value)
        attributes = getattr(fun, "__dict__", None)
        if isinstance(wrapper, types.FunctionType) and isinstance(attributes, dict) and \
                not type(fun).__module__.startswith("mjax."):
            wrapper.__dict__.update(attributes)
        wrapper.__wrapped__ = fun
        return wrapper
    return wrap
