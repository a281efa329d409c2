"""shard_map manual over part of the mesh (axis_names=...) on a 2x4 mesh of the 8 CPU
devices (test/conftest.py), against jax.shard_map and NumPy: blocks split only along the
manual axes, collectives over them, jit, grad, nesting, smap, and JAX's errors."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import mjax

X = np.arange(8 * 12, dtype=np.float32).reshape(8, 12)


def _mesh(lib):
    return lib.make_mesh((2, 4), ("x", "y"), axis_types=(lib.sharding.AxisType.Auto,) * 2)


def _body(lib, axis):
    def f(b):
        i = lib.lax.axis_index(axis)
        return b * (1 + i) + lib.lax.psum(b, axis), lib.lax.psum(b.sum(0), axis)
    return f


def _run(lib, axis, spec_dim, wrap=lambda f: f):
    P = lib.sharding.PartitionSpec
    spec = P(*[None] * spec_dim, axis)
    f = lib.shard_map(_body(lib, axis), mesh=_mesh(lib), in_specs=spec,
                      out_specs=(spec, P()), axis_names={axis})
    return wrap(f)(X)


def _numpy(axis, spec_dim):
    n = {"x": 2, "y": 4}[axis]
    blocks = np.split(X, n, axis=spec_dim)
    total = sum(blocks)
    outs = [b * (1 + i) + total for i, b in enumerate(blocks)]
    return np.concatenate(outs, axis=spec_dim), total.sum(0)


@pytest.mark.parametrize("axis, spec_dim", [("x", 0), ("y", 1), ("y", 0), ("x", 1)])
@pytest.mark.parametrize("jitted", [False, True], ids=["eager", "jit"])
def test_values_against_jax_and_numpy(axis, spec_dim, jitted):
    wrap = (lambda lib: lib.jit) if jitted else (lambda lib: lambda f: f)
    ours = _run(mjax, axis, spec_dim, wrap(mjax))
    theirs = _run(jax, axis, spec_dim, wrap(jax))
    want = _numpy(axis, spec_dim)
    for o, t, w in zip(ours, theirs, want, strict=True):
        np.testing.assert_allclose(np.asarray(o), w, rtol=1e-6)
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=1e-6)
        assert o.shape == t.shape


def _grad(lib):
    P = lib.sharding.PartitionSpec
    jnp = lib.numpy

    def body(b):
        return lib.lax.psum(jnp.sin(b) * b, "x")
    f = lib.shard_map(body, mesh=_mesh(lib), in_specs=P("x"), out_specs=P(),
                      axis_names={"x"})
    return lib.jit(lib.grad(lambda a: f(a).sum()))(X / 10)


def test_grad_against_jax():
    want = np.sin(X / 10) + X / 10 * np.cos(X / 10)
    np.testing.assert_allclose(np.asarray(_grad(mjax)), want, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(_grad(mjax)), np.asarray(_grad(jax)), rtol=1e-5)


def test_argument_split_over_the_auto_axis_too():
    """An argument split over the automatic axis as well: right values, split over the
    manual one. (JAX's result keeps P('x', 'y'); mjax's propagation pass closes the
    open dimensions, so it comes back P('x').)"""
    mesh = _mesh(mjax)
    P = mjax.sharding.PartitionSpec
    xs = mjax.device_put(X, mjax.sharding.NamedSharding(mesh, P("x", "y")))
    f = mjax.shard_map(lambda b: b * 2, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                       axis_names={"x"})
    out = f(xs)
    np.testing.assert_array_equal(np.asarray(out), X * 2)
    assert out.sharding.shard_shape(out.shape)[0] == 4


def _nested(lib):
    P = lib.sharding.PartitionSpec

    def inner(b):
        return b * (1 + lib.lax.axis_index("y")) + lib.lax.psum(b, "y")

    def outer(b):
        r = lib.shard_map(inner, mesh=lib.sharding.get_abstract_mesh(),
                          in_specs=P(None, "y"), out_specs=P(None, "y"),
                          axis_names={"y"})(b)
        return r + lib.lax.axis_index("x")
    mesh = _mesh(lib)
    with lib.set_mesh(mesh):
        f = lib.shard_map(outer, in_specs=P("x"), out_specs=P("x"), axis_names={"x"})
        return np.asarray(f(X)), np.asarray(lib.jit(f)(X))


def test_nested_shard_map_over_the_other_axis():
    ours, theirs = _nested(mjax), _nested(jax)
    for o, t in zip(ours, theirs, strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-6)


def test_body_mesh_types_manual_axes():
    mesh = _mesh(mjax)
    P = mjax.sharding.PartitionSpec
    seen = []

    def body(b):
        seen.append(mjax.sharding.get_abstract_mesh().manual_axes)
        return b
    mjax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                   axis_names={"x"})(X)
    assert seen == [("x",)]


def _smap(lib):
    mesh = _mesh(lib)
    with lib.set_mesh(mesh):
        f = lib.smap(lambda a: a * 2 + lib.lax.psum(a, "y"), in_axes=1, out_axes=1,
                     axis_name="y")
        g = lib.smap(lambda a: lib.lax.psum(a.sum(), "x"), in_axes=0, out_axes=None,
                     axis_name="x")
        return [np.asarray(f(X)), np.asarray(lib.jit(f)(X)), np.asarray(g(X))]


def test_smap_over_one_axis_of_a_2d_mesh():
    for o, t in zip(_smap(mjax), _smap(jax), strict=True):
        np.testing.assert_allclose(o, t, rtol=1e-6)


@pytest.mark.parametrize("lib", [mjax, jax], ids=["mjax", "jax"])
@pytest.mark.parametrize("kw, error, message", [
    (dict(in_specs=("y",), out_specs=("x",)), ValueError,
     "in_specs argument must refer to an axis marked as manual"),
    (dict(in_specs=("x",), out_specs=(("x", "y"),)), ValueError,
     "out_specs argument must refer to an axis marked as manual"),
    (dict(in_specs=("x",), out_specs=("x",), axis_names=["x"]), TypeError,
     "`axis_names` argument of shard_map should be of type"),
    (dict(in_specs=("x",), out_specs=("x",), axis_names={"z"}), ValueError,
     "to be a subset of mesh.axis_names"),
    (dict(out_specs=("x",)), TypeError, "in_specs argument must be a pytree"),
])
def test_errors_as_jax(lib, kw, error, message):
    P = lib.sharding.PartitionSpec
    kw = {"axis_names": {"x"}, **kw}
    for k in ("in_specs", "out_specs"):
        if k in kw:
            kw[k] = P(*kw[k])
    with pytest.raises(error, match=message):
        lib.shard_map(lambda b: b, mesh=_mesh(lib), **kw)(X)
