"""lax.cond / switch / while_loop / fori_loop / scan / map / associative_scan against jax,
under jit and eagerly, plus their errors."""
import jax
import jax.numpy as jnp_ref
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import lax
from frontend_util import check


def both(build, *args, rtol=1e-5):
    """build(lax_module, numpy_module) -> f; mjax's f (jit and eager) against jax's jit."""
    want = jax.jit(build(jax.lax, jnp_ref))(*args)
    f = build(lax, jnp)
    for got in (mjax.jit(f)(*args), f(*args)):
        for g, w in zip(mjax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
            check(g, w, rtol=rtol)
        assert (mjax.tree_util.tree_structure(got).num_leaves
                == jax.tree_util.tree_structure(want).num_leaves)


# ---- cond / switch ------------------------------------------------------------------------
@pytest.mark.parametrize("pred", [True, False, 0, 3, np.float32(0.5), np.int32(-1)])
def test_cond_predicates(pred):
    both(lambda L, np_: lambda p, x: L.cond(p, lambda a: np_.sin(a), lambda a: a * 2.0, x),
         pred, np.arange(3, dtype=np.float32))


def test_cond_closure_and_no_operands():
    y = np.arange(4, dtype=np.float32)  # a captured concrete array becomes an operand
    both(lambda L, np_: lambda p, x: L.cond(p > 0, lambda: x * y, lambda: x + y),
         np.float32(1.0), np.float32(3.0))
    both(lambda L, np_: lambda p, x: L.cond(p > 0, lambda: x * y, lambda: x + y),
         np.float32(-1.0), np.float32(3.0))


def test_cond_pytree_operands_and_outputs():
    def build(L, np_):
        def f(p, d):
            return L.cond(p, lambda t: {"a": t["a"] + 1, "b": (t["b"], t["a"])},
                          lambda t: {"a": t["a"] * 2, "b": (t["b"] * 0, t["a"])}, d)
        return f
    d = {"a": np.float32(2.0), "b": np.arange(3, dtype=np.int32)}
    both(build, True, d)
    both(build, False, d)


@pytest.mark.parametrize("index", [-5, -1, 0, 1, 2, 3, 100])
def test_switch_clamps_out_of_range_indices(index):
    branches = lambda np_: [lambda x: np_.sin(x), lambda x: x * 3.0, lambda x: -x]  # noqa: E731
    both(lambda L, np_: lambda i, x: L.switch(i, branches(np_), x), index,
         np.float32(0.7))


def test_cond_operand_keyword_and_single_branch_switch():
    assert float(lax.cond(True, lambda a: a + 1, lambda a: a, operand=1.0)) == 2.0
    assert float(mjax.jit(lambda x: lax.switch(5, [lambda a: a * 2], x))(3.0)) == 6.0


def test_cond_outputs_keep_dtypes():
    out = mjax.jit(lambda p: lax.cond(p, lambda: jnp.int32(1), lambda: jnp.int32(2)))(True)
    check(out, np.int32(1))


# ---- while_loop / fori_loop ------------------------------------------------------------------
def test_while_loop_pytree_carry_and_closure():
    limit = np.float32(100.0)

    def build(L, np_):
        def f(x):
            return L.while_loop(lambda c: c[0] < limit,
                                lambda c: (c[0] * 2.0, c[1] + 1), (x, np.int32(0)))
        return f
    both(build, np.float32(1.5))


def test_while_loop_zero_iterations():
    both(lambda L, np_: lambda x: L.while_loop(lambda c: c > 10.0, lambda c: c + 1.0, x),
         np.float32(1.0))


@pytest.mark.parametrize("bounds", [(0, 5), (2, 7), (5, 5), (7, 2)])
def test_fori_loop_static_and_dynamic_bounds(bounds):
    lo, hi = bounds
    body = lambda i, c: c * 1.5 + i  # noqa: E731
    both(lambda L, np_: lambda x: L.fori_loop(lo, hi, body, x), np.float32(1.0))
    # bounds as traced arguments: a while loop
    both(lambda L, np_: lambda a, b, x: L.fori_loop(a, b, body, x), lo, hi, np.float32(1.0))


def test_fori_loop_static_bounds_is_a_scan_and_dynamic_a_while():
    static = str(mjax.make_jaxpr(lambda x: lax.fori_loop(0, 3, lambda i, c: c + i, x))(0))
    dynamic = str(mjax.make_jaxpr(lambda n, x: lax.fori_loop(0, n, lambda i, c: c + i, x))(
        3, 0))
    assert "scan[" in static and "while[" not in static
    assert "while[" in dynamic


def test_fori_loop_weak_int_init_promotes_to_float():
    both(lambda L, np_: lambda n: L.fori_loop(0, n, lambda i, c: c + 0.5, 0), 4)


# ---- scan --------------------------------------------------------------------------------------
@pytest.mark.parametrize("reverse", [False, True])
@pytest.mark.parametrize("unroll", [1, 2, 3, 7, True])
def test_scan_reverse_and_unroll(reverse, unroll):
    def build(L, np_):
        def f(c0, xs):
            return L.scan(lambda c, x: (c * 0.5 + x, np_.sin(c) * x), c0, xs,
                          reverse=reverse, unroll=unroll)
        return f
    both(build, np.float32(1.0), np.linspace(0, 1, 5, dtype=np.float32))


def test_scan_pytree_carry_none_outputs_and_xs_none():
    def build(L, np_):
        def f(x):
            (a, b), ys = L.scan(lambda c, _: ((c[0] + c[1], c[0]), None), (x, x * 0 + 1.0),
                                None, length=6)
            assert ys is None
            return a, b
        return f
    both(build, np.float32(1.0))


def test_scan_pytree_xs_and_ys_with_consts():
    w = np.arange(6, dtype=np.float32).reshape(2, 3)

    def build(L, np_):
        def f(h0, xs):
            def step(h, x):
                h = np_.tanh(x["u"] @ w + h * x["s"])
                return h, {"h": h, "n": np_.sum(h)}
            return L.scan(step, h0, xs)
        return f
    xs = {"u": np.ones((4, 2), np.float32), "s": np.linspace(0, 1, 4, dtype=np.float32)}
    both(build, np.zeros(3, np.float32), xs)


def test_scan_zero_length():
    both(lambda L, np_: lambda c, xs: L.scan(lambda c, x: (c + x, x * 2), c, xs),
         np.float32(1.0), np.zeros((0,), np.float32))


def test_cond_inside_scan():
    def build(L, np_):
        def f(xs):
            def step(c, x):
                c = L.cond(x > 0, lambda v: v + x, lambda v: v * 0.5, c)
                return c, c
            return L.scan(step, np.float32(1.0), xs)
        return f
    both(build, np.array([1.0, -2.0, 3.0, -1.0, 0.5], np.float32))


def test_scan_inside_while_inside_cond_closes_over_outer_values():
    def build(L, np_):
        def f(p, x, xs):
            def body(c):
                return L.scan(lambda a, b: (a + b * x, None), c, xs)[0]
            return L.cond(p, lambda: L.while_loop(lambda c: c < 50.0, body, x), lambda: x)
        return f
    both(build, True, np.float32(1.0), np.arange(3, dtype=np.float32))


# ---- map / associative_scan -------------------------------------------------------------------
@pytest.mark.parametrize("batch_size", [None, 1, 2, 3, 10])
def test_map(batch_size):
    def build(L, np_):
        return lambda xs: L.map(lambda x: (np_.sum(x["a"]) * 2, x["b"] + 1), xs,
                                batch_size=batch_size)
    both(build, {"a": np.arange(12, dtype=np.float32).reshape(4, 3),
                 "b": np.arange(4, dtype=np.int32)})


@pytest.mark.parametrize("n", [1, 2, 5, 8, 13])
@pytest.mark.parametrize("reverse", [False, True])
def test_associative_scan_matches_cumsum_and_jax(n, reverse):
    x = np.arange(1, n + 1, dtype=np.float32)
    got = lax.associative_scan(lax.add, x, reverse=reverse)
    want = np.cumsum(x[::-1])[::-1] if reverse else np.cumsum(x)
    check(got, want.astype(np.float32))
    # a non-commutative combination (2x2 matrix products), along axis 1
    mats = np.random.RandomState(n).randn(2, n, 2, 2).astype(np.float32)
    both(lambda L, np_: lambda m: L.associative_scan(lambda a, b: a @ b, m, reverse=reverse,
                                                     axis=1), mats, rtol=1e-4)


# ---- errors ---------------------------------------------------------------------------------
def test_cond_branch_type_mismatch_names_both_types():
    with pytest.raises(TypeError, match=r"(?s)cond branches must have equal output types.*"
                       r"float32\[\].*int32\[\]"):
        mjax.jit(lambda x: lax.cond(True, lambda a: a, lambda a: a.astype(jnp.int32), x))(1.0)
    with pytest.raises(TypeError, match="cond branch outputs must have the same pytree "
                                        "structure"):
        mjax.jit(lambda x: lax.cond(True, lambda a: (a, a), lambda a: a, x))(1.0)
    with pytest.raises(TypeError, match=r"(?s)switch branches must have equal output types.*"
                                        r"shapes do not match"):
        lax.switch(1, [lambda a: a, lambda a: a[None]], 1.0)


def test_cond_bad_predicates():
    with pytest.raises(TypeError, match=r"Pred must be a scalar, got .* of shape \(2,\)"):
        lax.cond(np.ones(2) > 0, lambda a: a, lambda a: a, 1.0)
    with pytest.raises(TypeError, match="true_fun and false_fun arguments should be callable"):
        lax.cond(True, lambda a: a, 1.0)
    with pytest.raises(TypeError, match="Index type must be an integer"):
        lax.switch(1.0, [lambda a: a, lambda a: a], 1.0)
    with pytest.raises(ValueError, match="Empty branch sequence"):
        lax.switch(0, [], 1.0)


def test_loop_carry_errors():
    x = np.float32(1.0)
    with pytest.raises(TypeError, match=r"(?s)while_loop body function carry input and carry "
                                        r"output must have equal types.*float32\[\].*"
                                        r"int32\[\]"):
        lax.while_loop(lambda c: c < 3, lambda c: (c + 1).astype(jnp.int32), x)
    with pytest.raises(TypeError, match="cond_fun must return a boolean scalar"):
        lax.while_loop(lambda c: jnp.ones(2) > 0, lambda c: c, x)
    with pytest.raises(TypeError, match=r"scan body function carry input and carry output "
                                        r"must have the same pytree structure"):
        lax.scan(lambda c, y: ((c, c), y), x, jnp.ones(3))
    with pytest.raises(TypeError, match=r"loop_carry\[1\] has type float32\[\] but the "
                                        r"corresponding output carry component has type "
                                        r"int32\[\]"):
        lax.fori_loop(0, 3, lambda i, c: c.astype(jnp.int32), x)


def test_scan_length_errors():
    x = np.float32(1.0)
    with pytest.raises(ValueError, match="different leading axis sizes: 3, 4"):
        lax.scan(lambda c, y: (c, y), x, (jnp.ones(3), jnp.ones(4)))
    with pytest.raises(ValueError, match="no values to scan over and `length` not provided"):
        lax.scan(lambda c, y: (c, y), x, None)
    with pytest.raises(ValueError, match="`length` argument of 4 which disagrees"):
        lax.scan(lambda c, y: (c, y), x, jnp.ones(3), length=4)


def test_errors_point_at_the_user_line_and_bool_conversion_still_raises():
    with pytest.raises(mjax.errors.TracerBoolConversionError):
        mjax.jit(lambda x: lax.cond(True, lambda a: a if a > 0 else -a, lambda a: a, x))(1.0)
    closed = mjax.make_jaxpr(lambda x: lax.cond(x > 0, lambda a: jnp.sin(a), lambda a: a, x))(
        1.0)
    ir = closed._traced.module.operation.get_asm(enable_debug_info=True)
    assert ir.count("test_control_flow.py") >= 2  # the cond and the sin in its body
    with pytest.raises(TypeError, match=r"jaxpr.add at .*test_control_flow.py:\d+"):
        mjax.jit(lambda x: lax.cond(
            True, lambda a: lax.add(a, jnp.ones(3, jnp.int32)), lambda a: a, x))(
            jnp.ones(3))


def test_leaked_body_tracer_is_an_error():
    leaked = []

    def body(c, x):
        leaked.append(c)
        return c + x, None
    mjax.jit(lambda xs: lax.scan(body, 0.0, xs)[0])(jnp.ones(3))
    with pytest.raises(mjax.errors.UnexpectedTracerError):
        mjax.jit(lambda y: y + leaked[0])(1.0)


def test_disable_jit_runs_python():
    with mjax.disable_jit():
        assert float(lax.cond(True, lambda: 1.0, lambda: 2.0)) == 1.0
        assert float(lax.while_loop(lambda c: c < 5, lambda c: c + 1, 0)) == 5
        c, ys = lax.scan(lambda c, x: (c + x, c), 0.0, jnp.arange(3.0))
        check(ys, np.array([0.0, 0.0, 1.0], np.float32))


def test_nested_jit_in_branch_and_caught_errors_leave_no_stray_ops():
    def f(x):
        try:
            lax.cond(x > 0, lambda a: a, lambda a: a[None], x)
        except TypeError:
            pass
        try:
            lax.scan(lambda c, y: (c.astype(jnp.int32), y), x, jnp.ones(2))
        except TypeError:
            pass
        return lax.cond(x > 0, mjax.jit(jnp.sin), lambda a: a * 2.0, x)
    check(mjax.jit(f)(1.0), np.float32(np.sin(1.0)))
    check(mjax.jit(f)(-1.0), np.float32(-2.0))


def test_weak_types_follow_jax():
    cases = [
        lambda L: L.scan(lambda c, x: (c + x, c), 0.0, np.arange(5.0, dtype=np.float32)),
        lambda L: L.fori_loop(0, 3, lambda i, c: c + 1.0, 0.0),
        lambda L: L.while_loop(lambda c: c < 3, lambda c: c + np.float32(1), 0.0),
        lambda L: L.cond(True, lambda: 1.0, lambda: 2.0),
    ]
    for case in cases:
        got = mjax.tree_util.tree_leaves(mjax.jit(lambda: case(lax))())
        want = jax.tree_util.tree_leaves(jax.jit(lambda: case(jax.lax))())
        assert [g.weak_type for g in got] == [w.weak_type for w in want]


def test_jax_edge_cases_of_loops():
    # float bounds, a weak bound promoted to the other's dtype, unroll=0 (full unroll),
    # a list as the scan body's pair, a negative length
    cases = [
        lambda L: L.fori_loop(0., 3., lambda i, c: c + i, 0.),
        lambda L: L.fori_loop(np.int32(1), 4, lambda i, c: c * i, 1),
        lambda L: L.scan(lambda c, x: (c + x, c), 0., np.ones(3, np.float32), unroll=0),
        lambda L: L.scan(lambda c, x: [c * 2, x], 1., np.ones(3, np.float32)),
        lambda L: L.scan(lambda c, x: (c, x), 0., None, length=-1)[0],
    ]
    for case in cases:
        got = mjax.tree_util.tree_leaves(mjax.jit(lambda: case(lax))())
        want = jax.tree_util.tree_leaves(jax.jit(lambda: case(jax.lax))())
        for g, w in zip(got, want):
            check(g, w)
            assert g.weak_type == w.weak_type
    with pytest.raises(TypeError, match="lower and upper arguments to fori_loop must have "
                                        "equal types, got int32 and float32"):
        lax.fori_loop(np.int32(0), np.float32(3), lambda i, c: c, 0.)
    with pytest.raises(ValueError, match="non-negative"):
        lax.scan(lambda c, x: (c, x), 0., np.ones(3), unroll=-1)


def test_traced_control_flow_passes_jaxpr_verify_and_round_trips():
    from mjax.dialect import context
    from mjax.passes import run_pipeline
    from jaxlib.mlir import ir

    def f(p, xs, n):
        def step(c, x):
            c = lax.switch(p, [lambda v: v + x, lambda v: v * x, lambda v: -v], c)
            return c, lax.while_loop(lambda v: v < 10.0, lambda v: v * 2.0 + 1.0, c)
        c, ys = lax.scan(step, 1.0, xs, unroll=2)
        return lax.fori_loop(0, n, lambda i, a: a + ys[i], c)
    closed = mjax.make_jaxpr(f)(1, np.ones(3, np.float32), 2)
    text = closed.mlir
    with context():
        module = ir.Module.parse(text)
        run_pipeline(module, [("jaxpr-verify", "")])
        assert str(module) == text
    assert "switch" not in str(closed) and str(closed).count("cond[") == 1


@pytest.mark.parametrize("program", [
    lambda L: (lambda x, y: L.cond(x > 0, lambda a: a * y, lambda a: a + 1.0, x)),
    lambda L: (lambda x, y: L.while_loop(lambda c: c < 3, lambda c: (c + 1.0) * 2.0, x)),
    lambda L: (lambda x, y: L.fori_loop(0, 3, lambda i, c: c + y, x)),
    lambda L: (lambda x, y: L.switch(2, [lambda: x, lambda: y, lambda: x * y])),
])
def test_make_jaxpr_matches_jax_text(program):
    want = str(jax.make_jaxpr(program(jax.lax))(1.0, 2.0))
    got = str(mjax.make_jaxpr(program(lax))(1.0, 2.0))
    # (mjax prints convert_element_type's weak_type=False as JAX does)
    assert got == want


def test_type_mismatch_errors_name_the_user_line():
    import inspect
    line = inspect.currentframe().f_lineno + 2
    with pytest.raises(TypeError, match=rf"test_control_flow.py:{line}:"):
        lax.while_loop(lambda c: c < 3, lambda c: (c, c), np.float32(1))
    with pytest.raises(TypeError, match=rf"test_control_flow.py:{line + 2}:"):
        mjax.jit(lambda x: lax.switch(0, [lambda: x, lambda: x[None]]))(np.ones(2))


def test_prng_keys_as_scan_carry_and_cond_operand():
    def build(L, np_):
        random = mjax.random if L is lax else jax.random

        def step(k, _):
            k, sub = random.split(k)
            return k, random.normal(sub, (2,))
        return lambda seed: L.scan(step, random.PRNGKey(seed), None, length=4)[1]
    both(build, 0)
    got = lax.cond(True, lambda k: mjax.random.split(k)[0], lambda k: k, mjax.random.key(1))
    want = jax.lax.cond(True, lambda k: jax.random.split(k)[0], lambda k: k, jax.random.key(1))
    np.testing.assert_array_equal(mjax.random.key_data(got), jax.random.key_data(want))


def test_control_flow_inside_an_inlined_nested_jit():
    def build(L, np_):
        jit = mjax.jit if L is lax else jax.jit
        inner = jit(lambda x, y: L.scan(
            lambda c, a: (L.cond(a > 1, lambda: c * y, lambda: c + a), None), x,
            np.arange(4, dtype=np.float32))[0])
        return lambda x: inner(x, 2.0) + inner(x, 3.0)
    both(build, np.float32(1.0))


@pytest.mark.parametrize("J", [mjax, jax], ids=["mjax", "jax"])
def test_cond_and_switch_outputs_take_branch_zeros_weak_types(J):
    """JAX: branch outputs agree up to weak types; the result's weak type is branch 0's
    (cond's false_fun). A library's `cond(pred, raise_error, lambda: x)` keeps x's weak
    type (equinox's error_if on diffrax's weakly typed `direction`)."""
    def f(i):
        weak = J.numpy.where(i > 0, 1, -1)
        strong = J.numpy.int32(2)
        return [J.lax.switch(i, [lambda: weak, lambda: strong]),
                J.lax.switch(i, [lambda: strong, lambda: weak]),
                J.lax.cond(i > 0, lambda: strong, lambda: weak),
                J.lax.cond(i > 0, lambda: weak, lambda: strong),
                J.lax.cond(i > 0, lambda: 1.0, lambda: np.float32(1))]
    for outs in (J.jit(f)(1), f(1)):
        assert [o.weak_type for o in outs] == [True, False, True, False, False]
