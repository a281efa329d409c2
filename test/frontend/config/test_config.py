"""The config system against JAX's: names, defaults, validation, context managers, the
jit cache key, and the debugging options (debug_nans/infs, log_compiles, rank promotion)."""
import logging
import os
import re
import subprocess
import sys
import threading
import warnings

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.config import config
from frontend_util import ON_TPU

# On a TPU machine JAX's import (cloud_tpu_init: the platforms and the PJRT client's
# options) and the suite's environment (JAX_DEFAULT_MATMUL_PRECISION, test/conftest.py)
# set these: there they are not the defaults, and mjax's values are compared with jax's.
SET_ON_TPU = {"jax_platforms", "jax_pjrt_client_create_options",
              "jax_default_matmul_precision"}

STATES = ["enable_x64", "numpy_dtype_promotion", "numpy_rank_promotion",
          "default_matmul_precision", "default_device", "debug_nans", "debug_infs",
          "log_compiles", "default_prng_impl", "threefry_partitionable",
          "explain_cache_misses", "enable_checks", "debug_key_reuse", "legacy_prng_key"]


def test_options_have_jax_names_defaults_and_docs():
    for opt in config.options():
        assert opt.doc, opt.name
        if opt.name.startswith("jax_"):
            assert opt.name in jax.config.values, opt.name
            if ON_TPU and opt.name in SET_ON_TPU:
                assert config.values[opt.name] == jax.config.values[opt.name], opt.name
            elif opt.name != "jax_enable_x64":   # (the test fixtures set x64)
                assert opt.default == jax.config.values[opt.name], opt.name
    assert config.values["jax_numpy_rank_promotion"] == "allow"
    assert set(config.values) == {o.name for o in config.options()}


def test_reads_and_unknown_names_raise_attribute_error_as_jax():
    assert config.jax_default_prng_impl == "threefry2x32"
    assert config.jax_threefry_partitionable is True
    for lib in (config, jax.config):
        with pytest.raises(AttributeError, match="'Config' object has no attribute 'foo'"):
            lib.foo  # noqa: B018
        with pytest.raises(AttributeError, match="Unrecognized config option: foo"):
            lib.update("foo", 1)


@pytest.mark.parametrize("name,bad", [("jax_numpy_rank_promotion", "bad"),
                                      ("jax_default_prng_impl", "bad"),
                                      ("jax_traceback_filtering", 3),
                                      ("jax_default_matmul_precision", "bad"),
                                      ("jax_num_cpu_devices", "bad"),
                                      ("jax_default_device", 3)])
def test_validation_messages_match_jax(name, bad):
    with pytest.raises(ValueError) as want:
        jax.config.update(name, bad)
    with pytest.raises(ValueError) as got:
        config.update(name, bad)
    if name != "jax_default_prng_impl":   # JAX knows more PRNG implementations
        assert str(got.value) == str(want.value)
    assert config.read(name) != bad


def test_update_and_source():
    old = config.read("jax_log_compiles")
    try:
        config.update("jax_log_compiles", True)
        assert config.jax_log_compiles is True and config.source("jax_log_compiles") == "update"
    finally:
        config.update("jax_log_compiles", old)


def test_top_level_context_managers_exist_where_jax_has_them():
    for name in STATES + ["disable_jit", "checking_leaks"]:
        assert hasattr(jax, name) and hasattr(mjax, name), name
    for name in STATES:
        assert getattr(mjax, name).value == getattr(jax, name).value or name == "enable_x64"
    assert not hasattr(mjax, "disable_x64") and not hasattr(jax, "disable_x64")
    # A boolean state entered without a value turns the option on, as JAX's do.
    with mjax.enable_x64():
        assert mjax.config.jax_enable_x64
    with pytest.raises(TypeError, match="requires an argument"):
        mjax.numpy_rank_promotion()


def test_context_managers_are_thread_local_and_restore():
    seen = []
    with mjax.numpy_rank_promotion("raise"):
        assert mjax.numpy_rank_promotion.value == "raise"
        t = threading.Thread(target=lambda: seen.append(mjax.numpy_rank_promotion.value))
        t.start()
        t.join()
    assert seen == ["allow"] and mjax.numpy_rank_promotion.value == "allow"
    with mjax.checking_leaks():
        assert config.jax_check_tracer_leaks
    assert not config.jax_check_tracer_leaks


def test_environment_variables_and_python_m_mjax_config():
    env = {**os.environ, "JAX_ENABLE_X64": "1", "MJAX_NUMPY_RANK_PROMOTION": "warn",
           "JAX_NUMPY_RANK_PROMOTION": "raise", "JAX_DEFAULT_MATMUL_PRECISION": "highest"}
    out = subprocess.run([sys.executable, "-m", "mjax.config"], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    rows = {line.split()[0]: line.split()[1:3] for line in out.splitlines() if line.strip()}
    # (every option a fresh process registers: this one may hold more, jtu's test options
    # once some test imported jax._src.test_util, as JAX registers them there)
    fresh = subprocess.run([sys.executable, "-c", "from mjax.config import config; "
                            "print(*sorted(o.name for o in config.options()))"],
                           capture_output=True, text=True, timeout=120, check=True).stdout
    assert set(rows) == set(fresh.split()) and set(rows) <= {o.name for o in config.options()}
    assert rows["jax_enable_x64"] == ["True", "env"]
    assert rows["jax_numpy_rank_promotion"] == ["'warn'", "env"]   # MJAX_ wins over JAX_
    assert "MJAX_NUMPY_RANK_PROMOTION" in out
    assert rows["jax_default_matmul_precision"] == ["'highest'", "env"]
    assert rows["jax_debug_nans"] == ["False", "default"]


def test_bad_environment_value_is_a_clear_error():
    env = {**os.environ, "JAX_NUMPY_RANK_PROMOTION": "sometimes"}
    r = subprocess.run([sys.executable, "-c", "import mjax"], env=env, capture_output=True,
                       text=True, timeout=120)
    assert r.returncode != 0
    assert "JAX_NUMPY_RANK_PROMOTION='sometimes'" in r.stderr and "allow" in r.stderr


# ---- options that change tracing are part of jit's cache key ------------------------
@pytest.mark.parametrize("name,value", [
    ("jax_enable_x64", True), ("jax_numpy_dtype_promotion", "strict"),
    ("jax_numpy_rank_promotion", "raise"), ("jax_default_matmul_precision", "highest"),
    ("jax_default_prng_impl", "rbg"), ("jax_threefry_partitionable", False),
    ("jax_debug_key_reuse", True), ("jax_default_device", "cpu")])
def test_flipping_a_tracing_option_retraces(name, value):
    assert next(o for o in config.options() if o.name == name).affects_tracing
    if config.read(name) == value:    # (the suite on a TPU sets 'highest' precision)
        value = "bfloat16"
    traces = []

    @mjax.jit
    def f(x):
        traces.append(1)
        return x * 2

    x = jnp.ones(3)
    f(x)
    f(x)
    assert len(traces) == 1
    with config.override(**{name: value}):
        f(x)
    assert len(traces) == 2
    old = config.read(name)
    config.update(name, value)
    try:
        f(x)   # (the cached entry of the override is reused: same key)
        assert len(traces) == 2
    finally:
        config.update(name, old)
    f(x)
    assert len(traces) == 2


def test_disable_jit_runs_python_each_call():
    traces = []

    @mjax.jit
    def f(x):
        traces.append(type(x).__name__)
        return x + 1

    with mjax.disable_jit():
        f(jnp.ones(2))
        f(jnp.ones(2))
    assert traces == ["Array", "Array"]


# ---- rank promotion ---------------------------------------------------------------------
def test_rank_promotion_raise_and_warn_match_jax():
    with mjax.numpy_rank_promotion("raise"), jax.numpy_rank_promotion("raise"):
        with pytest.raises(ValueError) as want:
            jjnp.ones((2, 3)) + jjnp.ones(3)
        with pytest.raises(ValueError) as got:
            jnp.ones((2, 3)) + jnp.ones(3)
        assert str(got.value).startswith(str(want.value))
        assert __file__ in str(got.value)
        assert (jnp.ones((2, 3)) + 1.0).shape == (2, 3)      # scalars never count
        assert (jnp.ones((2, 3)) * jnp.ones((1, 3))).shape == (2, 3)   # same rank
        # (jnp.where broadcasts its operands as JAX 0.10.2's: no rank promotion check)
        theirs = jax.jit(lambda a, b: jjnp.where(a > 0, a, b))(jjnp.ones((2, 3)),
                                                              jjnp.ones(3))
        mine = mjax.jit(lambda a, b: jnp.where(a > 0, a, b))(jnp.ones((2, 3)), jnp.ones(3))
        assert mine.shape == theirs.shape == (2, 3)
    with mjax.numpy_rank_promotion("warn"), jax.numpy_rank_promotion("warn"):
        with warnings.catch_warnings(record=True) as want:
            warnings.simplefilter("always")
            jjnp.ones((2, 3)) + jjnp.ones(3)
        with warnings.catch_warnings(record=True) as got:
            warnings.simplefilter("always")
            jnp.ones((2, 3)) + jnp.ones(3)
        assert [str(w.message) for w in got] == [str(w.message) for w in want]
        assert got[0].filename == __file__


# ---- debug_nans / debug_infs ----------------------------------------------------------------
def _raised_at(excinfo, path, line=None) -> bool:
    """Whether the error's traceback passes through `path` (at `line`, 1-based)."""
    return any(str(entry.path) == path and (line is None or entry.lineno + 1 == line)
               for entry in excinfo.traceback)


def test_debug_nans_eager_names_primitive_and_line():
    with mjax.debug_nans(True):
        with pytest.raises(FloatingPointError,
                           match=r"invalid value \(nan\) encountered in log") as e:
            jnp.log(-jnp.ones(2))
        assert str(e.value) == "invalid value (nan) encountered in log"   # (JAX's words)
        assert _raised_at(e, __file__)          # the traceback shows the user's line
        assert np.allclose(jnp.log(jnp.ones(2)), 0.0)   # finite values pass
    assert np.isnan(jnp.log(-jnp.ones(2))).all()         # off again


def test_debug_nans_under_jit_finds_the_op_and_line():
    def f(x):
        y = x * 2
        return jnp.sqrt(y)            # the NaN comes from here

    line = f.__code__.co_firstlineno + 2
    with mjax.debug_nans(True):
        with pytest.raises(FloatingPointError, match=r"encountered in sqrt") as e:
            mjax.jit(f)(-jnp.ones(3))
        assert _raised_at(e, __file__, line)
        assert np.allclose(mjax.jit(f)(jnp.ones(3)), np.sqrt(2))


def test_debug_infs():
    with mjax.debug_infs(True):
        with pytest.raises(FloatingPointError, match=r"invalid value \(inf\) encountered in div"):
            jnp.ones(2) / 0
        with pytest.raises(FloatingPointError, match=r"\(inf\) encountered in exp"):
            mjax.jit(lambda x: jnp.exp(x) + 1)(jnp.full(2, 1000.0))
        assert np.isnan(jnp.log(-jnp.ones(1))).all()    # NaNs are debug_nans' business


def _nan_programs(J, np_):
    return {"python floats": (lambda x, y: x / y, (0.0, 0.0)),
            "arrays": (lambda x, y: x / y, (np_.float32(0), np_.float32(0))),
            "python branch": (lambda x: x / 0 if isinstance(x, float) else np_.log(x),
                              (-1.0,)),
            "nan literal": (lambda x: x * 0 + float("nan"), (1.0,)),
            "inner jit": (lambda x: J.jit(np_.sqrt)(x) + 1, (np_.float32(-1),))}


@pytest.mark.parametrize("name", ["python floats", "arrays", "python branch", "nan literal",
                                  "inner jit"])
def test_debug_nans_under_jit_reruns_deoptimized_as_jax(name, capsys):
    # JAX prints a line, then calls the function without jit: Python errors (float
    # division) surface as they are; the error class and the printed line match JAX's.
    def error(J, np_):
        fun, args = _nan_programs(J, np_)[name]
        with J.debug_nans(True):
            with pytest.raises(ArithmeticError) as info:
                J.jit(fun)(*args)
        first = capsys.readouterr().out.splitlines()[0]
        return type(info.value), first, str(info.value).startswith("('jit(")
    assert error(mjax, jnp) == error(jax, jjnp)


# ---- log_compiles ------------------------------------------------------------------------------
def test_log_compiles_logs_each_compilation(caplog):
    def g(x):
        return x * 3

    with caplog.at_level(logging.DEBUG, logger="mjax.api"):
        with mjax.log_compiles(True):
            mjax.jit(g)(jnp.ones(3))
        warn = [r for r in caplog.records if r.levelno == logging.WARNING]
        assert any("Compiling jit(g) with global shapes and types" in r.getMessage()
                   and "32[3]" in r.getMessage() for r in warn)
        assert any("Finished XLA compilation of jit(g)" in r.getMessage() for r in warn)
        caplog.clear()
        mjax.jit(g)(jnp.ones(4))      # off: DEBUG only
        assert caplog.records and all(r.levelno == logging.DEBUG for r in caplog.records)


def test_compilation_cache_dir_configures_the_runtime(tmp_path):
    from mjax.runtime import compilation_cache
    old = config.jax_compilation_cache_dir
    config.update("jax_compilation_cache_dir", str(tmp_path))
    try:
        assert compilation_cache.settings.directory == str(tmp_path)
    finally:
        config.update("jax_compilation_cache_dir", old)
    assert compilation_cache.settings.directory == old


def test_registering_an_option():
    from mjax.config import enum_option
    with pytest.raises(ValueError, match="already defined"):
        enum_option("jax_default_prng_impl", "threefry2x32", ("threefry2x32",), "dup")


# ---- default_matmul_precision reaches the IR ------------------------------------------------
def test_default_matmul_precision_reaches_dot_general_and_conv():
    x, y = jnp.ones((3, 4)), jnp.ones((4, 2))
    mm = lambda a, b: a @ b  # noqa: E731
    # (no precision asked for: [DEFAULT, DEFAULT], stated as JAX states it; None: not the
    # 'highest' the suite's environment sets on a TPU)
    with mjax.default_matmul_precision(None):
        assert "precision = [DEFAULT, DEFAULT]" in mjax.jit(mm).lower(x, y).as_text()
    with mjax.default_matmul_precision("highest"):
        text = mjax.jit(mm).lower(x, y).as_text()
        assert "precision = [HIGHEST, HIGHEST]" in text
        # an explicit precision wins over the default
        text = mjax.jit(lambda a, b: mjax.lax.dot(a, b, precision=mjax.lax.Precision.HIGH)
                        ).lower(x, y).as_text()
        assert "precision = [HIGH, HIGH]" in text
        # and it survives differentiation and batching
        text = mjax.jit(mjax.grad(lambda a, b: (a @ b).sum())).lower(x, y).as_text()
        assert text.count("precision = [HIGHEST, HIGHEST]") == 1
        got = mjax.vmap(mm)(jnp.ones((2, 3, 4)), jnp.ones((2, 4, 2)))
        np.testing.assert_allclose(got, np.full((2, 3, 2), 4.0))
        lhs, rhs = jnp.ones((1, 2, 5, 5)), jnp.ones((3, 2, 3, 3))
        text = mjax.jit(lambda a, b: mjax.lax.conv(a, b, (1, 1), "SAME")).lower(
            lhs, rhs).as_text()
        assert "HIGHEST" in text
    with mjax.default_matmul_precision("F32_F32_F32"):   # a dot algorithm's name, as JAX
        text = mjax.jit(mm).lower(x, y).as_text()
    algorithm = ("algorithm = <lhs_precision_type = f32, rhs_precision_type = f32, "
                 "accumulation_type = f32, lhs_component_count = 1, rhs_component_count = "
                 "1, num_primitive_operations = 1, allow_imprecise_accumulation = false>")
    assert algorithm in text
    with jax.default_matmul_precision("F32_F32_F32"):
        assert algorithm in jax.jit(mm).lower(np.asarray(x), np.asarray(y)).as_text()


def test_num_cpu_devices_before_and_after_backends():
    code = ("import mjax; mjax.config.update('jax_num_cpu_devices', 3); "
            "print(len(mjax.devices()))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert out.split()[-1] == "3"
    env = {**os.environ, "JAX_NUM_CPU_DEVICES": "2", "JAX_PLATFORMS": "cpu"}
    out = subprocess.run([sys.executable, "-c", "import mjax; print(len(mjax.devices()), "
                          "mjax.default_backend())"], env=env, capture_output=True,
                         text=True, timeout=120, check=True).stdout
    assert out.split()[-2:] == ["2", "cpu"]
    mjax.devices()     # this process's backend exists: too late to change
    with pytest.raises(RuntimeError, match="before backends are initialized"):
        config.update("jax_num_cpu_devices", len(mjax.devices()) + 1)


@pytest.mark.skipif(ON_TPU, reason="TPU: multi-device: the default device among 8 devices "
                    "(the TPU machine has one chip)")
def test_default_device_places_eager_and_jit_results():
    from mjax.arrays.eager import _devices_of
    devs = mjax.devices()
    assert len(devs) > 1          # (test/conftest.py asks XLA for 8 CPU devices)
    with mjax.default_device(devs[2]):
        x = jnp.arange(3.0)
        y = mjax.jit(lambda a: a * 2)(x)
        assert _devices_of(x._buf) == (devs[2],) and _devices_of(y._buf) == (devs[2],)
    z = x + jnp.ones(3)               # made elsewhere, used on the default device again
    assert _devices_of(z._buf) == (devs[0],)
    np.testing.assert_allclose(z, [1.0, 2.0, 3.0])
    np.testing.assert_allclose(mjax.jit(lambda a: a + y)(x), [0.0, 3.0, 6.0])


def _h(x, scale=None):
    return x + 1


def _cache_miss_messages(lib, caplog) -> list:
    caplog.clear()
    h = lib.jit(_h)
    with caplog.at_level(logging.WARNING), lib.explain_cache_misses(True):
        h(np.ones(3, np.float32))
        h(np.ones(3, np.float32))              # a hit: nothing logged
        h(np.ones(4, np.float32))              # input types
        h(np.ones(4, np.float32), scale=np.ones(2, np.float32))   # input pytree
        h(1.0)                                 # weak type
        with lib.numpy_rank_promotion("raise"):
            h(np.ones(4, np.float32))          # config
    return [re.sub(r"id=\d+", "id=N", r.getMessage()) for r in caplog.records
            if "TRACING CACHE MISS" in r.getMessage()]


def test_explain_cache_misses_as_jax(caplog):
    mine = _cache_miss_messages(mjax, caplog)
    assert len(mine) == 5 and all(__file__ in m for m in mine)
    assert "never seen function" in mine[0] and "* at x, now f32[4] and before f32[3]" in \
        mine[1]
    assert "* jax_numpy_rank_promotion differs: now raise and before allow" in mine[4]
    assert mine == _cache_miss_messages(jax, caplog)


def _misses_by_stage(lib, caplog) -> list:
    """Which calls log a tracing cache miss: the stages and make_jaxpr share jit's
    traces, so only the first trace of each argument type is a miss."""
    def g(x):
        return x * 2

    out = []
    with caplog.at_level(logging.WARNING), lib.explain_cache_misses(True):
        for step in (lambda: lib.jit(g).lower(np.ones(3, np.float32)),
                     lambda: lib.jit(g)(np.ones(3, np.float32)),
                     lambda: lib.make_jaxpr(g)(np.ones(3, np.float32)),
                     lambda: lib.jit(g).trace(np.ones(4, np.float32)),
                     lambda: lib.jit(g)(np.ones(4, np.float32))):
            caplog.clear()
            step()
            out.append(sum("TRACING CACHE MISS" in r.getMessage() for r in caplog.records))
    return out


def test_cache_misses_are_tracing_misses_as_jax(caplog):
    assert _misses_by_stage(mjax, caplog) == _misses_by_stage(jax, caplog) == [1, 0, 0, 1, 0]


def test_checking_leaks_finds_a_tracer_stored_outside():
    store = []

    @mjax.jit
    def leaky(x):
        y = x * 2
        store.append(y)
        return y + 1

    @mjax.jit
    def clean(x):
        y = x * 2
        return y + 1, x

    with mjax.checking_leaks():
        np.testing.assert_allclose(clean(jnp.ones(3))[0], 3.0)
        np.testing.assert_allclose(mjax.grad(lambda x: (x * x).sum())(jnp.ones(2)), 2.0)
        with pytest.raises(Exception, match=r"Leaked trace") as e:
            leaky(jnp.ones(3))
        assert f"{__file__}:" in str(e.value) and "list" in str(e.value)
    store.clear()
    leaky(jnp.ones(4))                 # off: no check
    assert len(store) == 1


def test_debug_nans_through_grad_and_vmap_names_the_primitive_and_line():
    def f(x):
        y = jnp.sqrt(x)               # the NaN comes from here
        return y.sum()

    line = f.__code__.co_firstlineno + 1
    with mjax.debug_nans(True):
        for call in (mjax.grad(f), mjax.jit(mjax.grad(f))):
            with pytest.raises(FloatingPointError,
                               match=r"invalid value \(nan\) encountered in sqrt") as e:
                call(-jnp.ones(2))
            assert f"{__file__}:{line}" in str(e.value)
        with pytest.raises(FloatingPointError, match=r"\(nan\) encountered in log"):
            mjax.vmap(jnp.log)(-jnp.ones(2))
        np.testing.assert_allclose(mjax.grad(f)(jnp.ones(2)), 0.5)


@pytest.mark.parametrize("J", [mjax, jax], ids=["mjax", "jax"])
def test_enable_custom_prng_makes_prngkey_typed(J):
    """The deprecated switch haiku's tests still use: PRNGKey gives typed keys inside."""
    with J.enable_custom_prng():
        key = J.random.PRNGKey(0)
        assert J.dtypes.issubdtype(key.dtype, J.dtypes.prng_key) and key.shape == ()
        assert J.random.split(key).shape == (2,)
        assert J.random.uniform(key).shape == ()
    assert J.random.PRNGKey(0).dtype == np.uint32
    assert not J.config.jax_enable_custom_prng


# ---- jax_dump_ir_to ---------------------------------------------------------------------------
def test_dump_ir_to_writes_each_compiled_program(tmp_path):
    def f(x):
        return jnp.sin(x) * 3

    try:
        mjax.config.update("jax_dump_ir_to", str(tmp_path))
        x = jnp.arange(5.0)
        np.testing.assert_allclose(mjax.jit(f)(x), np.sin(np.arange(5.0)) * 3, rtol=1e-6)
        mjax.config.update("jax_include_debug_info_in_dumps", False)
        mjax.jit(f)(jnp.ones(2))
        mjax.config.update("jax_dump_ir_modes", "jaxpr,hlo_graph")
        with pytest.warns(UserWarning, match="unknown mode 'hlo_graph'"):
            mjax.jit(f)(jnp.ones(3))      # (a jaxpr file, no StableHLO: test_jaxpr_dump.py)
    finally:
        mjax.config.update("jax_dump_ir_to", "")
        mjax.config.update("jax_dump_ir_modes", "stablehlo")
        mjax.config.update("jax_include_debug_info_in_dumps", True)
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith("_f.jaxpr.txt")]
    dumps = sorted(p.name for p in tmp_path.iterdir() if "_jit_f_" in p.name)
    assert len(dumps) == 2 and all(re.fullmatch(r"jax_ir\d{4}_jit_f_compile\.mlir", d)
                                   for d in dumps)
    first, second = [(tmp_path / d).read_text() for d in dumps]
    assert "module @jit_f" in first and "stablehlo.sine" in first and "tensor<5xf32>" in first
    assert 'loc("x")' in first and "loc(" not in second      # (debug info off)
    mjax.jit(f)(jnp.ones(4))                                   # off: nothing more written
    assert sorted(p.name for p in tmp_path.iterdir() if "_jit_f_" in p.name) == dumps


def test_jit_calls_under_config_context_managers_follow_them():
    """A cached jit call under a config context manager takes the fast path (its epoch is
    the thread's overrides); calls alternating in and out of contexts each get the
    program of their own options, in this thread only."""
    import threading
    f = mjax.jit(lambda x: x + 1)
    g = mjax.jit(lambda x, y: x + y)
    x = np.arange(3)
    two_d, one_d = np.ones((2, 3), np.float32), np.ones(3, np.float32)
    for _ in range(3):
        assert f(x).dtype == np.int32
        with mjax.enable_x64(True):
            assert f(x).dtype == np.int64 and f(x).dtype == np.int64
            with mjax.enable_x64(False):
                assert f(x).dtype == np.int32
        np.testing.assert_array_equal(g(two_d, one_d), 2 * two_d)
        with mjax.numpy_rank_promotion("raise"):
            for _ in range(2):
                with pytest.raises(ValueError, match="rank_promotion"):
                    g(two_d, one_d)
    # another thread's context changes nothing here
    entered, leave = threading.Event(), threading.Event()

    def hold():
        with mjax.enable_x64(True):
            entered.set()
            leave.wait(10)
    t = threading.Thread(target=hold)
    t.start()
    entered.wait(10)
    try:
        assert [f(x).dtype for _ in range(3)] == [np.int32] * 3
    finally:
        leave.set()
        t.join()


def test_config_context_managers_nest_and_decorate():
    # (the value outside: None, or the 'highest' the suite's environment sets on a TPU)
    outside = config.read("jax_default_matmul_precision")
    cm = mjax.default_matmul_precision("high")
    with cm:
        with cm:       # (one object entered inside itself)
            assert config.read("jax_default_matmul_precision") == "high"
        assert config.read("jax_default_matmul_precision") == "high"
    assert config.read("jax_default_matmul_precision") == outside and not config._overriding

    @mjax.enable_x64(True)
    def made():
        return mjax.numpy.arange(2).dtype
    assert made() == made() == np.int64 and mjax.numpy.arange(2).dtype == np.int32
    with pytest.raises(KeyError):
        with mjax.enable_x64(True):
            raise KeyError("left with an error")
    assert not config.read("jax_enable_x64") and not config._overriding
    # one context object entered in two threads at once: each thread restores its own
    both, seen = threading.Barrier(2), []

    def run():
        with cm:
            both.wait()
            seen.append(config.read("jax_default_matmul_precision"))
            both.wait()
        seen.append(config.read("jax_default_matmul_precision"))
    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert seen == ["high", "high", outside, outside] and not config._overriding


def test_jit_under_a_context_manager_takes_the_c_fast_path():
    """Under a config context manager a cached call goes through the C fast path when it is
    built (only the epoch's Python helper runs), with a mesh context too (its epoch is
    made per mesh), and the same context manager object is given for the same option
    value each time."""
    from frontend_util import python_calls
    from mjax.jit import fast as jit_fast
    pkg = mjax.__file__.rsplit("/", 1)[0]
    f = mjax.jit(lambda x: x * 2)
    x = jnp.ones(3)
    assert mjax.default_matmul_precision("highest") is mjax.default_matmul_precision("highest")
    with mjax.default_matmul_precision("highest"):
        f(x)
        f(x)
        seen = python_calls(lambda: f(x), lambda fn: fn.startswith(pkg))
        if jit_fast.C_FASTPATH is not None:
            assert seen == ["override_epoch"], seen
        assert "_call" not in seen
        mesh = mjax.make_mesh((1,), ("x",), devices=mjax.devices()[:1])
        with mjax.set_mesh(mesh):   # (a mesh context: compiled for it, then the fast path)
            assert "_call" in python_calls(lambda: f(x), lambda fn: fn.startswith(pkg))
            general = f._call((x,), {})
            assert "_call" not in python_calls(lambda: f(x), lambda fn: fn.startswith(pkg))
            fast = f(x)
            assert fast.sharding == general.sharding and fast.committed == general.committed
            assert isinstance(fast.sharding, mjax.sharding.NamedSharding)
            np.testing.assert_array_equal(fast, 2 * np.ones(3))
            with mjax.sharding.use_abstract_mesh(mesh.abstract_mesh):
                assert jit_fast.override_epoch() is None
        np.testing.assert_array_equal(f(x), 2 * np.ones(3))
        assert f(x).sharding == x.sharding
    assert not config._overriding
