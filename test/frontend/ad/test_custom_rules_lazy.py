"""custom_jvp / custom_vjp rules are traced only when a differentiation needs them, as in
JAX: the side effects of the function and its rules happen in JAX's order and counts,
rules that fail where the function works do not break plain calls, and rules traced
later by the passes (after the trace that staged the call ended) still get the values
they close over. Checked against jax."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.passes import custom_rules

X = np.float32(0.5)
XS = np.linspace(0.1, 0.9, 3).astype(np.float32)


def _logged_jvp(J, np_, log):
    @J.custom_jvp
    def f(x):
        log.append("f")
        return np_.sin(x)

    @f.defjvp
    def f_jvp(p, t):
        log.append("jvp")
        return f(p[0]), np_.cos(p[0]) * t[0]
    return f


def _logged_vjp(J, np_, log):
    @J.custom_vjp
    def f(x):
        log.append("f")
        return np_.sin(x)

    def fwd(x):
        log.append("fwd")
        return f(x), np_.cos(x)

    def bwd(c, g):
        log.append("bwd")
        return (c * g,)
    f.defvjp(fwd, bwd)
    return f


CASES = {
    "eager": lambda J, f: f(X),
    "jit": lambda J, f: J.jit(f)(X),
    "vmap": lambda J, f: J.vmap(f)(XS),
    "eval_shape": lambda J, f: J.eval_shape(f, X),
    "make_jaxpr": lambda J, f: J.make_jaxpr(f)(X) and None,
    "jvp": lambda J, f: J.jvp(f, (X,), (X,)),
    "grad": lambda J, f: J.grad(f)(X),
    "grad_grad": lambda J, f: J.grad(J.grad(f))(X),
    "jit_grad": lambda J, f: J.jit(J.grad(f))(X),
    "vmap_grad": lambda J, f: J.vmap(J.grad(f))(XS),
    "grad_vmap": lambda J, f: J.grad(lambda v: J.vmap(f)(v).sum())(XS),
    "grad_checkpoint": lambda J, f: J.grad(J.checkpoint(f))(X),
    "grad_grad_checkpoint": lambda J, f: J.grad(J.grad(J.checkpoint(f)))(X),
    "vmap_grad_checkpoint": lambda J, f: J.vmap(J.grad(J.checkpoint(f)))(XS),
    "jacfwd": lambda J, f: J.jacfwd(f)(X),
    "jacrev": lambda J, f: J.jacrev(f)(X),
    "hessian": lambda J, f: J.hessian(f)(X),
    "linearize": lambda J, f: J.linearize(f, X)[1](X),
    "called_twice": lambda J, f: J.grad(lambda y: f(y) + f(y))(X),
    "other_arguments": lambda J, f: J.grad(lambda y: f(y) * f(y + 1.0))(X),
    "vjp": lambda J, f: J.vjp(f, X)[0],
    "vjp_pullback": lambda J, f: J.vjp(f, X)[1](X),
}


def _run(J, np_, make, case):
    log = []
    try:
        out = CASES[case](J, make(J, np_, log))
        error = None
    except TypeError as e:    # (jvp of a custom_vjp function, in both)
        out, error = None, str(e)
    return log, out, error


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("kind", ["custom_jvp", "custom_vjp"])
def test_side_effects_happen_as_in_jax(kind, case):
    make = _logged_jvp if kind == "custom_jvp" else _logged_vjp
    mine, theirs = _run(mjax, jnp, make, case), _run(jax, jjnp, make, case)
    assert mine[0] == theirs[0], f"mjax ran {mine[0]}, jax ran {theirs[0]}"
    assert mine[2] == theirs[2]
    if theirs[1] is not None and not isinstance(theirs[1], jax.ShapeDtypeStruct):
        for a, b in zip(jax.tree_util.tree_leaves(theirs[1]),
                        mjax.tree_util.tree_leaves(mine[1])):
            if callable(a):
                continue
            np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-6)


def test_eager_vjp_runs_bwd_when_the_pullback_is_called():
    # JAX runs bwd when the pullback is called, not at vjp; the residuals keep their
    # values there (bwd branches on them).
    def make(J, np_, log):
        @J.custom_vjp
        def f(x):
            return x * 2.0

        def fwd(x):
            log.append("fwd")
            return f(x), x

        def bwd(r, ct):
            log.append("bwd")
            return (10.0 * ct,) if r > 0 else (20.0 * ct,)
        f.defvjp(fwd, bwd)
        return f
    for J, np_ in ((mjax, jnp), (jax, jjnp)):
        log = []
        _, pullback = J.vjp(make(J, np_, log), np.float32(-1.0))
        assert log == ["fwd"]
        assert float(pullback(np.float32(1.0))[0]) == 20.0
        assert log == ["fwd", "bwd"]


def _failing_rules(J, np_):
    @J.custom_jvp
    def f(x):
        return np_.sin(x)

    @f.defjvp
    def f_jvp(p, t):
        raise ValueError("the jvp rule ran")

    @J.custom_vjp
    def g(x):
        return np_.cos(x)

    def g_fwd(x):
        raise ValueError("the fwd rule ran")
    g.defvjp(g_fwd, lambda r, ct: (ct,))
    return f, g


@pytest.mark.parametrize("how", ["jit", "vmap", "jit_vmap", "scan", "cond", "eval_shape"])
def test_rules_that_fail_do_not_break_plain_calls(how):
    def run(J, np_):
        f, g = _failing_rules(J, np_)
        h = lambda x: f(x) + g(x)                       # noqa: E731
        return {"jit": lambda: J.jit(h)(XS),
                "vmap": lambda: J.vmap(h)(XS),
                "jit_vmap": lambda: J.jit(J.vmap(h))(XS),
                "scan": lambda: J.lax.scan(lambda c, x: (c + h(x), None), 0.0, XS)[0],
                "cond": lambda: J.lax.cond(True, h, lambda x: x, XS),
                "eval_shape": lambda: J.eval_shape(h, XS).shape}[how]()
    np.testing.assert_allclose(np.asarray(run(mjax, jnp)), np.asarray(run(jax, jjnp)),
                               rtol=1e-6)


@pytest.mark.parametrize("which", [0, 1])
def test_failing_rules_fail_when_differentiated(which):
    for J, np_ in ((mjax, jnp), (jax, jjnp)):
        fn = _failing_rules(J, np_)[which]
        with pytest.raises(ValueError, match="rule ran"):
            J.grad(fn)(X)


def test_jvp_of_custom_vjp_raises_jaxs_text():
    def err(J, np_):
        try:
            J.jvp(_logged_vjp(J, np_, []), (X,), (X,))
        except TypeError as e:
            return e
    mine, theirs = err(mjax, jnp), err(jax, jjnp)
    assert str(mine) == str(theirs) == ("can't apply forward-mode autodiff (jvp) to a "
                                        "custom_vjp function.")
    # (where it happened: a note, shown with the traceback)
    assert any("test_custom_rules_lazy.py" in n for n in getattr(mine, "__notes__", []))


# ---- rules traced by the passes (after the trace that staged the call ended) ------------
def _closing_over(J, np_, c, d):
    """custom functions closing over traced values: c used by the functions and their
    rules, d by the rules only."""
    @J.custom_jvp
    def f(x):
        return np_.sin(x) * c

    @f.defjvp
    def f_jvp(p, t):
        return f(p[0]), np_.cos(p[0]) * c * d * t[0]

    @J.custom_vjp
    def g(x):
        return np_.exp(x) * c

    def g_fwd(x):
        return g(x), np_.exp(x)

    def g_bwd(r, ct):
        return (r * c * d * ct,)
    g.defvjp(g_fwd, g_bwd)
    return f, g


@pytest.mark.parametrize("which", [0, 1])
@pytest.mark.parametrize("how", ["grad_checkpoint", "grad_checkpoint_vmap", "jit_grad"])
def test_rules_traced_later_get_closed_over_values(which, how):
    # Inside checkpoint the rules are traced by the passes (JAX traces the body first);
    # the values of the enclosing jit they close over arrive as the call's operands.
    def run(J, np_):
        @J.jit
        def outer(x, c, d):
            fn = _closing_over(J, np_, c, d)[which]
            return {"grad_checkpoint": lambda: J.grad(J.checkpoint(fn))(x[0]),
                    "grad_checkpoint_vmap": lambda: J.grad(J.checkpoint(
                        lambda v: J.vmap(fn)(v).sum()))(x),
                    "jit_grad": lambda: J.grad(fn)(x[0]),
                    }[how]()
        return outer(XS, np.float32(1.7), np.float32(0.3))
    np.testing.assert_allclose(np.asarray(run(mjax, jnp)), np.asarray(run(jax, jjnp)),
                               rtol=1e-5, atol=1e-6)


def test_checkpointed_custom_rules_with_nondiff_argnums_and_defjvps():
    def run(J, np_):
        import functools

        @functools.partial(J.custom_vjp, nondiff_argnums=(0,))
        def scale(k, x):
            return x * k

        scale.defvjp(lambda k, x: (x * k, None), lambda k, _, ct: (ct * k * 2.0,))

        @J.custom_jvp
        def h(x, y):
            return np_.sin(x) * y
        h.defjvps(lambda t, ans, x, y: np_.cos(x) * y * t, lambda t, ans, x, y: 3.0 * t)
        loss = J.checkpoint(lambda x, y: np_.sum(scale(3.0, h(x, y))))
        return J.grad(loss, (0, 1))(XS, XS + 1.0)
    for a, b in zip(run(mjax, jnp), run(jax, jjnp)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5)


def test_a_rule_handle_from_text_is_traced_in_the_same_process():
    # The jaxpr text of a plain call names its rule by a handle; read back in this process,
    # differentiating it traces the Python rule then (batched, here: vmap came first).
    from jaxlib.mlir import ir
    from mjax.dialect import context
    from mjax.passes.autodiff import jvp_function
    from mjax.passes.ir_util import module_body, symbol_name
    log = []
    f = _logged_jvp(mjax, jnp, log)
    text = mjax.jit(mjax.vmap(f)).trace(XS).as_text()
    assert 'rule = "f_jvp#' in text and log == ["f"]
    with context(), ir.Location.unknown(context()):
        module = ir.Module.parse(text)
    name = jvp_function(module, "main")
    assert log == ["f", "jvp", "f"]
    jvp_fn = next(op.operation for op in module_body(module).operations
                  if symbol_name(op.operation) == name)
    assert "jaxpr.cos" in str(jvp_fn) or "jaxpr.call" in str(jvp_fn)


def test_the_rule_registry_is_bounded(monkeypatch):
    monkeypatch.setattr(custom_rules, "MAX_SOURCES", 3)
    monkeypatch.setattr(custom_rules, "MAX_GROUPS", 1)
    plain = [custom_rules.register(object(), "p") for _ in range(4)]
    assert custom_rules.source_of(plain[0]) is None
    assert all(custom_rules.source_of(h) is not None for h in plain[1:])
    # sources holding tracers: kept for the most recent module, all of it together
    first = [custom_rules.register(object(), "h", group="m1") for _ in range(2)]
    assert all(custom_rules.source_of(h) is not None for h in first)
    second = custom_rules.register(object(), "h", group="m2")
    assert all(custom_rules.source_of(h) is None for h in first)
    assert custom_rules.source_of(second) is not None


def _nested(J, np_, log):
    """A custom_jvp whose function calls a custom_vjp and whose rule calls another
    custom_jvp."""
    @J.custom_vjp
    def inner(x):
        log.append("inner")
        return np_.exp(x)
    inner.defvjp(lambda x: (log.append("inner_fwd"), (inner(x), x))[1],
                 lambda r, ct: (log.append("inner_bwd"), (ct * np_.exp(r),))[1])

    @J.custom_jvp
    def helper(x):
        log.append("helper")
        return np_.cos(x)

    @helper.defjvp
    def helper_jvp(p, t):
        log.append("helper_jvp")
        return helper(p[0]), -np_.sin(p[0]) * t[0]

    @J.custom_jvp
    def outer(x):
        log.append("outer")
        return np_.sin(inner(x))

    @outer.defjvp
    def outer_jvp(p, t):
        log.append("outer_jvp")
        y = outer(p[0])
        return y, helper(y) * np_.exp(p[0]) * t[0]
    return outer


@pytest.mark.parametrize("case", ["jit", "vmap", "grad", "grad_grad", "jvp", "jit_grad",
                                  "grad_checkpoint", "jacrev"])
def test_nested_custom_functions_trace_rules_as_jax(case):
    mine = _run(mjax, jnp, _nested, case)
    theirs = _run(jax, jjnp, _nested, case)
    assert mine[0] == theirs[0], f"mjax ran {mine[0]}, jax ran {theirs[0]}"
    for a, b in zip(jax.tree_util.tree_leaves(theirs[1]), mjax.tree_util.tree_leaves(mine[1])):
        np.testing.assert_allclose(np.asarray(b), np.asarray(a), rtol=1e-5)
