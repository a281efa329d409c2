"""Autodiff of shard_map kept as shard_map ops (passes/shard_map_ad.py): gradients
(eager and jitted), forward-mode derivatives, grad of vmap, hessians and jvp of grad of
shard_map programs against jax (collectives, pcast, check_vma off, several arguments and
results, closed-over values, scalar residuals, jits/loops in the body, part of the mesh
manual), on the 8 CPU devices of test/conftest.py; the compiled result holds no jaxpr
op; unreduced out_specs / reduced in_specs stay one equation and differentiate to JAX's
numbers."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import mjax

X = np.arange(48, dtype=np.float32).reshape(8, 6) / 10
W = np.linspace(-1, 1, 36, dtype=np.float32).reshape(6, 6)


def _programs(lib):
    """Name -> (function, arguments) written against `lib` (jax or mjax)."""
    jnp, lax = lib.numpy, lib.lax
    P, AT = lib.sharding.PartitionSpec, lib.sharding.AxisType
    mesh = lib.make_mesh((4, 2), ("x", "y"), axis_types=(AT.Auto,) * 2)
    sm = lib.shard_map
    perm = [(i, (i + 1) % 4) for i in range(4)]
    return {
        "psum": (sm(lambda b: lax.psum(jnp.sin(b), "x"), mesh=mesh, in_specs=P("x", "y"),
                    out_specs=P(None, "y")), (X,)),
        "two_args": (sm(lambda a, w: jnp.tanh(a @ w), mesh=mesh, in_specs=(P("x"), P()),
                        out_specs=P("x")), (X, W)),
        "all_gather": (sm(lambda b: jnp.sin(lax.all_gather(b, "x", axis=0, tiled=True)) * 2,
                          mesh=mesh, in_specs=P("x"), out_specs=P(), check_vma=False), (X,)),
        "all_gather_varying": (sm(lambda b: jnp.sin(lax.all_gather(b, "x", axis=1, tiled=True))
                                  * b[:, :1], mesh=mesh, in_specs=P("x"), out_specs=P("x")),
                               (X,)),
        "ppermute": (sm(lambda b: lax.ppermute(jnp.cos(b), "x", perm) * b, mesh=mesh,
                        in_specs=P("x"), out_specs=P("x")), (X,)),
        "pcast": (sm(lambda a: jnp.sin(lax.pcast(a, "x", to="varying")) * 3, mesh=mesh,
                     in_specs=P(), out_specs=P("x")), (X,)),
        "no_check_psum": (sm(lambda b: lax.psum(b * 2 + jnp.sin(b), ("x", "y")), mesh=mesh,
                             in_specs=P("x", "y"), out_specs=P(), check_vma=False), (X,)),
        "no_check_ppermute": (sm(lambda b: lax.ppermute(jnp.sin(b), "x", perm) * b, mesh=mesh,
                                 in_specs=P("x"), out_specs=P("x"), check_vma=False), (X,)),
        "nested_in_jit": (lib.jit(lambda a: sm(
            lambda b: lax.psum(jnp.cos(b).sum(0), ("x", "y")), mesh=mesh,
            in_specs=P("x", "y"), out_specs=P())(jnp.cos(a)) * 2), (X,)),
        "jit_in_body": (sm(lib.jit(lambda b: jnp.cos(b) * b), mesh=mesh, in_specs=P("x"),
                           out_specs=P("x")), (X,)),
        "scan_in_body": (sm(lambda b: lax.scan(lambda c, r: (c * jnp.sin(r), c),
                                               lax.pcast(jnp.ones(6), "x", to="varying"),
                                               b)[0][None],
                            mesh=mesh, in_specs=P("x"), out_specs=P("x")), (X,)),
        "multi_out": (sm(lambda a, w: (jnp.sin(a) * w[0], lax.psum(a.sum(0), "x")),
                         mesh=mesh, in_specs=(P("x", "y"), P(None, "y")),
                         out_specs=(P("x", "y"), P("y"))), (X, W[:2])),
        "closed_over": (lambda a, w: sm(lambda b: b * w[0, 0] + jnp.cos(b * w[1, 1]),
                                        mesh=mesh, in_specs=P("x"), out_specs=P("x"))(a),
                        (X, W)),
        "scalar_residual": (sm(lambda b: jnp.sin(b.sum()) * b, mesh=mesh, in_specs=P("x"),
                               out_specs=P("x")), (X,)),
        "psum_scatter": (sm(lambda b: lax.psum_scatter(jnp.sin(b), "x", tiled=True),
                            mesh=mesh, in_specs=P(), out_specs=P("x")), (X,)),
        "partial_manual": (sm(lambda b: jnp.sin(b) * b, mesh=mesh, in_specs=P("x"),
                              out_specs=P("x"), axis_names={"x"}), (X,)),
        "pmean": (sm(lambda b: lax.pmean(b * b, "y"), mesh=mesh, in_specs=P("x", "y"),
                     out_specs=P("x")), (X,)),
    }


def _loss(lib, f):
    def loss(*a):
        return sum((leaf ** 2).sum() for leaf in lib.tree_util.tree_leaves(f(*a)))
    return loss


def _derivatives(lib, name):
    f, args = _programs(lib)[name]
    loss, argnums = _loss(lib, f), tuple(range(len(args)))
    g = lib.grad(loss, argnums=argnums)(*args)
    gj = lib.jit(lib.grad(loss, argnums=argnums))(*args)
    t = lib.jvp(loss, args, tuple(np.ones_like(a) for a in args))[1]
    return [np.asarray(x) for x in (*g, *gj, t)]


@pytest.mark.parametrize("name", list(_programs(jax)))
def test_gradients_and_jvp_match_jax(name):
    ours, theirs = _derivatives(mjax, name), _derivatives(jax, name)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def _higher(lib, name):
    f, args = _programs(lib)[name]
    rest = args[1:]
    g = lambda a: (f(a, *rest) ** 2).sum()   # noqa: E731
    a0 = args[0]
    return [np.asarray(o) for o in (
        lib.vmap(lambda a: f(a, *rest))(np.stack([a0, -a0])),
        lib.grad(lambda a: lib.vmap(g)(lib.numpy.stack([a, 2 * a])).sum())(a0),
        lib.jit(lib.hessian(lambda s: g(a0 * s)))(np.float32(0.7)),
        lib.jvp(lib.grad(g), (a0,), (np.ones_like(a0),))[1])]


@pytest.mark.parametrize("name", ["psum", "ppermute", "scalar_residual", "closed_over"])
def test_vmap_grad_of_vmap_hessian_and_jvp_of_grad_match_jax(name):
    for a, b in zip(_higher(mjax, name), _higher(jax, name)):
        np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-2)


def test_grad_keeps_two_shard_map_equations_and_compiles_without_them():
    f, args = _programs(mjax)["ppermute"]
    loss = _loss(mjax, f)
    eqns = mjax.make_jaxpr(mjax.grad(loss))(*args).eqns
    assert [e.primitive.name for e in eqns].count("shard_map") == 2
    lowered = mjax.jit(mjax.grad(loss)).lower(*args).as_text()
    assert "jaxpr." not in lowered


def _rules_in_body(lib):
    """grad (eager and jitted) of shard_maps whose bodies hold a custom_vjp function, a
    checkpoint, and a checkpoint with a policy."""
    P = lib.sharding.PartitionSpec
    mesh = lib.make_mesh((4, 2), ("x", "y"), axis_types=(lib.sharding.AxisType.Auto,) * 2)
    jnp = lib.numpy

    @lib.custom_vjp
    def f(x):
        return jnp.sin(x)
    f.defvjp(lambda x: (jnp.sin(x), jnp.cos(x)), lambda c, g: (3 * c * g,))
    bodies = [lambda b: f(b) * b,
              lib.checkpoint(lambda b: jnp.sin(jnp.sin(b)) * b),
              lambda b: lib.checkpoint(lambda c: jnp.sin(jnp.cos(c)),
                                       policy=lib.checkpoint_policies.nothing_saveable)(b) * b]
    outs = []
    for body in bodies:
        g = lib.shard_map(body, mesh=mesh, in_specs=P("x"), out_specs=P("x"))
        loss = lambda a: (g(a) ** 2).sum()    # noqa: E731
        outs += [lib.grad(loss)(X), lib.jit(lib.grad(loss))(X)]
    return [np.asarray(o) for o in outs]


def test_custom_vjp_and_checkpoints_in_the_body_differentiate_as_jaxs():
    for a, b in zip(_rules_in_body(mjax), _rules_in_body(jax)):
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def _unreduced_program(lib):
    """The sharding-in-AD page's matmul with an unreduced out_spec, and a layer taking a
    reduced weight (cells 17-19), on 2 devices."""
    P = lib.sharding.PartitionSpec
    mesh = lib.make_mesh((2,), ("X",), axis_types=(lib.sharding.AxisType.Explicit,),
                         devices=lib.devices()[:2])
    with lib.set_mesh(mesh):
        a = lib.device_put(np.arange(4.0, dtype=np.float32).reshape(2, 2), P(None, "X"))
        b = lib.device_put(np.arange(4.0, 8.0, dtype=np.float32).reshape(2, 2),
                           P("X", None))

        @lib.shard_map(in_specs=(P(None, "X"), P("X", None)),
                       out_specs=P(None, None, unreduced={"X"}))
        def matmul_partial(a, b):
            return lib.lax.pcast(a @ b, "X", to="unreduced")

        def matmul_loss(a, b):
            return lib.numpy.sum(lib.reshard(matmul_partial(a, b), P(None, None)) ** 2)
        ga, gb = lib.jit(lib.grad(matmul_loss, argnums=(0, 1)))(a, b)
        text = str(lib.jit(lib.grad(matmul_loss, argnums=(0, 1))).trace(a, b).jaxpr)
        x = lib.device_put(np.arange(8 * 4.0, dtype=np.float32).reshape(8, 4), P("X", None))
        w = lib.reshard(lib.device_put(np.arange(8.0, dtype=np.float32).reshape(4, 2) / 10,
                                       P(None, None)), P(None, None, reduced={"X"}))

        @lib.shard_map(in_specs=(P("X", None), P(None, None, reduced={"X"})),
                       out_specs=P("X", None))
        def apply_layer(x, w):
            return lib.numpy.tanh(x @ w)
        dw = lib.grad(lambda w, x: lib.numpy.sum(apply_layer(x, w) ** 2))(w, x)
        summed = lib.reshard(dw, P(None, None))    # (dw is unreduced: each device's part)
        return [np.asarray(ga), np.asarray(gb), np.asarray(summed)], text, \
            str(lib.typeof(dw))


def test_unreduced_out_spec_and_reduced_in_spec_differentiate_as_jaxs():
    ours, ours_text, ours_type = _unreduced_program(mjax)
    theirs, theirs_text, theirs_type = _unreduced_program(jax)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)
    assert ours_text == theirs_text
    assert "reduced_vary_cast_p" in ours_text and "vary_unreduced_cast_p" in ours_text
    assert ours_type == theirs_type
