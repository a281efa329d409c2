"""The backend's table of compiled programs shared between identical programs is bounded:
each loaded CPU executable holds memory maps of JIT code, and a process that makes new
programs without end (fresh closures' jits) exhausted the kernel's map limit and crashed
inside XLA's compiler after ~20k compilations (long test runs did). The tests use the
default backend, where mjax.jit compiles: the CPU's, or the chip's on a TPU."""
from __future__ import annotations

import gc

import numpy as np

import mjax
from mjax.runtime import get_backend
from mjax.runtime import xla as xla_runtime


def _maps() -> int:
    with open("/proc/self/maps") as f:
        return sum(1 for _ in f)


def test_discarded_programs_are_freed(monkeypatch):
    monkeypatch.setattr(xla_runtime, "_SHARED_EXECUTABLES", 8)
    backend = get_backend()
    x = np.ones(3, np.float32)

    def compile_fresh(n, offset):
        for i in range(n):
            mjax.jit(lambda v, c=offset + i: v * c + 1.0)(x)
        gc.collect()
    compile_fresh(20, 1000)
    assert len(backend._compiled) <= 8
    before = _maps()
    compile_fresh(60, 2000)
    # (~3 maps per live executable: 60 more kept alive would add ~180)
    assert _maps() - before < 60


def test_identical_programs_still_share_an_executable():
    x = np.ones(4, np.float32)
    before = get_backend().stats["compiles"]
    for _ in range(3):
        mjax.jit(lambda v: v * 7.0 - 2.0)(x)
    assert get_backend().stats["compiles"] - before <= 1


def test_clear_caches_drops_shared_executables():
    # (jax.clear_caches frees compiled programs; mjax's kept the backend's shared ones)
    x = np.ones(5, np.float32)
    for i in range(5):
        mjax.jit(lambda v, c=i: v - c)(x)
    assert len(get_backend()._compiled) > 0
    mjax.clear_caches()
    assert len(get_backend()._compiled) == 0


def test_eager_programs_are_bounded(monkeypatch):
    from mjax.arrays import eager
    monkeypatch.setattr(eager, "_CACHE_SIZE", 16)
    for n in range(1, 40):
        mjax.numpy.sin(np.ones(n, np.float32))
    assert len(eager._CACHE) <= 16
