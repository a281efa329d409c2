"""Array refs under vmap, grad/vjp (with_refs) and control flow, each case run on mjax
and on JAX (the oracle) with the same program: values, weak types and JAX's errors."""
from __future__ import annotations

import jax
import jax.numpy as jnp_jax
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp_mjax

LIBS = {"jax": (jax, jnp_jax), "mjax": (mjax, jnp_mjax)}


def _plain(x, lib):
    """A case's result as NumPy values (a Ref as its value), with weak types and the
    marker classes' names, so both libraries' results compare."""
    if isinstance(x, (tuple, list)):
        return tuple(_plain(v, lib) for v in x)
    if isinstance(x, lib.Ref):
        return ("Ref", _plain(lib.freeze(x), lib))
    if type(x).__name__ in ("GradRef", "DidntWant"):
        return type(x).__name__
    if isinstance(x, str):
        return x
    return (np.asarray(x), getattr(x, "weak_type", None))


def _run(case, lib_name):
    j, jnp = LIBS[lib_name]
    try:
        return "ok", _plain(case(j, jnp), j)
    except Exception as e:   # (the error's class and first line are compared)
        return "error", (type(e), str(e).split("\n")[0])


def _assert_same(mine, theirs):
    assert type(mine) is type(theirs)
    if isinstance(theirs, tuple) and len(theirs) == 2 and isinstance(theirs[0], np.ndarray):
        np.testing.assert_allclose(mine[0], theirs[0], rtol=1e-6)
        assert mine[0].dtype == theirs[0].dtype and mine[1] == theirs[1]
    elif isinstance(theirs, tuple):
        assert len(mine) == len(theirs)
        for m, t in zip(mine, theirs):
            _assert_same(m, t)
    else:
        assert mine == theirs


# ---- the cases: (jax-like module, its numpy) -> result -------------------------------
def vmap_ref_axis1(j, jnp):
    r = j.new_ref(jnp.zeros((3, 4)))

    def f(x, r):
        r[...] = jnp.sin(x) + r[...]
    j.vmap(f, (1, 1))(jnp.arange(12.).reshape(3, 4), r)
    return r


def vmap_indexed_writes(j, jnp):
    r = j.new_ref(jnp.zeros((3, 2)))

    def f(x, r):
        r[0] = x
        r[1] += x * 2
        r[2] = r[0] * r[1]
    j.vmap(f, (0, 1))(jnp.arange(2.), r)
    return r


def vmap_reads_closed_over_ref(j, jnp):
    r = j.new_ref(jnp.arange(3.))
    return j.vmap(lambda x: x * r[...])(jnp.arange(2.))


def vmap_own_ref(j, jnp):
    def f(x):
        r = j.new_ref(x)
        r[...] += 1.
        return r[...] * 2
    return j.vmap(f)(jnp.arange(3.))


def jit_vmap_scan_writing_ref(j, jnp):
    r = j.new_ref(jnp.zeros(3))

    def f(x, r):
        def body(c, y):
            r[...] += y
            return c, ()
        j.lax.scan(body, 0., jnp.stack([x, x]))
    j.jit(j.vmap(f))(jnp.arange(3.), r)
    return r


def nested_vmap_out_ref(j, jnp):
    def dist(x, y, out_ref):
        out_ref[...] = jnp.sum((x - y) ** 2)
    vecs = jnp.arange(6.).reshape(3, 2)
    out = j.new_ref(jnp.zeros((3, 3)))
    j.vmap(j.vmap(dist, (0, None, 0)), (None, 0, 0))(vecs, vecs, out)
    return out


def vmap_write_closed_over_ref(j, jnp):
    r = j.new_ref(0.)

    def f(x):
        r[...] = x
    j.vmap(f)(jnp.arange(3.))


def vmap_of_cond_writing_ref(j, jnp):
    r = j.new_ref(jnp.zeros(3))

    def f(x, r):
        j.lax.cond(x > 1, lambda: r.__setitem__(..., x), lambda: None)
    j.vmap(f)(jnp.arange(3.), r)
    return r


def grad_writes_stopped_value(j, jnp):
    r = j.new_ref(0.)

    def f(x):
        r[...] += j.lax.stop_gradient(x)
        return x ** 2
    return j.grad(f)(3.), r


def grad_writes_differentiated_value(j, jnp):
    r = j.new_ref(0.)

    def f(x):
        r[...] += x
        return x ** 2
    return j.grad(f)(3.)


def grad_with_ref_argument(j, jnp):
    def f(x, r):
        y = r[...] * x
        r[...] = j.lax.stop_gradient(y)
        return y * x
    r = j.new_ref(2.)
    return j.grad(f)(3., r), r


def jvp_reading_weak_ref(j, jnp):
    r = j.new_ref(2.)

    def f(x):
        return jnp.sin(x) * r[...]
    return j.jit(j.grad(f))(1.), j.jvp(f, (1.,), (1.,))


def custom_vjp_bwd_writes_ref(j, jnp):
    @j.custom_vjp
    def stash(ref, x):
        return x

    def fwd(ref, x):
        return x, ref

    def bwd(ref, g):
        ref[...] = g
        return None, g
    stash.defvjp(fwd, bwd)
    grads = j.new_ref(0.)
    out = j.grad(lambda x, ref: jnp.sin(stash(ref, x) * 2.))(1., grads)
    return out, grads


def with_refs_inside_jit(j, jnp):
    acc = j.new_ref(jnp.zeros(3))

    @j.jit
    def step(x):
        _, f_vjp = j.vjp(lambda x: jnp.sum(x ** 2), x)
        return f_vjp.with_refs(acc)(1.)
    out = step(jnp.arange(3.))
    step(jnp.arange(3.))
    return out, acc


def with_refs_markers(j, jnp):
    _, f_vjp = j.vjp(lambda x, y: x * y, 2., 3.)
    acc = j.new_ref(1.)
    return (f_vjp.with_refs(j.ad.DontWant(), j.ad.GradValue())(1.),
            f_vjp.with_refs(acc, j.ad.DontWant())(1.), acc)


def with_refs_eager_accumulates_weak(j, jnp):
    acc = j.new_ref(0.)
    _, f_vjp = j.vjp(jnp.sin, 1.0)
    for _ in range(2):
        f_vjp.with_refs(acc)(1.0)
    return acc


def vjp_of_ref_primal(j, jnp):
    x_ref = j.new_ref(2.)

    def g(r):
        r[...] = jnp.sin(r[...])
        return r[...] ** 2
    y, g_vjp = j.vjp(g, x_ref)
    result = [y, x_ref]
    try:
        g_vjp(1.)
    except ValueError as e:
        result.append(str(e))
    return tuple(result[:2]), result[2]


def microbatch_accumulation_in_scan(j, jnp):
    ws = jnp.arange(12.).reshape(3, 2, 2) / 10

    def loss(ws, xs):
        act, _ = j.lax.scan(lambda x, w: (jnp.tanh(x @ w), None), xs, ws)
        return jnp.mean(act)

    acc = j.new_ref(jnp.zeros_like(ws))

    def mubatch(_, xs):
        l, f_vjp = j.vjp(lambda w: loss(w, xs), ws)
        f_vjp.with_refs(acc)(jnp.ones_like(l))
        return (), l
    (), losses = j.lax.scan(mubatch, (), jnp.arange(24.).reshape(4, 3, 2) / 24)
    return j.freeze(acc), losses


def jit_aliasing_errors(j, jnp):
    r = j.new_ref(0.)

    def twice(a, b):
        a[...] = 1.
    messages = []
    try:
        j.jit(twice)(r, r)
    except ValueError as e:
        messages.append(str(e).split(" when tracing")[0])

    def both(b):
        b[...] = r[...]
    try:
        j.jit(both)(r)
    except ValueError as e:
        messages.append(str(e).split(", a mutable")[1])
    return tuple(messages)


def empty_ref_in_jit(j, jnp):
    @j.jit
    def f(x):
        r = j.empty_ref(j.typeof(x))
        r[...] = x * 2
        return j.freeze(r)
    return f(jnp.ones(3))


def empty_ref_outside_jit(j, jnp):
    return j.empty_ref(j.typeof(jnp.ones(3)))


def vmap_reads_at_batched_index(j, jnp):
    table = j.new_ref(jnp.arange(12.).reshape(4, 3))
    rows = j.new_ref(jnp.arange(24.).reshape(2, 4, 3))
    idx = jnp.array([3, 0, 2])
    return (j.vmap(lambda i: table[i])(idx), j.vmap(lambda i: table[i, 1])(idx),
            j.vmap(lambda i, r: r[i], (None, 0))(2, rows),
            j.vmap(lambda i, r: r[i, 2], (0, 0))(jnp.array([1, 3]), rows))


def vmap_of_fori_and_while_writing_refs(j, jnp):
    r = j.new_ref(jnp.zeros(3))

    def f(x, r):
        def body(i, c):
            r[...] += c
            return c + 1.
        j.lax.fori_loop(0, 3, body, x)
    j.vmap(f)(jnp.arange(3.), r)
    return r


def grad_of_loops_over_refs(j, jnp):
    count = j.new_ref(0.)

    def f(x):
        def body(i, c):
            count[...] += 1.
            return c * x
        return j.lax.fori_loop(0, 3, body, 1.)

    def g(x):
        r = j.new_ref(x)

        def body(c, y):
            r[...] = r[...] * y
            return c, None
        j.lax.scan(body, None, jnp.arange(1., 4.))
        return r[...]
    return j.grad(f)(2.), count, j.grad(g)(2.), j.vmap(j.grad(g))(jnp.arange(3.))


def ref_primals_of_jvp_and_grad(j, jnp):
    r = j.new_ref(0.)
    errors = []

    def add(x, r):
        r[...] += x
    for call in (lambda: j.jvp(add, (1., r), (1., 0.)),
                 lambda: j.grad(lambda r: r[...] * 2.)(r)):
        try:
            call()
        except ValueError as e:
            errors.append(type(e).__name__)
    return tuple(errors)


def vmap_of_while_writing_refs_masks_finished_elements(j, jnp):
    r = j.new_ref(jnp.zeros((3, 2)))

    def f(x, r):
        def body(c):
            r[0] += 1.
            r[1] = r[1] + c
            return c + 1.
        j.lax.while_loop(lambda c: c < x, body, 0.)
    j.vmap(f)(jnp.array([0., 3., 1.]), r)
    return r


def vmap_inconsistent_sizes_names_the_ref(j, jnp):
    j.vmap(lambda x, r: None, (0, 1))(jnp.arange(3.), j.new_ref(jnp.zeros((3, 2))))


def eager_vjp_and_linearize_closing_over_refs(j, jnp):
    r = j.new_ref(2.)

    def f(x):
        r[...] = r[...] * j.lax.stop_gradient(x)     # (runs once, in the forward)
        return jnp.sin(x) * r[...]
    y, f_vjp = j.vjp(f, 1.5)
    first = (y, j.freeze(r), f_vjp(1.))
    r[...] = 100.                                      # (the saved residuals stay)
    again = (f_vjp(1.), j.jit(lambda g: g(1.))(f_vjp))
    y2, lin = j.linearize(f, 1.5)
    return first, again, (y2, r, lin(1.))


def checkpoint_writing_a_ref_reruns_the_write(j, jnp):
    r = j.new_ref(0.)

    @j.checkpoint
    def f(x):
        r[...] += 1.
        return jnp.sin(x)
    return j.grad(f)(1.), r


def vmap_writes_at_batched_index(j, jnp):
    r = j.new_ref(jnp.zeros((3, 4, 2)))

    def f(i, x, r):
        r[i] = x
        r[i, 1] += 1.
        return j.ref.swap(r, (i + 1, 0), x[0] * 10)
    return j.vmap(f)(jnp.array([0, 2, 1]), jnp.arange(6.).reshape(3, 2), r), r


def refs_of_prng_keys(j, jnp):
    r = j.new_ref(j.random.key(0))
    first = j.random.normal(r[...], (2,))
    r[...] = j.random.split(r[...])[0]

    @j.jit
    def draw():
        k1, k2 = j.random.split(r[...])
        r[...] = k1
        return j.random.normal(k2, (2,))

    @j.jit
    def draw_from(rr):
        k1, k2 = j.random.split(rr[...])
        rr[...] = k1
        return j.random.uniform(k2)
    rs = j.new_ref(j.random.split(j.random.key(1), 3))
    return (first, draw(), draw(), draw_from(r), j.random.key_data(j.freeze(r)),
            j.vmap(lambda kr: j.random.normal(kr[...]))(rs), str(j.typeof(r)))


def weak_refs_as_arguments_and_made_in_traces(j, jnp):
    r = j.new_ref(2.)       # (reads weakly typed, as a ref of a Python scalar)

    def g(x):
        inner = j.new_ref(3.)
        return x * inner[...]
    return (j.jit(lambda r: r[...])(r), j.jit(lambda r, x: r[...] * x)(r, 3.),
            j.grad(lambda x, r: x * r[...])(1., r), j.jit(j.grad(lambda x, r: x * r[...]))(1., r),
            j.grad(g)(1.), j.jit(j.grad(g))(1.), r)


CASES = [weak_refs_as_arguments_and_made_in_traces, refs_of_prng_keys, vmap_writes_at_batched_index, eager_vjp_and_linearize_closing_over_refs,
         checkpoint_writing_a_ref_reruns_the_write, vmap_of_while_writing_refs_masks_finished_elements,
         vmap_inconsistent_sizes_names_the_ref, ref_primals_of_jvp_and_grad, vmap_reads_at_batched_index, vmap_of_fori_and_while_writing_refs,
         grad_of_loops_over_refs, empty_ref_in_jit, empty_ref_outside_jit, vmap_ref_axis1, vmap_indexed_writes, vmap_reads_closed_over_ref, vmap_own_ref,
         jit_vmap_scan_writing_ref, nested_vmap_out_ref, vmap_write_closed_over_ref,
         vmap_of_cond_writing_ref, grad_writes_stopped_value,
         grad_writes_differentiated_value, grad_with_ref_argument, jvp_reading_weak_ref,
         custom_vjp_bwd_writes_ref, with_refs_inside_jit, with_refs_markers,
         with_refs_eager_accumulates_weak, vjp_of_ref_primal,
         microbatch_accumulation_in_scan, jit_aliasing_errors]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__)
def test_refs_under_transformations_match_jax(case):
    (kind, theirs), (my_kind, mine) = _run(case, "jax"), _run(case, "mjax")
    assert my_kind == kind, (mine, theirs)
    if kind == "error":
        assert issubclass(mine[0], theirs[0]) and mine[1] == theirs[1], (mine, theirs)
    else:
        _assert_same(mine, theirs)


def test_grad_markers_are_jax_classes_and_pytrees():
    assert {n for n in dir(jax.ad) if not n.startswith("_")} <= set(dir(mjax.ad))
    assert mjax.tree_util.tree_leaves([mjax.ad.DidntWant(), mjax.ad.GradRef(), 1]) == [1]
    assert mjax.tree_util.tree_leaves(mjax.ad.GradValue()) == [mjax.ad.GradValue()]
