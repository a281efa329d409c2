"""Every JAX config option exists in mjax with JAX's default; the ones mjax acts on do
what JAX's do; the ones it does not implement refuse other values clearly."""
from __future__ import annotations

import ast
import os
import subprocess
import sys

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.config import jax_options
from mjax.runtime import compilation_cache, xla


def _jax_options() -> set:
    """The options a plain `import jax` has (its test utilities, which other tests may
    have imported here, add their own)."""
    out = subprocess.run([sys.executable, "-c", "import jax; print(sorted(jax.config.values))"],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    return set(ast.literal_eval(out.stdout.strip()))


def test_every_jax_option_exists_with_jax_default():
    mine = mjax.config.values
    names = _jax_options()
    assert len(names) > 100
    missing = sorted(names - set(mine))
    assert not missing
    differ = {n: (mine[n], jax.config.values[n]) for n in names
              if jax.config.values[n] != mine[n]}
    assert not differ


@pytest.fixture
def restore():
    names = ["jax_random_seed_offset", "jax_explicit_x64_dtypes",
             "jax_compilation_cache_dir", "jax_compilation_cache_max_size",
             "jax_enable_compilation_cache", "jax_persistent_cache_min_compile_time_secs",
             "jax_disable_most_optimizations", "jax_optimization_level",
             "jax_hlo_source_file_canonicalization_regex"]
    before = {n: mjax.config.values[n] for n in names}
    yield
    for n, v in before.items():
        mjax.config.update(n, v)


def test_random_seed_offset_as_jax(restore):
    mjax.config.update("jax_random_seed_offset", 7)
    jax.config.update("jax_random_seed_offset", 7)
    try:
        mine = np.asarray(mjax.random.key_data(mjax.random.key(3)))
        theirs = np.asarray(jax.random.key_data(jax.random.key(3)))
    finally:
        jax.config.update("jax_random_seed_offset", 0)
    np.testing.assert_array_equal(mine, theirs)
    mjax.config.update("jax_random_seed_offset", 0)
    # (offset 7 from seed 3: the key of seed 10)
    np.testing.assert_array_equal(np.asarray(mjax.random.key_data(mjax.random.key(10))),
                                  mine)


def test_explicit_x64_dtypes_error_as_jax(restore):
    mjax.config.update("jax_explicit_x64_dtypes", "error")
    jax.config.update("jax_explicit_x64_dtypes", "error")
    try:
        with pytest.raises(ValueError) as theirs:
            jjnp.zeros(3, jjnp.int64)
    finally:
        jax.config.update("jax_explicit_x64_dtypes", "warn")
    with pytest.raises(ValueError) as mine:
        jnp.zeros(3, jnp.int64)
    assert str(mine.value) == str(theirs.value)
    mjax.config.update("jax_explicit_x64_dtypes", "warn")
    with pytest.warns(UserWarning, match="truncated to dtype int32"):
        assert jnp.zeros(3, jnp.int64).dtype == np.int32
    with pytest.raises(NotImplementedError, match="'allow'"):
        mjax.config.update("jax_explicit_x64_dtypes", "allow")


def test_compilation_cache_size_limit_and_switch(tmp_path, restore):
    mjax.config.update("jax_compilation_cache_dir", str(tmp_path))
    mjax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    mjax.config.update("jax_enable_compilation_cache", False)
    mjax.jit(lambda x: x * 11)(jnp.ones(3))
    assert not list(tmp_path.glob("*.mjaxexe"))              # switched off
    mjax.config.update("jax_enable_compilation_cache", True)
    for k in range(4):
        mjax.jit(lambda x, k=k: x * k + 13)(jnp.ones(3))
    entries = list(tmp_path.glob("*.mjaxexe"))
    assert len(entries) >= 4
    one = max(e.stat().st_size for e in entries)
    mjax.config.update("jax_compilation_cache_max_size", 2 * one)
    mjax.jit(lambda x: x - 17)(jnp.ones(3))
    left = list(tmp_path.glob("*.mjaxexe"))
    assert 1 <= len(left) <= 2 and sum(e.stat().st_size for e in left) <= 2 * one
    mjax.config.update("jax_compilation_cache_max_size", -1)
    assert compilation_cache.settings.active()


def test_compile_options_reach_xla_and_results_agree(restore):
    f = lambda x: jnp.sin(x) @ x.T + 1.0          # noqa: E731
    x = jnp.asarray(np.random.default_rng(0).standard_normal((16, 16)), jnp.float32)
    want = np.asarray(mjax.jit(f)(x))
    mjax.config.update("jax_disable_most_optimizations", True)
    mjax.config.update("jax_optimization_level", "O1")
    assert xla.build_settings.disable_most_optimizations
    assert xla.build_settings.optimization_level == 19
    np.testing.assert_allclose(np.asarray(mjax.jit(f)(x)), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(ValueError, match="effort level"):
        mjax.config.update("jax_optimization_level", "O7")
    # (jit's compiler_options take the same build options by name)
    g = mjax.jit(f, compiler_options={"exec_time_optimization_effort": 0.5})
    np.testing.assert_allclose(np.asarray(g(x)), want, rtol=1e-5, atol=1e-5)


def test_source_path_canonicalization(restore):
    mjax.config.update("jax_hlo_source_file_canonicalization_regex", r".*/test/")
    text = mjax.jit(lambda x: x * 3).lower(1.0).as_text(debug_info=True)
    base = os.path.basename(__file__)
    assert f'"frontend/config/{base}"' in text and os.path.dirname(__file__) not in text


@pytest.mark.parametrize("name", [n for n, _, _ in jax_options._DEFAULT_ONLY])
def test_default_only_options_refuse_other_values(name):
    default = mjax.config.values[name]
    other = {bool: not default, int: 12345, str: "x", type(None): "x"}[type(default)]
    mjax.config.update(name, default)      # the default: fine
    with pytest.raises(NotImplementedError, match=name):
        mjax.config.update(name, other)
    assert mjax.config.values[name] == default


def test_accepted_options_keep_values():
    mjax.config.update("jax_use_shardy_partitioner", False)
    try:
        assert mjax.config.values["jax_use_shardy_partitioner"] is False
        np.testing.assert_allclose(np.asarray(mjax.jit(lambda x: x * 2)(jnp.ones(2))), 2.0)
    finally:
        mjax.config.update("jax_use_shardy_partitioner", True)
    with pytest.raises(ValueError):
        mjax.config.update("jax_use_shardy_partitioner", "maybe")
