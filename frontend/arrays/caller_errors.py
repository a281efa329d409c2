"""Errors a host callback raised for its caller (`raise_in_caller`), found again by the
caller in XLA's JaxRuntimeError that carries their text.

A callback runs on one of XLA's threads, not its caller's: XLA turns what it raises into
a JaxRuntimeError holding the text. On the host CPU the program's call returns that
error (host_callbacks.errors_for_caller raises the original there); on an accelerator
the callback runs beside the program, and the error may only surface when a result is
read (Array._value, block_until_ready), where `original_of` finds it as well. Entries
are kept by text (two programs failing at once each find theirs), the oldest dropped.
"""
from __future__ import annotations

import threading

_FOR_CALLER: dict = {}
_LOCK = threading.Lock()
_MAX = 64        # (errors whose call never looked for them go, oldest first)


def raise_in_caller(exc: BaseException):
    """Raises `exc` from a callback so that the call of the program that ran it (or the
    read of its results) raises `exc` itself, not XLA's JaxRuntimeError wrapping its
    text, as JAX's eagerly evaluated checkify.check does."""
    with _LOCK:
        _FOR_CALLER.pop(str(exc), None)
        _FOR_CALLER[str(exc)] = exc
        while len(_FOR_CALLER) > _MAX:
            del _FOR_CALLER[next(iter(_FOR_CALLER))]
    raise exc


def original_of(error: BaseException, take: bool = True) -> BaseException | None:
    """The exception a callback raised with raise_in_caller whose text XLA's `error`
    carries (the longest match), or None; `take` forgets it (the call's one raise),
    else it stays for the program's other results."""
    text = str(error)
    with _LOCK:
        found = max((k for k in _FOR_CALLER if k and k in text), key=len, default=None)
        if found is None:
            return None
        return _FOR_CALLER.pop(found) if take else _FOR_CALLER[found]
