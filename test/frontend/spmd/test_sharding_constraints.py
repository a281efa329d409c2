"""with_sharding_constraint on 8 CPU devices (test/conftest.py), against jax: values,
layouts (shard shapes and device indices), grad, vmap, pytrees and errors."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.sharding import AxisType, Mesh, NamedSharding, P

JP = jax.sharding.PartitionSpec

AUTO = (AxisType.Auto, AxisType.Auto)


@pytest.fixture(scope="module")
def mesh():
    return mjax.make_mesh((4, 2), ("x", "y"), axis_types=AUTO)


@pytest.fixture(scope="module")
def jmesh():
    return jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


def layout(a):
    return {(s.device.id, tuple((i.start, i.stop) for i in s.index))
            for s in a.addressable_shards}


def jspec(spec):
    return jax.sharding.PartitionSpec(*spec)


SPECS = [P("x", "y"), P("y"), P(None, "x"), P(("x", "y")), P()]


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_constraint_in_unsharded_jit_lays_out_result_as_jax(mesh, jmesh, spec):
    x = np.arange(32, dtype=np.float32).reshape(8, 4)

    def f(lax, s):
        return lambda v: lax.with_sharding_constraint(v * 2 + 1, s) - 1

    ours = mjax.jit(f(mjax.lax, NamedSharding(mesh, spec)))(x)
    theirs = jax.jit(f(jax.lax, jax.sharding.NamedSharding(jmesh, jspec(spec))))(x)
    np.testing.assert_allclose(ours, theirs)
    if spec != P():  # XLA may pick any layout for the final subtraction's result
        assert ours.sharding.shard_shape(x.shape) == theirs.sharding.shard_shape(x.shape)


def test_constraint_on_the_result_is_the_result_layout(mesh, jmesh):
    x = np.arange(48, dtype=np.float32).reshape(8, 6)
    ours = mjax.jit(lambda v: mjax.lax.with_sharding_constraint(
        jnp.sin(v), NamedSharding(mesh, P("x", "y"))))(x)
    theirs = jax.jit(lambda v: jax.lax.with_sharding_constraint(
        jax.numpy.sin(v), jax.sharding.NamedSharding(jmesh, jspec(("x", "y")))))(x)
    np.testing.assert_allclose(ours, theirs, rtol=1e-6)
    assert ours.sharding == NamedSharding(mesh, P("x", "y"))
    assert layout(ours) == layout(theirs)


def test_constraint_lowers_to_sdy_sharding_constraint(mesh):
    x = np.ones((8, 4), np.float32)
    text = mjax.jit(lambda v: mjax.lax.with_sharding_constraint(
        v, NamedSharding(mesh, P("x", "y")))).lower(x).as_text()
    assert 'sdy.mesh @mesh = <["x"=4, "y"=2]>' in text
    assert 'sdy.sharding_constraint %arg0 <@mesh, [{"x"}, {"y"}]>' in text
    assert "mhlo.sharding" not in text


def test_jit_lowering_carries_every_propagated_decision_as_sdy(mesh):
    """jit over a mesh runs --jaxpr-propagate-shardings: each value it decides gets a
    closed sdy.sharding_constraint, the arguments sdy.sharding, and XLA (Shardy)
    partitions exactly that: the row sums stay split over x, the contraction over y is
    summed by an all-reduce, and nothing gathers the full (8, 4) operand."""
    rng = np.random.RandomState(1)
    a, w = rng.randn(8, 4).astype(np.float32), rng.randn(4, 6).astype(np.float32)
    f = mjax.jit(lambda a, w: jnp.sum(jnp.tanh(a @ w), axis=1),
                 in_shardings=(NamedSharding(mesh, P("x", "y")),
                               NamedSharding(mesh, P("y", None))))
    lowered = f.lower(a, w)
    text = lowered.as_text()
    assert '{sdy.sharding = #sdy.sharding<@mesh, [{"x"}, {"y"}]>}' in text
    assert '{sdy.sharding = #sdy.sharding<@mesh, [{"y"}, {}]>}' in text
    assert 'sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]>' in text
    # dot_general's result (x), tanh (x), the reduction (x): our decisions, closed.
    assert text.count('sdy.sharding_constraint') >= 3
    assert '<@mesh, [{"x"}]>' in text
    assert "mjax." not in text.replace("mjax.jit", "")
    compiled = lowered.compile()
    hlo = compiled.as_text()
    assert "all-reduce" in hlo
    assert "f32[8,4]" not in "\n".join(l for l in hlo.splitlines() if "all-gather" in l)
    out = compiled(a, w)
    np.testing.assert_allclose(np.asarray(out), np.tanh(a @ w).sum(1), rtol=1e-5)
    assert out.sharding == NamedSharding(mesh, P("x"))
    assert f(a, w).sharding == NamedSharding(mesh, P("x"))


def test_host_callback_keeps_the_gspmd_route(mesh):
    """A program with a host callback (lowered with XLA shardings of its own) keeps
    mhlo.sharding annotations for GSPMD, and still computes the same."""
    x = np.arange(32, dtype=np.float32).reshape(8, 4)

    def f(v):
        v = mjax.lax.with_sharding_constraint(v * 2, NamedSharding(mesh, P("x")))
        return mjax.pure_callback(lambda u: np.asarray(u) + 1,
                                  mjax.ShapeDtypeStruct(v.shape, v.dtype), v)
    g = mjax.jit(f, out_shardings=NamedSharding(mesh, P("x")))
    text = g.lower(x).as_text()
    assert "stablehlo.custom_call @Sharding" in text and "sdy." not in text
    out = g(x)
    np.testing.assert_allclose(out, x * 2 + 1)
    assert out.sharding == NamedSharding(mesh, P("x"))


def test_bare_partition_spec_under_mesh_context(mesh):
    x = np.arange(16, dtype=np.float32).reshape(8, 2)
    with mesh:
        out = mjax.jit(lambda v: mjax.lax.with_sharding_constraint(v + 1, P("x")))(x)
    np.testing.assert_allclose(out, x + 1)
    assert out.sharding.shard_shape(x.shape) == (2, 2)


def test_bare_partition_spec_without_mesh_is_an_error():
    with pytest.raises(ValueError, match="outside a mesh context"):
        mjax.jit(lambda v: mjax.lax.with_sharding_constraint(v, P("x")))(np.ones(8))


def test_explicit_axes_are_refused_as_jax_does():
    explicit = mjax.make_mesh((8,), ("x",))
    with pytest.raises(ValueError, match="only refer to Auto axes"):
        mjax.jit(lambda v: mjax.lax.with_sharding_constraint(
            v, NamedSharding(explicit, P("x"))))(np.ones(8))


def test_pytree_of_values_and_prefix_of_shardings(mesh):
    tree = {"a": np.arange(8.0, dtype=np.float32), "b": (np.ones((4, 2), np.float32),)}
    shardings = {"a": NamedSharding(mesh, P("x")), "b": NamedSharding(mesh, P(None, "y"))}
    out = mjax.jit(lambda t: mjax.lax.with_sharding_constraint(t, shardings))(tree)
    np.testing.assert_allclose(out["a"], tree["a"])
    assert out["a"].sharding.shard_shape((8,)) == (2,)
    assert out["b"][0].sharding.shard_shape((4, 2)) == (4, 1)


def test_eager_constraint_is_a_device_put(mesh):
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    out = mjax.lax.with_sharding_constraint(x, NamedSharding(mesh, P("x", "y")))
    assert out.sharding == NamedSharding(mesh, P("x", "y"))
    np.testing.assert_array_equal(out, x)


def test_grad_through_constraint_matches_jax(mesh, jmesh):
    x = np.linspace(-1, 1, 32, dtype=np.float32).reshape(8, 4)

    def loss(lax, np_, s):
        return lambda v: (lax.with_sharding_constraint(np_.sin(v) * v, s) ** 2).sum()

    ours = mjax.jit(mjax.grad(loss(mjax.lax, jnp, NamedSharding(mesh, P("x")))))(x)
    theirs = jax.jit(jax.grad(loss(jax.lax, jax.numpy,
                                   jax.sharding.NamedSharding(jmesh, jspec(("x",))))))(x)
    np.testing.assert_allclose(ours, theirs, rtol=1e-5)
    assert ours.sharding.shard_shape(x.shape) == theirs.sharding.shard_shape(x.shape)


def test_jvp_through_constraint(mesh):
    x = np.arange(8, dtype=np.float32)
    t = np.ones(8, np.float32)
    f = lambda v: mjax.lax.with_sharding_constraint(v * v, NamedSharding(mesh, P("x")))  # noqa: E731
    y, y_dot = mjax.jit(lambda a, b: mjax.jvp(f, (a,), (b,)))(x, t)
    np.testing.assert_allclose(y, x * x)
    np.testing.assert_allclose(y_dot, 2 * x)


def test_vmap_of_constraint_keeps_the_batch_axis_whole(mesh, jmesh):
    xs = np.arange(3 * 8 * 4, dtype=np.float32).reshape(3, 8, 4)
    ours = mjax.jit(mjax.vmap(lambda v: mjax.lax.with_sharding_constraint(
        v * 2, NamedSharding(mesh, P("x", "y")))))(xs)
    theirs = jax.jit(jax.vmap(lambda v: jax.lax.with_sharding_constraint(
        v * 2, jax.sharding.NamedSharding(jmesh, jspec(("x", "y"))))))(xs)
    np.testing.assert_allclose(ours, theirs)
    assert ours.sharding.shard_shape(xs.shape) == theirs.sharding.shard_shape(xs.shape)
    assert layout(ours) == layout(theirs)


def test_constraint_on_a_sub_mesh_runs_on_its_devices():
    devs = np.array(mjax.devices()[4:8], dtype=object)
    mesh = Mesh(devs, ("x",))
    out = mjax.jit(lambda v: mjax.lax.with_sharding_constraint(
        v + 1, NamedSharding(mesh, P("x"))))(np.arange(8.0, dtype=np.float32))
    np.testing.assert_allclose(out, np.arange(8.0) + 1)
    assert {s.device.id for s in out.addressable_shards} == {4, 5, 6, 7}


def test_indivisible_dimension_is_an_error(mesh):
    with pytest.raises(Exception, match="not divisible"):
        mjax.jit(lambda v: mjax.lax.with_sharding_constraint(
            v, NamedSharding(mesh, P("x"))))(np.ones(6, np.float32))


def test_set_mesh_gives_bare_specs_their_mesh_as_jax(mesh, jmesh):
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    with mjax.set_mesh(mesh):
        assert mjax.sharding.get_mesh() == mesh
        ours = mjax.jit(lambda v: mjax.lax.with_sharding_constraint(v * 3, P("x", "y")))(x)
        sm = mjax.shard_map(lambda b: mjax.lax.psum(b, "y"), in_specs=P("x", "y"),
                            out_specs=P("x"))(x)
    assert mjax.sharding.get_mesh() is None
    with jax.set_mesh(jmesh):
        theirs = jax.jit(lambda v: jax.lax.with_sharding_constraint(
            v * 3, jspec(("x", "y"))))(x)
        jsm = jax.shard_map(lambda b: jax.lax.psum(b, "y"), in_specs=jspec(("x", "y")),
                            out_specs=jspec(("x",)))(x)
    np.testing.assert_allclose(ours, theirs)
    assert layout(ours) == layout(theirs)
    np.testing.assert_allclose(np.asarray(sm), np.asarray(jsm))
    assert sm.sharding.shard_shape(sm.shape) == jsm.sharding.shard_shape(jsm.shape)


def test_reshard_over_explicit_axes_as_jax():
    mesh = mjax.make_mesh((4, 2), ("x", "y"))     # Explicit axes, JAX's default
    jmesh = jax.make_mesh((4, 2), ("x", "y"))
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    ours = mjax.reshard(x, NamedSharding(mesh, P("y", "x")))
    theirs = jax.reshard(x, jax.sharding.NamedSharding(jmesh, jspec(("y", "x"))))
    np.testing.assert_array_equal(ours, theirs)
    assert layout(ours) == layout(theirs)
    inside = mjax.jit(lambda v: mjax.reshard(v + 1, NamedSharding(mesh, P("x"))))(x)
    assert inside.sharding.shard_shape(x.shape) == (2, 4)
    np.testing.assert_allclose(inside, x + 1)


def test_unconstrained_dims_are_left_to_xla_as_jax(mesh, jmesh):
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    s = NamedSharding(mesh, P(P.UNCONSTRAINED, "y"))
    f = lambda v: mjax.lax.with_sharding_constraint(v * 2, s)  # noqa: E731
    text = mjax.jit(f).lower(x).as_text()
    assert 'sdy.sharding_constraint %1 <@mesh, [{?}, {"y"}]>' in text
    ours = mjax.jit(f, in_shardings=NamedSharding(mesh, P("x")))(x)
    js = jax.sharding.NamedSharding(jmesh, JP(JP.UNCONSTRAINED, "y"))
    theirs = jax.jit(lambda v: jax.lax.with_sharding_constraint(v * 2, js),
                     in_shardings=jax.sharding.NamedSharding(jmesh, JP("x")))(x)
    np.testing.assert_allclose(ours, theirs)
    assert layout(ours) == layout(theirs)


def test_our_propagation_materialized_is_what_xla_runs(mesh):
    """--jaxpr-propagate-shardings(materialize=true) on a traced jit: XLA partitions the
    program as our pass decided (a sharded row-sum result, an all-reduce over y)."""
    from mjax.passes import run_pipeline
    rng = np.random.RandomState(0)
    a, w = rng.randn(8, 4).astype(np.float32), rng.randn(4, 6).astype(np.float32)
    b = rng.randn(6).astype(np.float32)

    def f(a, w, b):
        a = mjax.lax.with_sharding_constraint(a, NamedSharding(mesh, P("x", None)))
        w = mjax.lax.with_sharding_constraint(w, NamedSharding(mesh, P(None, "y")))
        return jnp.sum(jnp.tanh(a @ w + b), axis=1)
    traced = mjax.jit(f).trace(a, w, b)
    module = traced._traced.module
    before = str(module).count("jaxpr.sharding_constraint")
    run_pipeline(module, [("jaxpr-propagate-shardings", "materialize=true")])
    assert str(module).count("jaxpr.sharding_constraint") > before
    compiled = traced.lower().compile()
    out = compiled(a, w, b)
    np.testing.assert_allclose(np.asarray(out), np.tanh(a @ w + b).sum(1), rtol=1e-5)
    assert out.sharding == NamedSharding(mesh, P("x"))
    assert "all-reduce" in compiled.as_text()


def test_host_callback_result_returned_as_is_reads_from_its_device(mesh):
    """XLA leaves a host callback's value on one device (a maximal sharding); the jit
    result is that device's buffer, not the others' (which hold nothing meaningful)."""
    x = np.arange(32, dtype=np.float32).reshape(8, 4)

    def f(v):
        v = mjax.lax.with_sharding_constraint(v * 2, NamedSharding(mesh, P("x")))
        return mjax.pure_callback(lambda u: np.asarray(u) + 1,
                                  mjax.ShapeDtypeStruct(v.shape, v.dtype), v)
    out = mjax.jit(f)(x)
    np.testing.assert_allclose(np.asarray(out), x * 2 + 1)
    assert len(out.devices()) == 1
    np.testing.assert_allclose(mjax.jit(lambda a: a - 1)(out), x * 2)
