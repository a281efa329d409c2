"""Printed jaxprs in explicit sharding mode, against JAX's text: types carry the Explicit
mesh axes (`f32[8@X,4]`) and unreduced/reduced axes (`{U:X}`, `{R:X}`), jax.reshard prints
as JAX's `reshard`, grad reshards its cotangent seed (`reshard 1.0:f32[]`), and the
backward part's values are typed as JAX's transposes type them (mjax.jaxpr.pretty_types).
Outside explicit mode nothing changes (the last tests). CPU devices: test/conftest.py."""
from __future__ import annotations

import re

import jax
import jax.numpy as jjnp
import pytest

import mjax
import mjax.numpy as jnp

LIBS = ((mjax, jnp), (jax, jjnp))


def _text(s) -> str:
    # (JAX's vmap/index paths leave NumPy integers in some params: np.int64(0))
    return re.sub(r"np\.int64\((-?\d+)\)", r"\1", str(s))


def printed(program, mesh_types=("Explicit",)) -> dict:
    """{lib: the jaxpr text program(lib, jnp) gives} under each library's 2-device mesh
    (axis types `mesh_types`; None: no mesh)."""
    out = {}
    for lib, jnp_ in LIBS:
        if mesh_types is None:
            out[lib] = _text(program(lib, jnp_))
            continue
        types = tuple(getattr(lib.sharding.AxisType, t) for t in mesh_types)
        mesh = lib.make_mesh((2,), ("X",), axis_types=types)
        with lib.set_mesh(mesh):
            out[lib] = _text(program(lib, jnp_))
    return out


def _data(lib, jnp_):
    x = lib.device_put(jnp_.arange(8 * 4.).reshape(8, 4), lib.P("X", None))
    w = lib.device_put(jnp_.arange(4 * 2.).reshape(4, 2) / 10., lib.P(None, None))
    return x, w


def _loss(jnp_):
    return lambda w, x: jnp_.sum((x @ w) ** 2)


def _reduced_loss(lib, jnp_):
    def loss2(w, x):
        w = lib.reshard(w, lib.P(None, None, reduced={"X"}))
        return jnp_.sum((x @ w) ** 2)
    return loss2


def _fanout(lib, jnp_):
    def loss_fanout(w, x1, x2):
        w = lib.reshard(w, lib.P(None, None, reduced={"X"}))
        return jnp_.sum(x1 @ w) + jnp_.sum(x2 @ w)
    return loss_fanout


# JAX's sharding-in-AD page (docs/new_docs/301/sharding-ad.md), its three jaxprs
PAGE = {
    "grad": lambda lib, jnp_: lib.jit(lib.grad(_loss(jnp_))).trace(
        *reversed(_data(lib, jnp_))).jaxpr,
    "grad_of_reduced": lambda lib, jnp_: lib.jit(lib.grad(_reduced_loss(lib, jnp_))).trace(
        *reversed(_data(lib, jnp_))).jaxpr,
    "grad_fanout": lambda lib, jnp_: lib.jit(lib.grad(_fanout(lib, jnp_))).trace(
        _data(lib, jnp_)[1], *[lib.device_put(jnp_.ones((8, 4)), lib.P("X", None))] * 2
    ).jaxpr,
}

PROGRAMS = {
    # a sharded primal's cotangent is sharded; value_and_grad returns the value too
    "grad_both": lambda lib, jnp_: lib.make_jaxpr(lib.grad(_loss(jnp_), argnums=(0, 1)))(
        *reversed(_data(lib, jnp_))),
    "value_and_grad": lambda lib, jnp_: lib.make_jaxpr(lib.value_and_grad(_loss(jnp_)))(
        *reversed(_data(lib, jnp_))),
    "forward": lambda lib, jnp_: lib.make_jaxpr(lambda x, w: jnp_.tanh(x @ w) * 2 + 1)(
        *_data(lib, jnp_)),
    "broadcast": lambda lib, jnp_: lib.make_jaxpr(lambda v: v[:, None] * jnp_.ones((8, 3)))(
        lib.device_put(jnp_.arange(8.), lib.P("X"))),
    "reshard": lambda lib, jnp_: lib.make_jaxpr(lambda x: lib.reshard(x, lib.P(None, "X")))(
        _data(lib, jnp_)[0]),
    "grad_of_partial_sum": lambda lib, jnp_: lib.make_jaxpr(lib.grad(
        lambda x: jnp_.sum(jnp_.sum(x, axis=1) ** 2)))(_data(lib, jnp_)[0]),
    "jvp": lambda lib, jnp_: lib.make_jaxpr(lambda x, t: lib.jvp(jnp_.sin, (x,), (t,)))(
        _data(lib, jnp_)[0], _data(lib, jnp_)[0]),
    "vmap": lambda lib, jnp_: lib.make_jaxpr(lib.vmap(lambda r: jnp_.sum(r * 2)))(
        _data(lib, jnp_)[0]),
    "cond": lambda lib, jnp_: lib.make_jaxpr(
        lambda p, v: lib.lax.cond(p, jnp_.sin, jnp_.cos, v))(
        True, lib.device_put(jnp_.arange(8.), lib.P("X"))),
    # a loop's carries keep their types (the cotangent carry too)
    "grad_loop": lambda lib, jnp_: lib.make_jaxpr(lib.grad(lambda v: jnp_.sum(
        lib.lax.fori_loop(0, 3, lambda i, c: c * 2., v))))(
        lib.device_put(jnp_.arange(8.), lib.P("X"))),
    # no sharded argument: the seed is resharded all the same
    "grad_unsharded": lambda lib, jnp_: lib.make_jaxpr(lib.grad(
        lambda a: jnp_.sum(jnp_.sin(a))))(jnp_.ones(4)),
}


def test_sharding_ad_page_jaxprs_print_as_jax():
    for name, program in PAGE.items():
        out = printed(program)
        assert out[mjax] == out[jax], name


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_explicit_mode_jaxpr_prints_as_jax(name):
    out = printed(PROGRAMS[name])
    assert out[mjax] == out[jax]


def test_explicit_mode_types_and_reshard_are_printed():
    # (the comparison above could pass with both sides empty: check the forms once)
    text = printed(PAGE["grad_of_reduced"])[mjax]
    assert "b:f32[8@X,4]" in text and "c:f32[4,2]{R:X} = reshard a" in text
    assert "{U:X} = dot_general" in text and "= reshard 1.0:f32[]" in text
    assert "sharding_constraint" not in text


def _auto_program(lib, jnp_):
    x = jnp_.arange(8 * 4.).reshape(8, 4)
    return lib.make_jaxpr(lib.grad(lambda w, x: jnp_.sum(jnp_.tanh(x @ w))))(
        jnp_.ones((4, 2)), x)


def test_auto_mode_prints_no_types_and_no_seed_reshard():
    out = printed(_auto_program, ("Auto",))
    assert out[mjax] == out[jax]
    assert "@" not in out[mjax] and "reshard" not in out[mjax]


def test_backward_equations_stay_apart_without_a_mesh():
    # (JAX's transposes emit one broadcast of the seed per use; mjax's printed copy keeps
    # them apart too, merging only the user's and forward parts' equations)
    def program(lib, jnp_):
        def loss(w, x1, x2):
            return jnp_.sum(x1 @ w) + jnp_.sum(x2 @ w)
        return lib.make_jaxpr(lib.grad(loss))(jnp_.ones((4, 2)), jnp_.ones((8, 4)),
                                              jnp_.ones((8, 4)))
    out = printed(program, None)
    assert out[mjax] == out[jax]
    assert out[mjax].count("broadcast_in_dim 1.0:f32[]") == 2
