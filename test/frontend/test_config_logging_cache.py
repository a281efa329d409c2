"""Options and functions of JAX's persistent-compilation-cache page, against jax:
jax_logging_level, jax_persistent_cache_enable_xla_caches and
jax.experimental.compilation_cache.compilation_cache.set_cache_dir / reset_cache."""
import logging

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
