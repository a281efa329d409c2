"""jax_check_tracer_leaks (mjax/tracing/leak_check.py): the same programs report a leaked tracer,
or none, under mjax and under JAX (haiku's check_tracer_leaks_test, numpyro's truncated
distributions: tracers kept by mjax's own records of custom_jvp/custom_vjp calls are no
leak)."""
import numpy as np
import pytest

import jax
import mjax
import mjax.numpy as jnp
from frontend_util import tol

LEAKED: list = []


def _outcome(lib, make, args):
    """'leak' when lib's leak checker reports `make(lib)`'s trace, else its result."""
    fn = make(lib)
    try:
        with lib.checking_leaks():
            out = fn(*args)
    except Exception as e:             # (JAX raises a plain Exception)
        if "Leaked" not in str(e):
            raise
        return "leak"
    finally:
        LEAKED.clear()
    return np.asarray(out)


def _same(make, *args):
    want = _outcome(jax, make, args)
    got = _outcome(mjax, make, args)
    assert (got if isinstance(got, str) else "no leak") == (
        want if isinstance(want, str) else "no leak")
    if not isinstance(got, str):
        # (gelu's tanh, sin, exp on a TPU: JAX's tests take 2e-4 there)
        np.testing.assert_allclose(got, want, rtol=tol(1e-6, 2e-4))
    return got


def _sin_jvp(lib):
    @lib.custom_jvp
    def f(x):
        return lib.numpy.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return f(x), lib.numpy.cos(x) * t
    return f


def _sin_vjp(lib):
    @lib.custom_vjp
    def f(x):
        return lib.numpy.sin(x)
    f.defvjp(lambda x: (lib.numpy.sin(x), x), lambda x, g: (lib.numpy.cos(x) * g,))
    return f


def _scale(lib):
    @lib.custom_jvp
    def g(x, s):
        return x * s
    g.defjvp(lambda p, t: (g(*p), t[0] * p[1] + p[0] * t[1]))
    return g


def test_custom_jvp_and_vjp_calls_under_jit_are_no_leak():
    x = np.linspace(-1.0, 1.0, 4, dtype=np.float32)
    assert not isinstance(_same(lambda lib: lib.jit(lambda v: _sin_jvp(lib)(v * 2.0)), x), str)
    assert not isinstance(_same(lambda lib: lib.jit(lambda v: _sin_vjp(lib)(v + 1.0)), x), str)
    # (a rule closing over a value of the trace: the call keeps it as a const)
    assert not isinstance(_same(lambda lib: lib.jit(
        lambda v: _scale(lib)(v, v.sum())), x), str)
    # jax.nn's custom_jvp functions, and numpyro's clamp_probs (jnp.clip) under jit
    assert not isinstance(_same(lambda lib: lib.jit(
        lambda v: lib.nn.relu(v) + lib.nn.gelu(v) + lib.numpy.clip(v, 1e-3, 0.5)), x), str)


def test_differentiating_custom_rules_is_no_leak():
    """The rules' traces (a jvp rule, a fwd) see their arguments through mjax's record of
    the call being traced; the record lets go of them before the trace's check."""
    x = np.linspace(-1.0, 1.0, 4, dtype=np.float32)
    for rules in (_sin_jvp, _sin_vjp):
        def loss(lib, rules=rules):
            return lib.grad(lambda v: rules(lib)(v).sum())
        assert not isinstance(_same(loss, x), str)
        assert not isinstance(_same(lambda lib: lib.jit(loss(lib)), x), str)
        assert not isinstance(_same(lambda lib: lib.vmap(lib.grad(
            lambda s: rules(lib)(s * 2.0))), x), str)
    assert not isinstance(_same(lambda lib: lambda v: lib.jvp(_sin_jvp(lib), (v,), (v,))[1],
                                x), str)
    assert not isinstance(_same(lambda lib: lib.grad(
        lambda v: (lib.nn.relu(v) + lib.nn.gelu(v) + lib.nn.silu(v)).sum()), x), str)


def test_a_custom_call_in_a_scan_body_under_eval_shape_is_no_leak():
    # haiku's VanillaRNN under dynamic_unroll: a scan whose body calls a custom_jvp
    def make(lib):
        f = _sin_jvp(lib)

        def run(xs, h):
            w = lib.numpy.ones((3, 3), np.float32)

            def step(h, x):
                h = f(x @ w + h)
                return h, h
            return lib.lax.scan(step, h, xs)[1]
        return lambda xs, h: lib.eval_shape(run, xs, h).shape

    xs, h = np.ones((5, 3), np.float32), np.zeros(3, np.float32)
    assert _same(make, xs, h).tolist() == [5, 3]


def test_tracers_kept_outside_are_still_reported():
    x = np.ones(3, np.float32)

    def to_global(lib):
        def f(v):
            LEAKED.append(v * 2.0)
            return v
        return lib.jit(f)

    def through_a_custom_call_and_a_global(lib):
        f = _sin_jvp(lib)

        def g(v):
            w = v * 3.0
            LEAKED.append((w,))
            return f(w)
        return lib.jit(g)

    def in_a_closure(lib):
        def f(v):
            w = v + 1.0
            LEAKED.append(lambda: w)
            return v
        return lib.jit(f)

    class Box:
        pass
    box = Box()

    def on_an_object_of_a_running_function(lib):
        def f(v):
            box.value = lib.numpy.exp(v)
            return v
        return lib.jit(f)

    for make in (to_global, through_a_custom_call_and_a_global, in_a_closure,
                 on_an_object_of_a_running_function):
        assert _same(make, x) == "leak", make.__name__
        box.__dict__.clear()


def test_a_leak_names_the_tracer_and_its_holder():
    LEAKED.clear()

    @mjax.jit
    def f(v):
        LEAKED.append(v * 2.0)
        return v
    with pytest.raises(Exception, match=r"Leaked trace.*\n\n.*float32\[3\].*"
                                        r"test_leak_check.py.*referred to by a list"):
        with mjax.checking_leaks():
            f(jnp.ones(3))
    LEAKED.clear()
