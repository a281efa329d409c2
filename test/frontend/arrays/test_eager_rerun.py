"""Eager differentiation APIs (and vmap) run the user's Python function on every call, as
JAX's do, and reuse the executable of a program compiled before (no second lowering).

Counts of Python calls and results are compared with real jax (the test-only oracle).
"""
from __future__ import annotations

import functools
import gc
import tracemalloc
import weakref

import numpy as np
import pytest

import mjax
import mjax.numpy as mnp
from mjax.jit import jitted as jitted_module
from mjax.ad import staging as ad_staging

import jax  # noqa: E402  (the test-only oracle)
import jax.numpy as jnp  # noqa: E402
from frontend_util import tol  # noqa: E402

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


def _close(got, want, rtol=2e-6):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert jax.tree_util.tree_structure(g).num_leaves == \
            jax.tree_util.tree_structure(w).num_leaves
        for a, b in zip(jax.tree_util.tree_leaves(g), jax.tree_util.tree_leaves(w)):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=rtol, atol=rtol)


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


# ---- custom_jvp / custom_vjp: rule handles are described by their sources -----------------
def _custom_functions(lib, np_, scale):
    """A custom_jvp and a custom_vjp counting their Python runs; `scale[0]` is a global
    value the jvp rule reads when it runs."""
    counts = {"f": 0, "jvp": 0, "g": 0, "fwd": 0, "bwd": 0}

    @lib.custom_jvp
    def f(x):
        counts["f"] += 1
        return np_.sin(x)

    @f.defjvp
    def f_jvp(primals, tangents):
        counts["jvp"] += 1
        (x,), (t,) = primals, tangents
        return f(x), np_.cos(x) * t * scale[0]

    @lib.custom_vjp
    def g(x):
        counts["g"] += 1
        return x * x

    def g_fwd(x):
        counts["fwd"] += 1
        return g(x), x

    def g_bwd(x, ct):
        counts["bwd"] += 1
        return (2.0 * x * ct * 1.5,)
    g.defvjp(g_fwd, g_bwd)
    return counts, f, g


def _repeat(lib, np_, loss_of, xs, scales=None):
    """grad of loss_of(f, g, np_) at each x (one transformed function, one call site);
    the results and the Python run counts after each call."""
    scale = [1.0]
    counts, f, g = _custom_functions(lib, np_, scale)
    calls = [0]

    def loss(x):
        calls[0] += 1
        return loss_of(lib, f, g, np_, x)
    grad = lib.grad(loss)
    out, seen = [], []
    for k, x in enumerate(xs):
        if scales is not None:
            scale[0] = scales[k]
        out.append(grad(x))
        seen.append((calls[0], dict(counts)))
    return out, seen


CUSTOM_LOSSES = {
    "relu": lambda lib, f, g, np_, x: np_.sum(lib.nn.relu(x * 2.0 - 1.5) ** 2),
    "nn": lambda lib, f, g, np_, x: lib.nn.logsumexp(lib.nn.gelu(lib.nn.softplus(x) * x)),
    "custom_jvp": lambda lib, f, g, np_, x: np_.sum(f(x) * x),
    "custom_vjp": lambda lib, f, g, np_, x: np_.sum(g(x) + x),
}


@pytest.mark.parametrize("case", sorted(CUSTOM_LOSSES))
def test_custom_rules_program_is_reused(lowerings, case):
    xs = [X, X, X2, X]
    before = lowerings[0]
    got, got_seen = _repeat(mjax, mnp, CUSTOM_LOSSES[case], xs)
    lowered = lowerings[0] - before
    want, want_seen = _repeat(jax, jnp, CUSTOM_LOSSES[case], xs)
    assert got_seen == want_seen        # the function and its rules ran as in JAX
    _close(got, want)
    if case == "custom_vjp":
        # (its bwd is traced as the program lowers, and JAX runs it at every call:
        # reusing the program would skip it)
        assert lowered == len(xs)
    else:
        assert lowered == 1


def test_custom_rule_reading_a_changing_global_is_not_stale(lowerings):
    # The jvp rule runs (is traced) at every call, as in JAX: the value it reads is in
    # the program, so a changed value is another program, the same value the same one.
    xs, scales = [X, X, X, X], [1.0, 2.5, 1.0, 2.5]
    before = lowerings[0]
    got, got_seen = _repeat(mjax, mnp, CUSTOM_LOSSES["custom_jvp"], xs, scales)
    assert lowerings[0] - before == 2
    want, want_seen = _repeat(jax, jnp, CUSTOM_LOSSES["custom_jvp"], xs, scales)
    assert got_seen == want_seen
    _close(got, want)
    assert not np.allclose(np.asarray(got[0]), np.asarray(got[1]))


def test_custom_rule_static_arguments_are_in_the_program_key(lowerings):
    def make(lib, np_):
        @functools.partial(lib.custom_jvp, nondiff_argnums=(1,))
        def h(x, k):
            return np_.sin(x) * k

        @h.defjvp
        def h_jvp(k, primals, tangents):
            (x,), (t,) = primals, tangents
            return h(x, k), np_.cos(x) * t * k * k      # (not the true derivative)

        return lambda x, k: lib.grad(lambda x: np_.sum(h(x, k)))(x)
    m, j = make(mjax, mnp), make(jax, jnp)
    before = lowerings[0]
    got = [m(X, k) for k in (2, 3, 2, 3.0)]
    assert lowerings[0] - before == 3       # (3 and 3.0: other types, another program)
    _close(got, [j(X, k) for k in (2, 3, 2, 3.0)])


def test_custom_jvp_vjp_and_linearize_reuse_their_parts(lowerings):
    def run(lib, np_):
        out, counts = [], []
        for x in [X, X, X2]:
            y, pb = lib.vjp(lambda x: lib.nn.relu(x - 1.0) * x, x)
            out += [y, pb(x)[0]]
            y, fl = lib.linearize(lambda x: lib.nn.gelu(x) * x, x)
            out += [y, fl(x)]
            counts.append(lowerings[0])
        return out, counts
    (got, counts), (want, _) = run(mjax, mnp), run(jax, jnp)
    assert counts == [counts[0]] * len(counts), counts
    _close(got, want)


def test_custom_vjp_bwd_runs_at_every_pullback_call():
    # JAX runs a custom_vjp's bwd each time the pullback is called; the program it traces
    # is the same, so XLA's executable is reused (only the lowering runs again).
    def run(lib, np_):
        counts, f, g = _custom_functions(lib, np_, [1.0])
        y, pb = lib.vjp(g, X)
        seen = [dict(counts)]
        outs = [pb(np.ones(3, np.float32))[0], pb(X)[0]]
        seen.append(dict(counts))
        return outs, seen
    (got, got_seen), (want, want_seen) = run(mjax, mnp), run(jax, jnp)
    assert got_seen == want_seen
    assert got_seen[-1]["bwd"] == 2
    _close(got, want)


@pytest.mark.parametrize("api", ["grad", "hessian", "jacfwd", "jacrev", "jvp", "vjp",
                                 "linearize", "vmap_grad"])
def test_custom_rules_run_as_without_reuse(monkeypatch, api):
    # Every API over custom_jvp/custom_vjp functions: the Python runs with programs
    # reused are those without (where no handle could be described, as before).
    def run():
        counts, f, g_vjp = _custom_functions(mjax, mnp, [1.0])
        # (forward mode through a custom_vjp function raises, as in JAX)
        g = mnp.tanh if api in ("hessian", "jacfwd", "jvp", "linearize") else g_vjp

        def h(x):
            return mnp.sum(f(x) * g(x)) + mnp.sum(mjax.nn.relu(x))

        def hv(x):
            return f(x) * g(x) + mjax.nn.relu(x)
        ones = np.ones(3, np.float32)
        calls = {
            "grad": lambda x: mjax.grad(h)(x),
            "hessian": lambda x: mjax.hessian(h)(x),
            "jacfwd": lambda x: mjax.jacfwd(hv)(x),
            "jacrev": lambda x: mjax.jacrev(hv)(x),
            "jvp": lambda x: mjax.jvp(hv, (x,), (ones,))[1],
            "vjp": lambda x: mjax.vjp(hv, x)[1](ones)[0],
            "linearize": lambda x: mjax.linearize(hv, x)[1](ones),
            "vmap_grad": lambda x: mjax.vmap(mjax.grad(h))(np.stack([x, x])),
        }
        out, seen = [], []
        for x in [X, X, X2, X]:
            out.append(calls[api](x))
            seen.append(dict(counts))
        return out, seen
    got, got_seen = run()
    # (no reuse of programs with custom rules: grad's and vjp/linearize's tables both
    # ask ad_staging.program_identity, which asks stable_rules)
    monkeypatch.setattr(ad_staging, "stable_rules", lambda text: None)
    want, want_seen = run()
    assert got_seen == want_seen
    _close(got, want)


def test_program_table_holds_custom_functions_weakly():
    # A custom_jvp defined inside the function (a new one, closing over a tracer, at
    # every call): the table of programs refers to it weakly (the registry of rule
    # sources, bounded, is what keeps it for a while).
    def make(lib, np_, made):
        def loss(x, c):
            @lib.custom_jvp
            def f(y):
                return np_.sin(y) * c

            @f.defjvp
            def f_jvp(primals, tangents):
                return f(primals[0]), tangents[0] * c
            made.append(weakref.ref(f))
            return np_.sum(f(x))
        return lib.grad(loss)
    made = []
    g = make(mjax, mnp, made)
    got = [g(X, np.float32(k)) for k in (1, 2, 2)]
    held = [x for program in list(ad_staging._PROGRAMS) if program[0] != "linear_split"
            for rule in program[2] for x in rule]
    assert any(isinstance(x, weakref.ref) and x() is made[0]() for x in held)
    assert not any(x is r() for x in held for r in made)
    _close(got, [make(jax, jnp, [])(X, np.float32(k)) for k in (1, 2, 2)])


def test_call_sites_are_other_programs_and_each_is_found_again(lowerings):
    # Locations are in the program (an error or a profile names the op's line): two
    # lines are two programs; a line called again finds its own (the table of modules
    # seen, by their bytecode, maps each to its text's identity).
    def fv(x):
        return mnp.sin(x) * 1.625 + x

    def first(x):
        return mjax.vmap(fv)(x)

    def second(x):
        return mjax.vmap(fv)(x)
    before = lowerings[0]
    got = [first(X), first(X), second(X), second(X2), first(X2)]
    assert lowerings[0] - before == 2
    want = np.sin(X) * 1.625 + X
    want2 = np.sin(X2) * 1.625 + X2
    _close(got, [want, want, want, want2, want2])


def test_identity_from_bytecode_is_the_texts(monkeypatch):
    from mjax.tracing.staging import trace_function
    texts = [0]
    original = ad_staging._identity_of_text

    def counting(module, refused):
        texts[0] += 1
        return original(module, refused)
    monkeypatch.setattr(ad_staging, "_identity_of_text", counting)

    def f(x):
        return mnp.cos(x) * 2.875

    def f_elsewhere(x):     # (the same program at other lines: other locations)
        return mnp.cos(x) * 2.875
    a, b, other = (trace_function(h, (X,), {}).module for h in (f, f, f_elsewhere))
    ids = [ad_staging.program_identity(m) for m in (a, b, other)]
    assert ids[0] == ids[1] == original(b, (ad_staging._USER_PRIMITIVE,))
    assert ids[2] != ids[0] and ids[2] == original(other, (ad_staging._USER_PRIMITIVE,))
    assert texts[0] == 2         # (b was found by its bytecode)


def test_eager_program_is_named_as_jax_when_compiled(monkeypatch):
    # The module is named (jit_<name>, its arguments' locations) only when it is
    # compiled; calls finding it compile nothing.
    names = []
    original = jitted_module.lower_to_stablehlo

    def recording(module, *args, **kwargs):
        text = module.operation.get_asm(enable_debug_info=True)
        names.append((str(module.operation.attributes["sym_name"]),
                      text.count('loc("args[0]")') > 0, text.count('loc("args[1]")') > 0))
        return original(module, *args, **kwargs)
    monkeypatch.setattr(jitted_module, "lower_to_stablehlo", recording)

    def g(x, y):
        return mnp.tanh(x) * y - 0.8125
    for _ in range(3):
        got = mjax.vmap(g)(X, X2)
    assert names == [('"jit_vmap_impl"', True, True)]
    _close([got], [np.tanh(X) * X2 - 0.8125], rtol=tol(2e-6, 1e-4))   # (the TPU's tanh)
