"""The autodiff API against `jax` (test-only oracle): grad, value_and_grad, jvp, vjp,
linearize, jacfwd, jacrev, hessian, custom_jvp, custom_vjp, stop_gradient, checkpoint.

Every case runs three ways: mjax eagerly, mjax under jit, and jax; values, dtypes and
pytree structure must agree. Errors are checked for JAX's exception type and text.
"""
from __future__ import annotations

import functools
import re

import numpy as np
import pytest
from jaxlib.mlir import ir

import mjax
import mjax.numpy as mnp
from mjax.test_util import check_grads

from frontend_util import x64

import jax  # noqa: E402  (the test-only oracle: missing, these tests fail)
import jax.numpy as jnp  # noqa: E402
import jax._src.interpreters.ad  # noqa: E402

import mjax._src.interpreters.ad  # noqa: E402

X = np.array([0.5, 1.0, 1.5], np.float32)
Y = np.array([0.25, -0.5, 2.0], np.float32)
Z = np.array([0.3 + 0.5j, 0.7 + 0.2j], np.complex64)


# ---- comparing results ------------------------------------------------------------
def _to_numpy_tree(tree, tu):
    return tu.tree_map(lambda x: np.asarray(x), tree)


def assert_same(got, want, rtol=2e-6, atol=1e-6, what=""):
    got_np = _to_numpy_tree(got, mjax.tree_util)
    want_np = _to_numpy_tree(want, jax.tree_util)
    gs, ws = jax.tree_util.tree_structure(got_np), jax.tree_util.tree_structure(want_np)
    assert gs == ws, f"{what}: tree structure {gs} != jax's {ws}"
    for g, w in zip(jax.tree_util.tree_leaves(got_np), jax.tree_util.tree_leaves(want_np)):
        assert g.shape == w.shape, f"{what}: shape {g.shape} != jax's {w.shape}"
        assert g.dtype == w.dtype, f"{what}: dtype {g.dtype} != jax's {w.dtype}"
        if g.dtype == jax.dtypes.float0:
            continue
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=what)


# ---- cases: build(lib, np_module) -> (function, args) ------------------------------
def _cj(lib, n):
    @lib.custom_jvp
    def f(a, b):
        return n.sin(a) * b

    @f.defjvp
    def f_jvp(primals, tangents):
        a, b = primals
        ta, tb = tangents
        return f(a, b), 2.0 * n.cos(a) * b * ta + n.sin(a) * tb   # deliberately not sin'
    return f


def _cj_defjvps(lib, n):
    f = lib.custom_jvp(lambda a, b: a * b)
    f.defjvps(lambda t, ans, a, b: 3.0 * t * b, None)
    return f


def _cj_nondiff(lib, n):
    @functools.partial(lib.custom_jvp, nondiff_argnums=(0,))
    def f(k, a):
        return n.sin(a) * k

    @f.defjvp
    def f_jvp(k, primals, tangents):
        return f(k, primals[0]), 5.0 * k * tangents[0]
    return f


def _cj_closure(lib, n, c):
    @lib.custom_jvp
    def f(a):
        return a * c

    @f.defjvp
    def f_jvp(primals, tangents):
        return f(primals[0]), 10.0 * tangents[0] * c
    return f


def _cv(lib, n):
    @lib.custom_vjp
    def f(a, b):
        return n.sin(a) * b

    def fwd(a, b):
        return f(a, b), {"cos": n.cos(a), "ab": (a, b), "none": None}

    def bwd(res, g):
        a, b = res["ab"]
        return 3.0 * res["cos"] * b * g, None
    f.defvjp(fwd, bwd)
    return f


def _cv_nondiff(lib, n):
    @functools.partial(lib.custom_vjp, nondiff_argnums=(1,))
    def f(a, k):
        return a * k

    f.defvjp(lambda a, k: (a * k, a), lambda k, res, g: (7.0 * k * g,))
    return f


def _cv_closure(lib, n, c):
    @lib.custom_vjp
    def f(y):
        return y * c
    f.defvjp(lambda y: (y * c, None), lambda res, g: (10.0 * g * c,))
    return f


def _mlp_loss(n, params, x):
    for w, b in params:
        x = n.tanh(x @ w + b)
    return n.sum(x ** 2)


CASES = {
    "grad": lambda lib, n: (lib.grad(lambda a: n.sum(n.sin(a) ** 2)), (X,)),
    "grad argnums tuple": lambda lib, n: (
        lib.grad(lambda a, b: n.sum(a * n.exp(b)), argnums=(0, 1)), (X, Y)),
    "grad argnums negative": lambda lib, n: (
        lib.grad(lambda a, b: n.sum(a * b ** 2), argnums=-1), (X, Y)),
    "grad has_aux pytree aux": lambda lib, n: (
        lib.grad(lambda a: (n.sum(a ** 2), {"mean": n.mean(a), "sq": [a * a]}),
                 has_aux=True), (X,)),
    "grad kwargs pass through": lambda lib, n: (
        lambda a, s: lib.grad(lambda a, scale=1.0: n.sum(a) * scale)(a, scale=s), (X, 3.0)),
    "grad pytree in": lambda lib, n: (
        lib.grad(lambda p: n.sum(p["w"] * p["b"][0]) + p["b"][1] * 2.0),
        ({"w": X, "b": (Y, np.float32(1.5))},)),
    "grad holomorphic": lambda lib, n: (
        lib.grad(lambda z: n.sum(z ** 2 + 1j * z), holomorphic=True), (Z,)),
    "grad complex in real out": lambda lib, n: (
        lib.grad(lambda z: n.sum(n.abs(z) ** 2)), (Z,)),
    "value_and_grad": lambda lib, n: (
        lib.value_and_grad(lambda a, b: n.sum(n.tanh(a) * b), (0, 1)), (X, Y)),
    "value_and_grad has_aux": lambda lib, n: (
        lib.value_and_grad(lambda a: (n.sum(a ** 3), a * 2.0), has_aux=True), (X,)),
    "grad of grad of grad": lambda lib, n: (
        lib.grad(lib.grad(lib.grad(lambda a: n.sin(a) * a ** 3))), (np.float32(0.7),)),
    "jvp": lambda lib, n: (lambda a, t: lib.jvp(n.sin, (a,), (t,)), (X, Y)),
    "jvp pytree": lambda lib, n: (
        lambda a, t: lib.jvp(lambda p: {"y": p[0] * p[1], "z": [n.cos(p[0])]},
                             ((a, a),), ((t, a),)), (X, Y)),
    "jvp has_aux": lambda lib, n: (
        lambda a, t: lib.jvp(lambda x: (x * 2.0, n.sum(x)), (a,), (t,), has_aux=True),
        (X, Y)),
    "vjp pytree out": lambda lib, n: (
        lambda a, b: lib.vjp(lambda x, y: {"p": x * y, "q": (n.sin(x),)}, a, b)[1](
            {"p": b, "q": (a,)}), (X, Y)),
    "vjp has_aux": lambda lib, n: (
        lambda a: (lambda r: (r[0], r[1](a), r[2]))(
            lib.vjp(lambda x: (n.exp(x), x.sum()), a, has_aux=True)), (X,)),
    "linearize": lambda lib, n: (
        lambda a, t: (lambda r: (r[0], r[1](t), r[1](a)))(lib.linearize(n.sin, a)), (X, Y)),
    "linearize two args": lambda lib, n: (
        lambda a, b: lib.linearize(lambda x, y: n.sin(x) * y, a, b)[1](b, a), (X, Y)),
    "jacfwd argnums tuple out": lambda lib, n: (
        lib.jacfwd(lambda a, b: (a * b, n.sum(a)), argnums=(0, 1)), (X, Y)),
    "jacrev argnums tuple out": lambda lib, n: (
        lib.jacrev(lambda a, b: (a * b, n.sum(a)), argnums=(0, 1)), (X, Y)),
    "jacrev dict": lambda lib, n: (lib.jacrev(lambda p: {"y": n.sin(p["a"])}), ({"a": X},)),
    "jacfwd dict": lambda lib, n: (lib.jacfwd(lambda p: {"y": n.sin(p["a"])}), ({"a": X},)),
    "jacfwd has_aux": lambda lib, n: (lib.jacfwd(lambda a: (a ** 2, a), has_aux=True), (X,)),
    "jacrev has_aux": lambda lib, n: (lib.jacrev(lambda a: (a ** 2, a), has_aux=True), (X,)),
    "jacfwd matrix": lambda lib, n: (lib.jacfwd(lambda a: n.tanh(a @ a.T)),
                                     (X.reshape(3, 1) * Y,)),
    "hessian": lambda lib, n: (lib.hessian(lambda a: n.sum(n.sin(a) * a ** 3)), (X,)),
    "hessian argnums tuple": lambda lib, n: (
        lib.hessian(lambda a, b: n.sum(a ** 3 * b), argnums=(0, 1)), (X, Y)),
    "stop_gradient": lambda lib, n: (
        lib.grad(lambda a: n.sum(a * lib.lax.stop_gradient(a ** 2))), (X,)),
    "custom_jvp grad": lambda lib, n: (
        lib.grad(lambda a, b: n.sum(_cj(lib, n)(a, b)), (0, 1)), (X, Y)),
    "custom_jvp jvp": lambda lib, n: (
        lambda a, t: lib.jvp(lambda x: _cj(lib, n)(x, 2.0), (a,), (t,)), (X, Y)),
    "custom_jvp call": lambda lib, n: (lambda a, b: _cj(lib, n)(a, b), (X, Y)),
    "custom_jvp defjvps": lambda lib, n: (
        lib.grad(lambda a, b: n.sum(_cj_defjvps(lib, n)(a, b)), (0, 1)), (X, Y)),
    "custom_jvp nondiff_argnums": lambda lib, n: (
        lib.grad(lambda a: n.sum(_cj_nondiff(lib, n)(3.0, a))), (X,)),
    "custom_jvp closes over array": lambda lib, n: (
        lib.grad(lambda a: n.sum(_cj_closure(lib, n, n.asarray(Y))(a))), (X,)),
    "custom_jvp closes over traced value": lambda lib, n: (
        lib.grad(lambda a, b: n.sum(_cj_closure(lib, n, b * 2.0)(a))), (X, Y)),
    "custom_vjp pytree residuals": lambda lib, n: (
        lib.grad(lambda a, b: n.sum(_cv(lib, n)(a, b)), (0, 1)), (X, Y)),
    "custom_vjp call": lambda lib, n: (lambda a, b: _cv(lib, n)(a, b), (X, Y)),
    "custom_vjp nondiff_argnums": lambda lib, n: (
        lib.grad(lambda a: n.sum(_cv_nondiff(lib, n)(a, 2.0))), (X,)),
    "custom_vjp closes over traced value": lambda lib, n: (
        lib.grad(lambda a, b: n.sum(_cv_closure(lib, n, b * 2.0)(a))), (X, Y)),
    "checkpoint": lambda lib, n: (
        lib.value_and_grad(lambda a: n.sum(lib.checkpoint(lambda y: n.sin(n.sin(y)))(a))),
        (X,)),
    "remat static_argnums": lambda lib, n: (
        lib.grad(lambda a: n.sum(lib.remat(lambda y, k: y ** k, static_argnums=(1,))(a, 3))),
        (X,)),
    "jvp of grad": lambda lib, n: (
        lambda a: lib.jvp(lib.grad(lambda x: n.sin(x) * x), (a,), (np.float32(1.0),)),
        (np.float32(0.5),)),
    "grad of jvp": lambda lib, n: (
        lib.grad(lambda a: lib.jvp(n.sin, (a,), (np.float32(1.0),))[1]), (np.float32(0.5),)),
    "grad of vjp": lambda lib, n: (
        lib.grad(lambda a: lib.vjp(n.sin, a)[1](np.float32(1.0))[0]), (np.float32(0.5),)),
    "grad of jit": lambda lib, n: (lib.grad(lib.jit(lambda a: n.sum(n.sin(a) * a))), (X,)),
    "grad of linearize": lambda lib, n: (
        lib.grad(lambda a: n.sum(lib.linearize(n.sin, a)[1](a))), (X,)),
}


@pytest.mark.parametrize("name", list(CASES))
def test_matches_jax_eager_and_jit(name):
    want_fn, args = CASES[name](jax, jnp)
    want = want_fn(*args)
    got_fn, _ = CASES[name](mjax, mnp)
    assert_same(got_fn(*args), want, what=f"{name} (eager)")
    got_fn, _ = CASES[name](mjax, mnp)
    assert_same(mjax.jit(got_fn)(*args), want, what=f"{name} (jit)")


def test_weak_typed_scalar_gradient():
    for lib in (mjax, jax):
        g = lib.grad(lambda a: a * a)(3.0)
        assert g.dtype == np.float32 and g.weak_type, lib.__name__


# ---- errors --------------------------------------------------------------------------
ERRORS = {
    "non-scalar output": (lambda lib, n: lib.grad(lambda a: a * 2.0)(X), TypeError,
                          "Gradient only defined for scalar-output functions. Output had "
                          "shape: (3,)."),
    "tuple output": (lambda lib, n: lib.grad(lambda a: (n.sum(a), n.sum(a)))(X), TypeError,
                     "Gradient only defined for scalar-output functions. Output was"),
    "integer input": (lambda lib, n: lib.grad(lambda a: a * 2.0)(3), TypeError,
                      "grad requires real- or complex-valued inputs (input dtype that is a "
                      "sub-dtype of np.inexact), but got int32. If you want to use Boolean- "
                      "or integer-valued inputs, use vjp or set allow_int to True."),
    "argnums out of range": (
        lambda lib, n: lib.grad(lambda a, b: n.sum(a * b), argnums=2)(X, X), TypeError,
        "differentiating with respect to argnums=2 requires at least 3 positional arguments "
        "to be passed by the caller, but got only 2 positional arguments."),
    "complex output": (lambda lib, n: lib.grad(lambda z: z ** 2)(1.0 + 2j), TypeError,
                       "grad requires real-valued outputs (output dtype that is a sub-dtype "
                       "of np.floating), but got complex64. For holomorphic differentiation, "
                       "pass holomorphic=True."),
    "integer output": (lambda lib, n: lib.grad(lambda a: n.sum(a > 0).astype(np.int32))(X),
                       TypeError, "but got int32. For differentiation of functions with "
                                  "integer outputs, use jax.vjp directly."),
    "holomorphic real input": (
        lambda lib, n: lib.grad(lambda z: z ** 2, holomorphic=True)(1.0), TypeError,
        "grad with holomorphic=True requires inputs with complex dtype, but got float32."),
    "has_aux without pair": (
        lambda lib, n: lib.grad(lambda a: n.sum(a), has_aux=True)(X), TypeError,
        "expected function with aux output to return a two-element tuple"),
    "not callable": (lambda lib, n: lib.grad(3), TypeError, "Expected a callable value, got 3"),
    "jvp primals not a tuple": (
        lambda lib, n: lib.jvp(n.sin, X, X), TypeError,
        "primal and tangent arguments to jax.jvp must be tuples or lists; found ndarray and "
        "ndarray."),
    "jvp tree mismatch": (
        lambda lib, n: lib.jvp(n.sin, (X,), ((X,),)), TypeError,
        "primal and tangent arguments to jax.jvp must have the same tree structure"),
    "jvp shape mismatch": (
        lambda lib, n: lib.jvp(n.sin, (X,), (X[:2],)), ValueError,
        "jvp called with different primal and tangent shapes;Got primal shape (3,) and "
        "tangent shape as (2,)"),
    "jvp dtype mismatch": (
        lambda lib, n: lib.jvp(n.sin, (X,), (np.ones(3, np.int32),)), TypeError,
        "primal and tangent arguments to jax.jvp do not match; dtypes must be equal"),
    "vjp cotangent tree": (
        lambda lib, n: lib.vjp(lambda a: (a, a), X)[1](X), ValueError,
        "unexpected tree structure"),
    "vjp cotangent shape": (
        lambda lib, n: lib.vjp(n.sin, X)[1](X[:2]), ValueError,
        "unexpected JAX type (e.g. shape/dtype) for argument to VJP function: got "
        "float32[2], but expected float32[3] because the corresponding output of the "
        "differentiated function had JAX type float32[3]"),
    "vjp called with two arguments": (
        lambda lib, n: lib.vjp(lambda a: (a, a), X)[1](X, X), TypeError,
        "must be called with a single argument"),
    "linearize tangent shape": (
        lambda lib, n: lib.linearize(n.sin, X)[1](X[:2]), ValueError,
        "linearized function called on tangent values inconsistent with the original "
        "primal values"),
    "jacfwd integer input": (
        lambda lib, n: lib.jacfwd(lambda a: a * 2)(np.arange(3)), TypeError,
        "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
        "np.floating), but got int32."),
    "jacfwd complex input": (
        lambda lib, n: lib.jacfwd(lambda a: a * 2)(Z), TypeError,
        "jacfwd requires real-valued inputs (input dtype that is a sub-dtype of "
        "np.floating), but got complex64."),
    "jacrev integer input": (
        lambda lib, n: lib.jacrev(lambda a: a * 2)(np.arange(3)), TypeError,
        "jacrev requires real- or complex-valued inputs"),
    "jacrev complex output": (
        lambda lib, n: lib.jacrev(lambda a: a * 1j)(X), TypeError,
        "jacrev requires real-valued outputs (output dtype that is a sub-dtype of "
        "np.floating), but got complex64."),
    "custom_vjp bwd wrong length": (
        lambda lib, n: lib.grad(lambda a: n.sum(_bad_bwd(lib)(a, X)))(X), TypeError,
        "Custom VJP bwd rule must produce an output with the same container (pytree) "
        "structure as the args tuple of the primal function"),
    "defjvp missing": (lambda lib, n: lib.custom_jvp(n.sin)(X), AttributeError,
                       "No JVP defined for custom_jvp function sin using defjvp."),
}


def _bad_bwd(lib):
    f = lib.custom_vjp(lambda a, b: a * b)
    f.defvjp(lambda a, b: (a * b, None), lambda r, g: (g,))
    return f


@pytest.mark.parametrize("name", list(ERRORS))
def test_errors_match_jax(name):
    fn, exc, text = ERRORS[name]
    with x64(name == "jvp dtype mismatch"):
        with pytest.raises(exc) as jax_err:
            fn(jax, jnp)
        assert text in str(jax_err.value), f"oracle drifted: {jax_err.value}"
        with pytest.raises(exc, match=re.escape(text)):
            fn(mjax, mnp)


def test_errors_under_jit():
    with pytest.raises(TypeError, match=re.escape("Output had shape: (3,).")):
        mjax.jit(lambda a: mjax.grad(lambda x: x * 2.0)(a))(X)
    with pytest.raises(TypeError, match="grad requires real- or complex-valued inputs"):
        mjax.jit(lambda a: mjax.grad(lambda x: x * 2.0)(a))(np.int32(3))


def test_jvp_dtype_mismatch_float64_tangent_under_x64():
    with x64():
        msg = ("Got primal dtype float32 and so expected tangent dtype float32, but got "
               "tangent dtype float64 instead.")
        for lib, n in ((jax, jnp), (mjax, mnp)):
            with pytest.raises(TypeError, match=re.escape(msg)):
                lib.jvp(n.sin, (X,), (np.ones(3),))


def test_custom_rules_reject_differentiating_closed_over_values():
    for make, kind in ((_cj_closure, "custom_jvp"), (_cv_closure, "custom_vjp")):
        def loss(a, make=make):
            return mnp.sum(make(mjax, mnp, a * 2.0)(a))
        with pytest.raises(Exception, match=f"differentiation of a {kind} function with "
                                            f"respect to a closed-over value"):
            mjax.grad(loss)(X)


@pytest.mark.parametrize("where", ["jit of the call", "jit around grad's function"])
def test_custom_vjp_closed_over_value_raises_jaxs_exception(where):
    """Differentiating a custom_vjp call by a value it closes over (a constant of the
    call once staged) raises jax._src.interpreters.ad.CustomVJPException (jaxopt catches
    it), with JAX's text."""
    got = {}
    for lib in (mjax, jax):
        def outer(q, lib=lib):
            @lib.custom_vjp
            def f(x):
                return x * q
            f.defvjp(lambda x: (f(x), None), lambda _, g: (g,))
            return lib.jit(f)(2.0) if where == "jit of the call" else f(2.0)
        fun = lib.grad(outer) if where == "jit of the call" else lib.grad(lib.jit(outer))
        with pytest.raises(Exception) as info:
            fun(3.0)
        got[lib.__name__] = info.value
    assert isinstance(got["mjax"], mjax._src.interpreters.ad.CustomVJPException)
    assert isinstance(got["jax"], jax._src.interpreters.ad.CustomVJPException)
    assert str(got["mjax"]) == str(got["jax"])


def test_jvp_of_custom_vjp_is_an_error():
    with pytest.raises(Exception, match="forward-mode autodiff"):
        mjax.jvp(_cv(mjax, mnp), (X, Y), (X, Y))


# ---- integer inputs: float0 ------------------------------------------------------------
def test_allow_int_gives_float0_zeros():
    for lib in (mjax, jax):
        g = lib.grad(lambda a, i, b: a * 2.0 + b, argnums=(0, 1, 2), allow_int=True)
        ga, gi, gb = g(1.0, np.arange(3), 2.0)
        assert gi.dtype == jax.dtypes.float0 and gi.shape == (3,), lib.__name__
        assert float(ga) == 2.0 and float(gb) == 1.0


def test_vjp_and_jvp_of_integer_arguments():
    f = lambda a, i: a * i   # noqa: E731
    for lib in (mjax, jax):
        _, pull = lib.vjp(f, X, np.int32(3))
        ca, ci = pull(Y)
        assert ci.dtype == jax.dtypes.float0 and ci.shape == ()
        np.testing.assert_allclose(ca, Y * 3)
        _, t = lib.jvp(f, (X, np.int32(3)), (Y, np.zeros((), jax.dtypes.float0)))
        np.testing.assert_allclose(t, Y * 3)


def test_jit_of_grad_allow_int_returns_float0():
    g = mjax.jit(mjax.grad(lambda a, i: a * 2.0, argnums=(0, 1), allow_int=True))
    _, gi = g(1.0, 3)
    assert gi.dtype == jax.dtypes.float0


# ---- vjp and linearize reuse the forward pass --------------------------------------------
@pytest.fixture
def executions(monkeypatch):
    """StableHLO text of every executable run, in order."""
    from mjax.runtime import get_backend
    ran = []
    cls = type(get_backend().compile(_TRIVIAL_PROGRAM))   # the default backend's executable
    original = cls.execute

    def execute(self, buffers):
        ran.append(self.text)
        return original(self, buffers)
    monkeypatch.setattr(cls, "execute", execute)
    return ran


_TRIVIAL_PROGRAM = """func.func @main(%a: tensor<f32>) -> tensor<f32> {
  return %a : tensor<f32>
}"""


def test_vjp_pullback_does_not_rerun_forward(executions):
    traces = []

    def f(x):
        traces.append(1)
        return mnp.sin(x) * 2.0
    y, pull = mjax.vjp(f, X)
    assert len(traces) == 1
    forward = list(executions)
    assert len(forward) == 1 and "stablehlo.sine" in forward[0]
    cts = [pull(Y), pull(2 * Y), pull(X)]
    backward = executions[len(forward):]
    assert len(traces) == 1, "the pullback re-traced f"
    assert len(backward) == 3, backward
    for text in backward:   # only the linear part: multiply by the saved cos(x)
        assert "sine" not in text and "cosine" not in text, text
    for ct, c in zip(cts, (Y, 2 * Y, X)):
        np.testing.assert_allclose(ct[0], jax.vjp(lambda x: jnp.sin(x) * 2.0, X)[1](c)[0],
                                   rtol=1e-6)


def test_linearize_does_not_rerun_forward(executions):
    traces = []

    def f(x):
        traces.append(1)
        return mnp.sin(x) * x
    y, f_jvp = mjax.linearize(f, X)
    n_forward = len(executions)
    outs = [f_jvp(Y), f_jvp(X)]
    assert len(traces) == 1
    linear = executions[n_forward:]
    assert len(linear) == 2
    for text in linear:
        assert "sine" not in text and "cosine" not in text, text
    for t, out in zip((Y, X), outs):
        np.testing.assert_allclose(out, jax.jvp(lambda x: jnp.sin(x) * x, (X,), (t,))[1],
                                   rtol=1e-6)


def test_vjp_under_jit_emits_vjp_ops_that_share_the_forward_work():
    # Under a trace vjp emits ops (like grad): one jaxpr.vjp per pullback call on the same
    # primals; after the passes, inlining and CSE the forward work is done once.
    def g(x):
        _, pull = mjax.vjp(mnp.sin, x)
        return pull(x), pull(2.0 * x), pull(3.0 * x)
    text = mjax.jit(g).trace(X).as_text()
    assert text.count('"jaxpr.vjp"') == 3, text
    hlo = mjax.jit(g).lower(X).as_text()
    assert hlo.count("stablehlo.sine") == 0 and hlo.count("stablehlo.cosine") == 1, hlo
    got = mjax.jit(g)(X)
    want = jax.vjp(jnp.sin, X)[1]
    for k, out in zip((1.0, 2.0, 3.0), got):
        np.testing.assert_allclose(out[0], want(k * X)[0], rtol=1e-6)


def test_linearize_under_jit_emits_jvp_ops_that_share_the_forward_work():
    def h(x):
        _, f_jvp = mjax.linearize(mnp.sin, x)
        return f_jvp(x), f_jvp(2.0 * x)
    text = mjax.jit(h).trace(X).as_text()
    assert text.count('"jaxpr.jvp"') == 2, text
    hlo = mjax.jit(h).lower(X).as_text()
    assert hlo.count("stablehlo.sine") == 0 and hlo.count("stablehlo.cosine") == 1, hlo
    got = mjax.jit(h)(X)
    want = [jax.jvp(jnp.sin, (X,), (t,))[1] for t in (X, 2 * X)]
    np.testing.assert_allclose(np.array(got), np.array(want), rtol=1e-6)


# ---- checkpoint: the backward pass recomputes the forward ----------------------------------
def _expanded_functions(jitted, *args):
    """{name: body} of the traced module after --jaxpr-expand-transforms (not inlined)."""
    from mjax.dialect import context
    from mjax.passes import run_pipeline
    text = jitted.trace(*args).as_text()
    with context(), ir.Location.unknown(context()):
        module = ir.Module.parse(text)
        run_pipeline(module, "builtin.module(jaxpr-expand-transforms)")
        expanded = str(module)
    bodies = re.findall(r"func\.func (?:private )?@(\w+)\((.*?)\n  \}", expanded, re.S)
    return text, dict(bodies)


def _reachable(fns, name, seen=None):
    """The text of @name and every function it calls, transitively."""
    seen = set() if seen is None else seen
    if name in seen:
        return ""
    seen.add(name)
    body = fns[name]
    return body + "".join(_reachable(fns, c, seen) for c in re.findall(r"callee = @(\w+)", body))


def _forward_and_backward(fns):
    main = fns["main"]
    calls = re.findall(r"callee = @(\w+)", main)
    fwd = [c for c in calls if c.endswith("_fwd")]
    bwd = [c for c in calls if c.endswith("_bwd")]
    assert len(fwd) == len(bwd) == 1, main
    fwd, bwd = fwd[0], bwd[0]
    return _reachable(fns, fwd), _reachable(fns, bwd)


def test_checkpoint_recomputes_forward_in_backward_pass():
    def g(y):
        return mnp.sin(mnp.sin(y))
    plain = mjax.jit(mjax.grad(lambda x: mnp.sum(g(x))))
    remat = mjax.jit(mjax.grad(lambda x: mnp.sum(mjax.checkpoint(g)(x))))
    traced_plain, plain_fns = _expanded_functions(plain, X)
    traced_remat, remat_fns = _expanded_functions(remat, X)
    assert "jaxpr.checkpoint" in traced_remat and "jaxpr.checkpoint" not in traced_plain
    fwd, bwd = _forward_and_backward(plain_fns)
    # Without remat the forward pass computes the residuals cos(x), cos(sin(x)) and the
    # backward pass only multiplies.
    assert fwd.count('"jaxpr.cos"') == 2 and '"jaxpr.sin"' not in bwd, (fwd, bwd)
    fwd, bwd = _forward_and_backward(remat_fns)
    # With remat the forward pass saves only x; the backward pass recomputes sin(x).
    assert '"jaxpr.cos"' not in fwd, fwd
    assert '"jaxpr.sin"' in bwd and bwd.count('"jaxpr.cos"') == 2, bwd
    assert_same(remat(X), jax.grad(lambda x: jnp.sum(jnp.sin(jnp.sin(x))))(X))
    lowered = mjax.jit(mjax.grad(mjax.checkpoint(lambda x: mnp.sum(g(x))))).lower(X)
    assert "stablehlo.sine" in lowered.as_text()


def _count_in_final_stablehlo(fn, *args):
    text = mjax.jit(fn).lower(*args).as_text()
    assert "jaxpr." not in text, text
    return text.count("stablehlo.sine"), text.count("stablehlo.optimization_barrier"), text


def test_checkpoint_survives_the_whole_pipeline():
    """After inlining, `cse` would merge the backward's recomputation with the forward;
    the optimization barrier on the recomputation's inputs (prevent_cse, as in JAX)
    keeps it, so the final StableHLO computes sin(x) twice."""
    def h(y):
        return mnp.sin(y) * y          # its vjp needs sin(y) again: a recomputed residual

    def h_jax(y):
        return jnp.sin(y) * y

    # The forward value of the checkpointed function must be live for the duplicate to
    # show: through value_and_grad, or through an op after it (exp's output is saved).
    cases = {
        "value_and_grad": (lambda c, n: lambda x: n.sum(c(h)(x)),
                           lambda c: lambda x: jnp.sum(c(h_jax)(x)), True),
        "grad of exp(checkpoint)": (lambda c, n: lambda x: n.sum(n.exp(c(h)(x))),
                                    lambda c: lambda x: jnp.sum(jnp.exp(c(h_jax)(x))), False),
    }
    for name, (make, make_jax, with_value) in cases.items():
        grad, jgrad = ((mjax.value_and_grad, jax.value_and_grad) if with_value
                       else (mjax.grad, jax.grad))
        plain = grad(make(lambda f: f, mnp))
        remat = grad(make(mjax.checkpoint, mnp))
        no_barrier = grad(make(lambda f: mjax.checkpoint(f, prevent_cse=False), mnp))
        sines, barriers, text = _count_in_final_stablehlo(plain, X)
        assert (sines, barriers) == (1, 0), (name, text)
        sines, barriers, text = _count_in_final_stablehlo(remat, X)
        assert (sines, barriers) == (2, 1), (name, text)
        # The barrier's operand is x itself: the recomputation starts from the input.
        assert re.search(r"stablehlo\.optimization_barrier %arg0\b", text), (name, text)
        # Without the barrier, cse merges the two sines again (why JAX has prevent_cse).
        sines, barriers, text = _count_in_final_stablehlo(no_barrier, X)
        assert (sines, barriers) == (1, 0), (name, text)
        want = jgrad(make_jax(jax.checkpoint))(X)
        for fn in (plain, remat, no_barrier):
            assert_same(mjax.jit(fn)(X), want, what=name)
            assert_same(fn(X), want, what=name)


def test_checkpoint_second_order_through_the_barrier():
    # grad of grad differentiates the backward pass, barrier included (its JVP and
    # transpose rules), and jacfwd(grad) differentiates it in forward mode.
    def f(n, ck):
        return lambda x: n.sum(n.exp(ck(lambda y: n.sin(n.sin(y)) * y)(x)))
    with x64():
        x = X.astype(np.float64)
        want = jax.hessian(f(jnp, jax.checkpoint))(x)
        assert want.dtype == np.float64
        np.testing.assert_allclose(mjax.jit(mjax.jacrev(mjax.grad(f(mnp, mjax.checkpoint))))(x),
                                   want, rtol=1e-12)
        np.testing.assert_allclose(mjax.jacfwd(mjax.grad(f(mnp, mjax.checkpoint)))(x),
                                   want, rtol=1e-12)
        check_grads(f(mnp, mjax.checkpoint), (x,), order=2)


def test_lax_optimization_barrier_is_identity_on_pytrees_and_matches_jax():
    tree = {"a": X, "b": (np.int32(3), X * 2)}
    got = mjax.lax.optimization_barrier(tree)
    want = jax.lax.optimization_barrier(tree)
    assert_same(got, want)
    assert mjax.jit(mjax.lax.optimization_barrier)(tree)["b"][0].dtype == np.int32
    text = mjax.jit(mjax.lax.optimization_barrier).lower(tree).as_text()
    assert text.count("stablehlo.optimization_barrier") == 1, text
    # Like JAX, the barrier is differentiable: identity derivative in both modes.
    f = lambda n, lax: lambda x: n.sum(n.sin(lax.optimization_barrier((x, 2 * x))[1]))  # noqa
    assert_same(mjax.grad(f(mnp, mjax.lax))(X), jax.grad(f(jnp, jax.lax))(X))
    assert_same(mjax.jvp(f(mnp, mjax.lax), (X,), (X,)), jax.jvp(f(jnp, jax.lax), (X,), (X,)))


# ---- larger models and higher derivatives ------------------------------------------------
def test_100_layer_mlp_gradients_match_jax():
    rng = np.random.default_rng(0)
    width, depth = 16, 100
    params = [(rng.normal(0, 1.0 / np.sqrt(width), (width, width)).astype(np.float32),
               rng.normal(0, 0.1, (width,)).astype(np.float32)) for _ in range(depth)]
    x = rng.normal(size=(8, width)).astype(np.float32)
    got = mjax.jit(mjax.grad(lambda p, x: _mlp_loss(mnp, p, x)))(params, x)
    want = jax.grad(lambda p, x: _mlp_loss(jnp, p, x))(params, x)
    assert_same(got, want, rtol=2e-4, atol=2e-5, what="mlp grads")


def test_hessian_is_jacfwd_of_jacrev_and_matches_jax():
    def f(n, x):
        return n.sum(n.sin(x) * x[::-1] ** 2) + n.prod(x[:2]) * 0.0 + x[0] * x[1] ** 3
    x = np.array([0.3, -0.7, 1.1, 0.5])
    with x64():
        h = mjax.hessian(lambda v: f(mnp, v))(x)
        h2 = mjax.jacfwd(mjax.jacrev(lambda v: f(mnp, v)))(x)
        h3 = mjax.jit(mjax.jacrev(mjax.jacfwd(lambda v: f(mnp, v))))(x)
        want = jax.hessian(lambda v: f(jnp, v))(x)
        assert h.dtype == np.float64
        np.testing.assert_allclose(h, want, rtol=1e-12)
        np.testing.assert_allclose(h2, want, rtol=1e-12)
        np.testing.assert_allclose(h3, want, rtol=1e-12)


def test_grad_three_levels_deep_eager_and_jit():
    f = lambda n: (lambda x: n.exp(n.sin(x) * x))   # noqa: E731
    g3m = mjax.grad(mjax.grad(mjax.grad(f(mnp))))
    want = jax.grad(jax.grad(jax.grad(f(jnp))))(0.7)
    np.testing.assert_allclose(g3m(0.7), want, rtol=1e-5)
    np.testing.assert_allclose(mjax.jit(g3m)(0.7), want, rtol=1e-5)
    vg = mjax.jit(mjax.grad(lambda x: mjax.grad(lambda y: mjax.grad(f(mnp))(y) * y)(x)))
    vw = jax.grad(lambda x: jax.grad(lambda y: jax.grad(f(jnp))(y) * y)(x))
    np.testing.assert_allclose(vg(0.3), vw(0.3), rtol=1e-5)


# ---- check_grads itself -------------------------------------------------------------------
def test_check_grads_passes_on_correct_functions():
    with x64():
        check_grads(lambda p: {"a": mnp.sin(p[0]) * p[1], "b": p[0] ** 2},
                    ((X.astype(np.float64), Y.astype(np.float64)),), order=2)


def test_check_grads_catches_wrong_jvp():
    f = mjax.custom_jvp(mnp.sin)
    f.defjvp(lambda p, t: (mnp.sin(p[0]), 2.0 * t[0]))
    with x64(), pytest.raises(AssertionError, match="JVP tangent output differs from central "
                                                    "finite differences"):
        check_grads(f, (X.astype(np.float64),), order=1, modes=("fwd",))


def test_check_grads_catches_wrong_vjp():
    f = mjax.custom_vjp(mnp.sin)
    f.defvjp(lambda x: (mnp.sin(x), x), lambda x, g: (g * mnp.sin(x),))
    with x64(), pytest.raises(AssertionError, match="VJP does not match central finite "
                                                    "differences"):
        check_grads(f, (X.astype(np.float64),), order=1, modes=("rev",))


def test_check_grads_order2_catches_wrong_second_derivative():
    # First derivative right, but the rule hides it from differentiation (so f'' = 0).
    f = mjax.custom_jvp(mnp.sin)
    f.defjvp(lambda p, t: (mnp.sin(p[0]), t[0] * mjax.lax.stop_gradient(mnp.cos(p[0]))))
    x = X.astype(np.float64)
    with x64():
        check_grads(f, (x,), order=1)
        with pytest.raises(AssertionError, match="of JVP"):
            check_grads(f, (x,), order=2, modes=("fwd",))
        with pytest.raises(AssertionError, match="VJP of VJP"):
            check_grads(f, (x,), order=2, modes=("rev",))


def test_check_grads_rejects_unknown_mode():
    with pytest.raises(ValueError, match="unknown mode 'backward'"):
        check_grads(mnp.sin, (X,), order=1, modes=("backward",))


def test_custom_rules_with_only_integer_inputs_are_plain_calls():
    @mjax.custom_jvp
    def f(x):
        return x * 2

    f.defjvp(lambda p, t: (f(p[0]), t[0] * 2))

    @mjax.custom_vjp
    def g(x):
        return x * 3

    g.defvjp(lambda x: (g(x), None), lambda res, ct: (ct * 3,))
    for fn, k in ((f, 2), (g, 3)):
        np.testing.assert_array_equal(fn(mnp.arange(3)), np.arange(3) * k)
        np.testing.assert_array_equal(mjax.jit(fn)(mnp.arange(3)), np.arange(3) * k)
        assert float(mjax.grad(lambda x: fn(x).sum())(mnp.ones(2))[0]) == k


def test_python_scalars_outside_argnums_stay_python_values():
    def loss(w, x, training=True, scale=2.0):
        if training:           # a tracer here would raise TracerBoolConversionError
            return mnp.sum(mnp.sin(w * x)) * scale
        return mnp.sum(w * x)

    def jloss(w, x, training=True, scale=2.0):
        return jnp.sum(jnp.sin(w * x)) * scale if training else jnp.sum(w * x)
    x = np.arange(3.0, dtype=np.float32)
    for args, kw in (((1.0, x, True), {}), ((1.0, x, False), {}),
                     ((1.0, 2.0), {"training": True, "scale": 3.0})):
        np.testing.assert_allclose(mjax.grad(loss)(*args, **kw), jax.grad(jloss)(*args, **kw),
                                   rtol=1e-6)
    np.testing.assert_allclose(
        mjax.jacrev(loss, argnums=(0, 3))(np.ones(2, np.float32), x[:2], True, 2.0)[1],
        jax.jacrev(jloss, argnums=(0, 3))(np.ones(2, np.float32), x[:2], True, 2.0)[1],
        rtol=1e-6)


@pytest.mark.parametrize("tangent", [np.float32(1.0), np.int32(2), np.bool_(True)])
def test_jvp_of_an_integer_primal_needs_a_float0_tangent(tangent):
    def message(J):
        with pytest.raises(TypeError) as info:
            J.jvp(lambda x: x, (J.numpy.array(1),), (J.numpy.asarray(tangent),))
        return str(info.value)
    assert message(mjax) == message(jax)
    zero = np.zeros((), jax.dtypes.float0)
    assert mjax.jvp(lambda x: x * 2, (mnp.array(3),), (zero,))[0] == 6
