"""A jit cache miss prints its module once, on its way to the backend, and parses no text
in Python, whatever the program uses: layouts, memory kinds and host callbacks are passes
on the module (passes/stablehlo_*.py) run before that print, and the backend is told the
partitioner with the text (passes/pipeline.py print_for_backend)."""
from __future__ import annotations

import contextlib
import os

import numpy as np
import pytest
from jaxlib.mlir import ir

import mjax
import mjax.numpy as jnp
from mjax.experimental.layout import Format, Layout
from mjax.runtime.xla import XlaBackend
from mjax.sharding import Mesh, NamedSharding, PartitionSpec as P, SingleDeviceSharding
from frontend_util import ON_TPU

if os.environ.get("MJAX_BACKEND", "").lower().startswith("iree"):
    pytest.skip("counts XLA's compilations (layouts, memory kinds, host callbacks)",
                allow_module_level=True)

X = np.arange(8.0, dtype=np.float32).reshape(2, 4)


@contextlib.contextmanager
def counting(monkeypatch):
    """Counts Module.parse calls and prints of a module or op (a print calling another,
    as str(module) does, counts once)."""
    counts = {"parse": 0, "print": 0}
    depth = [0]

    def counted(kind, orig):
        def f(*args, **kwargs):
            if depth[0] == 0:
                counts[kind] += 1
            depth[0] += 1
            try:
                return orig(*args, **kwargs)
            finally:
                depth[0] -= 1
        return f
    monkeypatch.setattr(ir.Module, "parse", counted("parse", ir.Module.parse))
    monkeypatch.setattr(ir.Module, "__str__", counted("print", ir.Module.__str__))
    for cls in (ir.Operation, ir.OpView):
        for name in ("get_asm", "__str__", "print"):
            monkeypatch.setattr(cls, name, counted("print", getattr(cls, name)))
    yield counts


def _callback(x):
    return mjax.pure_callback(lambda v: np.cos(v), mjax.ShapeDtypeStruct(x.shape, x.dtype),
                              x) + 1


def _programs():
    dev = mjax.devices()[0]
    col = Format(Layout(major_to_minor=(1, 0)), SingleDeviceSharding(dev))
    host = SingleDeviceSharding(dev, memory_kind="pinned_host")
    mesh = Mesh(np.array(mjax.devices()[:2]), ("x",))
    rows = NamedSharding(mesh, P("x"))
    return {
        "plain": (mjax.jit(lambda x: jnp.sin(x) * 2), lambda: X),
        "pure_callback": (mjax.jit(_callback), lambda: X),
        "layouts": (mjax.jit(lambda x: x + 1, out_shardings=col), lambda: X),
        "host memory": (mjax.jit(lambda x: x * 3, out_shardings=host),
                        lambda: mjax.device_put(X, host)),
        "sharded with a callback": (mjax.jit(_callback, in_shardings=rows), lambda: X),
    }


@pytest.mark.parametrize("name", list(_programs()))
def test_one_print_and_no_parse_per_cache_miss(monkeypatch, name):
    fun, arg = _programs()[name]
    x = arg()
    with counting(monkeypatch) as counts:
        out = fun(x)
        mjax.block_until_ready(out)
    assert counts == {"parse": 0, "print": 1}, name
    with counting(monkeypatch) as counts:
        mjax.block_until_ready(fun(x))      # (a hit: neither)
    assert counts == {"parse": 0, "print": 0}, name


@pytest.mark.skipif(ON_TPU, reason="TPU: multi-device: a mesh of 2 devices (the TPU "
                    "machine has one chip)")
def test_backend_is_told_the_partitioner(monkeypatch):
    """Over several devices the backend gets the partitioner from the module, with the
    text: Shardy for Shardy's form, GSPMD for XLA's mhlo.sharding form (a host callback
    in a sharded program)."""
    seen = []
    compile_ = XlaBackend.compile

    def spy(self, text, *args, **kwargs):
        seen.append(kwargs.get("partitioning"))
        return compile_(self, text, *args, **kwargs)
    monkeypatch.setattr(XlaBackend, "compile", spy)
    mesh = Mesh(np.array(mjax.devices()[:2]), ("x",))
    rows = NamedSharding(mesh, P("x"))
    mjax.block_until_ready(mjax.jit(lambda x: x * 2, in_shardings=rows)(X))
    mjax.block_until_ready(mjax.jit(_callback, in_shardings=rows, out_shardings=rows)(X))
    assert seen == [("shardy", (True,)), ("gspmd", (False,))]
