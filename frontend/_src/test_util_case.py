"""jax._src.test_util's JaxTestCase, its config handling and the event counters it uses
(re-exported by jax._src.test_util).

    class MyTest(jtu.JaxTestCase):           # absltest's parameterized.TestCase (unittest's
        def test_add(self):                  # TestCase when absl-py is not installed)
            self.assertAllClose(jnp.add(1., 2.), np.float32(3.))

Each test runs with JAX's test defaults in its thread (jax_enable_checks, strict dtype
promotion, rank promotion 'raise', traceback filtering off, legacy PRNG keys an error)
plus what @with_config gives the class, and fails when it leaves a process-wide option
changed. `self.rng()` is a RandomState seeded by the test's name, as JAX's.
"""
from __future__ import annotations

import contextlib
import functools
import inspect
import os
import re
import tempfile
import textwrap
import unittest
import zlib

import numpy as np

from mjax.config import bool_option, config
from mjax.specs import dtypes as _dt
from mjax.tracing.core import current_trace
from mjax.tracing.source_info import in_mjax
from mjax.base.tree_util import tree_map
from mjax.jit import jitted as _jitted, traces as _traces
from mjax import jit
from mjax._src import test_warning_util
from mjax._src.public_test_util import _assert_numpy_allclose, _dtype, tolerance
from mjax._src.test_loader import TEST_NUM_THREADS

try:
    from absl.testing import parameterized as _parameterized
except ImportError:         # (absl-py is not a dependency of mjax)
    _parameterized = None

TEST_WITH_PERSISTENT_COMPILATION_CACHE = bool_option(
    "jax_test_with_persistent_compilation_cache",
    os.getenv("JAX_TEST_WITH_PERSISTENT_COMPILATION_CACHE", "").lower() in ("1", "true"),
    "Run every JaxTestCase with the persistent compilation cache on (a fresh directory).")


# ---- counters ---------------------------------------------------------------------------
# What mjax can count: jit's traces for a call and its compilations for a call (a miss of
# jit's cache). (Eager ops and AOT `.lower()` are not counted: in JAX each eager op's
# first call is a compilation of its own, and `.lower()` a lowering.) "internal": the
# compilations of mjax's own jits (those of its jnp and lax functions), what eager code
# compiles op by op, as JAX's primitive compilations (_CompileAndCheck's second call).
_COUNTS = {"trace": 0, "compile": 0, "internal": 0}
_PATCHED: list = []


def _install_counters() -> None:
    """Wraps jit's trace-miss and compile steps with counters, once per process."""
    if _PATCHED:
        return
    explain, compile_ = _traces._explain_miss, _jitted.Jitted._compile

    def counted_miss(*args, **kwargs):
        _COUNTS["trace"] += 1
        return explain(*args, **kwargs)

    def counted_compile(self, *args, **kwargs):
        _COUNTS["compile"] += 1
        if _is_mjax_function(self.fun):
            _COUNTS["internal"] += 1
        return compile_(self, *args, **kwargs)
    _traces._explain_miss = counted_miss
    _jitted.Jitted._compile = counted_compile
    _PATCHED.append(True)


def _is_mjax_function(fun) -> bool:
    while isinstance(fun, functools.partial):
        fun = fun.func
    code = getattr(inspect.unwrap(fun), "__code__", None)
    return code is not None and in_mjax(code.co_filename)


def _counter(kind: str):
    @contextlib.contextmanager
    def count():
        _install_counters()
        before = _COUNTS[kind]
        yield lambda: _COUNTS[kind] - before
    return count


def _not_counted(name: str, what: str):
    @contextlib.contextmanager
    def count():
        raise NotImplementedError(f"jtu.{name}: mjax does not count {what}")
        yield  # pragma: no cover
    count.__name__ = name
    return count


count_jit_tracing_cache_miss = _counter("trace")
count_jit_and_pmap_lowerings = _counter("compile")
count_jit_compilation_cache_miss = _counter("compile")
_count_op_by_op_compiles = _counter("internal")
count_device_put = _not_counted("count_device_put", "device_put's transfers")
count_device_put_fast_path_hit = _not_counted("count_device_put_fast_path_hit",
                                              "device_put's same-device copies")
count_pjit_cpp_cache_miss = _not_counted("count_pjit_cpp_cache_miss",
                                         "misses of a C++ jit dispatch cache (it has none)")
count_aot_jit_cpp_cache_miss = _not_counted("count_aot_jit_cpp_cache_miss",
                                            "calls of compiled AOT stages")
count_compilation_after_persistent_cache_miss = _not_counted(
    "count_compilation_after_persistent_cache_miss",
    "compilations after a persistent compilation cache miss")
count_jax_array_shard_arg_calls = _not_counted("count_jax_array_shard_arg_calls",
                                               "shard_arg calls")
count_primitive_compiles = _not_counted("count_primitive_compiles",
                                        "compilations of eager primitives")
count_internal_device_puts = _not_counted("count_internal_device_puts",
                                          "jaxlib's internal device_puts")


def count_subjaxpr_to_hlo_conversion(fun_name):
    return _not_counted("count_subjaxpr_to_hlo_conversion",
                        "lowerings of sub-jaxprs to HLO functions")()


def collect_lowered_jaxprs():
    return _not_counted("collect_lowered_jaxprs", "lowered (jaxpr, module) pairs")()


@contextlib.contextmanager
def assert_num_jit_and_pmap_compilations(times):
    with count_jit_and_pmap_lowerings() as count:
        yield
    if count() != times:
        raise AssertionError(f"Expected exactly {times} XLA compilations, "
                             f"but executed {count()}")


# ---- config -----------------------------------------------------------------------------
@contextlib.contextmanager
def global_config_context(**kwds):
    """Sets options process-wide (config.update) and restores them on exit."""
    original = {}
    try:
        for name, value in kwds.items():
            original[name] = config.read(name)
            config.update(name, value)
        yield
    finally:
        for name, value in original.items():
            config.update(name, value)


def thread_local_config_context(**kwds):
    """Sets options in this thread only, for the `with` block."""
    return config.override(**kwds)


class NotPresent:
    def __repr__(self):
        return "<not present>"


@contextlib.contextmanager
def assert_global_configs_unchanged():
    """Fails when the block changes an option's process-wide value."""
    before = dict(config._values)
    yield
    after = dict(config._values)
    if before != after:
        differing = {k: (before.get(k, NotPresent()), after.get(k, NotPresent()))
                     for k in before.keys() | after.keys()
                     if k not in before or k not in after or before[k] != after[k]}
        raise AssertionError("Test changed global config values. Differing values are: "
                             f"{differing}")


def _class_config(attr: str, what: str, kwds):
    def decorate(cls):
        assert inspect.isclass(cls) and issubclass(cls, JaxTestCase), \
            f"@{what} can only wrap JaxTestCase class definitions."
        merged = {}
        for base in cls.__bases__:
            merged.update(getattr(base, attr, {}))
        merged.update(kwds)
        setattr(cls, attr, merged)
        return cls
    return decorate


def with_config(**kwds):
    """Class decorator: the JaxTestCase's tests run with these options (thread-local)."""
    return _class_config("_default_thread_local_config", "with_config", kwds)


def with_global_config(**kwds):
    """Class decorator: the JaxTestCase's tests run with these options set process-wide."""
    return _class_config("_default_global_config", "with_config", kwds)


def is_sequence(x) -> bool:
    try:
        iter(x)
    except TypeError:
        return False
    return True


# ---- the test case ----------------------------------------------------------------------
_Base = _parameterized.TestCase if _parameterized is not None else unittest.TestCase


class JaxTestCase(_Base):
    """Base class of JAX-style tests: numerical assertions and per-test config."""
    _default_global_config: dict = {}
    _default_thread_local_config = {
        "jax_enable_checks": True,
        "jax_numpy_dtype_promotion": "strict",
        "jax_numpy_rank_promotion": "raise",
        "jax_traceback_filtering": "off",
        "jax_legacy_prng_key": "error",
    }

    if not hasattr(unittest.TestCase, "enterContext"):    # (Python 3.10's unittest)
        def enterContext(self, cm):
            result = cm.__enter__()
            self.addCleanup(cm.__exit__, None, None, None)
            return result

    def setUp(self):
        super().setUp()
        self.enterContext(assert_global_configs_unchanged())
        # (adler32: the same seed in every run, and in int32 range)
        self._rng = np.random.RandomState(zlib.adler32(self._testMethodName.encode()))
        self.enterContext(global_config_context(**self._default_global_config))
        self.enterContext(config.override(**self._default_thread_local_config))
        if TEST_WITH_PERSISTENT_COMPILATION_CACHE.value:
            tmp_dir = self.enterContext(tempfile.TemporaryDirectory())
            self.enterContext(config.override(
                jax_compilation_cache_dir=tmp_dir,
                jax_persistent_cache_min_compile_time_secs=0,
                jax_persistent_cache_min_entry_size_bytes=0))

    def tearDown(self) -> None:
        assert current_trace() is None, "a trace is still active after the test"
        super().tearDown()

    def rng(self):
        return self._rng

    def assertDeprecationWarnsOrRaises(self, deprecation_id: str, message: str, *,
                                       error_class=ValueError):
        # (mjax accelerates no deprecation: each still warns)
        return self.assertWarnsRegex(DeprecationWarning, message)

    def assertArraysEqual(self, actual, desired, *, check_dtypes=True, err_msg="",
                          allow_object_dtype=False, verbose=True):
        """actual and desired exactly equal (and of matching dtypes)."""
        if check_dtypes:
            self.assertDtypesMatch(actual, desired)
        actual, desired = np.asarray(actual), np.asarray(desired)
        if not allow_object_dtype and object in (actual.dtype, desired.dtype):
            raise TypeError(
                "assertArraysEqual may be poorly behaved when np.asarray casts to "
                "dtype=object. If comparing PRNG keys, consider "
                "random_test.KeyArrayTest.assertKeysEqual. If comparing collections of "
                "arrays, consider using assertAllClose. To let this test proceed anyway, "
                "pass allow_object_dtype=True.")
        with np.errstate(over="ignore"):
            np.testing.assert_array_equal(actual, desired, err_msg=err_msg, verbose=verbose)

    def assertArraysAllClose(self, actual, desired, *, check_dtypes=True, atol=None,
                             rtol=None, err_msg=""):
        """Same shape, and close within the larger tolerance of the two dtypes."""
        self.assertEqual(actual.shape, desired.shape)
        atol = max(tolerance(_dtype(actual), atol), tolerance(_dtype(desired), atol))
        rtol = max(tolerance(_dtype(actual), rtol), tolerance(_dtype(desired), rtol))
        _assert_numpy_allclose(actual, desired, atol=atol, rtol=rtol, err_msg=err_msg)
        if check_dtypes:
            self.assertDtypesMatch(actual, desired)

    def assertDtypesMatch(self, actual, desired, *, canonicalize_dtypes=True):
        if canonicalize_dtypes and not config.read("jax_enable_x64"):
            canon = lambda x: _dt.canonicalize_dtype(_dtype(x), allow_extended_dtype=True)
            self.assertEqual(canon(actual), canon(desired))
        else:
            self.assertEqual(_dtype(actual), _dtype(desired))

    def assertAllClose(self, actual, desired, *, check_dtypes=True, atol=None, rtol=None,
                       canonicalize_dtypes=True, err_msg=""):
        """actual and desired close: arrays, scalars, or dicts and sequences of them."""
        kw = dict(check_dtypes=check_dtypes, atol=atol, rtol=rtol,
                  canonicalize_dtypes=canonicalize_dtypes, err_msg=err_msg)
        if isinstance(actual, dict):
            self.assertIsInstance(desired, dict)
            self.assertEqual(set(actual.keys()), set(desired.keys()))
            for k in actual.keys():
                self.assertAllClose(actual[k], desired[k], **kw)
        elif is_sequence(actual) and not hasattr(actual, "__array__"):
            if not (is_sequence(desired) and not hasattr(desired, "__array__")):
                self.fail(f"Expected sequence, got {desired}")
            self.assertEqual(len(actual), len(desired))
            for a, d in zip(actual, desired):
                self.assertAllClose(a, d, **kw)
        elif hasattr(actual, "__array__") or np.isscalar(actual):
            if not (hasattr(desired, "__array__") or np.isscalar(desired)):
                self.fail(f"Expected array-like, got {desired}")
            if check_dtypes:
                self.assertDtypesMatch(actual, desired, canonicalize_dtypes=canonicalize_dtypes)
            self.assertArraysAllClose(np.asarray(actual), np.asarray(desired),
                                      check_dtypes=False, atol=atol, rtol=rtol,
                                      err_msg=err_msg)
        elif actual == desired:
            return
        else:
            raise TypeError((type(actual), type(desired)))

    def assertMultiLineStrippedEqual(self, expected, what):
        """Equal after dedenting and stripping the blanks around each line."""
        blanks = re.compile(r"\s*\n\s*")
        expected_clean = blanks.sub("\n", textwrap.dedent(expected).strip())
        what_clean = blanks.sub("\n", textwrap.dedent(what).strip())
        if what_clean != expected_clean:
            print(f"Found\n{what}\n")      # (to paste into the test)
            self.assertMultiLineEqual(expected_clean, what_clean,
                                      msg=f"Found\n{what}\nExpecting\n{expected}")

    @contextlib.contextmanager
    def assertNoWarnings(self):
        with test_warning_util.raise_on_warnings():
            yield

    # (As JAX's, these two are context managers only.)
    @contextlib.contextmanager
    def assertWarns(self, warning, *, msg=None):
        with test_warning_util.record_warnings() as caught:
            yield
        if not any(isinstance(w.message, warning) and (msg is None or msg in str(w.message))
                   for w in caught):
            self.fail(f"Expected warning not found {warning}:'{msg}', got {caught}")

    @contextlib.contextmanager
    def assertWarnsRegex(self, warning, regex):
        if regex is not None and not isinstance(regex, re.Pattern):
            regex = re.compile(regex)
        with test_warning_util.record_warnings() as caught:
            yield
        if not any(isinstance(w.message, warning) and
                   (regex is None or regex.search(str(w.message))) for w in caught):
            self.fail(f"Expected warning not found {warning}:'{regex}', "
                      f"got warnings: {[str(w.message) for w in caught]}")

    def _CompileAndCheck(self, fun, args_maker, *, check_dtypes=True, tol=None,
                         rtol=None, atol=None, check_cache_misses=True):
        """fun's eager results equal jit(fun)'s, traced once and then run compiled, on
        two sets of arguments; calling fun eagerly again compiles nothing."""
        atol, rtol = atol or tol, rtol or tol
        args = args_maker()
        executing = [True]

        def wrapped(*args):
            self.assertTrue(executing[0], "jit re-traced fun on a cached call")
            return fun(*args)
        python_ans = fun(*args)
        self.assertEqual(tree_map(np.shape, python_ans),
                         tree_map(lambda x: np.shape(np.asarray(x)), python_ans))
        with _count_op_by_op_compiles() as compiles:
            python_ans = fun(*args)
        if check_cache_misses and TEST_NUM_THREADS.value <= 1:
            self.assertEqual(compiles(), 0, f"Compilation detected during second call of "
                             f"{fun} in op-by-op mode.")
        cfun = jit(wrapped)
        monitored_ans = cfun(*args)
        executing[0] = False
        compiled_ans = cfun(*args)
        self.assertAllClose(monitored_ans, python_ans, check_dtypes=check_dtypes,
                            atol=atol, rtol=rtol)
        self.assertAllClose(compiled_ans, python_ans, check_dtypes=check_dtypes,
                            atol=atol, rtol=rtol)
        args = args_maker()
        executing[0] = True
        python_ans = fun(*args)
        executing[0] = False
        compiled_ans = cfun(*args)
        self.assertAllClose(compiled_ans, python_ans, check_dtypes=check_dtypes,
                            atol=atol, rtol=rtol)

    def _CheckAgainstNumpy(self, numpy_reference_op, lax_op, args_maker,
                           check_dtypes=True, tol=None, atol=None, rtol=None,
                           canonicalize_dtypes=True):
        args = args_maker()
        lax_ans = lax_op(*args)
        numpy_ans = numpy_reference_op(*args)
        self.assertAllClose(lax_ans, numpy_ans, check_dtypes=check_dtypes,
                            atol=atol or tol, rtol=rtol or tol,
                            canonicalize_dtypes=canonicalize_dtypes)

    def assertCacheMisses(self, func, *, cpp=None, aot_call=None, tracing=None,
                          lowering=None, compilation_after_persistent_cache_miss=None):
        """func() misses jit's caches as many times as each count given says."""
        expected = [(cpp, count_pjit_cpp_cache_miss), (aot_call, count_aot_jit_cpp_cache_miss),
                    (tracing, count_jit_tracing_cache_miss),
                    (lowering, count_jit_and_pmap_lowerings),
                    (compilation_after_persistent_cache_miss,
                     count_compilation_after_persistent_cache_miss)]
        with contextlib.ExitStack() as stack:
            counts = [(n, stack.enter_context(c())) for n, c in expected if n is not None]
            func()
        for n, count in counts:
            self.assertEqual(n, count())


class BufferDonationTestCase(JaxTestCase):
    def assertDeleted(self, x):
        self.assertTrue(x.is_deleted())

    def assertNotDeleted(self, x):
        self.assertFalse(x.is_deleted())
