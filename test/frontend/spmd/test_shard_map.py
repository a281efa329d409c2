"""shard_map on 8 CPU devices (test/conftest.py) against jax.shard_map: values, result
layouts, collectives inside, grad, composition with jit/vmap, compiled collectives, and
errors."""
from __future__ import annotations

import functools

import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.sharding import P

JP = jax.sharding.PartitionSpec


# Auto axes: with Explicit ones (make_mesh's default) JAX also requires the arguments to
# be laid out as in_specs already; mjax lays them out itself.
@pytest.fixture(scope="module")
def mesh():
    return mjax.make_mesh((4, 2), ("x", "y"), axis_types=(mjax.sharding.AxisType.Auto,) * 2)


@pytest.fixture(scope="module")
def jmesh():
    return jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


def jspec(spec):
    return JP(*spec)


def both(mesh, jmesh, body, in_specs, out_specs, *args, **kw):
    """(ours, theirs) for the same body written against mjax (m) and jax (j)."""
    conv = lambda t, f: jax.tree_util.tree_map(  # noqa: E731
        f, t, is_leaf=lambda s: isinstance(s, tuple) and type(s).__name__ in
        ("PartitionSpec",))
    ours = mjax.shard_map(functools.partial(body, mjax), mesh=mesh, in_specs=in_specs,
                          out_specs=out_specs, **kw)(*args)
    theirs = jax.shard_map(functools.partial(body, jax), mesh=jmesh,
                           in_specs=conv(in_specs, jspec), out_specs=conv(out_specs, jspec),
                           **kw)(*args)
    return ours, theirs


def same(ours, theirs, rtol=1e-6):
    for o, t in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        np.testing.assert_allclose(np.asarray(o), np.asarray(t), rtol=rtol, atol=1e-6)
        assert o.shape == t.shape
        assert o.sharding.shard_shape(o.shape) == t.sharding.shard_shape(t.shape)


X = np.arange(8 * 6, dtype=np.float32).reshape(8, 6)
SPECS = [P("x", "y"), P("x"), P(None, "y"), P("y", "x"), P(("x", "y")), P(("y", "x")), P()]


@pytest.mark.parametrize("spec", SPECS, ids=str)
def test_blocks_seen_by_the_body_and_reassembled(mesh, jmesh, spec):
    x = np.arange(16 * 8, dtype=np.float32).reshape(16, 8)
    ours, theirs = both(mesh, jmesh, lambda j, b: b * 2 + b.shape[0] + b.shape[1] * 100,
                        spec, spec, x)
    same(ours, theirs)


def test_body_sees_its_own_block(mesh, jmesh):
    # Each block plus its own position: every device got the block JAX gives it.
    def body(j, b):
        return b + (j.lax.axis_index("x") * 2 + j.lax.axis_index("y")).astype(b.dtype)
    ours, theirs = both(mesh, jmesh, body, P("y", "x"), P("y", "x"), X[:, :4])
    same(ours, theirs)


@pytest.mark.parametrize("axes,out", [("x", P(None, "y")), ("y", P("x")),
                                      (("x", "y"), P())], ids=str)
def test_psum_over_mesh_axes(mesh, jmesh, axes, out):
    ours, theirs = both(mesh, jmesh, lambda j, b: j.lax.psum(b, axes), P("x", "y"), out, X)
    same(ours, theirs)


def test_pmean_pmax_pmin(mesh, jmesh):
    def body(j, b):
        return (j.lax.pmean(b, "x"), j.lax.pmax(b, "y"), j.lax.pmin(b, ("x", "y")))
    ours, theirs = both(mesh, jmesh, body, P("x", "y"), (P(None, "y"), P("x"), P()), X)
    same(ours, theirs)


@pytest.mark.parametrize("tiled", [False, True])
def test_all_gather(mesh, jmesh, tiled):
    out = P(None, None, "y") if not tiled else P(None, "y")
    ours, theirs = both(mesh, jmesh,
                        lambda j, b: j.lax.all_gather(b, "x", axis=0, tiled=tiled),
                        P("x", "y"), out, X, check_vma=False)  # JAX cannot infer it
    same(ours, theirs)


def test_psum_scatter_tiled(mesh, jmesh):
    x = np.arange(8 * 16, dtype=np.float32).reshape(8, 16)
    ours, theirs = both(mesh, jmesh,
                        lambda j, b: j.lax.psum_scatter(b, "x", scatter_dimension=1,
                                                        tiled=True),
                        P("x"), P(None, "x"), x)
    same(ours, theirs)


def test_all_to_all(mesh, jmesh):
    x = np.arange(8 * 8, dtype=np.float32).reshape(8, 8)
    ours, theirs = both(mesh, jmesh,
                        lambda j, b: j.lax.all_to_all(b, "x", 1, 0, tiled=True),
                        P("x"), P(None, "x"), x)
    same(ours, theirs)


def test_ppermute_ring(mesh, jmesh):
    perm = [(i, (i + 1) % 4) for i in range(4)]
    ours, theirs = both(mesh, jmesh, lambda j, b: j.lax.ppermute(b, "x", perm),
                        P("x", "y"), P("x", "y"), X)
    same(ours, theirs)


def test_axis_index_of_both_axes(mesh, jmesh):
    def body(j, b):
        return b + j.lax.axis_index("x") * 10 + j.lax.axis_index("y")
    ours, theirs = both(mesh, jmesh, body, P(), P(("x", "y")), np.zeros(1, np.int32))
    same(ours, theirs)


def test_pytree_arguments_and_results(mesh, jmesh):
    def body(j, t):
        a, b = t["a"], t["b"]
        return {"s": j.lax.psum(a.sum(), ("x", "y")), "p": a * b}
    tree = {"a": X, "b": np.ones((8, 6), np.float32) * 3}
    ours, theirs = both(mesh, jmesh, body, ({"a": P("x", "y"), "b": P("x", "y")},),
                        {"s": P(), "p": P("x", "y")}, tree)
    same(ours, theirs)


def test_sharded_contraction_matmul_shows_all_reduce_not_all_gather(mesh):
    a = np.random.RandomState(0).randn(8, 16).astype(np.float32)
    w = np.random.RandomState(1).randn(16, 4).astype(np.float32)

    def mm(x, y):
        return mjax.lax.psum(x @ y, "x")
    f = mjax.shard_map(mm, mesh=mesh, in_specs=(P(None, "x"), P("x", None)),
                       out_specs=P())
    np.testing.assert_allclose(np.asarray(f(a, w)), a @ w, rtol=1e-5, atol=1e-5)
    hlo = mjax.jit(f).lower(a, w).compile().as_text()
    assert "all-reduce" in hlo
    assert "all-gather" not in hlo


def test_grad_through_shard_map_matches_jax(mesh, jmesh):
    a = np.random.RandomState(0).randn(8, 6).astype(np.float32)

    def loss(j, np_, x):
        f = j.shard_map(lambda b: j.lax.psum((np_.sin(b) * b).sum(), ("x", "y")),
                        mesh=mesh if j is mjax else jmesh,
                        in_specs=P("x", "y") if j is mjax else JP("x", "y"),
                        out_specs=P() if j is mjax else JP())
        return f(x)
    g = mjax.grad(functools.partial(loss, mjax, jnp))(a)
    gj = jax.grad(functools.partial(loss, jax, jax.numpy))(a)
    np.testing.assert_allclose(np.asarray(g), gj, rtol=1e-5)
    np.testing.assert_allclose(np.asarray(g), np.sin(a) + a * np.cos(a), rtol=1e-5)


def test_grad_of_psum_inside_shard_map_matches_jax(mesh, jmesh):
    a = np.random.RandomState(2).randn(8, 6).astype(np.float32)

    def loss(j, x):
        m, sp = (mesh, P) if j is mjax else (jmesh, JP)
        f = j.shard_map(lambda b: j.lax.psum(b, "x") * b, mesh=m, in_specs=sp("x", "y"),
                        out_specs=sp("x", "y"))
        return (f(x) ** 2).sum()
    g = mjax.jit(mjax.grad(functools.partial(loss, mjax)))(a)
    gj = jax.jit(jax.grad(functools.partial(loss, jax)))(a)
    np.testing.assert_allclose(np.asarray(g), gj, rtol=1e-5)


def test_shard_map_inside_jit_with_other_ops(mesh, jmesh):
    def prog(j, x):
        m, sp = (mesh, P) if j is mjax else (jmesh, JP)
        y = j.shard_map(lambda b: j.lax.psum(b * b, "y"), mesh=m, in_specs=sp("x", "y"),
                        out_specs=sp("x"))(x + 1)
        return y.sum(axis=1) * 2
    ours = mjax.jit(functools.partial(prog, mjax))(X)
    theirs = jax.jit(functools.partial(prog, jax))(X)
    np.testing.assert_allclose(np.asarray(ours), theirs, rtol=1e-6)


def test_decorator_form_and_mesh_context(mesh):
    with mesh:
        @functools.partial(mjax.shard_map, in_specs=P("x"), out_specs=P("x"))
        def f(b):
            return b + 1
        out = f(X)
    np.testing.assert_allclose(np.asarray(out), X + 1)
    assert out.sharding.shard_shape(X.shape) == (2, 6)


def test_experimental_spelling(mesh):
    with pytest.warns(DeprecationWarning, match="jax.experimental.shard_map is deprecated"):
        from mjax.experimental.shard_map import shard_map
    f = shard_map(lambda b: mjax.lax.psum(b, "x"), mesh, in_specs=(P("x"),),
                  out_specs=P())
    np.testing.assert_allclose(np.asarray(f(X)), X.reshape(4, 2, 6).sum(0))


def test_out_specs_claiming_replication_of_a_varying_value_is_an_error(mesh):
    f = mjax.shard_map(lambda b: b * 2, mesh=mesh, in_specs=P("x"), out_specs=P())
    with pytest.raises(ValueError, match="out_specs"):
        f(X)


def test_check_vma_false_keeps_the_first_members_block(mesh, jmesh):
    ours, theirs = both(mesh, jmesh, lambda j, b: b * 2, P("x"), P(), X, check_vma=False)
    np.testing.assert_allclose(np.asarray(ours), np.asarray(theirs))


def test_indivisible_argument_is_an_error(mesh):
    f = mjax.shard_map(lambda b: b, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
    with pytest.raises(ValueError, match="not evenly divisible"):
        f(np.ones((6, 2), np.float32))


def test_spec_longer_than_rank_is_an_error(mesh):
    f = mjax.shard_map(lambda b: b, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x"))
    with pytest.raises(ValueError, match="too long"):
        f(np.ones(8, np.float32))


def test_vmap_of_shard_map(mesh):
    f = mjax.shard_map(lambda b: mjax.lax.psum(b, "x"), mesh=mesh, in_specs=P("x"),
                       out_specs=P())
    xs = np.arange(3 * 8, dtype=np.float32).reshape(3, 8)
    out = mjax.jit(mjax.vmap(f))(xs)
    np.testing.assert_allclose(np.asarray(out), xs.reshape(3, 4, 2).sum(1))


def test_psum_scatter_untiled(mesh, jmesh):
    x = np.arange(16 * 4, dtype=np.float32).reshape(16, 4)  # block (4, 4): dim 0 = |x|
    ours, theirs = both(mesh, jmesh,
                        lambda j, b: j.lax.psum_scatter(b, "x", scatter_dimension=0),
                        P("x"), P("x"), x)
    same(ours, theirs)


def test_all_to_all_untiled(mesh, jmesh):
    x = np.arange(16 * 4 * 3, dtype=np.float32).reshape(16, 4, 3)  # block (4, 4, 3)
    ours, theirs = both(mesh, jmesh,
                        lambda j, b: j.lax.all_to_all(b, "x", 0, 1),
                        P("x"), P("x"), x)
    same(ours, theirs)


@pytest.mark.parametrize("which", ["all_gather", "psum_scatter", "ppermute", "all_to_all"])
def test_grad_through_collectives_matches_jax(mesh, jmesh, which):
    a = np.random.RandomState(3).randn(8, 8).astype(np.float32)
    perm = [(i, (i + 1) % 4) for i in range(4)]

    def body(j, b):
        if which == "all_gather":
            return j.lax.all_gather(b, "x", axis=0, tiled=True) * b.sum()
        if which == "psum_scatter":
            return j.lax.psum_scatter(b * b, "x", scatter_dimension=1, tiled=True)
        if which == "ppermute":
            return j.lax.ppermute(b, "x", perm) * b
        return j.lax.all_to_all(b * b, "x", 1, 0, tiled=True)

    def loss(j, x):
        m, sp = (mesh, P) if j is mjax else (jmesh, JP)
        f = j.shard_map(functools.partial(body, j), mesh=m, in_specs=sp("x"),
                        out_specs=sp("x"), **({} if which != "all_gather" else
                                              {"check_vma": False}))
        return (f(x) ** 2).sum()
    g = mjax.jit(mjax.grad(functools.partial(loss, mjax)))(a)
    gj = jax.jit(jax.grad(functools.partial(loss, jax)))(a)
    np.testing.assert_allclose(np.asarray(g), gj, rtol=1e-4, atol=1e-4)


def test_in_specs_inferred_from_argument_layouts_on_explicit_mesh():
    mesh = mjax.make_mesh((4, 2), ("x", "y"))           # Explicit axes, JAX's default
    jmesh = jax.make_mesh((4, 2), ("x", "y"))
    x = np.arange(16, dtype=np.float32).reshape(8, 2)
    ours = mjax.shard_map(lambda a: a * 2 + a.shape[0], mesh=mesh, out_specs=P("x"))(
        mjax.device_put(x, mjax.sharding.NamedSharding(mesh, P("x"))))
    theirs = jax.shard_map(lambda a: a * 2 + a.shape[0], mesh=jmesh, out_specs=JP("x"))(
        jax.device_put(x, jax.sharding.NamedSharding(jmesh, JP("x"))))
    same(ours, theirs)


def test_in_specs_inferred_under_jit_from_traced_types():
    # Under jit the arguments are traced: their layouts come from their types.
    mesh = mjax.make_mesh((4, 2), ("x", "y"))
    jmesh = jax.make_mesh((4, 2), ("x", "y"))
    x = np.arange(16, dtype=np.float32).reshape(8, 2)

    def run(j, m, spec):
        body = j.shard_map(lambda a: a * 2 + a.shape[0], out_specs=spec("x"))
        xs = j.device_put(x, j.sharding.NamedSharding(m, spec("x")))
        with j.set_mesh(m):
            return j.jit(body)(xs), j.jit(lambda a: body(a * 3))(xs)
    ours, theirs = run(mjax, mesh, P), run(jax, jmesh, JP)
    np.testing.assert_array_equal(np.asarray(ours[0]), x * 2 + 2)   # blocks of 8/4 rows
    for o, t in zip(ours, theirs):
        same(o, t)


def test_in_specs_required_on_auto_mesh(mesh):
    with pytest.raises(TypeError, match="in_specs argument must be a pytree"):
        mjax.shard_map(lambda a: a, mesh=mesh, out_specs=P())(np.ones(8, np.float32))


def test_types_in_the_body_name_the_axes_values_vary_along(mesh, jmesh):
    # JAX's {V:...} types: blocks vary along their spec's axes, reductions over an axis
    # make a value invariant along it, axis_index / psum_scatter / pcast make it vary.
    def body(J, np_):
        def f(x, y):
            seen = [J.typeof(x), J.typeof(y), J.typeof(x * y), J.typeof(J.lax.psum(x, "x")),
                    J.typeof(J.lax.pmax(x * y, ("x", "y"))), J.typeof(np_.sin(y) + 1.0),
                    J.typeof(J.lax.axis_index("y")), J.typeof(J.lax.pcast(y, "x", to="varying")),
                    J.typeof(J.lax.psum_scatter(J.lax.psum(x, "y"), "y", tiled=True))]
            print(" ".join(str(t) for t in seen))
            print(sorted(J.typeof(x * y).manual_axis_type.varying))
            return x
        return f
    outs = []
    for J, np_, m in ((mjax, jnp, mesh), (jax, jax.numpy, jmesh)):
        Pj = J.sharding.PartitionSpec
        x = J.device_put(np.ones((8, 4), np.float32), J.sharding.NamedSharding(m, Pj("x", "y")))
        y = J.device_put(np.ones((2,), np.float32), J.sharding.NamedSharding(m, Pj()))
        with J.set_mesh(m):
            import contextlib
            import io
            buf = io.StringIO()
            with contextlib.redirect_stdout(buf):
                J.jit(J.shard_map(body(J, np_), in_specs=(Pj("x", "y"), Pj()),
                                  out_specs=Pj("x", "y")))(x, y)
        outs.append(buf.getvalue())
    assert outs[0] == outs[1]


def test_explicit_mesh_arguments_must_be_laid_out_as_in_specs():
    # On Explicit axes JAX checks in_specs against the arguments' types (it does not
    # reshard): the same ValueError text; a matching layout runs.
    outs = []
    for J in (mjax, jax):
        m = J.make_mesh((4, 2), ("i", "j"))
        Pj = J.sharding.PartitionSpec
        x = J.device_put(np.ones((8, 4), np.float32), J.sharding.NamedSharding(m, Pj("i")))
        got = []
        with J.set_mesh(m):
            for spec, arg in ((Pj(), x), (Pj("i", "j"), x), (Pj("i"), np.ones(8, np.float32))):
                with pytest.raises(ValueError) as e:
                    J.shard_map(lambda a: a, in_specs=spec, out_specs=spec)(arg)
                got.append(str(e.value))
            y = J.shard_map(lambda a: 2 * a, in_specs=Pj("i", None), out_specs=Pj("i"))(x)
            got.append(str(np.asarray(y).sum()))
        outs.append(got)
    assert outs[0] == outs[1]


def test_printing_in_a_body_called_outside_jit_shows_each_devices_block(capsys):
    # JAX runs such a body eagerly: print shows every device's block, in the order of
    # the program's prints; mjax prints the same once the staged body has run.
    outs = []
    for J in (mjax, jax):
        m = J.make_mesh((2, 2), ("i", "j"), axis_types=(J.sharding.AxisType.Auto,) * 2)
        Pj = J.sharding.PartitionSpec

        def f(x):
            print("before", x)
            y = J.lax.psum(x, "i")
            print("after", y, "done")
            return y
        y = J.shard_map(f, mesh=m, in_specs=Pj("i", "j"), out_specs=Pj(None, "j"))(
            np.arange(16.0, dtype=np.float32).reshape(4, 4))
        print(np.asarray(y))
        outs.append(capsys.readouterr().out)
    assert outs[0] == outs[1]
    assert "On cpu:3 at mesh coordinates (i, j,) = (1, 1):" in outs[0]


def test_unreduced_in_specs_give_each_device_its_partial():
    # (JAX: the body sees float32[]{U:i}, each device's partial; psum adds them once)
    for J in (mjax, jax):
        mesh = J.make_mesh((2,), ("i",), devices=J.devices()[:2],
                           axis_types=(J.sharding.AxisType.Explicit,))
        with J.set_mesh(mesh):
            xs = J.device_put(J.numpy.arange(8.0), J.sharding.NamedSharding(
                mesh, J.sharding.PartitionSpec("i")))
            xu = J.numpy.einsum("i,i->", xs, xs, out_sharding=J.sharding.PartitionSpec(
                unreduced={"i"}))
            seen = []

            def body(c):
                seen.append(str(J.typeof(c)))
                return J.lax.psum(c, "i")
            g = J.shard_map(body, mesh=mesh,
                            in_specs=(J.sharding.PartitionSpec(unreduced={"i"}),),
                            out_specs=J.sharding.PartitionSpec())
            assert float(g(xu)) == float(np.arange(8.0) @ np.arange(8.0))
            assert seen == ["float32[]{U:i}"]
