"""The backend's table of compiled programs shared between identical programs is bounded:
each loaded CPU executable holds memory maps of JIT code, and a process that makes new
programs without end (fresh closures' jits) exhausted the kernel's map limit and crashed
inside XLA's compiler after ~20k compilations (long test runs did)."""
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
    backend = get_backend("cpu")
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
    before = get_backend("cpu").stats["compiles"]
    for _ in range(3):
        mjax.jit(lambda v: v * 7.0 - 2.0)(x)
    assert get_backend("cpu").stats["compiles"] - before <= 1
