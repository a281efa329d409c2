"""Eager differentiation APIs (and vmap) run the user's Python function on every call, as
JAX's do, and reuse the executable of a program compiled before (no second lowering).

Counts of Python calls and results are compared with real jax (the test-only oracle).
"""
from __future__ import annotations

import gc
import tracemalloc

import numpy as np
import pytest

import mjax
import mjax.numpy as mnp
from mjax import jitted as jitted_module
from mjax.ad import linear_split
from mjax.ad import staging as ad_staging

import jax  # noqa: E402  (the test-only oracle)
import jax.numpy as jnp  # noqa: E402

X = np.array([0.5, 1.0, 1.5], np.float32)
X2 = np.array([-0.25, 2.0, 0.75], np.float32)


def _counting(np_):
    calls = [0]

    def f(x):
        calls[0] += 1
        return np_.sum(np_.sin(x) ** 2 + x * 3.0)

    def fv(x):      # vector-valued, for jacobians and vmap
        calls[0] += 1
        return np_.sin(x) * x + 1.0
    return calls, f, fv


# api name -> how to call it eagerly with (lib, f, fv, x)
CASES = {
    "grad": lambda lib, f, fv, x: lib.grad(f)(x),
    "value_and_grad": lambda lib, f, fv, x: lib.value_and_grad(f)(x),
    "jacfwd": lambda lib, f, fv, x: lib.jacfwd(fv)(x),
    "jacrev": lambda lib, f, fv, x: lib.jacrev(fv)(x),
    "hessian": lambda lib, f, fv, x: lib.hessian(f)(x),
    "jvp": lambda lib, f, fv, x: lib.jvp(fv, (x,), (np.ones_like(x),)),
    "vjp": lambda lib, f, fv, x: lib.vjp(fv, x)[0],
    "vjp_apply": lambda lib, f, fv, x: lib.vjp(fv, x)[1](np.ones_like(x)),
    "linearize": lambda lib, f, fv, x: lib.linearize(fv, x)[1](np.ones_like(x)),
    "vmap": lambda lib, f, fv, x: lib.vmap(fv)(x),
}


def _run(lib, np_, case, xs, reuse):
    """Calls `case` once per x in xs (the same transformed function each time with
    `reuse`); gives the Python call count after each and the results."""
    calls, f, fv = _counting(np_)
    counts, results = [], []
    if reuse:
        transforms = {"grad": lib.grad, "value_and_grad": lib.value_and_grad,
                      "jacfwd": lib.jacfwd, "jacrev": lib.jacrev, "hessian": lib.hessian,
                      "vmap": lib.vmap}
        t = transforms[case]
        g = t(f if case in ("grad", "value_and_grad", "hessian") else fv)
        for x in xs:
            results.append(g(x))
            counts.append(calls[0])
        return counts, results
    for x in xs:
        results.append(CASES[case](lib, f, fv, x))
        counts.append(calls[0])
    return counts, results


def _close(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert jax.tree_util.tree_structure(g).num_leaves == \
            jax.tree_util.tree_structure(w).num_leaves
        for a, b in zip(jax.tree_util.tree_leaves(g), jax.tree_util.tree_leaves(w)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-6, atol=2e-6)


def test_python_runs_every_call_as_jax():
    # (one test for every API: the fast tier would run a sixth of a parametrized one)
    xs = [X, X, X2]
    for case in CASES:
        got_counts, got = _run(mjax, mnp, case, xs, reuse=False)
        want_counts, want = _run(jax, jnp, case, xs, reuse=False)
        assert got_counts == want_counts, case
        _close(got, want)


def test_reused_transform_runs_every_call_as_jax():
    xs = [X, X, X2, X]
    for case in ["grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "vmap"]:
        got_counts, got = _run(mjax, mnp, case, xs, reuse=True)
        want_counts, want = _run(jax, jnp, case, xs, reuse=True)
        assert got_counts == want_counts, case
        _close(got, want)


@pytest.fixture
def lowerings(monkeypatch):
    """The number of times a jit's program is lowered (jitted.lower_to_stablehlo)."""
    count = [0]
    original = jitted_module.lower_to_stablehlo

    def counting(*args, **kwargs):
        count[0] += 1
        return original(*args, **kwargs)
    monkeypatch.setattr(jitted_module, "lower_to_stablehlo", counting)
    # (an eager vjp/linearize lowers its forward and linear parts itself)
    monkeypatch.setattr(linear_split, "lower_to_stablehlo", counting)
    return count


def test_same_program_is_not_lowered_again(lowerings):
    calls = [0]

    def f(x):         # (functions of this test alone: no other test's program matches)
        calls[0] += 1
        return mnp.sum(mnp.cos(x) * 1.375)

    def fv(x):
        calls[0] += 1
        return mnp.cos(x) * 1.375

    for case in ["grad", "value_and_grad", "jacfwd", "jacrev", "hessian", "jvp", "vmap",
                 "vjp", "vjp_apply", "linearize"]:
        before, n = lowerings[0], calls[0]
        for x in [X, X, X2]:     # (the same call site: locations are in the program)
            CASES[case](mjax, f, fv, x)
            if x is X:
                first = lowerings[0]
        assert first > before, case           # the first call lowered
        assert lowerings[0] == first, case    # the others reused its executable
        assert calls[0] == n + 3, case


def test_value_dependent_program_follows_the_values(lowerings):
    def make(np_, lib):
        calls = [0]

        def f(x):
            calls[0] += 1
            if x[0] > 0:          # Python reads the value: two programs
                return np_.sum(np_.sin(x))
            return np_.sum(x * x)
        return calls, lib.grad(f)
    m_calls, mg = make(mnp, mjax)
    j_calls, jg = make(jnp, jax)
    for x in [X, X2, X, X2, X]:
        np.testing.assert_allclose(mg(x), jg(x), rtol=1e-6)
        assert m_calls[0] == j_calls[0]
    assert lowerings[0] == 2       # one per branch


def test_held_python_outputs_are_this_calls():
    def make(np_, lib):
        calls = [0]

        def f(x):
            calls[0] += 1
            return np_.sum(x * x), f"call {calls[0]}"
        return lib.grad(f, has_aux=True)
    mg, jg = make(mnp, mjax), make(jnp, jax)
    for x in [X, X, X2]:
        (gm, am), (gj, aj) = mg(x), jg(x)
        np.testing.assert_allclose(gm, gj, rtol=1e-6)
        assert am == aj


def test_captured_values_are_this_calls():
    def run(np_, lib):
        outs = []
        for k in range(3):
            w = np_.asarray(np.arange(64, dtype=np.float32).reshape(8, 8) * (k + 1))

            def f(x):
                return np_.sum(np_.tanh(w @ x))
            outs.append(np.asarray(lib.grad(f)(np.linspace(-1, 1, 8, dtype=np.float32))))
        return outs
    for a, b in zip(run(mnp, mjax), run(jnp, jax)):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def test_float0_outputs():
    n = np.array(3, np.int32)
    for _ in range(2):
        out = mjax.grad(lambda x, n: mnp.sum(x) * n, argnums=(0, 1), allow_int=True)(X, n)
        ref = jax.grad(lambda x, n: jnp.sum(x) * n, argnums=(0, 1), allow_int=True)(X, n)
        for a, b in zip(jax.tree_util.tree_leaves(out), jax.tree_util.tree_leaves(ref)):
            assert np.asarray(a).dtype == np.asarray(b).dtype
            np.testing.assert_array_equal(np.asarray(a), np.asarray(b))


def test_disable_jit_still_runs_every_call():
    calls, f, _ = _counting(mnp)
    with mjax.disable_jit():
        g = mjax.grad(f)
        g(X)
        g(X)
    assert calls[0] == 2


def test_repeated_identical_calls_keep_no_memory():
    calls, f, _ = _counting(mnp)
    g = mjax.grad(f)

    def call(n):      # (one call site: its location is part of the program)
        for _ in range(n):
            g(X)
    call(300)
    gc.collect()
    n_programs = len(ad_staging._PROGRAMS)
    tracemalloc.start()
    try:
        call(600)     # (warm under tracemalloc: what first calls allocate is counted)
        gc.collect()
        before = tracemalloc.take_snapshot()
        call(300)
        gc.collect()
        after = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    grown = sum(s.size_diff for s in after.compare_to(before, "filename"))
    assert len(ad_staging._PROGRAMS) == n_programs
    assert calls[0] == 1200
    # (a call's module kept would be kilobytes per call)
    assert grown < 100 * 300, grown


def test_vjp_and_linearize_reuse_their_parts(lowerings):
    # the first vjp lowers its forward part, its first pullback call the bwd part, and
    # likewise linearize; later calls lower nothing, and every result is this call's
    # (captured values and aux too)
    def run(np_, lib):
        calls, out, counts = [0], [], []
        for k, x in enumerate([X, X, X2, X]):
            w = np_.asarray(np.arange(9, dtype=np.float32).reshape(3, 3) * (k % 3 + 1))

            def f(x):
                calls[0] += 1
                y = np_.tanh(w @ x) * 2.0
                return y, {"aux": np_.sum(y), "name": "f"}
            y, pb, aux = lib.vjp(f, x, has_aux=True)
            out += [y, pb(np.ones(3, np.float32) * (k + 1))[0], aux["aux"], aux["name"]]
            y, fl = lib.linearize(lambda x: f(x)[0], x)
            out += [y, fl(x * 0.5), fl(x)]
            counts.append(lowerings[0])
        return calls[0], out, counts
    (m_calls, got, counts), (j_calls, want, _) = run(mnp, mjax), run(jnp, jax)
    assert m_calls == j_calls
    assert counts == [counts[0]] * len(counts), counts
    for g, w in zip(got, want, strict=True):
        if isinstance(w, str):
            assert g == w
        else:
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-6, atol=2e-6)
