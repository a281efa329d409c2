"""mjax.linear_transpose against jax.linear_transpose: values, weak types, errors."""
import importlib

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mjnp


def _cases(jx, jnp):
    lt = jx.linear_transpose
    return {
        "sin": lambda: lt(jnp.sin, 1.0)(1.0),
        "affine": lambda: lt(lambda x: x + 1., 1.0)(1.0),
        "int to float": lambda: lt(lambda x: x.astype(jnp.float32), 1)(3.),
        "tuple output": lambda: lt(lambda x: (x, 2. * x), 1.0)((1.0, 2.0)),
        "cotangent tree": lambda: lt(lambda x: (x, x), 1.0)(1.0),
        "cotangent shape": lambda: lt(lambda x: x * 2., jnp.ones(3))(jnp.ones(2)),
        "cotangent dtype": lambda: lt(lambda x: x * 2., jnp.ones(3))(
            jnp.ones(3, jnp.int32)),
        "two arguments": lambda: lt(lambda x, y: x * 2. + y, jnp.ones(3), jnp.ones(3))(
            jnp.arange(3.)),
        "ShapeDtypeStruct": lambda: lt(lambda x: x * 2.,
                                       jx.ShapeDtypeStruct((3,), jnp.float32))(jnp.ones(3)),
        "under jit": lambda: jx.jit(lt(lambda x: x * 2., jnp.ones(3)))(jnp.arange(3.)),
        "constant": lambda: lt(lambda x: jnp.ones(3), jnp.ones(3))(jnp.ones(3)),
        "matmul": lambda: lt(lambda x: jnp.arange(6.).reshape(2, 3) @ x, jnp.ones(3))(
            jnp.array([1., 2.])),
        "x times x": lambda: lt(lambda x: x * x, 1.0)(1.0),
        # (a nonlinear function is refused when its transpose is called, not made)
        "sin made, not called": lambda: (lt(jnp.sin, 1.0), jnp.ones(2))[1],
        "affine": lambda: lt(lambda x: 2. * x + 1., 1.0)(1.0),
        "complex": lambda: lt(lambda x: x * (1 + 2j), jnp.ones(2, jnp.complex64))(
            jnp.ones(2, jnp.complex64)),
        "reduce_axes": lambda: lt(lambda x: x, 1.0, reduce_axes=("i",)),
        "strong cotangent": lambda: lt(lambda x: x * 2., 1.0)(jnp.float32(1.0)),
        "grad through": lambda: jx.grad(lambda c: lt(lambda x: x * c, 1.0)(1.0)[0])(3.0),
        "fori_loop": lambda: lt(lambda x: jx.lax.fori_loop(
            0, 3, lambda i, c: c * 2. + i.astype(jnp.float32) * 0, x), 1.0)(1.0),
        "cond": lambda: lt(lambda x: jx.lax.cond(True, lambda v: v * 2., lambda v: -v, x),
                           1.0)(1.0),
        "sin in a cond": lambda: lt(lambda x: jx.lax.cond(True, jnp.sin, lambda v: -v, x),
                                    1.0)(1.0),
        "jit inside": lambda: lt(jx.jit(lambda x: jnp.cumsum(x)[::-1] / 2.), jnp.ones(3))(
            jnp.arange(3.)),
        "dict input": lambda: lt(lambda d: d["a"] + 3. * d["b"], {"a": 1., "b": 2.})(3.),
        "not callable": lambda: lt(3, 1.0),
        # (transposed op by op, as JAX: a custom_jvp function through its primal, never
        # its JVP rule; a custom_vjp function has no transpose rule)
        "custom_jvp": lambda: lt(_custom_jvp(jx), 1.0)(1.0),
        "custom_vjp": lambda: lt(_custom_vjp(jx), 1.0)(1.0),
        "custom_vjp on a constant": lambda: lt(lambda x: x * _custom_vjp(jx)(2.), 1.0)(1.0),
        "int to int": lambda: lt(lambda x: 2 * x, 1)(3),
        "int array sum": lambda: lt(lambda x: jnp.sum(x * 3), jnp.ones(3, jnp.int32))(
            jnp.int32(2)),
        "scan": lambda: lt(lambda x: jx.lax.scan(lambda c, _: (c * 2., None), x, None,
                                                 length=3)[0], 1.0)(1.0),
        "vmap": lambda: lt(jx.vmap(lambda y: y * 2.), jnp.ones(2))(jnp.ones(2)),
        "checkpoint": lambda: lt(jx.checkpoint(lambda x: 2. * x), 1.0)(1.0),
        "transpose of a transpose": lambda: lt(
            lambda y: lt(_custom_jvp(jx), 1.0)(y)[0], 1.0)(1.0),
    }


def _custom_jvp(jx):
    @jx.custom_jvp
    def f(x):
        return 2. * x
    f.defjvp(lambda p, t: (f(p[0]), 3. * t[0]))
    return f


def _custom_vjp(jx):
    @jx.custom_vjp
    def g(x):
        return 2. * x
    g.defvjp(lambda x: (g(x), None), lambda _, ct: (5. * ct,))
    return g


def _run(fn):
    try:
        return True, fn()
    except Exception as e:  # noqa: BLE001  (compared with what jax raised)
        return False, e


@pytest.mark.parametrize("case", sorted(_cases(jax, jjnp)))
def test_linear_transpose_matches_jax(case):
    ok_j, want = _run(_cases(jax, jjnp)[case])
    ok_m, got = _run(_cases(mjax, mjnp)[case])
    if not ok_j:
        if isinstance(want, AssertionError):   # JAX's internal assertion for x * x
            assert not ok_m and isinstance(got, NotImplementedError), got
            return
        assert not ok_m, f"jax raised {want!r}, mjax returned {got!r}"
        assert type(got) is type(want), (got, want)
        if isinstance(want, NotImplementedError):
            assert str(got) == str(want)
        else:
            assert str(got).split(",")[0] == str(want).split(",")[0]
        return
    assert ok_m, got
    assert jax.tree.structure(got) == jax.tree.structure(want)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
        assert g.dtype == w.dtype
        assert getattr(g, "weak_type", False) == getattr(w, "weak_type", False)


def test_transpose_of_a_linearization_is_the_vjp():
    # JAX's autodiff cookbook: linear_transpose(f_jvp) equals vjp(f).
    w = np.array([0.3, -1.2, 2.0], np.float32)

    def f(w):
        return mjnp.tanh(w * 2.).sum() * w
    y, f_jvp = mjax.linearize(f, w)
    u = np.array([1.0, -2.0, 0.5], np.float32)
    (got,) = mjax.linear_transpose(f_jvp, w)(u)
    (want,) = jax.vjp(lambda w: jjnp.tanh(w * 2.).sum() * w, w)[1](u)
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_vjp_of_a_linearization_eagerly_and_under_jit():
    # The linearization's functions are named after the user's (here both `f`): the vjp of
    # it must derive its own, not reuse the linearization's (it ran with the wrong inputs).
    x = np.array([0.5, 1.0], np.float32)

    def f(x):
        return mjnp.sin(x) * x
    _, f_jvp = mjax.linearize(f, x)
    t = np.array([1.0, -2.0], np.float32)
    deriv = np.cos(x) * x + np.sin(x)                  # f is elementwise: J = diag(deriv)
    out, pullback = mjax.vjp(f_jvp, t)
    np.testing.assert_allclose(out, deriv * t, rtol=1e-6)
    np.testing.assert_allclose(pullback(t)[0], deriv * t, rtol=1e-6)
    np.testing.assert_allclose(mjax.jit(lambda t: mjax.vjp(f_jvp, t)[1](t))(t)[0], deriv * t,
                               rtol=1e-6)
    np.testing.assert_allclose(mjax.grad(lambda t: f_jvp(t).sum())(t), deriv, rtol=1e-6)


def _scale_primitive(jx):
    """A user primitive `2 * x` with an impl, an abstract eval, a lowering and a
    transpose rule that (deliberately) gives 10 * ct, but no JVP rule: linear_transpose
    calls the transpose rule, as JAX's does."""
    core = importlib.import_module(f"{jx.__name__}.extend.core")
    ad = importlib.import_module(f"{jx.__name__}.interpreters.ad")
    mlir = importlib.import_module(f"{jx.__name__}.interpreters.mlir")
    p = core.Primitive(f"scale_{jx.__name__}")
    p.def_impl(lambda x: 2. * x)
    p.def_abstract_eval(lambda x: x)
    mlir.register_lowering(p, mlir.lower_fun(lambda x: 2. * x, multiple_results=False))
    ad.primitive_transposes[p] = lambda ct, x: [10. * ct]
    return p


def test_a_user_primitive_is_transposed_by_its_transpose_rule():
    want = jax.linear_transpose(_scale_primitive(jax).bind, 1.0)(1.0)
    got = mjax.linear_transpose(_scale_primitive(mjax).bind, 1.0)(1.0)
    assert float(want[0]) == 10.0
    np.testing.assert_allclose(np.asarray(got[0]), np.asarray(want[0]))
    # (and under jit, with the primitive inside another function)
    got = mjax.jit(mjax.linear_transpose(
        lambda x: _scale_primitive(mjax).bind(x) * 3., 1.0))(1.0)
    np.testing.assert_allclose(np.asarray(got[0]), 30.0)
