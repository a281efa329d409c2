"""Control-flow bodies, checkpointed functions and jitted functions are traced once per
function and argument types, as JAX traces them (mjax/tracing/region_cache.py, mjax/ad/remat.py,
mjax/jit/traces.py: a call, .trace/.lower and make_jaxpr share the traces): the number of
times each Python function runs is compared with real jax's, and the reused traces compute
what NumPy computes."""
import collections

import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as mjnp
from frontend_util import tol

W = np.arange(12.0, dtype=np.float32).reshape(3, 4)   # (too big to inline: captured)


def _scenario(lib, name):
    """Runs scenario `name` with `lib` (jax or mjax); returns (calls per function,
    results)."""
    jnp, lax = lib.numpy, lib.lax
    calls = collections.Counter()

    def body(c, x):
        calls["body"] += 1
        return c + x @ W[:, :3], c.sum()

    def branch(v):
        calls["branch"] += 1
        return v * 2

    def wcond(v):
        calls["wcond"] += 1
        return v[0] < 10

    def wbody(v):
        calls["wbody"] += 1
        return v + 1

    def fbody(i, v):
        calls["fbody"] += 1
        return v + i

    def ck(v):
        calls["ck"] += 1
        return jnp.sin(v) * 2

    ckf = lib.checkpoint(ck)
    xs = jnp.ones((4, 3))
    results = []
    if name == "scan_in_two_jits":
        for wrap in (lambda x: lax.scan(body, jnp.zeros(3), x),
                     lambda x: lax.scan(body, jnp.zeros(3), x * 2)):
            results.append(lib.jit(wrap)(xs))
    elif name == "scan_twice_in_one_jit":
        results.append(lib.jit(lambda x: (lax.scan(body, jnp.zeros(3), x),
                                          lax.scan(body, jnp.ones(3), x)))(xs))
    elif name == "scan_other_types":
        results.append(lib.jit(lambda x: lax.scan(body, jnp.zeros(3), x))(xs))
        results.append(lib.jit(lambda x: lax.scan(body, jnp.zeros(3), x))(
            jnp.ones((7, 3))))                     # (another length: the same body types)
        results.append(lib.jit(lambda x: lax.scan(body, jnp.zeros((2, 3)), x))(
            jnp.ones((4, 2, 3))))
    elif name == "scan_eager_after_jit":
        results.append(lib.jit(lambda x: lax.scan(body, jnp.zeros(3), x))(xs))
        results.append(lax.scan(body, jnp.zeros(3), xs))
    elif name == "cond_same_branches":
        for p in (True, False):
            results.append(lib.jit(lambda p, v: lax.cond(p, branch, branch, v))(p, xs))
    elif name == "switch":
        results.append(lib.jit(lambda i, v: lax.switch(i, [branch, branch, ck], v))(1, xs))
    elif name == "while":
        for k in (1, 2):
            results.append(lib.jit(lambda v: lax.while_loop(wcond, wbody, v * k))(xs[0]))
    elif name == "fori":
        for k in (1, 2):
            results.append(lib.jit(lambda v: lax.fori_loop(0, 3, fbody, v * k))(xs[0]))
            results.append(lib.jit(lambda n, v: lax.fori_loop(0, n, fbody, v * k))(3, xs[0]))
    elif name == "checkpoint":
        results.append(lib.jit(ckf)(xs))
        results.append(lib.grad(lambda v: ckf(v).sum())(xs))
        results.append(lib.jit(lib.grad(lambda v: ckf(v * 2).sum()))(xs))
    elif name == "grad_of_scan":
        for k in (1.0, 3.0):
            results.append(lib.grad(
                lambda x: lax.scan(body, jnp.zeros(3), x * k)[0].sum())(xs))
    elif name == "jit_then_stages":
        f = lambda v: ck(v) + 1          # noqa: E731  (one function object, several jits)
        results.append(lib.jit(f)(xs))
        lib.jit(f).lower(xs)
        lib.jit(f).trace(xs)
        lib.make_jaxpr(f)(xs)
        results.append(lib.jit(f).lower(xs).compile()(xs))
    elif name == "lower_then_call":
        lib.jit(ck).lower(xs[0])
        results.append(lib.jit(ck)(xs[0]))
        results.append(lib.jit(ck)(xs))             # (other types: traced again)
    elif name == "eval_shape_twice":
        for _ in range(2):
            results.append(np.asarray(lib.eval_shape(ck, xs).shape))
    elif name == "jit_clear_cache":
        jf = lib.jit(ck)
        results.append(jf(xs))
        jf.clear_cache()
        results.append(jf(xs))
    elif name == "map":
        for k in (1, 2):
            results.append(lib.jit(lambda x: lax.map(branch, x * k))(xs))
    else:
        raise ValueError(name)
    return dict(calls), [np.asarray(r) for r in jax.tree_util.tree_leaves(results)]


SCENARIOS = ["scan_in_two_jits", "scan_twice_in_one_jit", "scan_other_types",
             "scan_eager_after_jit", "cond_same_branches", "switch", "while", "fori",
             "checkpoint", "grad_of_scan", "map", "jit_then_stages", "lower_then_call",
             "eval_shape_twice", "jit_clear_cache"]


@pytest.mark.parametrize("name", SCENARIOS)
def test_traced_as_often_as_jax(name):
    mine, my_results = _scenario(mjax, name)
    theirs, their_results = _scenario(jax, name)
    assert mine == theirs
    assert len(my_results) == len(their_results)
    for a, b in zip(my_results, their_results):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_reused_body_calling_a_jit_in_another_program():
    # The body's nested jit is copied into each program that reuses the body.
    calls = []

    @mjax.jit
    def inner(v):
        return mjnp.tanh(v)

    def body(c, x):
        calls.append(1)
        return inner(c + x), c.sum()

    def f(xs):
        return mjax.lax.scan(body, mjnp.zeros(3), xs)

    xs = np.linspace(0, 1, 15, dtype=np.float32).reshape(5, 3)
    outs = [mjax.jit(f)(xs), mjax.jit(lambda x: f(x * 1))(xs),
            mjax.jit(lambda x: (f(x), f(x)))(xs)[1]]
    c, ys = np.zeros(3, np.float32), []
    for x in xs:
        ys.append(c.sum())
        c = np.tanh(c + x)
    # (jax's scan on the same platform too: a TPU's tanh is not NumPy's, by about 1e-5)
    jc, jys = jax.jit(lambda xs: jax.lax.scan(
        lambda c, x: (jax.numpy.tanh(c + x), c.sum()), jax.numpy.zeros(3), xs))(xs)
    for carry, y in outs:
        np.testing.assert_allclose(carry, jc, rtol=1e-6)
        np.testing.assert_allclose(y, jys, rtol=1e-6)
        np.testing.assert_allclose(carry, c, rtol=tol(1e-6, 3e-5))
        np.testing.assert_allclose(y, ys, rtol=tol(1e-6, 3e-5))
    assert len(calls) == 1
    text = str(mjax.make_jaxpr(f)(xs))
    assert "name=inner" in text, text


def test_not_kept_when_the_body_captures_a_tracer():
    # A body closing over a value of the enclosing trace is traced at each use (the value
    # exists only in that trace).
    calls = []
    state = {}

    def body(c, x):
        calls.append(1)
        return c + x * state["scale"], c

    def f(xs, s):
        state["scale"] = s
        return mjax.lax.scan(body, mjnp.zeros(3), xs)[0]

    xs = np.ones((2, 3), np.float32)
    a = mjax.jit(f)(xs, 2.0)
    b = mjax.jit(lambda x, s: f(x, s))(xs, 3.0)
    np.testing.assert_allclose(a, [4.0] * 3)
    np.testing.assert_allclose(b, [6.0] * 3)
    assert len(calls) == 2


def test_other_options_retrace():
    calls = []

    def body(c, x):
        calls.append(1)
        return c + x, c

    xs = np.ones((2, 3), np.float32)
    mjax.jit(lambda x: mjax.lax.scan(body, mjnp.zeros(3), x))(xs)
    # ('high': another value than outside, None, or the 'highest' the suite's environment
    # sets on a TPU)
    with mjax.default_matmul_precision("high"):
        mjax.jit(lambda x: mjax.lax.scan(body, mjnp.zeros(3), x))(xs)
    with mjax.named_scope("outer"):
        mjax.jit(lambda x: mjax.lax.scan(body, mjnp.zeros(3), x))(xs)
    assert len(calls) == 3


def test_clear_caches_forgets_kept_bodies():
    calls = []

    def body(c, x):
        calls.append(1)
        return c + x, c

    def ck(v):
        calls.append(2)
        return mjnp.sin(v)

    xs = np.ones((2, 3), np.float32)
    for _ in range(2):
        mjax.jit(lambda x: mjax.lax.scan(body, mjnp.zeros(3), x))(xs)
        mjax.jit(lambda x: mjax.checkpoint(ck)(x))(xs)
        mjax.clear_caches()
    assert calls == [1, 2, 1, 2]
