"""Differential regressions (transformations and control flow) against real JAX:
each case runs the same program on mjax and on jax and compares values, dtypes, weak
types and exception classes."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp

X = np.arange(1., 7.).reshape(2, 3).astype(np.float32)


def _both(fn):
    return fn(jax, jnp), fn(mjax, mnp)


def _same(fn):
    want, got = _both(fn)
    lw, tw = jax.tree_util.tree_flatten(want)
    lg, tg = mjax.tree_util.tree_flatten(got)
    assert str(tw) == str(tg)
    for w, g in zip(lw, lg):
        assert getattr(w, "weak_type", None) == getattr(g, "weak_type", None)
        w, g = np.asarray(w), np.asarray(g)
        assert (w.shape, w.dtype) == (g.shape, g.dtype)
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def _raises_as_jax(fn, match):
    with pytest.raises(Exception) as want:
        fn(jax, jnp)
    with pytest.raises(type(want.value), match=match):
        fn(mjax, mnp)


# ---- grad's deprecated reduce_axes ----------------------------------------------------
@pytest.mark.parametrize("api", ["grad", "value_and_grad"])
def test_reduce_axes_raises_when_made(api):
    _raises_as_jax(lambda J, N: getattr(J, api)(lambda z: N.sum(z), reduce_axes=("i",)),
                   "reduce_axes argument to grad is deprecated")


# ---- custom_vjp bwd cotangents of the wrong shape -------------------------------------
def _bad_bwd(J, N, kind):
    @J.custom_vjp
    def f(d, b):
        return d["a"] * b

    def bwd(res, g):
        return {"a": g} if kind == "b" else {"a": g[0]}, (g[0] if kind == "b" else g)
    f.defvjp(lambda d, b: (f(d, b), None), bwd)
    return f


@pytest.mark.parametrize("kind,where", [("b", r"output\[1\]"), ("a", r"output\[0\]\['a'\]")])
@pytest.mark.parametrize("argnums", [0, (0, 1)])
def test_custom_vjp_bwd_wrong_shape(kind, where, argnums):
    def run(J, N):
        return J.grad(lambda d, b: N.sum(_bad_bwd(J, N, kind)(d, b)),
                      argnums=argnums)({"a": X}, X)
    _raises_as_jax(run, f"at {where} the bwd rule produced an output of type float32\\[3\\] "
                        r"corresponding to an input of type float32\[2,3\]")


def test_custom_vjp_bwd_wrong_shape_vjp():
    def run(J, N):
        return J.vjp(lambda a: _bad_bwd(J, N, "a")({"a": a}, X), X)[1](X)
    _raises_as_jax(run, "Custom VJP bwd rule must produce an output with the same type")


# ---- weakly typed loop carries promoted to the body's dtype ---------------------------
_BODIES = {"mulf": lambda N: lambda c: c * 2., "mulc": lambda N: lambda c: c * (1 + 1j),
           "mulf16": lambda N: lambda c: c * N.float16(2),
           "mulf32": lambda N: lambda c: c * N.float32(2)}


@pytest.mark.parametrize("body", sorted(_BODIES))
@pytest.mark.parametrize("init", [1, 1.])
@pytest.mark.parametrize("loop", ["while", "fori", "scan"])
def test_weak_carry_promotion(body, init, loop):
    def run(J, N):
        b = _BODIES[body](N)
        if loop == "while":
            return J.lax.while_loop(lambda q: N.abs(q) < 10, b, init)
        if loop == "fori":
            return J.lax.fori_loop(0, 3, lambda k, q: b(q), init)
        return J.lax.scan(lambda q, _: (b(q), q), init, None, length=3)
    _same(run)


# ---- weak gradients of weakly typed inputs through cond / scan / checkpoint ------------
_V = np.ones(3, np.float32)
_WEAK_GRADS = {
    "cond": lambda J, N: J.grad(lambda p: J.lax.cond(
        p > 0, lambda q: (q * _V).sum(), lambda q: (_V - q).sum(), p))(1.),
    "cond_jit": lambda J, N: J.jit(J.grad(lambda p: J.lax.cond(
        p > 0, lambda q: (q * _V).sum(), lambda q: (_V - q).sum(), p)))(1.),
    "cond_tree": lambda J, N: J.grad(lambda d: J.lax.cond(
        d["p"] > 0, lambda q: q["a"] * q["p"], lambda q: q["a"] - q["p"], d).sum())(
        {"a": _V, "p": 1.}),
    "switch": lambda J, N: J.grad(lambda p: J.lax.switch(
        1, [lambda q: (q * _V).sum(), lambda q: (_V - q).sum(), lambda q: q], p))(1.),
    "scan_const": lambda J, N: J.grad(lambda p: J.lax.scan(
        lambda c, a: (c + a * p, None), 0., _V)[0])(1.),
    "map": lambda J, N: J.grad(lambda p: J.lax.map(lambda a: a * p, _V).sum())(1.),
    "checkpoint": lambda J, N: J.grad(J.checkpoint(lambda p: (p * _V).sum()))(1.),
    "scan_carry": lambda J, N: J.grad(lambda p: J.lax.scan(
        lambda c, a: (c * a, None), p, _V)[0])(1.),
}


@pytest.mark.parametrize("case", sorted(_WEAK_GRADS))
def test_weak_gradient_through_control_flow(case):
    _same(_WEAK_GRADS[case])


# ---- make_jaxpr: scan equations carry JAX 0.10.2's parameters -------------------------
@pytest.mark.parametrize("prog", ["scan", "fori"])
def test_make_jaxpr_scan_params(prog):
    def eqns(J, N):
        if prog == "scan":
            f = lambda a: J.lax.scan(lambda c, b: (c + b, c * b), a[0], a)
        else:
            f = lambda a: J.lax.fori_loop(0, 3, lambda i, c: c * 2, a)
        cj = J.make_jaxpr(f)(X)
        return [(e.primitive.name, sorted(e.params)) for e in cj.jaxpr.eqns]
    want, got = _both(eqns)
    assert got == want


# ---- vjp through a while loop: the forward pass runs, the pullback raises -------------
def _while_vjp(J, N, has_aux=False):
    def f(a):
        out = J.lax.while_loop(lambda c: c.sum() < 100., lambda c: c * 1.5 + N.sin(c), a)
        return (out, {"k": a.sum()}) if has_aux else out
    return J.vjp(f, X[0], has_aux=has_aux)


@pytest.mark.parametrize("has_aux", [False, True])
def test_vjp_of_while_loop_runs_forward(has_aux):
    _same(lambda J, N: (lambda r: (r[0],) + tuple(r[2:]))(_while_vjp(J, N, has_aux)))


def test_vjp_of_while_loop_pullback_raises():
    _raises_as_jax(lambda J, N: _while_vjp(J, N)[1](X[0]),
                   "Reverse-mode differentiation does not work for lax.while_loop")


# ---- custom_jvp rules whose tangents are not typed as their primals --------------------
_BAD_TANGENTS = {
    "dtype": lambda N, p, t: (N.sin(p[0]), (t[0] * 2).astype(N.float16)),
    "shape": lambda N, p, t: (N.sin(p[0]), (t[0] * 2)[0]),
    "python_float": lambda N, p, t: (N.sin(p[0]), 2.0),
}


@pytest.mark.parametrize("kind", sorted(_BAD_TANGENTS))
def test_custom_jvp_tangent_type_mismatch(kind):
    def run(J, N):
        @J.custom_jvp
        def f(a):
            return N.sin(a)
        f.defjvp(lambda p, t: _BAD_TANGENTS[kind](N, p, t))
        return J.jvp(f, (X[0],), (X[0],))
    _raises_as_jax(run, r"corresponding shapes and dtypes\. Expected float32\[3\] \(tangent "
                        r"type of float32\[3\]\) but got")


def test_custom_jvp_tangent_mismatch_several_outputs():
    def run(J, N):
        @J.custom_jvp
        def f(a):
            return N.sin(a), a * 2
        f.defjvp(lambda p, t: ((N.sin(p[0]), p[0] * 2), (t[0][0], t[0].astype(N.float16))))
        return J.grad(lambda a: f(a)[0].sum())(X[0])
    _raises_as_jax(run, r"primal float32\[3\] with tangent float32\[\], expecting tangent "
                        r"float32\[3\]\n  primal float32\[3\] with tangent float16\[3\]")


def test_custom_jvp_python_float_tangent_of_scalar():
    def run(J, N):
        @J.custom_jvp
        def f(a):
            return N.sin(a)
        f.defjvp(lambda p, t: (N.sin(p[0]), 2.0))
        return J.grad(f)(np.float32(1.))
    _same(run)


# ---- has_aux accepts a two-element list, as JAX ---------------------------------------
_AUX_LIST = {
    "grad": lambda J, N: J.grad(lambda a: [N.sum(a), a], has_aux=True)(X),
    "value_and_grad": lambda J, N: J.value_and_grad(
        lambda a: [N.sum(a), {"q": a}], has_aux=True)(X),
    "jacrev": lambda J, N: J.jacrev(lambda a: [a * 2, a], has_aux=True)(X[0]),
    "jacfwd": lambda J, N: J.jacfwd(lambda a: [a * 2, a + 1], has_aux=True)(X[0]),
    "jvp": lambda J, N: J.jvp(lambda a: [a * 2, a + 1], (X,), (X,), has_aux=True),
    "vjp": lambda J, N: (lambda r: (r[0], r[1](X), r[2]))(
        J.vjp(lambda a: [a * 2, a], X, has_aux=True)),
}


@pytest.mark.parametrize("api", sorted(_AUX_LIST))
def test_has_aux_list_pair(api):
    _same(_AUX_LIST[api])


# ---- make_jaxpr / trace: a weakly typed argument's aval stays weak ---------------------
@pytest.mark.parametrize("how", ["make_jaxpr", "make_jaxpr_invars", "trace"])
def test_weak_argument_avals(how):
    def avals(J, N):
        f = lambda a, b: a * b
        if how == "trace":
            return [str(a) for a in J.jit(f).trace(X, 1.).jaxpr.in_avals]
        cj = J.make_jaxpr(f)(X, 1.)
        avs = cj.jaxpr.in_avals if how == "make_jaxpr_invars" else cj.in_avals
        return [(str(a), a.weak_type) for a in avs]
    want, got = _both(avals)
    assert got == want
