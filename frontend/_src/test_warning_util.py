"""JAX-private: jax._src.test_warning_util, context managers that catch warnings in
tests. JAX swaps in a thread-safe `warnings.showwarning` hook when its test suite runs
tests in threads; mjax runs tests in the main thread only (jax_test_num_threads > 1 is
refused by test_loader), so these are `warnings.catch_warnings` underneath."""
from __future__ import annotations

import contextlib
import warnings


@contextlib.contextmanager
def raise_on_warnings():
    """Any warning raised inside becomes an exception."""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


@contextlib.contextmanager
def record_warnings():
    """Yields the list of warnings raised inside (each a warnings.WarningMessage)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        yield caught


@contextlib.contextmanager
def ignore_warning(*, message: str | None = None, category: type = Warning):
    """Ignores warnings of `category` whose text matches the regex `message` (from its
    start; None: any)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=message or "", category=category)
        yield
