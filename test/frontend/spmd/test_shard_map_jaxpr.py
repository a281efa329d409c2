"""make_jaxpr of shard_map: one `shard_map` equation with the per-device body nested
(`jaxpr.shard_map @body` in the trace, expanded by the passes), printed as JAX prints
it, with the body's varying axes (`{V:i}`) and check_vma's pvary casts; JAX's
trace-time errors; and the numbers of grad/vmap of shard_map (where the printed text is
not compared) against jax."""
from __future__ import annotations

import re

import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as mjnp

X = np.arange(48, dtype=np.float32).reshape(8, 6)
X8 = np.arange(64, dtype=np.float32).reshape(8, 8)


def _programs(lib):
    """Name -> (function, arguments) written against `lib` (jax or mjax)."""
    jnp, lax = lib.numpy, lib.lax
    P, AT = lib.sharding.PartitionSpec, lib.sharding.AxisType
    mesh = lib.make_mesh((4, 2), ("x", "y"), axis_types=(AT.Auto,) * 2)
    emesh = lib.make_mesh((4, 2), ("x", "y"), axis_types=(AT.Explicit,) * 2)
    sm = lib.shard_map
    return {
        "psum": (sm(lambda b: lax.psum(b, "x"), mesh=mesh, in_specs=P("x", "y"),
                    out_specs=P(None, "y")), (X,)),
        "two_axes": (sm(lambda a, b: a * b + 1.0, mesh=mesh,
                        in_specs=(P("x", "y"), P(None, "y")), out_specs=P("x", "y")),
                     (X, X[:2])),
        "partial_manual": (sm(jnp.sin, mesh=mesh, in_specs=P("x"), out_specs=P("x"),
                              axis_names={"x"}), (X,)),
        "check_vma_false": (sm(lambda b: b * 2, mesh=mesh, in_specs=P("x"), out_specs=P(),
                               check_vma=False), (X,)),
        "nested_in_jit": (lib.jit(lambda a: sm(
            lambda b: lax.psum(b.sum(0), ("x", "y")), mesh=mesh, in_specs=P("x", "y"),
            out_specs=P())(jnp.cos(a)) * 2), (X,)),
        "pcast": (sm(lambda a: lax.pcast(a, "x", to="varying") + 1, mesh=mesh,
                     in_specs=P(), out_specs=P("x")), (X,)),
        "axis_index": (sm(lambda a: a + lax.axis_index("y"), mesh=mesh, in_specs=P("x"),
                          out_specs=P("x", "y")), (np.arange(8, dtype=np.int32)[:, None],)),
        "explicit_mesh": (sm(lambda a, b: a @ b, mesh=emesh, in_specs=(P("x"), P()),
                             out_specs=P("x")),
                          (lib.device_put(X, lib.sharding.NamedSharding(emesh, P("x"))),
                           np.ones((6, 3), np.float32))),
        "scalar_literal": (sm(lambda a: a * 2.0, mesh=mesh, in_specs=P("x"),
                              out_specs=P("x")), (X,)),
        "pytree_out": (sm(lambda a: (a, lax.pmax(a, "x")), mesh=mesh, in_specs=P("x"),
                          out_specs=(P("x"), P())), (X,)),
        # bodies in the body: their values typed too, pvary inside a nested jit
        "cond": (sm(lambda b: lax.cond(True, jnp.sin, jnp.cos, b), mesh=mesh,
                    in_specs=P("x"), out_specs=P("x")), (X,)),
        "jit_in_body": (sm(lib.jit(lambda b: jnp.cos(b) + 1), mesh=mesh, in_specs=P("x"),
                           out_specs=P("x")), (X,)),
        "captured_tracer": (lib.jit(lambda a: sm(lambda b: b * a[0, 0], mesh=mesh,
                                                 in_specs=P("x"), out_specs=P("x"))(a)),
                            (X,)),
        # collectives: JAX's names and parameters, their invariant operands cast first
        "ppermute": (sm(lambda b: lax.ppermute(b, "x", [(i, (i + 1) % 4) for i in range(4)]),
                        mesh=mesh, in_specs=P("x"), out_specs=P("x")), (X,)),
        "psum_scatter": (sm(lambda b: lax.psum_scatter(b, "x", tiled=True), mesh=mesh,
                            in_specs=P(), out_specs=P("x")), (X,)),
        "pmean": (sm(lambda b: lax.pmean(b, "y"), mesh=mesh, in_specs=P("x", "y"),
                     out_specs=P("x")), (X,)),
        "all_gather": (sm(lambda b: lax.all_gather(b, "x", axis=1), mesh=mesh, in_specs=P(),
                          out_specs=P("x")), (X,)),
        "all_to_all": (sm(lambda b: lax.all_to_all(b, "x", 1, 0, tiled=True), mesh=mesh,
                          in_specs=P("x"), out_specs=P(None, "x")), (X8,)),
        "pmax_two_axes": (sm(lambda b: lax.pmax(b, ("x", "y")), mesh=mesh,
                             in_specs=P("x", "y"), out_specs=P()), (X,)),
        "psum_of_invariant": (sm(lambda b: lax.psum(b, "x"), mesh=mesh, in_specs=P(),
                                 out_specs=P()), (X,)),
    }


def _text(lib, name) -> str:
    f, args = _programs(lib)[name]
    text = str(lib.make_jaxpr(f)(*args))
    # (a frozenset's order is the process's string hashing: JAX's varies run to run)
    return re.sub(r"frozenset\(\{([^}]*)\}\)",
                  lambda m: "frozenset({" + ", ".join(sorted(m.group(1).split(", "))) + "})",
                  text)


@pytest.mark.parametrize("name", list(_programs(jax)))
def test_printed_jaxpr_is_jaxs(name):
    assert _text(mjax, name) == _text(jax, name)


def _grad_text(lib, name) -> str:
    f, args = _programs(lib)[name]
    floats = tuple(i for i, a in enumerate(args) if np.asarray(a).dtype.kind == "f")

    def loss(*a):
        return sum((y * y).sum() for y in lib.tree_util.tree_leaves(f(*a))
                   if y.dtype.kind == "f")
    text = str(lib.make_jaxpr(lib.grad(loss, argnums=floats))(*args))
    return re.sub(r"frozenset\(\{([^}]*)\}\)",
                  lambda m: "frozenset({" + ", ".join(sorted(m.group(1).split(", "))) + "})",
                  text)


# grad of a shard_map: JAX's forward shard_map (its residuals, then its results) and
# transposed shard_map, where mjax's body makes the same equations. (Not yet where JAX's
# check_vma makes pvary casts that are equations of its trace: it saves their results as
# residuals and transposes them to psums; mjax's casts are implicit, so it forwards the
# operand; nor where a collective names an axis an out_spec or in_spec leaves unnamed:
# along it mjax transposes as without check_vma, dividing the result's cotangent by its
# size and psumming the operand's. The numbers agree: test_shard_map_ad.py.)
_GRAD_TEXTS = ["partial_manual", "pcast", "ppermute", "psum_scatter", "all_gather",
               "all_to_all"]


@pytest.mark.parametrize("name", _GRAD_TEXTS)
def test_printed_jaxpr_of_grad_is_jaxs(name):
    assert _grad_text(mjax, name) == _grad_text(jax, name)


def test_grad_of_shard_map_prints_two_shard_map_equations():
    text = _grad_text(mjax, "ppermute")
    assert text.count("shard_map[") == 2 and "reshape" not in text


def _cell(lib):
    """The shard_map page's make_jaxpr cell: an Explicit mesh from the context."""
    P = lib.sharding.PartitionSpec
    mesh = lib.make_mesh((2,), ("i",))
    with lib.set_mesh(mesh):
        @lib.shard_map(in_specs=(P("i"), P()), out_specs=P("i"))
        def f(x, y):
            return x * y
        x = lib.device_put(lib.numpy.arange(6.), P("i"))
        y = lib.numpy.arange(3.)
        return lib.make_jaxpr(f)(x, y)


def test_tutorial_cell_prints_one_equation_with_pvary():
    ours, theirs = _cell(mjax), _cell(jax)
    assert str(ours) == str(theirs)
    assert "pvary[axes=('i',)]" in str(ours) and "{V:i}" in str(ours)


def test_equation_has_jaxs_primitive_and_params():
    ours, theirs = _cell(mjax), _cell(jax)
    (e,), (t,) = ours.eqns, theirs.eqns
    assert e.primitive.name == t.primitive.name == "shard_map"
    assert sorted(e.params) == sorted(t.params)
    for key in ("in_specs", "out_specs", "check_vma", "newly_manual_axes"):
        assert repr(e.params[key]) == repr(t.params[key])
    assert str(e.params["mesh"]) == str(t.params["mesh"])
    assert [v.aval.shape for v in e.params["jaxpr"].invars] == \
        [v.aval.shape for v in t.params["jaxpr"].invars]
    assert [q.primitive.name for q in e.params["jaxpr"].eqns] == ["mul"]


def test_trace_holds_one_op_and_lowers_as_the_expansion():
    mesh = mjax.make_mesh((4, 2), ("x", "y"), axis_types=(mjax.sharding.AxisType.Auto,) * 2)
    P = mjax.sharding.PartitionSpec
    f = mjax.jit(mjax.shard_map(lambda b: mjax.lax.psum(b, "x") * 2, mesh=mesh,
                                in_specs=P("x", "y"), out_specs=P(None, "y")))
    traced = f.trace(X).as_text()
    assert traced.count('"jaxpr.shard_map"') == 1 and "jaxpr.vmap" not in traced
    lowered = f.lower(X).as_text()
    assert "jaxpr." not in lowered and "sdy.sharding_constraint" in lowered
    np.testing.assert_allclose(np.asarray(f(X)), X.reshape(4, 2, 6).sum(0) * 2)


def _replicated_claim(lib):
    P = lib.sharding.PartitionSpec
    mesh = lib.make_mesh((2,), ("i",), axis_types=(lib.sharding.AxisType.Auto,))

    def double(x):
        return x * 2
    f = lib.shard_map(double, mesh=mesh, in_specs=P("i"), out_specs=P())
    with pytest.raises(ValueError) as e:
        lib.make_jaxpr(f)(np.arange(6.0, dtype=np.float32))
    return str(e.value)


def test_check_vma_error_is_raised_while_tracing_with_jaxs_words():
    assert _replicated_claim(mjax) == _replicated_claim(jax)


def test_check_vma_false_or_psum_pass_the_check():
    P = mjax.sharding.PartitionSpec
    mesh = mjax.make_mesh((2,), ("i",), axis_types=(mjax.sharding.AxisType.Auto,))
    x = np.arange(6.0, dtype=np.float32)
    f = mjax.shard_map(lambda b: b * 2, mesh=mesh, in_specs=P("i"), out_specs=P(),
                       check_vma=False)
    np.testing.assert_allclose(np.asarray(mjax.jit(f)(x)), x[:3] * 2)
    g = mjax.shard_map(lambda b: mjax.lax.psum(b, "i"), mesh=mesh, in_specs=P("i"),
                       out_specs=P())
    np.testing.assert_allclose(np.asarray(mjax.jit(g)(x)), x[:3] + x[3:])


def test_spec_longer_than_output_rank_is_a_trace_time_error():
    P = mjax.sharding.PartitionSpec
    mesh = mjax.make_mesh((2,), ("i",), axis_types=(mjax.sharding.AxisType.Auto,))
    f = mjax.shard_map(lambda b: b.sum(), mesh=mesh, in_specs=P("i"), out_specs=P("i"))
    with pytest.raises(ValueError, match="out_specs"):
        mjax.make_jaxpr(f)(np.arange(6.0, dtype=np.float32))


def _grad_vmap(lib):
    """grad and vmap of shard_map (the numbers; their printed text is not compared)."""
    P, AT = lib.sharding.PartitionSpec, lib.sharding.AxisType
    mesh = lib.make_mesh((4, 2), ("x", "y"), axis_types=(AT.Auto,) * 2)
    f = lib.shard_map(lambda b, w: lib.lax.psum(lib.numpy.sin(b) * w, "y"), mesh=mesh,
                      in_specs=(P("x", "y"), P("y")), out_specs=P("x"))
    w = np.linspace(0.5, 1.5, 6, dtype=np.float32)
    g = lib.jit(lib.grad(lambda a, w: (f(a, w) ** 2).sum(), argnums=(0, 1)))(X / 10, w)
    v = lib.jit(lib.vmap(f, in_axes=(0, None)))(np.stack([X, -X]) / 10, w)
    lib.make_jaxpr(lib.grad(lambda a: f(a, w).sum()))(X)   # (prints without error)
    return [np.asarray(a) for a in (*g, v)]


def test_grad_and_vmap_of_shard_map_match_jax():
    for ours, theirs in zip(_grad_vmap(mjax), _grad_vmap(jax)):
        np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def test_shard_map_under_vmap_and_scan_bodies_in_it():
    P, AT = mjax.sharding.PartitionSpec, mjax.sharding.AxisType
    mesh = mjax.make_mesh((4, 2), ("x", "y"), axis_types=(AT.Auto,) * 2)

    def body(b):
        def step(c, row):
            return c + mjax.lax.psum(row, "x"), c
        return mjax.lax.scan(step, mjnp.zeros(6), b)[0][None]
    f = mjax.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P())
    out = np.asarray(mjax.jit(f)(X))
    np.testing.assert_allclose(out, X.reshape(4, 2, 6).sum((0, 1))[None])


def test_eval_jaxpr_of_the_equation_runs_shard_map_again():
    P, AT = mjax.sharding.PartitionSpec, mjax.sharding.AxisType
    mesh = mjax.make_mesh((4, 2), ("x", "y"), axis_types=(AT.Auto,) * 2)
    w = np.float32(3.0)
    f = mjax.shard_map(lambda b: mjax.lax.psum(b * w, "x"), mesh=mesh,
                       in_specs=P("x", "y"), out_specs=P(None, "y"))
    closed = mjax.make_jaxpr(f)(X)
    want = X.reshape(4, 2, 6).sum(0) * 3
    np.testing.assert_allclose(
        np.asarray(mjax.core.eval_jaxpr(closed.jaxpr, closed.consts, X)[0]), want)
    np.testing.assert_allclose(np.asarray(mjax.jit(
        lambda x: mjax.core.eval_jaxpr(closed.jaxpr, closed.consts, x)[0])(X)), want)
