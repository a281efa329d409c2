"""jax._src.test_util (`jtu`) on mjax behaves as JAX 0.10.2's: each deterministic helper
gives what real jax's jtu gives (jax, the oracle, imported here), and a test module
written in JAX's style (a JaxTestCase with parameterized cases, assertAllClose,
_CompileAndCheck, _CheckAgainstNumpy, check_grads, device decorators) passes and fails
the same tests under `python -m mjax -m pytest` as under real jax."""
import os
import re
import subprocess
import sys
import textwrap
import unittest
import warnings

import numpy as np
import pytest

import jax
import jax.numpy as jnp
from jax._src import test_util as jjtu

import mjax
import mjax.numpy as mnp
from mjax._src import test_util as mjtu
from mjax._src import config as mconfig

SAMPLERS = ["rand_default", "rand_small", "rand_positive", "rand_nonzero", "rand_not_small",
            "rand_small_positive", "rand_uniform", "rand_some_equal", "rand_some_inf",
            "rand_some_nan", "rand_some_inf_and_nan", "rand_some_zero", "rand_bool",
            "rand_fullrange"]
DTYPES = [np.float32, np.float16, np.int32, np.int8, np.uint8, np.uint32, np.complex64,
          np.bool_, mjax.numpy.bfloat16]
SHAPES = [(3, 4), 5, (), (0, 2), "numpy_scalar", "python_scalar"]


def _shape(module, shape):
    return {"numpy_scalar": module.NUMPY_SCALAR_SHAPE,
            "python_scalar": module.PYTHON_SCALAR_SHAPE}.get(shape, shape) \
        if isinstance(shape, str) else shape


def _outcome(thunk):
    """thunk()'s value, or the class and text of what it raised."""
    try:
        return thunk()
    except Exception as e:    # noqa: BLE001 (compared with jax's exception)
        return ("raised", type(e).__name__, str(e))


def _same(a, b) -> bool:
    if isinstance(a, tuple) and a and a[0] == "raised":
        return a == b
    if type(a) is not type(b):
        return False
    a, b = np.asarray(a), np.asarray(b)
    # (bit for bit: the same draws give the same NaNs; ml_dtypes' floats compare too)
    return a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes()


# ---- samplers ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", SAMPLERS)
def test_samplers_draw_jax_values(name):
    """Each sampler, seeded alike, gives JAX's values, dtype and Python type, for every
    dtype and kind of shape."""
    for dtype in DTYPES:
        for shape in SHAPES:
            ours = _outcome(lambda: getattr(mjtu, name)(np.random.RandomState(7))(
                _shape(mjtu, shape), dtype))
            theirs = _outcome(lambda: getattr(jjtu, name)(np.random.RandomState(7))(
                _shape(jjtu, shape), dtype))
            assert _same(ours, theirs), (name, dtype, shape, ours, theirs)


def test_integer_samplers_draw_jax_values():
    cases = [("rand_int", (), (4, 3), np.int32), ("rand_int", (0, 10), (4,), np.float32),
             ("rand_int", (-3, 5), (2, 2), np.int8), ("rand_int", (), (3,), np.float32),
             ("rand_unique_int", (), (6,), np.int32), ("rand_unique_int", (20,), (5,),
                                                       np.int32)]
    for name, args, shape, dtype in cases:
        ours = _outcome(lambda: getattr(mjtu, name)(np.random.RandomState(3), *args)(
            shape, dtype))
        theirs = _outcome(lambda: getattr(jjtu, name)(np.random.RandomState(3), *args)(
            shape, dtype))
        assert _same(ours, theirs), (name, args, ours, theirs)
    for allow_negative in (True, False):
        ours = mjtu.rand_indices_unique_along_axis(np.random.RandomState(5))(
            6, (3, 4, 2), 1, allow_negative)
        theirs = jjtu.rand_indices_unique_along_axis(np.random.RandomState(5))(
            6, (3, 4, 2), 1, allow_negative)
        np.testing.assert_array_equal(ours, theirs)


def test_names_and_shapes_format_as_jax():
    for shape in [(2, 3), [4], (), 3, "numpy_scalar", "python_scalar", np.array([2, 1])]:
        for dtype in [np.float32, np.int64, np.complex64, mnp.bfloat16]:
            assert mjtu.format_shape_dtype_string(_shape(mjtu, shape), dtype) == \
                jjtu.format_shape_dtype_string(_shape(jjtu, shape), dtype)
            assert _outcome(lambda: mjtu.is_valid_shape(_shape(mjtu, shape), dtype)) == \
                _outcome(lambda: jjtu.is_valid_shape(_shape(jjtu, shape), dtype))
    for text in ["a.b(c)[d] e=f,g", "x<y>{z}'q'\"r\"", "plain"]:
        assert mjtu.sanitize_test_name(text) == jjtu.sanitize_test_name(text)
    assert mjtu.dtype_str(np.float16) == jjtu.dtype_str(np.float16)


def test_case_sampling_picks_jax_cases():
    args = ([dict(a=1, b=2), dict(a=3, b=4)],)
    kw = dict(shape=[(), (3,), (2, 3)], dtype=["f32", "i32", "c64"], axis=[0, 1, None])
    assert mjtu.sample_product_testcases(*args, **kw) == \
        jjtu.sample_product_testcases(*args, **kw)
    assert mjtu.sample_product_testcases(x=[1, 2]) == jjtu.sample_product_testcases(x=[1, 2])
    assert list(mjtu.cases_from_gens(lambda n: n * 2, str)) == \
        list(jjtu.cases_from_gens(lambda n: n * 2, str))

    def gen(choose):
        for x in choose(range(6)):
            for y in choose("abc"):
                yield dict(testcase_name=f"_{x}{y}", x=x, y=y)
    assert list(mjtu.named_cases_from_sampler(gen)) == \
        list(jjtu.named_cases_from_sampler(gen))


# ---- tolerances, dtypes, devices --------------------------------------------------------
def _by_name(table):
    return {np.dtype(k).name: v for k, v in table.items()}


def test_tolerances_are_jax():
    assert _by_name(mjtu.default_tolerance()) == _by_name(jjtu.default_tolerance())
    assert _by_name(mjtu.default_gradient_tolerance) == _by_name(jjtu.default_gradient_tolerance)
    for dtype in [np.float32, np.float64, np.int64, np.complex128, mnp.bfloat16, np.bool_]:
        for tol in [None, 0.5, {np.float32: 1e-2}, {np.float64: 3.0, np.int32: 1}]:
            assert mjtu.tolerance(dtype, tol) == jjtu.tolerance(dtype, tol), (dtype, tol)
    for t1, t2 in [(1e-3, {np.float32: 1e-2}), (None, 0.1), ({np.float16: 1}, None)]:
        assert _by_name(mjtu.join_tolerance(t1, t2)) == _by_name(jjtu.join_tolerance(t1, t2))


def test_check_close_passes_and_fails_as_jax():
    x = np.linspace(1, 2, 6, dtype=np.float32)
    for y, tol in [(x, None), (x + 1e-7, None), (x + 1e-3, None), (x + 1e-3, 1e-2),
                   (x.astype(np.float16), None), (x + 2e-4, {np.float32: 1e-4})]:
        ours = _outcome(lambda: mjtu.check_close(x, y, atol=tol, rtol=tol))
        theirs = _outcome(lambda: jjtu.check_close(x, y, atol=tol, rtol=tol))
        assert (ours is None) == (theirs is None), (y, tol, ours, theirs)


def test_dtype_helpers_are_jax():
    assert mjtu.supported_dtypes() == jjtu.supported_dtypes()
    for group in ["floating", "all_floating", "integer", "all_integer", "unsigned",
                  "all_unsigned", "complex", "boolean", "inexact", "all_inexact",
                  "numeric", "all", "custom_floats"]:
        assert getattr(mjtu.dtypes, group) == getattr(jjtu.dtypes, group), group
    for dtype in [np.float16, np.float32, np.float64, mnp.bfloat16]:
        assert mjtu.num_float_bits(dtype) == jjtu.num_float_bits(dtype)
    for value in [np.arange(3.0), np.arange(3), np.arange(3, dtype=np.uint64), [True],
                  np.ones(2, np.complex128), np.ones(2, np.float16)]:
        assert _same(mjtu.to_default_dtype(value), jjtu.to_default_dtype(value))
    ref = lambda: (np.arange(2.0), np.arange(2))
    ours = mjtu.with_jax_dtype_defaults(ref, (True, False))()
    theirs = jjtu.with_jax_dtype_defaults(ref, (True, False))()
    assert [a.dtype for a in ours] == [a.dtype for a in theirs]
    assert mjtu.promote_like_jnp(lambda a, b: (a.dtype, b.dtype))(
        np.int32(1), np.float32(2)) == (np.float32, np.float32)


def test_device_predicates_are_jax():
    assert mjtu.device_under_test() == jjtu.device_under_test()
    assert mjtu._get_device_tags() == jjtu._get_device_tags()
    for tags in [["cpu"], ["tpu"], ["gpu", "cpu"], ["cuda"], []]:
        assert mjtu.test_device_matches(tags) == jjtu.test_device_matches(tags)
    for name in ["is_device_tpu", "is_device_cuda", "is_device_rocm", "is_cloud_tpu",
                 "is_device_tpu_at_least"]:
        args = (4,) if name == "is_device_tpu_at_least" else ()
        assert getattr(mjtu, name)(*args) == getattr(jjtu, name)(*args), name
    assert mjtu.is_device_tpu(5, "e") == jjtu.is_device_tpu(5, "e")
    assert mjtu.is_cloud_tpu_at_least(2025, 1, 1) == jjtu.is_cloud_tpu_at_least(2025, 1, 1)
    assert mjtu.parse_version("0.10.2rc1") == jjtu.parse_version("0.10.2rc1")
    np.testing.assert_array_equal(mjtu.complex_plane_sample(np.complex64, 2, 3),
                                  jjtu.complex_plane_sample(np.complex64, 2, 3))


def _skip_message(module, decorator, *args, **kwargs):
    class Case:
        pass
    method = getattr(module, decorator)(*args, **kwargs)(lambda self: "ran")
    return _outcome(lambda: method(Case()))


def test_device_and_flag_decorators_skip_as_jax():
    for decorator, args, kwargs in [
            ("skip_on_devices", ("cpu",), {}), ("skip_on_devices", ("tpu", "gpu"), {}),
            ("run_on_devices", ("cpu",), {}), ("run_on_devices", ("tpu",), {}),
            ("skip_on_devices", ("cpu",), {"skip_reason": "mine"}),
            ("skip_on_flag", ("jax_enable_x64", False), {}),
            ("skip_on_flag", ("jax_enable_x64", True), {})]:
        assert _skip_message(mjtu, decorator, *args, **kwargs) == \
            _skip_message(jjtu, decorator, *args, **kwargs), decorator
    assert _skip_message(mjtu, "device_supports_buffer_donation") == \
        _skip_message(jjtu, "device_supports_buffer_donation")


def test_create_mesh_is_jax_mesh_or_skips():
    ours, theirs = mjtu.create_mesh((1,), ("x",)), jjtu.create_mesh((1,), ("x",))
    assert (ours.axis_names, dict(ours.shape), repr(ours.axis_types)) == \
        (theirs.axis_names, dict(theirs.shape), repr(theirs.axis_types))
    assert isinstance(ours, mjax.sharding.Mesh)
    ours = _outcome(lambda: mjtu.create_mesh((4, 4), ("x", "y")))
    theirs = _outcome(lambda: jjtu.create_mesh((4, 4), ("x", "y")))
    assert ours == theirs and ours[1] == "SkipTest"


# ---- counters and config ----------------------------------------------------------------
def _counts(module, api):
    # (lax ops: JAX's jnp functions are jits of their own, each traced and counted once;
    # mjax stages them inline, so only the user's jits are counted)
    f = api.jit(lambda x: api.lax.sin(x))
    x, y = api.numpy.ones(3), api.numpy.ones(4)
    out = []
    with module.count_jit_tracing_cache_miss() as traces, \
            module.count_jit_and_pmap_lowerings() as compiles:
        for arg in (x, x, y, x):
            f(arg)
            out.append((traces(), compiles()))
    return out


def test_compilation_counters_count_as_jax():
    assert _counts(mjtu, mjax) == _counts(jjtu, jax)
    with pytest.raises(AssertionError, match="Expected exactly 2 XLA compilations"):
        with mjtu.assert_num_jit_and_pmap_compilations(2):
            mjax.jit(lambda x: x - 1)(mnp.ones(2))
    for name in ["count_device_put", "count_pjit_cpp_cache_miss", "count_primitive_compiles"]:
        with pytest.raises(NotImplementedError, match=name):
            with getattr(mjtu, name)():
                pass


def test_config_contexts_restore_and_detect_changes():
    with mjtu.global_config_context(jax_enable_x64=True):
        assert mnp.ones(1, dtype=float).dtype == np.float64
    assert mnp.ones(1, dtype=float).dtype == np.float32
    with pytest.raises(AssertionError, match="jax_numpy_rank_promotion"):
        with mjtu.assert_global_configs_unchanged():
            mjax.config.update("jax_numpy_rank_promotion", "warn")
    mjax.config.update("jax_numpy_rank_promotion", "allow")
    with mjtu.thread_local_config_context(jax_numpy_rank_promotion="raise"):
        with pytest.raises(ValueError):
            mnp.ones(3) + mnp.ones((2, 3))
    assert repr(mjtu.NotPresent()) == repr(jjtu.NotPresent())
    assert mconfig.enable_x64 is mjax.enable_x64
    assert mconfig.config_states["jax_debug_nans"].value is False


def _test_case(module, name="test_something"):
    class Case(module.JaxTestCase):
        def test_something(self):
            pass
    case = Case(name)
    case.setUp()
    return case


def test_jax_test_case_assertions_and_seed_are_jax():
    ours, theirs = _test_case(mjtu), _test_case(jjtu)
    try:
        assert ours.rng().randint(1 << 30) == theirs.rng().randint(1 << 30)
        assert ours._default_thread_local_config == theirs._default_thread_local_config
        assert mjax.config.read("jax_numpy_rank_promotion") == "raise"
        x32 = np.arange(4, dtype=np.float32)
        for name, args, kwargs in [
                ("assertAllClose", (x32, x32 + 1e-7), {}),
                ("assertAllClose", (x32, x32 + 1e-3), {}),
                ("assertAllClose", (x32, x32 + 1e-3), {"atol": 1e-2}),
                ("assertAllClose", (x32, x32.astype(np.int32)), {}),
                ("assertAllClose", (x32, x32.astype(np.int32)), {"check_dtypes": False}),
                ("assertAllClose", ({"a": (x32, 1.0)}, {"a": (x32, 1.0)}), {}),
                ("assertAllClose", ({"a": x32}, {"b": x32}), {}),
                ("assertAllClose", ([x32, x32], [x32]), {}),
                ("assertAllClose", (x32, np.float64(2.0).astype(np.float32)), {}),
                ("assertArraysEqual", (x32, x32), {}),
                ("assertArraysEqual", (x32, x32 + 1), {}),
                ("assertArraysEqual", (np.array([None]), np.array([None])), {}),
                ("assertArraysAllClose", (x32, x32 + 1e-7), {}),
                ("assertDtypesMatch", (x32, np.arange(4.0)), {}),
                ("assertDtypesMatch", (x32, np.arange(4.0)), {"canonicalize_dtypes": False}),
                ("assertMultiLineStrippedEqual", ("  a\n   b ", "a\nb"), {}),
                ("assertMultiLineStrippedEqual", ("a\nb", "a\nc"), {})]:
            mine = _outcome(lambda: getattr(ours, name)(*args, **kwargs))
            jaxs = _outcome(lambda: getattr(theirs, name)(*args, **kwargs))
            assert (mine is None) == (jaxs is None), (name, args, mine, jaxs)
            if mine is not None:
                assert mine[1] == jaxs[1], (name, mine, jaxs)
    finally:
        ours.doCleanups()
        theirs.doCleanups()
    assert mjax.config.read("jax_numpy_rank_promotion") == "allow"


def test_with_config_and_markers():
    @mjtu.with_config(jax_numpy_rank_promotion="allow", jax_enable_x64=True)
    class Case(mjtu.JaxTestCase):
        def test_it(self):
            pass
    assert Case._default_thread_local_config["jax_numpy_rank_promotion"] == "allow"
    assert Case._default_thread_local_config["jax_numpy_dtype_promotion"] == "strict"
    case = Case("test_it")
    case.setUp()
    try:
        assert mnp.ones(1, dtype=float).dtype == np.float64
    finally:
        case.doCleanups()
    with pytest.raises(AssertionError, match="with_config"):
        mjtu.with_config(x=1)(object)
    assert mjtu.thread_unsafe_test_class()(Case).thread_hostile is True

    @mjtu.thread_unsafe_test()
    def f():
        return 3
    assert f() == 3
    def marked():
        pass
    marked = mjtu.pytest_mark_if_available("usefixtures")(marked)
    assert [m.name for m in marked.pytestmark] == ["usefixtures"]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with mjtu.ignore_warning(message="boring", category=UserWarning):
            warnings.warn("boring thing", UserWarning)
        with pytest.raises(UserWarning):
            with mjtu.ignore_warning(message="boring", category=UserWarning):
                warnings.warn("interesting", UserWarning)
    with mjtu.set_env(MJAX_JTU_PROBE="1"):
        assert os.environ["MJAX_JTU_PROBE"] == "1"
    assert "MJAX_JTU_PROBE" not in os.environ


def test_check_grads_is_mjax_test_util_and_fails_on_a_wrong_derivative():
    from mjax import test_util
    assert mjtu.check_grads is test_util.check_grads
    mjtu.check_grads(lambda x: mnp.sin(x) * x, (np.float32(0.7),), order=2)

    @mjax.custom_jvp
    def wrong(x):
        return mnp.sin(x)
    wrong.defjvp(lambda p, t: (mnp.sin(p[0]), 2.0 * t[0]))
    with pytest.raises(AssertionError):
        mjtu.check_grads(wrong, (np.float32(0.7),), order=1, modes=["fwd"])


def test_missing_helpers_say_what_is_missing():
    with pytest.raises(NotImplementedError, match="mpmath"):
        mjtu.vectorize_with_mpmath
    with pytest.raises(AttributeError):
        mjtu.no_such_helper


# ---- a test module in JAX's style, run by pytest under mjax and under jax -------------
STYLE_MODULE = textwrap.dedent('''
    from absl.testing import absltest, parameterized
    import numpy as np
    import jax
    import jax.numpy as jnp
    from jax._src import config
    from jax._src import dtypes
    from jax._src import test_util as jtu
    from jax.test_util import check_grads

    config.parse_flags_with_absl()


    class StyleTest(jtu.JaxTestCase):

      @jtu.sample_product(shape=[(3,), (2, 3)], dtype=jtu.dtypes.floating,
                          op=["sin", "tanh"])
      def test_unary(self, shape, dtype, op):
        rng = jtu.rand_default(self.rng())
        args_maker = lambda: [rng(shape, dtype)]
        self._CheckAgainstNumpy(getattr(np, op), getattr(jnp, op), args_maker, tol=1e-5)
        self._CompileAndCheck(getattr(jnp, op), args_maker)

      @parameterized.named_parameters(("_f32", np.float32), ("_i32", np.int32))
      def test_add(self, dtype):
        rng = jtu.rand_small(self.rng())
        args_maker = lambda: [rng((4,), dtype), rng((4,), dtype)]
        self._CheckAgainstNumpy(np.add, jnp.add, args_maker)
        self._CompileAndCheck(jnp.add, args_maker)

      def test_grads(self):
        check_grads(lambda x: jnp.sin(x) * x, (np.float32(0.7),), order=2,
                    modes=["fwd", "rev"])

      def test_all_close_tree(self):
        self.assertAllClose({"a": jnp.arange(3.0), "b": (jnp.float32(1),)},
                            {"a": np.arange(3.0, dtype=np.float32),
                             "b": (np.float32(1),)})

      @jtu.skip_on_devices("cpu")
      def test_skipped_on_cpu(self):
        self.fail("ran on the CPU")

      @jtu.run_on_devices("cpu")
      def test_runs_on_cpu(self):
        self.assertEqual(jtu.device_under_test(), "cpu")

      def test_strict_promotion(self):
        with self.assertRaises(dtypes.TypePromotionError):
          jnp.add(np.int32(1), np.float32(2))

      def test_rank_promotion_raises(self):
        with self.assertRaises(ValueError):
          jnp.ones(3) + jnp.ones((2, 3))

      def test_fresh_jit_per_call(self):
        # (a new jit on each call compiles again: not an op-by-op compilation)
        f = lambda x: jax.jit(lambda y: y * 2)(x)
        self._CompileAndCheck(f, lambda: [np.ones(3, np.float32)])

      def test_wrong_reference_fails(self):
        args_maker = lambda: [np.linspace(0.1, 1.0, 5, dtype=np.float32)]
        self._CheckAgainstNumpy(np.cos, jnp.sin, args_maker)

      def test_retrace_fails_compile_and_check(self):
        calls = []
        def f(x):
          calls.append(1)
          return x * len(calls)
        self._CompileAndCheck(f, lambda: [np.ones(2, np.float32)])


    @jtu.with_config(jax_numpy_rank_promotion="allow")
    class ConfiguredTest(jtu.JaxTestCase):

      def test_rank_promotion_allowed(self):
        self.assertEqual((jnp.ones(3) + jnp.ones((2, 3))).shape, (2, 3))

      def test_mesh(self):
        mesh = jtu.create_mesh((1,), ("x",))
        self.assertEqual(mesh.axis_names, ("x",))


    if __name__ == "__main__":
      absltest.main(testLoader=jtu.JaxTestLoader())
''')


def _summary(output: str) -> dict:
    line = [ln for ln in output.splitlines() if re.search(r"\d+ (passed|failed)", ln)]
    assert line, output[-3000:]
    return {k: int(n) for n, k in re.findall(r"(\d+) (passed|failed|skipped|error)", line[-1])}


def _run_style_module(tmp_path, aliased: bool) -> tuple:
    path = tmp_path / "style_test.py"
    path.write_text(STYLE_MODULE)
    runner = [sys.executable, "-m", "mjax"] if aliased else [sys.executable]
    env = {**os.environ, "JAX_PLATFORMS": "cpu"}
    env.pop("MJAX_ALIAS_JAX", None)
    p = subprocess.run(runner + ["-m", "pytest", "-q", "-p", "no:cacheprovider",
                                 "-p", "no:xdist", "-rfs", str(path)],
                       cwd=tmp_path, capture_output=True, text=True, env=env, timeout=600)
    return _summary(p.stdout + p.stderr), p.stdout + p.stderr


def test_jax_style_module_passes_as_under_jax(tmp_path):
    ours, out = _run_style_module(tmp_path, aliased=True)
    theirs, jax_out = _run_style_module(tmp_path, aliased=False)
    # 4 sampled unary cases + 2 adds + grads + tree + cpu + 2 promotions + fresh jit + 2
    # configured
    expected = {"passed": 14, "failed": 2, "skipped": 1}
    assert theirs == expected, jax_out[-3000:]
    assert ours == expected, out[-3000:]
    for name in ["test_wrong_reference_fails", "test_retrace_fails_compile_and_check"]:
        assert f"FAILED style_test.py::StyleTest::{name}" in out, out[-3000:]


def test_src_dtypes_helpers_tests_use_are_jax():
    """The jax._src.dtypes names JAX's test files read next to jtu."""
    from jax._src import dtypes as jdt
    from mjax._src import dtypes as mdt
    for x64 in (False, True):
        with jax.enable_x64(x64), mjax.enable_x64(x64):
            for name in ["default_int_dtype", "default_uint_dtype", "default_float_dtype",
                         "default_complex_dtype"]:
                assert getattr(mdt, name)() == getattr(jdt, name)(), (name, x64)
            assert {k: f() for k, f in mdt.default_types.items()} == \
                {k: f() for k, f in jdt.default_types.items()}
    for dtype in [bool, np.int8, np.float32, np.complex64, np.uint32]:
        assert mdt.to_numeric_dtype(dtype) == jdt.to_numeric_dtype(dtype)
    assert mdt.python_scalar_types_to_dtypes == {  # (JAX adds its shape-polymorphic dims)
        t: jdt.python_scalar_types_to_dtypes[t] for t in (bool, int, float, complex)}
    assert mdt._float8_dtypes == jdt._float8_dtypes
    for m, j in [(1.0, 1.0), (True, True), (np.float32(1), np.float32(1)),
                 (mnp.ones(2), jnp.ones(2)), (mnp.asarray(2.0), jnp.asarray(2.0)),
                 (mjax.jit(lambda a: a * 2)(1.0), jax.jit(lambda a: a * 2)(1.0))]:
        assert mdt.is_weakly_typed(m) == jdt.is_weakly_typed(j), m


def test_src_modules_jax_tests_import():
    """What JAX's test files (random_test, lax_numpy_reducers_test) read from jax._src
    beside jtu: config's States, deprecations, dispatch.apply_primitive, prng's names."""
    from jax._src import config as jconfig, dispatch as jdispatch
    from jax._src.random import prng as jprng   # noqa: F401 (the module exists in jax)
    from mjax._src import deprecations, dispatch
    from mjax._src.random import prng
    assert list(mconfig.ExplicitX64Mode.__members__) == \
        list(jconfig.ExplicitX64Mode.__members__)
    assert mconfig.enable_x64.value == jconfig.enable_x64.value
    with pytest.raises(AttributeError, match="no config option"):
        mconfig.no_such_option
    x = np.linspace(0.0, 1.0, 5, dtype=np.float32)
    np.testing.assert_allclose(dispatch.apply_primitive(mjax.lax.mul_p, x, x),
                               jdispatch.apply_primitive(jax.lax.mul_p, x, x), rtol=1e-6)
    assert deprecations.is_accelerated("jax-some-deprecation") is False
    with pytest.warns(DeprecationWarning, match="old"):
        deprecations.warn("jax-some-deprecation", "old", stacklevel=1)
    from mjax._src import core
    assert core.Primitive is mjax.extend.core.Primitive   # (pallas_test defines one)
    assert isinstance(mjax.random.key(0), prng.PRNGKeyArray)
    assert {"threefry2x32", "rbg", "unsafe_rbg"} <= set(prng.prngs)
    bits = prng.random_bits(mjax.random.key(1), 32, (3,))
    assert bits.shape == (3,) and bits.dtype == np.uint32


def test_pallas_and_hypothesis_test_helpers():
    """jax._src.pallas.pallas_test_util and jax._src.hypothesis_test_util (JAX's Pallas
    tests' base classes; its wheel ships neither, so the checks are against NumPy and
    JAX's documented behaviour)."""
    import hypothesis as hp
    from mjax._src import hijax, hypothesis_test_util as htu
    from mjax._src.pallas import pallas_test_util as ptu
    from mjax.experimental import pallas as pl
    assert hijax.HiType is mjax.experimental.hijax.HiType

    def add_one(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0

    class Interpret(ptu.PallasTest):
        INTERPRET = True

        def test_add(self):
            x = np.arange(8, dtype=np.float32)
            out = self.pallas_call(add_one, out_shape=mjax.ShapeDtypeStruct(x.shape,
                                                                             x.dtype))(x)
            self.assertAllClose(out, x + 1)

    class Compiled(Interpret):
        INTERPRET = False

    class OnTpu(ptu.PallasTPUTest):
        def test_add(self):
            pass
    results = {}
    for cls in (Interpret, Compiled, OnTpu):
        result = unittest.TestResult()
        cls("test_add").run(result)
        results[cls.__name__] = (result.testsRun, len(result.failures + result.errors),
                                 [r for _, r in result.skipped])
    assert results == {"Interpret": (1, 0, []),
                       "Compiled": (1, 0, ["On CPU the test works only in interpret mode"]),
                       "OnTpu": (1, 0, ["Test requires TPUs"])}, results
    assert pl.pallas_call is not None
    before = getattr(hp.settings, "_current_profile", None) or "default"
    htu.setup_hypothesis(max_examples=7)
    try:
        settings = hp.settings()
        assert (settings.max_examples, settings.derandomize, settings.deadline,
                settings.database) == (7, True, None, None)
    finally:
        hp.settings.load_profile(before)


def test_jax_test_loader_filters_as_jax(tmp_path):
    """`absltest.main(testLoader=jtu.JaxTestLoader())` runs the tests JAX_TEST_TARGETS
    selects and JAX_EXCLUDE_TEST_TARGETS does not, as JAX's loader."""
    path = tmp_path / "style_test.py"
    path.write_text(STYLE_MODULE)
    for env in [{"JAX_TEST_TARGETS": "StyleTest.test_add"},
                {"JAX_EXCLUDE_TEST_TARGETS": "test_unary|Style.*fail"}]:
        ran = []
        for runner in ([sys.executable, "-m", "mjax"], [sys.executable]):
            p = subprocess.run(runner + [str(path)], cwd=tmp_path, capture_output=True,
                               text=True, env={**os.environ, "JAX_PLATFORMS": "cpu", **env},
                               timeout=600)
            ran.append((re.findall(r"^Ran (\d+) tests?", p.stderr, re.M),
                        re.findall(r"^(?:OK|FAILED)\b.*$", p.stderr, re.M)))
        assert ran[0] == ran[1], (env, ran)
    assert ran[0] == (["11"], ["OK (skipped=1)"]), ran
