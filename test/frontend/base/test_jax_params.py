"""Equations read from a jaxpr carry JAX's parameters (names, order, the values JAX
shows for those mjax's ops do not keep), binding a primitive with JAX's parameters works,
Var/Literal print as JAX's do, and jax._src.util's list helpers behave as JAX's: what
JAX's "Writing custom interpreters" notebook and libraries' jaxpr interpreters use."""
import jax
import jax._src.util as jax_util
import numpy as np
import pytest

import mjax
import mjax._src.util as mjax_util

_PROGRAMS = {
    "dot": lambda jnp, lax: lambda x, v: jnp.dot(x, v),
    "broadcast": lambda jnp, lax: lambda x, v: jnp.ones(5) + x.sum(),
    "reshape": lambda jnp, lax: lambda x, v: x.reshape(3, 4),
    "astype": lambda jnp, lax: lambda x, v: x.astype(jnp.int32),
    "reduce_sum": lambda jnp, lax: lambda x, v: x.sum(0),
    "reduce_max": lambda jnp, lax: lambda x, v: x.max(1),
    "slice": lambda jnp, lax: lambda x, v: x[1:3],
    "iota": lambda jnp, lax: lambda x, v: lax.iota(jnp.int32, 4),
    "unary": lambda jnp, lax: lambda x, v: jnp.tanh(x) + jnp.log1p(x) * jnp.exp(x),
    "conv": lambda jnp, lax: lambda x, v: lax.conv_general_dilated(
        x[None, None], x[None, None], (1, 1), "SAME"),
}


def _eqns(lib, name):
    f = _PROGRAMS[name](lib.numpy, lib.lax)
    x, v = np.ones((4, 3), np.float32), np.ones(3, np.float32)
    return lib.make_jaxpr(f)(x, v).jaxpr.eqns


@pytest.mark.parametrize("name", sorted(_PROGRAMS))
def test_equation_params_are_jaxs(name):
    mine = [(str(e.primitive), list(e.params)) for e in _eqns(mjax, name)]
    theirs = [(str(e.primitive), list(e.params)) for e in _eqns(jax, name)]
    assert mine == theirs


def test_params_values_jax_shows():
    (dot,), (jdot,) = _eqns(mjax, "dot"), _eqns(jax, "dot")
    # (None, unless jax_default_matmul_precision is set, as the suite sets it on a TPU:
    # then that precision, as JAX shows it)
    assert str(dot.params["precision"]) == str(jdot.params["precision"])
    if mjax.config.read("jax_default_matmul_precision") is None:
        assert dot.params["precision"] is None
    assert dot.params["out_sharding"] is None
    assert dot.params["preferred_element_type"] == np.dtype("float32")
    (cast,) = _eqns(mjax, "astype")
    assert cast.params["weak_type"] is False and cast.params["sharding"] is None
    # (a convolution's preferred type stays None when not given, as JAX shows it)
    mine, theirs = (next(e for e in _eqns(lib, "conv")
                         if str(e.primitive) == "conv_general_dilated") for lib in (mjax, jax))
    assert mine.params["preferred_element_type"] is theirs.params["preferred_element_type"]


@pytest.mark.parametrize("name", sorted(_PROGRAMS))
def test_rebinding_equations_with_their_params(name):
    # A jaxpr interpreter: each equation's primitive bound with its (JAX-style) params.
    x, v = np.arange(12.0, dtype=np.float32).reshape(4, 3) / 7, np.ones(3, np.float32)
    closed = mjax.make_jaxpr(_PROGRAMS[name](mjax.numpy, mjax.lax))(x, v)
    env = dict(zip(closed.jaxpr.invars, (x, v)))
    read = lambda a: a.val if type(a) is mjax.extend.core.Literal else env[a]  # noqa: E731
    for eqn in closed.jaxpr.eqns:
        outs = eqn.primitive.bind(*map(read, eqn.invars), **eqn.params)
        env.update(zip(eqn.outvars, outs if eqn.primitive.multiple_results else [outs]))
    got = [env[o] for o in closed.jaxpr.outvars]
    want = _PROGRAMS[name](jax.numpy, jax.lax)(x, v)
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want), rtol=1e-6)


def test_binding_jax_only_params():
    x = np.ones((5, 10), np.float32)
    out = mjax.lax.dot_general_p.bind(x, np.ones(10, np.float32),
                                      dimension_numbers=(((1,), (0,)), ((), ())),
                                      precision=None,
                                      preferred_element_type=np.dtype("float32"),
                                      out_sharding=None)
    np.testing.assert_array_equal(np.asarray(out), np.full(5, 10.0, np.float32))
    out = mjax.lax.broadcast_in_dim_p.bind(np.float32(1), shape=(3,),
                                           broadcast_dimensions=(), sharding=None)
    np.testing.assert_array_equal(np.asarray(out), np.ones(3, np.float32))


def test_var_and_literal_reprs_as_jaxs():
    for lib in (mjax, jax):
        eqn = lib.make_jaxpr(lambda x: x + 1)(5).jaxpr.eqns[0]
        var, lit = eqn.invars
        assert repr(var) == f"Var(id={id(var)}):int32[]"
        assert repr(lit) == "Literal(TypedInt(1, dtype=int32))"
        eqn = lib.make_jaxpr(lambda x: x * 2.0)(np.ones(3, np.float32)).jaxpr.eqns[0]
        assert repr(eqn.invars[1]) == "Literal(2.0)"


@pytest.mark.parametrize("fn, args", [
    ("safe_map", (lambda a, b: a + b, [1, 2], [3, 4])),
    ("safe_zip", ([1, 2], "ab")),
    ("unzip2", ([(1, "a"), (2, "b")],)),
    ("unzip3", ([(1, "a", 0.5), (2, "b", 1.5)],)),
    ("split_list", ([1, 2, 3, 4, 5], [2, 1])),
    ("partition_list", ([True, False, True], ["a", "b", "c"])),
    ("merge_lists", ([True, False, True], ["b"], ["a", "c"])),
    ("subvals", ((1, 2, 3), [(0, 9), (2, 7)])),
    ("concatenate", ([[1], [2, 3], []],)),
])
def test_src_util_matches_jax(fn, args):
    assert getattr(mjax_util, fn)(*args) == getattr(jax_util, fn)(*args)


@pytest.mark.parametrize("fn, args", [("safe_map", (lambda a, b: a, [1, 2], [3])),
                                      ("safe_zip", ([1, 2], [3]))])
def test_src_util_length_mismatch_raises(fn, args):
    with pytest.raises(ValueError):
        getattr(jax_util, fn)(*args)
    with pytest.raises(ValueError):
        getattr(mjax_util, fn)(*args)


def test_convert_element_type_weak_type_param_round_trips():
    # JAX shows a cast's result weak type as `weak_type=`; binding it back keeps it.
    f = lambda x: (x + 1.5).astype(np.int32) * 2  # noqa: E731
    for lib in (mjax, jax):
        cast = next(e for e in lib.make_jaxpr(lambda x: x * 2.5)(np.int32(3)).jaxpr.eqns
                    if str(e.primitive) == "convert_element_type")
        assert cast.params["weak_type"] is True
        out = cast.primitive.bind(np.int32(3), **cast.params)
        assert out.weak_type and out.dtype == np.float32
    strong = [e.params["weak_type"] for e in mjax.make_jaxpr(f)(1.0).jaxpr.eqns
              if str(e.primitive) == "convert_element_type"]
    assert strong == [e.params["weak_type"] for e in jax.make_jaxpr(f)(1.0).jaxpr.eqns
                      if str(e.primitive) == "convert_element_type"]
