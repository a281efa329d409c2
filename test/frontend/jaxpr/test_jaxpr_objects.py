"""make_jaxpr(...).jaxpr as JAX's jaxpr objects (mjax/jaxpr/objects.py): the equations'
primitives and parameters, eval_jaxpr / jaxpr_as_fun (eagerly, under jit, grad and vmap),
the bodies of control flow as ClosedJaxprs, custom rules kept through evaluation, and a
custom interpreter written the way JAX's documentation writes one."""
from __future__ import annotations

import jax
import jax.extend
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import lax
from mjax.extend import core as ext
from mjax.extend.core import primitives as P
from frontend_util import tol


def _control_flow(x, y):
    def body(c, xi):
        return c + jnp.sin(xi), c * 2

    c, ys = lax.scan(body, 0.0, x)
    w = lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 1.5), (0, y))
    k = lax.cond(x[0] > 0, lambda a: a * 2, lambda a: a - 1, y)
    j = mjax.jit(lambda a: a ** 2)(y)
    s = jnp.sort(x)
    r = lax.reduce(x, 1.0, lambda a, b: a * b, (0,))
    big = jnp.arange(5.0) * x.sum()     # (a captured constant)
    return c, ys, w, k, j, s, r, big, jnp.tanh(x) @ x


X = np.array([-1.0, 0.5, 2.0, 3.0], np.float32)
Y = np.float32(3.0)


def test_eval_jaxpr_matches_the_function():
    closed = mjax.make_jaxpr(_control_flow)(X, Y)
    got = mjax.core.eval_jaxpr(closed.jaxpr, closed.consts, X, Y)
    want = mjax.tree.leaves(_control_flow(X, Y))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
    # staged: under jit, the equations are traced again
    jitted = mjax.jit(lambda x, y: ext.jaxpr_as_fun(closed)(x, y))(X, Y)
    for g, w in zip(jitted, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def test_grad_and_vmap_through_eval_jaxpr():
    f = lambda x: jnp.sum(jnp.sin(x) * x) + lax.cond(x[0] > 0, jnp.sum, jnp.prod, x)  # noqa
    closed = mjax.make_jaxpr(f)(X)
    g = mjax.grad(lambda x: ext.jaxpr_as_fun(closed)(x)[0])
    np.testing.assert_allclose(np.asarray(g(X)), np.asarray(mjax.grad(f)(X)), rtol=1e-6)
    xs = np.stack([X, -X, X * 2])
    np.testing.assert_allclose(np.asarray(mjax.vmap(g)(xs)),
                               np.asarray(mjax.vmap(mjax.grad(f))(xs)), rtol=1e-6)


def test_equations_name_jax_primitives():
    f = lambda x: jnp.sin(x) * 2.0 + jnp.cos(x)   # noqa: E731
    ours = mjax.make_jaxpr(f)(X).jaxpr
    theirs = jax.make_jaxpr(lambda x: jjnp.sin(x) * 2.0 + jjnp.cos(x))(X).jaxpr
    assert [e.primitive.name for e in ours.eqns] == [e.primitive.name for e in theirs.eqns]
    mul = ours.eqns[1]
    assert mul.primitive is lax.mul_p
    # the Python scalar is a scalar literal, as in JAX's jaxpr
    assert isinstance(mul.invars[1], ext.Literal) and mul.invars[1].aval.shape == ()
    assert float(mul.invars[1].val) == 2.0
    assert mul.invars[0] is ours.eqns[0].outvars[0]
    assert [v.aval.shape for v in ours.invars] == [(4,)]
    assert str(ours) == str(mjax.make_jaxpr(f)(X))   # prints as make_jaxpr does


def test_bodies_are_closed_jaxprs_under_jax_names():
    eqns = {e.primitive.name: e for e in mjax.make_jaxpr(_control_flow)(X, Y).jaxpr.eqns}
    assert eqns["scan"].params["num_carry"] == 1 and eqns["scan"].params["length"] == 4
    assert isinstance(eqns["scan"].params["jaxpr"], ext.ClosedJaxpr)
    assert len(eqns["cond"].params["branches"]) == 2
    assert {"cond_jaxpr", "body_jaxpr", "cond_nconsts", "body_nconsts"} <= set(
        eqns["while"].params)
    jit_eqn = eqns["jit"]
    assert jit_eqn.primitive is P.jit_p and jit_eqn.primitive is P.pjit_p
    inner = jit_eqn.params["jaxpr"].jaxpr
    assert [e.primitive.name for e in inner.eqns] == ["integer_pow"]
    assert list(ext.jaxprs_in_params(jit_eqn.params)) == [inner]
    assert eqns["sort"].primitive.multiple_results


def test_custom_rules_survive_evaluation():
    @mjax.custom_jvp
    def f(x):
        return jnp.sin(x)

    f.defjvp(lambda p, t: (f(p[0]), 10.0 * t[0]))

    @mjax.custom_vjp
    def g(x):
        return jnp.cos(x)

    g.defvjp(lambda x: (g(x), x), lambda r, ct: (ct * 100.0,))
    closed = mjax.make_jaxpr(lambda x: f(x) * 2 + g(x))(1.0)
    assert [e.primitive.name for e in closed.eqns] == ["custom_jvp_call", "mul",
                                                       "custom_vjp_call", "add"]
    fun = ext.jaxpr_as_fun(closed)
    np.testing.assert_allclose(float(fun(1.0)[0]), 2 * np.sin(1.0) + np.cos(1.0), rtol=1e-6)
    assert float(mjax.grad(lambda x: fun(x)[0])(1.0)) == pytest.approx(120.0)


def test_user_primitive_equation_is_the_users():
    prim = ext.Primitive("twice_plus")
    prim.def_impl(lambda x, *, k: 2 * x + k)
    prim.def_abstract_eval(lambda x, *, k: x)
    closed = mjax.make_jaxpr(lambda x: prim.bind(x, k=3) + 1)(X)
    eqn = closed.eqns[0]
    assert eqn.primitive is prim and eqn.params == {"k": 3}
    np.testing.assert_allclose(np.asarray(ext.jaxpr_as_fun(closed)(X)[0]), 2 * X + 4)


def test_a_jaxpr_built_by_hand():
    a, b = ext.Var(mjax.core.ShapedArray((3,), np.float32)), None
    gensym = ext.gensym()
    b, c = gensym(a.aval), gensym(a.aval)
    eqns = [ext.new_jaxpr_eqn([a, ext.Literal(np.float32(3.0), mjax.core.ShapedArray(
                (), np.float32))], [b], lax.mul_p, {}, ext.no_effects),
            ext.new_jaxpr_eqn([b], [c], lax.exp_p, {}, ext.no_effects)]
    jaxpr = ext.Jaxpr([], [a], [c], eqns)
    x = np.array([0.0, 0.1, 0.2], np.float32)
    np.testing.assert_allclose(np.asarray(ext.jaxpr_as_fun(ext.ClosedJaxpr(jaxpr, []))(x)[0]),
                               np.exp(3 * x), rtol=1e-6)
    assert "mul" in str(jaxpr) and "exp" in str(jaxpr)
    with pytest.raises(TypeError, match="takes 0 constants and 1 arguments"):
        mjax.core.eval_jaxpr(jaxpr, [], x, x)


def _inverse(fun):
    """A custom interpreter in the style of JAX's "Writing custom Jaxpr interpreters":
    evaluates the jaxpr backwards with each primitive's inverse."""
    inverses = {lax.exp_p: jnp.log, lax.tanh_p: jnp.arctanh}

    def wrapped(*args):
        closed = mjax.make_jaxpr(fun)(*args)
        env = {}
        for var, val in zip(closed.jaxpr.outvars, args):
            env[var] = val
        for eqn in closed.jaxpr.eqns[::-1]:
            env[eqn.invars[0]] = inverses[eqn.primitive](env[eqn.outvars[0]])
        return [env[v] for v in closed.jaxpr.invars]
    return wrapped


def test_custom_interpreter_inverts_a_function():
    f = lambda x: jnp.exp(jnp.tanh(x))   # noqa: E731
    x = np.array([0.1, -0.3, 0.7], np.float32)
    # jax's values of the same inverse on the same platform, and x itself: log(exp(t))
    # loses a few ulps of exp's result on the CPU; a TPU's exp is further from exact (its
    # relative error, about 1e-5, becomes an absolute one in t: up to 3e-5 in x here)
    want = jjnp.arctanh(jjnp.log(jjnp.exp(jjnp.tanh(x))))
    (back,) = _inverse(f)(f(x))
    (jitted,) = mjax.jit(_inverse(f))(f(x))
    for got in (back, jitted):
        np.testing.assert_allclose(np.asarray(got), want, rtol=tol(1e-6, 1e-5))
        np.testing.assert_allclose(np.asarray(got), x, rtol=tol(1e-5, 0), atol=tol(0, 1e-4))


def test_size_one_broadcast_is_taken_by_the_primitive_as_jax():
    # JAX's elementwise primitives take a same-rank operand with size-1 dims as it is (its
    # jaxpr has `mul a:f32[1,3] b:f32[2,3]`), and so do their binds here; `x[None]` is
    # JAX's broadcast_in_dim equation
    a = np.ones((1, 3), np.float32)
    b = np.arange(6, dtype=np.float32).reshape(2, 3)
    def f(lax_):
        return lambda a, b: lax_.mul(a, b[None]) + 1.0
    closed = mjax.make_jaxpr(f(lax))(a, b[0])
    want = jax.make_jaxpr(f(jax.lax))(a, b[0])
    assert [e.primitive.name for e in closed.eqns] == [e.primitive.name for e in want.eqns] \
        == ["broadcast_in_dim", "mul", "add"]
    assert closed.eqns[0].params["broadcast_dimensions"] == \
        want.eqns[0].params["broadcast_dimensions"]
    for g in (ext.jaxpr_as_fun(closed), mjax.jit(ext.jaxpr_as_fun(closed))):
        np.testing.assert_array_equal(np.asarray(g(a, b[0])[0]), a * b[0][None] + 1)
    closed = mjax.make_jaxpr(lambda a, b: lax.mul(a, b))(a, b)
    assert [e.primitive.name for e in closed.eqns] == ["mul"]
    np.testing.assert_array_equal(np.asarray(ext.jaxpr_as_fun(closed)(a, b)[0]), a * b)


def test_implicit_broadcast_read_by_another_primitive_stays_an_equation():
    # (a broadcast feeding an elementwise equation is that equation's business; one that
    # another primitive reads, here expand_dims, is an equation of its own: equinox's
    # closure_convert evaluates such jaxprs)
    f = lambda x, s: (jnp.expand_dims(jnp.broadcast_to(s, (3,)), 0), x + s)   # noqa: E731
    closed = mjax.make_jaxpr(f)(jnp.ones(3), 2.0)
    got = ext.jaxpr_as_fun(closed)(jnp.arange(3.0), 2.0)
    np.testing.assert_array_equal(np.asarray(got[0]), np.full((1, 3), 2.0))
    np.testing.assert_array_equal(np.asarray(got[1]), np.arange(3.0) + 2)
    assert [e.primitive.name for e in closed.eqns].count("broadcast_in_dim") == 2


def test_equations_name_their_scopes_and_closed_jaxprs_forward_as_jax():
    # (haiku's jaxpr_info reads eqn.source_info.name_stack and closed jaxprs' constvars)
    got = []
    for J in (jax, mjax):
        def f(x):
            with J.named_scope("outer"):
                with J.named_scope("inner"):
                    y = J.numpy.sin(x)
                return y * 2 + J.jit(lambda v: v - 1)(x)
        closed = J.make_jaxpr(f)(1.0)
        inner = next(e for e in closed.eqns if e.primitive.name in ("jit", "pjit"))
        got.append(([(e.primitive.name, str(e.source_info.name_stack)) for e in closed.eqns],
                    len(closed.invars), len(closed.outvars), len(closed.constvars),
                    len(inner.params["jaxpr"].constvars), closed.is_high))
    assert got[1] == got[0]


def _eval_with_bind_params(lib, closed, *args):
    """An interpreter written as equinox's finalisation is (JAX >= 0.9.2): each equation
    bound with get_bind_params's parameters, a custom_jvp call through its subfuns."""
    env = dict(zip(closed.jaxpr.constvars, closed.consts))
    env.update(zip(closed.jaxpr.invars, args))

    def read(v):
        return v.val if isinstance(v, lib.extend.core.Literal) else env[v]
    for eqn in closed.jaxpr.eqns:
        params = eqn.primitive.get_bind_params(eqn.params)
        assert isinstance(params, dict)
        ins = [read(v) for v in eqn.invars]
        if eqn.primitive is lib.custom_derivatives.custom_jvp_call_p:
            fun, jvp_fun = params["subfuns"]
            outs = fun.call_wrapped(*ins)
            outs_jvp = jvp_fun.call_wrapped(*ins, *[lib.numpy.ones_like(x) for x in ins])
            outs = [*outs, *outs_jvp, *eqn.primitive.bind(*ins, **params)]
        else:
            outs = eqn.primitive.bind(*ins, **params)
        outs = outs if eqn.primitive.multiple_results else [outs]
        env.update(zip(eqn.outvars, outs))
    return [read(v) for v in closed.jaxpr.outvars]


def test_get_bind_params_as_jax():
    """get_bind_params gives one dict (JAX >= 0.9.2); a custom_jvp call's `subfuns` are
    its function and its JVP under the user's rule, and binding with them keeps the rule
    (grad through the interpreter uses it)."""
    got = {}
    for lib in (mjax, jax):
        @lib.custom_jvp
        def f(x):
            return lib.numpy.sin(x) * 2

        @f.defjvp
        def f_jvp(primals, tangents):
            return f(primals[0]), tangents[0] * 3.0     # (not sin's: the rule must apply)

        def g(x):
            return f(x) + x
        closed = lib.make_jaxpr(g)(1.5)
        outs = _eval_with_bind_params(lib, closed, np.float32(1.5))
        grad = lib.grad(lambda x: _eval_with_bind_params(lib, closed, x)[0])(np.float32(1.5))
        got[lib.__name__] = [np.asarray(o) for o in outs] + [np.asarray(grad)]
    for m, j in zip(got["mjax"], got["jax"]):
        np.testing.assert_allclose(m, j, rtol=1e-6)
