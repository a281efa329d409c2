"""mjax.custom_batching (custom_vmap, sequential_vmap) against JAX 0.10.2: values, the
rule's in_batched flags and out_batched handling, nested vmap, jit, forward-mode
differentiation, and the errors JAX raises."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp

LIBS = {"jax": (jax, jnp), "mjax": (mjax, mnp)}


def both(build, *args):
    """build(lib, lnp, calls) -> function; runs it on `args` under JAX and mjax and
    returns ((jax result, jax calls), (mjax result, mjax calls)), `calls` recording what
    the vmap rule saw."""
    got = []
    for lib, lnp in LIBS.values():
        calls = []
        out = build(lib, lnp, calls)(*args)
        got.append((jax.tree_util.tree_map(np.asarray, out), calls))
    return got


def assert_same(build, *args, rtol=1e-6):
    (j, jcalls), (m, mcalls) = both(build, *args)
    jax.tree_util.tree_map(lambda a, b: np.testing.assert_allclose(b, a, rtol=rtol,
                                                                   atol=1e-6), j, m)
    assert jax.tree_util.tree_structure(j) == jax.tree_util.tree_structure(m)
    assert mcalls == jcalls
    return m, mcalls


def sin_times(lib, lnp, calls, out_batched=None):
    """f(x, y) = sin(x) * y, whose vmap rule computes cos(xs) * ys instead."""
    @lib.custom_batching.custom_vmap
    def f(x, y):
        return lnp.sin(x) * y

    @f.def_vmap
    def rule(axis_size, in_batched, xs, ys):
        calls.append((axis_size, list(in_batched)))
        batched = any(in_batched) if out_batched is None else out_batched
        return lnp.cos(xs) * ys, batched
    return f


XS = np.linspace(0.1, 1.0, 4).astype(np.float32)
YS = np.linspace(-1.0, 2.0, 4).astype(np.float32)


def test_outside_vmap_runs_the_function_eagerly_and_under_jit():
    out, calls = assert_same(lambda lib, lnp, c: sin_times(lib, lnp, c), XS[0], YS[1])
    np.testing.assert_allclose(out, np.sin(XS[0]) * YS[1], rtol=1e-6)
    assert calls == []
    assert_same(lambda lib, lnp, c: lib.jit(sin_times(lib, lnp, c)), XS, YS)


@pytest.mark.parametrize("in_axes", [0, (0, None), (None, 0), (1, 0)])
def test_vmap_calls_the_rule(in_axes):
    xs = np.stack([XS, XS + 1]) if in_axes == (1, 0) else XS
    ys = YS if in_axes != (0, None) else YS[0]
    ys = ys if in_axes != (1, 0) else np.stack([YS, 2 * YS], axis=1)
    xs = xs if in_axes != (None, 0) else XS[0]
    out, calls = assert_same(
        lambda lib, lnp, c: lib.vmap(sin_times(lib, lnp, c), in_axes=in_axes), xs, ys)
    assert calls and calls[0][0] == 4


def test_integer_arguments_and_the_docstring_example():
    def build(lib, lnp, calls):
        @lib.custom_batching.custom_vmap
        def f(x, y):
            return x + y

        @f.def_vmap
        def rule(axis_size, in_batched, xs, ys):
            calls.append(list(in_batched))
            return xs * ys, True
        return lambda a, b: (f(a[0], b[0]), lib.vmap(f)(a, b))
    assert_same(build, np.arange(3, dtype=np.int32), np.arange(1, 4, dtype=np.int32))


@pytest.mark.parametrize("out_axes", [0, None])
def test_unbatched_output(out_axes):
    def build(lib, lnp, calls):
        @lib.custom_batching.custom_vmap
        def f(x):
            return x * 2.0, x.sum()

        @f.def_vmap
        def rule(axis_size, in_batched, xs):
            calls.append(list(in_batched))
            return (xs * 3.0, xs.sum()), (True, False)
        return lib.vmap(f, out_axes=(1, out_axes))
    assert_same(build, np.ones((3, 2), np.float32))


def test_pytree_arguments_and_outputs():
    def build(lib, lnp, calls):
        @lib.custom_batching.custom_vmap
        def f(d, t):
            return {"s": d["a"] * t[0], "p": (d["b"] + t[1],)}

        @f.def_vmap
        def rule(axis_size, in_batched, d, t):
            calls.append((axis_size, in_batched))
            out = {"s": d["a"] - t[0], "p": (d["b"] * 10.0,)}
            return out, {"s": in_batched[0]["a"] or in_batched[1][0],
                         "p": (in_batched[0]["b"],)}
        return lambda d, t: lib.vmap(f, in_axes=({"a": 0, "b": None}, (None, 0)))(d, t)
    assert_same(build, {"a": XS, "b": np.float32(2.0)}, (np.float32(1.5), YS))


def test_nested_vmap_and_jit():
    xss = np.stack([XS, 2 * XS, 3 * XS])
    assert_same(lambda lib, lnp, c: lib.vmap(lib.vmap(sin_times(lib, lnp, c))), xss, xss)
    assert_same(lambda lib, lnp, c: lib.vmap(lib.vmap(sin_times(lib, lnp, c)),
                                             in_axes=(0, None)), xss, YS)
    assert_same(lambda lib, lnp, c: lib.jit(lib.vmap(sin_times(lib, lnp, c))), XS, YS)
    assert_same(lambda lib, lnp, c: lib.vmap(lib.jit(sin_times(lib, lnp, c))), XS, YS)
    assert_same(lambda lib, lnp, c: lib.jit(lib.vmap(lib.jit(lib.vmap(
        sin_times(lib, lnp, c))), in_axes=(None, 0))), XS, xss)


def test_rule_calling_the_function_under_an_outer_vmap():
    # The inner vmap applies the rule; the outer one reaches the rule's own calls.
    def build(lib, lnp, calls):
        @lib.custom_batching.custom_vmap
        def f(x):
            return x * 2.0

        @f.def_vmap
        def rule(axis_size, in_batched, xs):
            calls.append((axis_size, list(in_batched)))
            return lib.lax.map(f, xs) + 1.0, True
        return lib.vmap(lib.vmap(f))
    assert_same(build, np.ones((2, 3), np.float32))


# ---- differentiation --------------------------------------------------------------------
def test_jvp_outside_vmap_is_the_functions():
    assert_same(lambda lib, lnp, c: lambda x, y: lib.jvp(sin_times(lib, lnp, c), (x, y),
                                                         (1.0, 0.5)),
                np.float32(0.3), np.float32(2.0))


@pytest.mark.parametrize("in_axes", [(0, 0), (None, 0), (0, None)])
def test_vmap_of_jvp_applies_the_rules_jvp(in_axes):
    def build(lib, lnp, calls):
        f = sin_times(lib, lnp, calls)

        def g(x, t):
            return lib.jvp(f, (x, 2.0 * x), (t, t))
        return lib.vmap(g, in_axes=in_axes)
    x = XS if in_axes[0] == 0 else XS[1]
    t = YS if in_axes[1] == 0 else YS[2]
    assert_same(build, x, t)


def test_jvp_of_vmap_and_jacfwd():
    assert_same(lambda lib, lnp, c: lambda x, y: lib.jvp(
        lib.vmap(sin_times(lib, lnp, c)), (x, y), (y, x)), XS, YS)
    assert_same(lambda lib, lnp, c: lib.jacfwd(sin_times(lib, lnp, c)), XS[1], YS[1])
    assert_same(lambda lib, lnp, c: lib.jacfwd(lib.jacfwd(sin_times(lib, lnp, c))),
                XS[1], YS[1])


def test_jvp_with_respect_to_closed_over_values():
    def make(lib, lnp, calls, w):
        @lib.custom_batching.custom_vmap
        def f(x):
            return lnp.sin(x) * w

        @f.def_vmap
        def rule(axis_size, in_batched, xs):
            calls.append(list(in_batched))
            return lnp.cos(xs) * w, in_batched[0]
        return f

    def build(lib, lnp, calls):
        def outer(w, v):
            f = make(lib, lnp, calls, w)
            return lib.vmap(f)(XS * v), f(v)
        return lambda w, v: (lib.jvp(outer, (w, v), (1.0, 0.5)),
                             lib.jit(lambda w: lib.vmap(lambda x, t: lib.jvp(
                                 make(lib, lnp, calls, w), (x,), (t,)))(XS, YS))(w))
    assert_same(build, np.float32(2.0), np.float32(0.3))
    # (JAX raises UnexpectedTracerError here)
    with pytest.raises(NotImplementedError, match="JVP of the custom_vmap function f"):
        mjax.vmap(lambda t: mjax.jvp(lambda w: make(mjax, mnp, [], w)(0.5), (2.0,),
                                     (t,)))(XS)


def test_grad_of_vmap_differentiates_the_rule():
    assert_same(lambda lib, lnp, c: lib.grad(
        lambda s: lib.vmap(sin_times(lib, lnp, c), (0, None))(XS * s, 2.0).sum()),
        np.float32(1.5))


@pytest.mark.parametrize("how", ["grad", "vjp", "vmap_of_grad"])
def test_reverse_mode_raises_valueerror_as_jax(how):
    for lib, lnp in LIBS.values():
        f = sin_times(lib, lnp, [])
        with pytest.raises(ValueError, match="Linearization failed"):
            if how == "grad":
                lib.grad(f)(np.float32(0.5), np.float32(2.0))
            elif how == "vjp":
                lib.vjp(f, np.float32(0.5), np.float32(2.0))
            else:
                lib.vmap(lib.grad(f))(XS, YS)


def test_custom_vjp_around_custom_vmap():
    # JAX's documented way to give a custom_vmap function a reverse-mode rule.
    def build(lib, lnp, calls):
        @lib.custom_vjp
        @lib.custom_batching.custom_vmap
        def f(x, y):
            return lnp.sin(x) * y

        @f.def_vmap
        def rule(axis_size, in_batched, xs, ys):
            calls.append(list(in_batched))
            return lnp.cos(xs) * ys, True

        def fwd(x, y):
            return f(x, y), (lnp.cos(x), lnp.sin(x), y)

        def bwd(res, g):
            cos_x, sin_x, y = res
            return cos_x * g * y, sin_x * g
        f.defvjp(fwd, bwd)
        return lambda xs, ys: (lib.vmap(f)(xs, ys), lib.grad(f)(xs[0], ys[0]),
                               lib.vmap(lib.grad(f))(xs, ys))
    assert_same(build, XS, YS)


# ---- sequential_vmap --------------------------------------------------------------------
def test_sequential_vmap():
    def build(lib, lnp, calls):
        @lib.custom_batching.sequential_vmap
        def f(x, w):
            calls.append(x.shape)
            return {"y": x @ w, "n": lnp.sum(x)}
        return lambda xs, w: (f(xs[0], w), lib.vmap(f, (0, None))(xs, w),
                              lib.jit(lib.vmap(f))(xs, lnp.stack([w, w, w])))
    xs = np.arange(6, dtype=np.float32).reshape(3, 2)
    assert_same(build, xs, np.array([1.0, -2.0], np.float32))


# ---- errors -----------------------------------------------------------------------------
def test_no_rule_is_an_attribute_error():
    for lib, _ in LIBS.values():
        f = lib.custom_batching.custom_vmap(lambda x: x)
        with pytest.raises(AttributeError, match="No batching rule defined for "
                                                 "custom_vmap function <lambda> using "
                                                 "def_vmap"):
            f(1.0)


def _messages(build, *args):
    out = []
    for lib, lnp in LIBS.values():
        with pytest.raises(Exception) as info:
            build(lib, lnp)(*args)
        out.append((type(info.value), str(info.value)))
    return out


@pytest.mark.parametrize("case", ["spec", "output"])
def test_rule_output_structure_errors_match_jax(case):
    def build(lib, lnp):
        @lib.custom_batching.custom_vmap
        def g(x):
            return x, x

        @g.def_vmap
        def grule(n, inb, x):
            return ((x, x), True) if case == "spec" else ([x, x], [True, True])
        return lib.vmap(g)
    (jt, jmsg), (mt, mmsg) = _messages(build, np.ones(3, np.float32))
    assert jt is mt is ValueError
    assert mmsg == jmsg


def test_keyword_arguments():
    def build(lib, lnp, calls):
        def h(x, y=2.0):
            return x * y
        f = lib.custom_batching.custom_vmap(h)
        f.def_vmap(lambda n, inb, x, y: (x + y, True))
        return lambda x: (f(x, y=3.0), lib.vmap(lambda v: f(v, y=4.0))(x))
    assert_same(build, XS)

    def bad(lib, lnp):
        f = lib.custom_batching.custom_vmap(lambda x, y=2.0: x * y)
        f.def_vmap(lambda n, inb, x, y: (x + y, True))
        return lambda x: f(x, z=3.0)
    (jt, jmsg), (mt, mmsg) = _messages(bad, 1.0)
    assert jt is mt is TypeError
    assert mmsg == jmsg


def test_rule_output_of_the_wrong_shape_is_a_clear_error():
    f = mjax.custom_batching.custom_vmap(lambda x: x * 2.0)
    f.def_vmap(lambda n, inb, xs: (xs[:2], True))
    with pytest.raises(ValueError, match="leading batch axis of size 3"):
        mjax.vmap(f)(np.ones(3, np.float32))


def test_closing_over_a_batched_value_is_not_implemented():
    def outer(x):
        @mjax.custom_batching.custom_vmap
        def k(z):
            return z * x

        k.def_vmap(lambda n, inb, z: (z * x, True))
        return k(x * mnp.ones(2))
    with pytest.raises(NotImplementedError, match="closes over a value"):
        mjax.vmap(outer)(mnp.arange(3.0))


def test_module_is_public():
    assert mjax.custom_batching.custom_vmap is not None
    assert set(mjax.custom_batching.__all__) == {"custom_vmap", "sequential_vmap"}
