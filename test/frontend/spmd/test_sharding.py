"""Many devices (8 CPU devices, see test/conftest.py): meshes and shardings as JAX has
them, sharded arrays, jit with shardings compiled SPMD by XLA, and pmap."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.sharding import Mesh, NamedSharding, P, SingleDeviceSharding


@pytest.fixture(scope="module")
def mesh():
    assert len(mjax.devices()) == 8
    return mjax.make_mesh((4, 2), ("x", "y"))


@pytest.fixture(scope="module")
def jmesh():
    return jax.make_mesh((4, 2), ("x", "y"))


SPECS = [P("x"), P("x", "y"), P("y", "x"), P(None, "y"), P(("x", "y")), P(), P("y")]


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_device_put_layout_matches_jax(mesh, jmesh, spec):
    value = np.arange(8 * 4, dtype=np.float32).reshape(8, 4)
    ours = mjax.device_put(value, NamedSharding(mesh, spec))
    theirs = jax.device_put(value, jax.sharding.NamedSharding(jmesh, jax.sharding.PartitionSpec(*spec)))
    np.testing.assert_array_equal(np.asarray(ours), value)
    assert ours.sharding.shard_shape(value.shape) == theirs.sharding.shard_shape(value.shape)
    assert ours.is_fully_replicated == theirs.is_fully_replicated
    got = {(s.device.id, tuple((i.start, i.stop) for i in s.index), s.replica_id)
           for s in ours.addressable_shards}
    want = {(s.device.id, tuple((i.start, i.stop) for i in s.index), s.replica_id)
            for s in theirs.addressable_shards}
    assert got == want
    for s in ours.addressable_shards:
        np.testing.assert_array_equal(np.asarray(s.data), value[s.index])


def test_mesh_and_sharding_api(mesh):
    assert mesh.shape == {"x": 4, "y": 2} and mesh.size == 8 and mesh.axis_names == ("x", "y")
    s = NamedSharding(mesh, P("x"))
    assert s == NamedSharding(mesh, P("x", None)) and hash(s) == hash(NamedSharding(mesh, P("x", None)))
    assert s != NamedSharding(mesh, P("y"))
    assert s.num_devices == 8 and s.shard_shape((8, 3)) == (2, 3)
    assert repr(P("x", None)) == "P('x', None)" and repr(P()) == "P()"
    with pytest.raises(ValueError, match="not found in mesh"):
        NamedSharding(mesh, P("z"))
    with pytest.raises(ValueError, match="does not evenly divide"):
        mjax.device_put(np.ones(6), s)
    one = jnp.ones(3).sharding
    assert isinstance(one, SingleDeviceSharding) and one.device_set == {mjax.devices()[0]}


def test_jit_on_sharded_arguments_equals_unsharded(mesh):
    # (On Auto axes: on Explicit ones a contraction split on both sides is JAX's
    # ShardingTypeError, below.)
    from mjax.sharding import AxisType
    auto = mjax.make_mesh((4, 2), ("x", "y"), (AxisType.Auto,) * 2)
    rng = np.random.default_rng(0)
    a = rng.normal(size=(8, 16)).astype(np.float32)
    b = rng.normal(size=(16, 4)).astype(np.float32)
    f = lambda a, b: jnp.tanh(a @ b).sum(axis=1) + a.mean()  # noqa: E731
    want = np.asarray(mjax.jit(f)(a, b))
    for sa, sb in [(P("x"), P()), (P("x", "y"), P("y")), (P(None, "y"), P("y", None))]:
        xa = mjax.device_put(a, NamedSharding(auto, sa))
        xb = mjax.device_put(b, NamedSharding(auto, sb))
        np.testing.assert_allclose(np.asarray(mjax.jit(f)(xa, xb)), want, rtol=1e-5, atol=1e-5)


def test_explicit_sharding_types_raise_as_jax(mesh, jmesh):
    # Shardings are part of the types on Explicit axes: the same ops fail as in JAX, with
    # JAX's messages, eagerly and under jit; out_sharding= settles a split contraction.
    import jax
    import jax.numpy as jjnp
    a, b = np.ones((8, 16), np.float32), np.ones((16, 4), np.float32)
    cases = [  # (function of (jax module, its numpy), operands, their specs)
        (lambda J, np_: J.jit(lambda a, b: a @ b), (a, b), ((None, "y"), ("y",))),
        (lambda J, np_: np_.matmul, (a, b), ((None, "y"), ("y", None))),
        (lambda J, np_: lambda a, c: a + c, (a, a), (("x", None), (None, "x"))),
        (lambda J, np_: J.jit(lambda a, c: np_.sin(a) * c), (a, a), (("x",), ("y",)))]
    for make, operands, specs in cases:
        errors = []
        for J, np_, m in ((mjax, jnp, mesh), (jax, jjnp, jmesh)):
            xs = [J.device_put(x, J.sharding.NamedSharding(m, J.sharding.PartitionSpec(*s)))
                  for x, s in zip(operands, specs)]
            with pytest.raises(Exception) as e:
                make(J, np_)(*xs)
            errors.append((type(e.value).__name__, str(e.value)))
        assert errors[0] == errors[1]
    with mjax.set_mesh(mesh):
        out = jnp.matmul(mjax.device_put(a, P(None, "y")), mjax.device_put(b, P("y", None)),
                         out_sharding=P("x", None))
        assert str(mjax.typeof(out)) == "float32[8@x,4]"
        np.testing.assert_allclose(np.asarray(out), a @ b)


def test_sharded_contraction_reduces_without_gathering(mesh):
    a = np.random.default_rng(1).normal(size=(8, 16)).astype(np.float32)
    b = np.random.default_rng(2).normal(size=(16, 4)).astype(np.float32)
    f = mjax.jit(lambda a, b: a @ b,
                 in_shardings=(NamedSharding(mesh, P("x", "y")), NamedSharding(mesh, P("y", None))),
                 out_shardings=NamedSharding(mesh, P("x", None)))
    compiled = f.lower(a, b).compile()
    hlo = compiled.as_text()
    assert "all-reduce" in hlo or "reduce-scatter" in hlo
    assert "all-gather" not in hlo
    out = compiled(a, b)
    assert out.sharding == NamedSharding(mesh, P("x", None))
    assert out.sharding.shard_shape(out.shape) == (2, 4)
    np.testing.assert_allclose(np.asarray(out), a @ b, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.asarray(f(a, b)), a @ b, rtol=1e-5, atol=1e-5)


def test_results_keep_the_propagated_sharding(mesh):
    x = mjax.device_put(np.arange(16.0, dtype=np.float32).reshape(8, 2), NamedSharding(mesh, P("x")))
    y = mjax.jit(lambda a: a * 2)(x)
    assert y.sharding == NamedSharding(mesh, P("x", None))
    np.testing.assert_array_equal(np.asarray(y), np.arange(16.0).reshape(8, 2) * 2)


def test_grad_of_sharded_loss_equals_unsharded(mesh):
    rng = np.random.default_rng(3)
    w = rng.normal(size=(16, 4)).astype(np.float32)
    x = rng.normal(size=(8, 16)).astype(np.float32)
    loss = lambda w, x: jnp.mean(jnp.tanh(x @ w) ** 2)  # noqa: E731
    want = np.asarray(mjax.jit(mjax.grad(loss))(w, x))
    g = mjax.jit(mjax.grad(loss))(mjax.device_put(w, NamedSharding(mesh, P())),
                                  mjax.device_put(x, NamedSharding(mesh, P("x"))))
    np.testing.assert_allclose(np.asarray(g), want, rtol=1e-5, atol=1e-6)


def test_pmap_basics_and_collectives():
    x = np.arange(24.0, dtype=np.float32).reshape(8, 3)
    np.testing.assert_array_equal(np.asarray(mjax.pmap(lambda a: a * 2)(x)), x * 2)
    s = mjax.pmap(lambda a: mjax.lax.psum(a, "i"), axis_name="i")(x)
    np.testing.assert_allclose(np.asarray(s), np.broadcast_to(x.sum(0), x.shape))
    m = mjax.pmap(lambda a: a - mjax.lax.pmean(a, "i"), axis_name="i")(x[:4])
    np.testing.assert_allclose(np.asarray(m), x[:4] - x[:4].mean(0), rtol=1e-6)
    w = mjax.pmap(lambda a, b: a + b, in_axes=(0, None))(x, np.ones(3, np.float32))
    np.testing.assert_array_equal(np.asarray(w), x + 1)
    f = mjax.pmap(lambda a, n: a * n, static_broadcasted_argnums=1)
    np.testing.assert_array_equal(np.asarray(f(x, 3)), x * 3)
    with pytest.raises(ValueError, match="requires 9 logical devices"):
        mjax.pmap(lambda a: a)(np.ones((9, 2)))


def _mlp_loss(params, x, y):
    (w1, b1), (w2, b2) = params
    h = jnp.tanh(x @ w1 + b1)
    return jnp.mean((h @ w2 + b2 - y) ** 2)


def _init(seed=0):
    rng = np.random.default_rng(seed)
    params = [(rng.normal(size=(6, 16)).astype(np.float32) * 0.3, np.zeros(16, np.float32)),
              (rng.normal(size=(16, 2)).astype(np.float32) * 0.3, np.zeros(2, np.float32))]
    x = rng.normal(size=(32, 6)).astype(np.float32)
    y = rng.normal(size=(32, 2)).astype(np.float32)
    return params, x, y


def test_data_parallel_training_matches_single_device(mesh):
    params, x, y = _init()
    lr = 0.1

    @mjax.jit
    def step(params, x, y):
        g = mjax.grad(_mlp_loss)(params, x, y)
        return mjax.tree_util.tree_map(lambda p, q: p - lr * q, params, g)

    def pstep(params, x, y):
        g = mjax.grad(_mlp_loss)(params, x, y)
        g = mjax.lax.pmean(g, "batch")
        return mjax.tree_util.tree_map(lambda p, q: p - lr * q, params, g)
    pstep = mjax.pmap(pstep, axis_name="batch", in_axes=(None, 0, 0), out_axes=None)

    data = NamedSharding(mesh, P(("x", "y")))
    single, sharded, pmapped = params, params, params
    for _ in range(3):
        single = step(single, x, y)
        sharded = step(sharded, mjax.device_put(x, data), mjax.device_put(y, data))
        pmapped = pstep(pmapped, x.reshape(8, 4, 6), y.reshape(8, 4, 2))
    for a, b, c in zip(mjax.tree_util.tree_leaves(single), mjax.tree_util.tree_leaves(sharded),
                       mjax.tree_util.tree_leaves(pmapped)):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=2e-5, atol=2e-6)
        np.testing.assert_allclose(np.asarray(c), np.asarray(a), rtol=2e-5, atol=2e-6)


def test_eager_ops_on_sharded_arrays_keep_the_layout(mesh):
    value = np.arange(16.0, dtype=np.float32).reshape(8, 2)
    x = mjax.device_put(value, NamedSharding(mesh, P("x")))
    y = x + 1
    assert y.sharding == NamedSharding(mesh, P("x", None))
    np.testing.assert_array_equal(np.asarray(y), value + 1)
    np.testing.assert_array_equal(np.asarray(x[:2]), value[:2])
    assert float(jnp.sum(x)) == value.sum()


@pytest.mark.parametrize("types", [None, "Explicit", ("Explicit", "Auto"), ("Auto",)])
def test_mesh_axis_types_default_and_check_as_jax(types):
    # Auto unless told; a single AxisType is a one-axis tuple, not broadcast to every axis.
    def make(lib):
        t = types
        if isinstance(t, str):
            t = getattr(lib.sharding.AxisType, t)
        elif isinstance(t, tuple):
            t = tuple(getattr(lib.sharding.AxisType, a) for a in t)
        out = []
        for build in (lambda: lib.sharding.AbstractMesh((2, 4), ("x", "y"), axis_types=t),
                      lambda: lib.sharding.Mesh(np.array(lib.devices()[:8]).reshape(2, 4),
                                                ("x", "y"), axis_types=t)):
            try:
                mesh = build()
            except ValueError as e:
                out.append(("ValueError", str(e)))
            else:
                out.append([a.name for a in mesh.axis_types])
        out.append(repr(lib.sharding.AbstractMesh((2, 4), ("x", "y"), axis_types=t))
                   if t is None or isinstance(t, tuple) and len(t) == 2 else None)
        return out
    assert make(mjax) == make(jax)


@pytest.mark.parametrize("J", [mjax, jax], ids=["mjax", "jax"])
def test_pmap_lower_and_compile_ahead_of_time(J):
    """pmap(f).lower(...).compile() (equinox's filter_pmap AOT): the executable takes the
    arguments without the static ones."""
    x = np.arange(4, dtype=np.float32)
    f = J.pmap(lambda a, b: 2 * a + b)
    lowered = f.lower(x, np.ones(4, np.float32))
    assert "func" in lowered.as_text()
    np.testing.assert_allclose(np.asarray(lowered.compile()(x, np.ones(4, np.float32))),
                               2 * x + 1)
    g = J.pmap(lambda a, k: a * k, static_broadcasted_argnums=1)
    np.testing.assert_allclose(np.asarray(g.lower(x, 3).compile()(x)), x * 3)


def test_eval_shape_gives_the_sharding_of_explicit_types():
    # (flax.nnx's eval_shape of a module whose params are resharded over an Explicit mesh)
    for lib in (mjax, jax):
        mesh = lib.make_mesh((2, 2), ("a", "b"), (lib.sharding.AxisType.Explicit,) * 2)
        spec = lib.sharding.PartitionSpec("a", "b")
        out = lib.eval_shape(lambda: lib.reshard(lib.numpy.ones((4, 4)),
                                                 lib.sharding.NamedSharding(mesh, spec)))
        assert out.sharding.spec == spec
        assert lib.eval_shape(lambda x: x * 2, lib.numpy.ones(3)).sharding is None


def test_mesh_repr_and_str_match_jax(mesh, jmesh):
    # (repr lists the sizes and names apart; str and a NamedSharding's repr name them)
    assert repr(mesh) == repr(jmesh)
    assert str(mesh) == str(jmesh)
    assert repr(NamedSharding(mesh, P("x"))) == repr(jax.sharding.NamedSharding(
        jmesh, jax.sharding.PartitionSpec("x")))
    one, jone = mjax.make_mesh((8,), ("i",)), jax.make_mesh((8,), ("i",))
    assert (repr(one), str(one)) == (repr(jone), str(jone))
