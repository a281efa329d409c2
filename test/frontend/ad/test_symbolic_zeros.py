"""Symbolic zeros, as JAX: which inputs a custom rule sees as perturbed (custom_jvp's
SymbolicZero tangents, custom_vjp's CustomVJPPrimal.perturbed, SymbolicZero cotangents
in bwd), a pullback called under a trace running bwd then, and linearize of a custom_vjp
function. Each case runs on mjax and on jax (the oracle) and compares what the rules saw.
(mjax.ad.symbolic_zeros; equinox's loops rely on all of it.)"""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp

X, Y = np.float32(2.0), np.float32(3.0)
XS = np.linspace(0.5, 1.5, 3).astype(np.float32)


def _kinds(t):
    return tuple("zero" if type(x).__name__ == "SymbolicZero" else "tangent" for x in t)


def _jvp_logged(J, np_, log):
    @J.custom_jvp
    def f(x, y):
        return x * y, np_.sin(y)

    def f_jvp(p, t):
        log.append(_kinds(t))
        x, y = p
        tx, ty = (np_.zeros_like(p[i]) if _kinds(t)[i] == "zero" else t[i] for i in (0, 1))
        return f(x, y), (tx * y + x * ty, np_.cos(y) * ty)
    f.defjvp(f_jvp, symbolic_zeros=True)
    return f


JVP_CASES = {
    "grad_x": lambda J, f: J.grad(lambda x, y: sum(f(x, y)))(X, Y),
    "grad_y": lambda J, f: J.grad(lambda x, y: sum(f(x, y)), 1)(X, Y),
    "grad_both": lambda J, f: J.grad(lambda x, y: sum(f(x, y)), (0, 1))(X, Y),
    "jit_grad": lambda J, f: J.jit(J.grad(lambda x, y: sum(f(x, y))))(X, Y),
    "stop_gradient": lambda J, f: J.grad(
        lambda x: sum(f(x, J.lax.stop_gradient(x * 2))))(X),
    "constant": lambda J, f: J.grad(lambda x: sum(f(x, 4.0)))(X),
    "jvp": lambda J, f: J.jvp(lambda x: f(x, Y), (X,), (X,)),
    "grad_vmap": lambda J, f: J.grad(
        lambda x: J.vmap(lambda a: sum(f(a, Y)))(x).sum())(XS),
    "grad_of_jit": lambda J, f: J.grad(J.jit(lambda x, y: sum(f(x, y))))(X, Y),
    "grad_scan_carry": lambda J, f: J.grad(lambda x, y: J.lax.scan(
        lambda c, _: (sum(f(c, y)), None), x, None, length=2)[0])(X, Y),
}


@pytest.mark.parametrize("case", sorted(JVP_CASES))
def test_custom_jvp_rule_sees_symbolic_zeros_as_in_jax(case):
    mine, theirs = [], []
    out = JVP_CASES[case](mjax, _jvp_logged(mjax, jnp, mine))
    expected = JVP_CASES[case](jax, _jvp_logged(jax, jjnp, theirs))
    assert set(mine) == set(theirs), (mine, theirs)
    for a, b in zip(jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(expected)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def _nondifferentiable(J):
    """equinox's `nondifferentiable`: an identity whose rule refuses any real tangent."""
    @J.custom_jvp
    def guard(x):
        return x

    def guard_jvp(p, t):
        if type(t[0]).__name__ != "SymbolicZero":
            raise RuntimeError("unexpected tangent")
        return guard(*p), t[0]
    guard.defjvp(guard_jvp, symbolic_zeros=True)
    return guard


def _unperturbed_parts(J):
    """A custom_jvp whose rule gives its second output a symbolic zero tangent."""
    @J.custom_jvp
    def split(x):
        return x * 2, x + 1

    def split_jvp(p, t):
        (x,), (tx,) = p, t
        return split(x), (tx * 2, J.custom_derivatives.SymbolicZero.from_primal_value(x + 1))
    split.defjvp(split_jvp, symbolic_zeros=True)
    return split


@pytest.mark.parametrize("J", [mjax, jax], ids=["mjax", "jax"])
def test_unperturbed_values_reach_a_rule_as_symbolic_zeros(J):
    guard, split = _nondifferentiable(J), _unperturbed_parts(J)

    def f(x, y):
        a, b = split(x)              # b: a symbolic zero tangent out of the rule
        guard(b)
        guard(y * 3.0)               # y is not differentiated
        guard(J.lax.stop_gradient(x))
        with pytest.raises(RuntimeError, match="unexpected tangent"):
            guard(a)                 # raised when the call is staged, as JAX's
        return a + b
    assert J.grad(f)(X, Y) == 2.0
    assert J.jit(J.grad(f))(X, Y) == 2.0


def _vjp_logged(J, log):
    @J.custom_vjp
    def f(x, y):
        return x * y, x + y

    def fwd(x, y):
        log.append(("fwd", x.perturbed, y.perturbed))
        return f(x.value, y.value), (x.value, y.value)

    def bwd(res, cts):
        log.append(("bwd",) + _kinds(cts))
        x, y = res
        c0, c1 = (J.numpy.zeros(c.shape, c.dtype) if type(c).__name__ == "SymbolicZero"
                  else c for c in cts)
        return c0 * y + c1, c0 * x + c1
    f.defvjp(fwd, bwd, symbolic_zeros=True)
    return f


VJP_CASES = {
    "grad_x_first_out": lambda J, f: J.grad(lambda x, y: f(x, y)[0])(X, Y),
    "grad_y_both_outs": lambda J, f: J.grad(lambda x, y: sum(f(x, y)), 1)(X, Y),
    "jit_grad_second_out": lambda J, f: J.jit(J.grad(lambda x, y: f(x, y)[1]))(X, Y),
    "grad_both": lambda J, f: J.grad(lambda x, y: f(x, y)[0], (0, 1))(X, Y),
    "vjp_in_jit": lambda J, f: J.jit(lambda x, y: J.vjp(lambda a: f(a, y)[0], x)[1](1.0))(
        X, Y),
}


@pytest.mark.parametrize("case", sorted(VJP_CASES))
def test_custom_vjp_rules_see_perturbations_and_zero_cotangents_as_in_jax(case):
    mine, theirs = [], []
    out = VJP_CASES[case](mjax, _vjp_logged(mjax, mine))
    expected = VJP_CASES[case](jax, _vjp_logged(jax, theirs))
    assert mine == theirs
    for a, b in zip(jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(expected)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


@pytest.mark.parametrize("J", [mjax, jax], ids=["mjax", "jax"])
def test_a_pullback_called_under_a_trace_runs_bwd_then(J):
    log = []
    f = _vjp_logged(J, log)

    def g(x, y):
        _, pullback = J.vjp(lambda a: f(a, y)[0], x)
        n = len(log)
        ct = pullback(1.0)
        log.append(("after", len(log) > n))    # bwd ran inside pullback(...)
        return ct
    J.jit(g)(X, Y)
    assert log[-1] == ("after", True)


@pytest.mark.parametrize("J", [mjax, jax], ids=["mjax", "jax"])
def test_linearize_of_custom_vjp_gives_primals_and_fails_when_evaluated(J):
    f = _vjp_logged(J, [])
    y, f_jvp = J.linearize(lambda x: f(x, Y)[0] + 1.0, X)
    assert y == X * Y + 1.0
    with pytest.raises(TypeError, match="can't apply forward-mode autodiff"):
        f_jvp(X)


@pytest.mark.parametrize("J", [mjax, jax], ids=["mjax", "jax"])
def test_vmap_passes_unmapped_python_scalars_through_under_jit(J):
    @J.jit
    def run(x):
        return J.vmap(lambda a, flag, n: a * n if flag else a, in_axes=(0, None, None))(
            x, True, 3)
    np.testing.assert_allclose(np.asarray(run(XS)), XS * 3)


@pytest.mark.parametrize("J", [mjax, jax], ids=["mjax", "jax"])
def test_jvp_tracer_isinstance_holds_for_perturbed_values_only(J):
    """JAX holds only perturbed values in JVP tracers (equinox's filter_jvp sorts outputs
    by `isinstance(x, JVPTracer)`); a nested jit's outputs follow its function."""
    seen = []

    def f(x):
        c = J.numpy.float32(2.0)
        both = J.jit(lambda a, b: (a + 1, b + 1))(x, c)
        values = (x * 2, J.lax.stop_gradient(x) * 3, both[0], both[1])
        seen.append([isinstance(v, J.interpreters.ad.JVPTracer) for v in values])
        return values[0]
    J.jvp(f, (X,), (X,))
    assert seen == [[True, False, True, False]]


@pytest.mark.parametrize("J", [mjax, jax], ids=["mjax", "jax"])
def test_vmap_passes_unmapped_python_ints_through_eagerly(J):
    """An unmapped int can be a static argument of a jit inside (blackjax's resampling
    tests: vmap(jit(f, static_argnums=2), in_axes=(0, None, None)))."""
    f = J.jit(lambda k, w, n: J.numpy.zeros(n) + k * w, static_argnums=2)
    out = J.vmap(f, in_axes=(0, None, None))(XS, np.float32(2.0), 3)
    np.testing.assert_allclose(np.asarray(out), np.repeat(XS[:, None] * 2, 3, axis=1))
