"""Explicit-sharding types of ops given `out_sharding=` (dot_general, conv_general_dilated),
the gathers whose result sharding JAX cannot resolve, `*_like` keeping their model's
layout and with_sharding_constraint given Formats, against jax on 8 CPU devices
(test/conftest.py)."""
from __future__ import annotations

import jax
import numpy as np
import pytest
from jax.experimental import layout as jl

import mjax
from mjax.experimental import layout as ml
from mjax.sharding import AxisType, P, reshard

EXPLICIT = (AxisType.Explicit,) * 2
JEXPLICIT = (jax.sharding.AxisType.Explicit,) * 2
JP = jax.sharding.PartitionSpec


def both(fn):
    """fn(lib, P, reshard) under a (2, 2) Explicit mesh over ("a", "b") in mjax and jax."""
    m = mjax.make_mesh((2, 2), ("a", "b"), axis_types=EXPLICIT)
    jm = jax.make_mesh((2, 2), ("a", "b"), axis_types=JEXPLICIT)
    with mjax.set_mesh(m):
        got = fn(mjax, P, reshard)
    with jax.set_mesh(jm):
        want = fn(jax, JP, jax.sharding.reshard)
    return got, want


def outcome(fn):
    def run(lib, spec, rs):
        try:
            y = fn(lib, spec, rs)
        except Exception as e:  # noqa: BLE001
            return type(e).__name__, None
        return str(lib.typeof(y)), np.asarray(y)
    return run


def _mha_dot(lib, spec, rs):
    x = rs(lib.numpy.arange(4 * 5 * 8, dtype="float32").reshape(4, 5, 8), spec("a", None, "b"))
    w = rs(lib.numpy.ones((8, 2, 4), "float32"), spec("a", "b", None))
    return lib.lax.dot_general(x, w, (((2,), (0,)), ((), ())),
                               out_sharding=spec("a", None, "b", None))


def _mha_dot_no_out(lib, spec, rs):
    x = rs(lib.numpy.ones((4, 8), "float32"), spec(None, "b"))
    w = rs(lib.numpy.ones((8, 4), "float32"), spec("a", None))
    return lib.lax.dot_general(x, w, (((1,), (0,)), ((), ())))


def _conv(lib, spec, rs):
    x = rs(lib.numpy.arange(2 * 4 * 4, dtype="float32").reshape(2, 4, 4), spec("a", None, None))
    k = lib.numpy.ones((3, 4, 8), "float32")
    return lib.lax.conv_general_dilated(x, k, (1,), "SAME",
                                        dimension_numbers=("NWC", "WIO", "NWC"),
                                        out_sharding=spec("a", "b", None))


def _take_sharded_indices(lib, spec, rs):
    table = rs(lib.numpy.arange(32.0, dtype="float32").reshape(8, 4), spec("a"))
    return lib.numpy.take(table, rs(lib.numpy.arange(4), spec("b")), axis=0)


def _take_replicated_indices(lib, spec, rs):
    table = rs(lib.numpy.arange(32.0, dtype="float32").reshape(8, 4), spec(None, "a"))
    return lib.numpy.take(table, lib.numpy.arange(4), axis=0)


def _take_unsliced_sharded(lib, spec, rs):
    table = rs(lib.numpy.arange(32.0, dtype="float32").reshape(8, 4), spec("a"))
    return lib.numpy.take(table, lib.numpy.arange(4), axis=0)


@pytest.mark.parametrize("fn", [_mha_dot, _mha_dot_no_out, _conv, _take_sharded_indices,
                                _take_replicated_indices, _take_unsliced_sharded],
                         ids=lambda f: f.__name__)
def test_eager_like_jax(fn):
    (gt, gv), (wt, wv) = both(outcome(fn))
    assert gt == wt
    if wv is not None:
        np.testing.assert_allclose(gv, wv, rtol=1e-6)


def test_jit_dot_general_out_sharding_like_jax():
    def run(lib, spec, rs):
        x = rs(lib.numpy.ones((4, 8), "float32"), spec(None, "b"))
        w = rs(lib.numpy.ones((8, 4), "float32"), spec("a", None))
        f = lib.jit(lambda x, w: lib.lax.dot_general(x, w, (((1,), (0,)), ((), ())),
                                                     out_sharding=spec("a", "b")))
        y = f(x, w)
        return str(lib.typeof(y)), np.asarray(y)
    (gt, gv), (wt, wv) = both(run)
    assert gt == wt
    np.testing.assert_allclose(gv, wv)


def _like(lib, name):
    m = lib.make_mesh((4, 2), ("x", "y"),
                      axis_types=(lib.sharding.AxisType.Auto,) * 2)
    ns = lib.sharding.NamedSharding(m, lib.sharding.PartitionSpec("x", "y"))
    a = lib.device_put(lib.numpy.arange(16.0, dtype="float32").reshape(8, 2), ns)
    f = getattr(lib.numpy, name)
    outs = [f(a), f(a, dtype="int32"), f(a, shape=(3,)), f(lib.numpy.float32(2.0) + 0),
            lib.lax.full_like(a, 7)]
    return [(str(o.sharding.spec) if hasattr(o.sharding, "spec") else "single",
             str(o.dtype), np.asarray(o).tolist()) for o in outs]


@pytest.mark.parametrize("name", ["zeros_like", "ones_like"])
def test_like_keeps_model_layout(name):
    assert _like(mjax, name) == _like(jax, name)


def _wsc_format(lib, Format, Layout, order):
    m = lib.make_mesh((4, 2), ("x", "y"), axis_types=(lib.sharding.AxisType.Auto,) * 2)
    ns = lib.sharding.NamedSharding(m, lib.sharding.PartitionSpec("x", None))
    x = lib.numpy.arange(16.0, dtype="float32").reshape(8, 2)
    eager = lib.lax.with_sharding_constraint(x, Format(Layout(major_to_minor=(1, 0)), ns))
    f = lib.jit(lambda a: lib.lax.with_sharding_constraint(
        a * 2, Format(Layout(major_to_minor=order), ns)))
    y = f(x)
    tree = lib.lax.with_sharding_constraint({"a": x}, {"a": Format(None, ns)})
    return (eager.sharding.is_equivalent_to(ns, 2), np.asarray(eager).tolist(),
            y.sharding.is_equivalent_to(ns, 2), y.format.layout.major_to_minor,
            np.asarray(y).tolist(), tree["a"].sharding.is_equivalent_to(ns, 2))


@pytest.mark.parametrize("order", [(1, 0), (0, 1)])
def test_with_sharding_constraint_format(order):
    assert _wsc_format(mjax, ml.Format, ml.Layout, order) == \
        _wsc_format(jax, jl.Format, jl.Layout, order)
    with pytest.raises(ValueError, match="device-local layouts"):
        mjax.lax.with_sharding_constraint(mjax.numpy.ones(2), ml.Layout(major_to_minor=(0,)))


def _jit_under_set_mesh(lib):
    m = lib.make_mesh((2, 2), ("row", "col"), axis_types=(lib.sharding.AxisType.Auto,) * 2)
    out = []
    with lib.set_mesh(m):
        f = lib.jit(lambda: lib.numpy.arange(6.0).reshape(3, 2) * 2)
        g = lib.jit(lambda a: a + 1)
        for y in (f(), g(lib.numpy.float32(1)), lib.random.normal(lib.random.key(0), (4,))):
            out.append((type(y.sharding).__name__, str(getattr(y.sharding, "spec", None)),
                        len(y.sharding.device_set), np.asarray(y).round(5).tolist()))
    y = f()     # (outside the mesh again: one device)
    out.append((type(y.sharding).__name__, len(y.sharding.device_set)))
    return out


def test_jit_under_set_mesh_compiles_for_the_mesh():
    assert _jit_under_set_mesh(mjax) == _jit_under_set_mesh(jax)
