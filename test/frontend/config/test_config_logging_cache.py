"""Options and functions of JAX's persistent-compilation-cache page, against jax:
jax_logging_level, jax_persistent_cache_enable_xla_caches and
jax.experimental.compilation_cache.compilation_cache.set_cache_dir / reset_cache; and
jaxlib's C++ log, quiet unless TF_CPP_MIN_LOG_LEVEL or jax_logging_level asks for it."""
import logging
import os
import subprocess
import sys

import jax
import pytest
from jax.experimental.compilation_cache import compilation_cache as jcc

import mjax
import mjax.numpy as mnp
from mjax.experimental.compilation_cache import compilation_cache as mcc


@pytest.fixture
def restore():
    names = ("jax_compilation_cache_dir", "jax_logging_level",
             "jax_persistent_cache_enable_xla_caches")
    saved = [(lib, n, getattr(lib.config, n)) for lib in (jax, mjax) for n in names]
    yield
    for lib, n, v in saved:
        lib.config.update(n, v)


def test_defaults_match_jax():
    for name in ("jax_logging_level", "jax_persistent_cache_enable_xla_caches"):
        assert getattr(mjax.config, name) == getattr(jax.config, name)


def test_logging_level_sets_level_and_handler_as_jax(restore):
    for lib, logger in ((jax, "jax"), (mjax, "mjax")):
        lib.config.update("jax_logging_level", "DEBUG")
        assert logging.getLogger(logger).level == logging.DEBUG
        assert len(logging.getLogger(logger).handlers) == 1
        lib.config.update("jax_logging_level", "NOTSET")
        assert logging.getLogger(logger).level == logging.NOTSET
        assert logging.getLogger(logger).handlers == []


@pytest.mark.parametrize("bad", ["LOUD", 10])
def test_logging_level_rejects_what_jax_rejects(bad, restore):
    with pytest.raises(ValueError):
        jax.config.update("jax_logging_level", bad)
    with pytest.raises(ValueError):
        mjax.config.update("jax_logging_level", bad)


def test_set_cache_dir_caches_compiles_on_disk(tmp_path, restore):
    mjax.config.update("jax_persistent_cache_min_compile_time_secs", 0)
    try:
        for lib, cc, d in ((jax, jcc, tmp_path / "jax"), (mjax, mcc, tmp_path / "mjax")):
            cc.set_cache_dir(str(d))
            assert lib.config.jax_compilation_cache_dir == str(d)
            cc.reset_cache()
            assert lib.config.jax_compilation_cache_dir == str(d)
        mjax.jit(lambda x: x * 3 + 1)(mnp.zeros((5, 7)))
        assert any((tmp_path / "mjax").iterdir())
    finally:
        mjax.config.update("jax_persistent_cache_min_compile_time_secs", 1.0)


def test_enable_xla_caches_takes_strings(restore):
    for lib in (jax, mjax):
        lib.config.update("jax_persistent_cache_enable_xla_caches", "none")
        assert lib.config.jax_persistent_cache_enable_xla_caches == "none"


# ---- jaxlib's C++ log: quiet unless asked, as in JAX ------------------------------------
# Each case runs the same program under mjax and under jax, in a fresh process:
# (environment, code run after `import <lib>`, whether PJRT's INFO lines are printed).
QUIET_CASES = {
    "default": ({}, "", False),
    "TF_CPP_MIN_LOG_LEVEL=0": ({"TF_CPP_MIN_LOG_LEVEL": "0"}, "", True),
    "TF_CPP_MIN_LOG_LEVEL=1": ({"TF_CPP_MIN_LOG_LEVEL": "1"}, "", False),
    "JAX_LOGGING_LEVEL=INFO": ({"JAX_LOGGING_LEVEL": "INFO"}, "", True),
    "update INFO": ({}, "{lib}.config.update('jax_logging_level', 'INFO')", True),
    "TF_CPP_MIN_LOG_LEVEL=0, update WARNING": (
        {"TF_CPP_MIN_LOG_LEVEL": "0"}, "{lib}.config.update('jax_logging_level', 'WARNING')",
        False),
}
PJRT_LINE = "PjRt-IFRT device count"


def run_program(lib: str, env_extra: dict, setup: str):
    env = {k: v for k, v in os.environ.items()
           if k not in ("TF_CPP_MIN_LOG_LEVEL", "TF_CPP_MAX_VLOG_LEVEL", "TF_CPP_VMODULE",
                        "JAX_LOGGING_LEVEL", "MJAX_LOGGING_LEVEL", "MJAX_BACKEND")}
    env.update(env_extra)
    code = (f"import {lib}\n{setup.format(lib=lib)}\nimport {lib}.numpy as jnp\n"
            f"print(jnp.arange(3))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    return out.stdout, out.stderr


@pytest.mark.parametrize("case", list(QUIET_CASES))
def test_cpp_logging_follows_the_same_settings_as_jax(case):
    env_extra, setup, loud = QUIET_CASES[case]
    for lib in ("jax", "mjax"):
        stdout, stderr = run_program(lib, env_extra, setup)
        assert stdout == "[0 1 2]\n"
        assert (PJRT_LINE in stderr) == loud, (lib, stderr[-2000:])
        if lib == "mjax" and case == "default":
            assert stderr == ""          # nothing at all on a plain start


def test_programs_over_a_mesh_log_nothing():
    # Eager ops and jits on an explicit 2-device mesh, their results unsharded: XLA
    # partitions them without logging (GSPMD's deprecation warning, once, was the case).
    code = ("import os\nos.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=2'\n"
            "import mjax, mjax.numpy as jnp\n"
            "mesh = mjax.make_mesh((2,), ('X',),"
            " axis_types=(mjax.sharding.AxisType.Explicit,))\n"
            "with mjax.sharding.set_mesh(mesh):\n"
            "    a = jnp.stack([jnp.eye(4)] * 3)\n"
            "    x = mjax.device_put(jnp.ones((4, 4)), mjax.P('X'))\n"
            "    print(float(mjax.jit(lambda v: (v * 2).sum())(x)), float(a.sum()))\n")
    env = {k: v for k, v in os.environ.items()
           if k not in ("TF_CPP_MIN_LOG_LEVEL", "JAX_LOGGING_LEVEL", "XLA_FLAGS")}
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout == "32.0 12.0\n"
    assert out.stderr == ""
