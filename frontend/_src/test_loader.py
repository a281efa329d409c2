"""JAX-private: jax._src.test_loader: marking tests as unsafe to run in threads, and
JAX's unittest loader, which filters test names by the JAX_TEST_TARGETS and
JAX_EXCLUDE_TEST_TARGETS regexes (`absltest.main(testLoader=jtu.JaxTestLoader())`).

JAX can run a module's tests in parallel threads (JAX_TEST_NUM_THREADS > 1); mjax runs
them in the main thread, so the markers record what they mark and change nothing, and a
thread count above 1 is refused when tests are loaded."""
from __future__ import annotations

import contextlib
import os
import re
import unittest

from mjax.config import int_option, string_option

try:
    from absl.testing import absltest as _absltest
except ImportError:         # (absl-py is not a dependency of mjax)
    _absltest = None

_TEST_TARGETS = string_option(
    "test_targets", os.getenv("JAX_TEST_TARGETS", ""),
    "Regex (re.search) selecting the tests JaxTestLoader runs, by 'Class.method' "
    "(empty: all).")
_EXCLUDE_TEST_TARGETS = string_option(
    "exclude_test_targets", os.getenv("JAX_EXCLUDE_TEST_TARGETS", ""),
    "Regex (re.search) of the tests JaxTestLoader leaves out (empty: none).")
TEST_NUM_THREADS = int_option(
    "jax_test_num_threads", int(os.getenv("JAX_TEST_NUM_THREADS", "0")),
    "Threads JAX runs a module's tests in (0: the main thread); mjax runs them in the "
    "main thread and refuses more than 1.")


@contextlib.contextmanager
def thread_unsafe_test(condition: bool = True):
    """Marks a test (as a decorator or around part of one) as unsafe to run beside other
    tests in threads; tests run one at a time here, so there is nothing to lock."""
    yield


thread_unsafe_test.__test__ = False     # (not a test, pytest)


def thread_unsafe_test_class(condition: bool = True):
    """Marks a TestCase class as unsafe to run in threads (its `thread_hostile`)."""
    def mark(klass):
        assert issubclass(klass, unittest.TestCase), type(klass)
        klass.thread_hostile = condition
        return klass
    return mark


thread_unsafe_test_class.__test__ = False


def _check_threads() -> None:
    if TEST_NUM_THREADS.value > 1:
        raise NotImplementedError(
            f"jax_test_num_threads={TEST_NUM_THREADS.value}: mjax's test loader runs tests "
            "in the main thread only (JAX's threaded test suite is not implemented)")


def _selected(klass, names) -> list:
    include, exclude = _TEST_TARGETS.value, _EXCLUDE_TEST_TARGETS.value
    if include:
        names = [n for n in names if re.search(include, f"{klass.__name__}.{n}")]
    if exclude:
        names = [n for n in names if not re.search(exclude, f"{klass.__name__}.{n}")]
    return names


_LoaderBase = _absltest.TestLoader if _absltest is not None else unittest.TestLoader


class JaxTestLoader(_LoaderBase):
    """absltest's loader (unittest's without absl) keeping the tests JAX_TEST_TARGETS
    selects and JAX_EXCLUDE_TEST_TARGETS does not."""

    def getTestCaseNames(self, testCaseClass):
        _check_threads()
        return _selected(testCaseClass, super().getTestCaseNames(testCaseClass))
