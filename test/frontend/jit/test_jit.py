"""jit: numbers, caching (retrace only when avals/static args/config change), nesting."""
import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from frontend_util import tol
from mjax import lax


def _counting(fn):
    traces = []

    def f(*args, **kwargs):
        traces.append(1)
        return fn(*args, **kwargs)
    return f, traces


def test_jit_matches_numpy_and_eager():
    def f(x, y):
        return jnp.tanh(x @ y) * 2.0 + jnp.sum(x, axis=1, keepdims=True) - y.T.mean()
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4)).astype(np.float32)
    y = rng.standard_normal((4, 3)).astype(np.float32)
    want = np.tanh(x @ y) * 2.0 + x.sum(1, keepdims=True) - y.T.mean()
    eps = tol(1e-5, 2e-4)       # (tanh on a TPU: JAX's tests take 2e-4 there)
    np.testing.assert_allclose(mjax.jit(f)(x, y), want, rtol=eps, atol=eps)
    np.testing.assert_allclose(f(jnp.asarray(x), jnp.asarray(y)), want, rtol=eps, atol=eps)


def test_cache_retraces_only_on_new_avals():
    f, traces = _counting(lambda x: x * 2)
    jf = mjax.jit(f)
    jf(np.ones(3, np.float32))
    jf(np.zeros(3, np.float32))
    jf(jnp.ones(3))
    assert len(traces) == 1
    jf(np.ones(4, np.float32))          # new shape
    assert len(traces) == 2
    jf(np.ones(4, np.int32))            # new dtype
    assert len(traces) == 3
    jf(2.0)                              # weak f32 scalar
    jf(3.0)
    assert len(traces) == 4
    jf(np.float32(2.0))                  # strong f32 scalar: a different aval
    assert len(traces) == 5


def test_cache_keys_on_pytree_structure():
    f, traces = _counting(lambda d: d["a"] + d["b"])
    jf = mjax.jit(f)
    jf({"a": 1.0, "b": 2.0})
    jf({"a": 3.0, "b": 4.0})
    assert len(traces) == 1
    jf({"b": np.float32(1), "a": 2.0})
    assert len(traces) == 2


def test_static_argnums_and_argnames():
    f, traces = _counting(lambda x, n, *, mode="add": x + n if mode == "add" else x * n)
    jf = mjax.jit(f, static_argnums=1, static_argnames="mode")
    np.testing.assert_allclose(jf(np.ones(2), 3), [4, 4])
    np.testing.assert_allclose(jf(np.ones(2), 3), [4, 4])
    assert len(traces) == 1
    np.testing.assert_allclose(jf(np.ones(2), 4), [5, 5])
    assert len(traces) == 2
    np.testing.assert_allclose(jf(np.ones(2), 4, mode="mul"), [4, 4])
    assert len(traces) == 3


def test_static_argnames_by_keyword_and_position():
    def f(x, k):
        return jnp.reshape(x, (k, -1))
    jf = mjax.jit(f, static_argnames="k")
    assert jf(jnp.arange(6), k=2).shape == (2, 3)
    assert jf(jnp.arange(6), 3).shape == (3, 2)


def test_static_arg_must_be_hashable():
    jf = mjax.jit(lambda x, s: x, static_argnums=1)
    with pytest.raises(ValueError, match="hash"):
        jf(1.0, [1, 2])


def test_static_arg_used_for_python_control_flow():
    @mjax.jit
    def bad(x, flag):
        return x if flag else -x
    with pytest.raises(mjax.errors.TracerBoolConversionError):
        bad(1.0, True)
    good = mjax.jit(bad.__wrapped__, static_argnums=1)
    assert float(good(1.0, False)) == -1.0


def test_config_change_retraces():
    f, traces = _counting(lambda x: x + 1)
    jf = mjax.jit(f)
    jf(1)
    with mjax.config.override(jax_enable_x64=True):
        out = jf(1)
        assert out.dtype == np.int64
    jf(1)
    assert len(traces) == 2


def test_closure_over_arrays():
    big = jnp.arange(12.0).reshape(3, 4)
    small = jnp.asarray(2.0)
    host = np.linspace(0, 1, 4).astype(np.float32)

    @mjax.jit
    def f(x):
        return x * big + small + host
    np.testing.assert_allclose(f(jnp.ones((3, 4))),
                               np.arange(12.0).reshape(3, 4) + 2 + host, rtol=1e-6)


def test_nested_jit_and_python_loops():
    inner_f, inner_traces = _counting(lambda x: jnp.sin(x) + 1)
    inner = mjax.jit(inner_f)

    @mjax.jit
    def outer(x):
        for _ in range(3):
            x = inner(x)
        return x
    x = np.linspace(-1, 1, 5).astype(np.float32)
    want = x
    for _ in range(3):
        want = np.sin(want) + 1
    np.testing.assert_allclose(outer(x), want, rtol=1e-5)
    np.testing.assert_allclose(inner(x), np.sin(x) + 1, rtol=1e-6)


def test_disable_jit_runs_python():
    seen = []

    @mjax.jit
    def f(x):
        seen.append(type(x))
        return x + 1
    with mjax.disable_jit():
        out = f(jnp.ones(2))
    # (a concrete array: mjax.Array is the abstract public class, as jax.Array is)
    assert seen[-1] is mjax.arrays.array.Array and issubclass(seen[-1], mjax.Array)
    np.testing.assert_allclose(out, [2, 2])
    f(jnp.ones(2))
    assert issubclass(seen[-1], mjax.core.Tracer)


def test_donate_argnums_and_other_options_accepted():
    jf = mjax.jit(lambda x, y: x + y, donate_argnums=(0,), keep_unused=True)
    np.testing.assert_allclose(jf(jnp.ones(3), jnp.ones(3)), 2 * np.ones(3))
    jf2 = mjax.jit(donate_argnums=0)(lambda x: x * 3)
    np.testing.assert_allclose(jf2(jnp.ones(2)), [3, 3])


def test_jit_as_decorator_with_options():
    @mjax.jit(static_argnums=(1,))
    def g(x, n):
        return x ** n
    np.testing.assert_allclose(g(jnp.arange(3.0), 3), [0, 1, 8])


def test_python_scalars_and_numpy_arrays_as_args_and_outputs():
    @mjax.jit
    def f(a, b, c):
        return a + b, c, 3.0, np.arange(3)
    out = f(1, np.float32(2), np.array([1, 2], np.int16))
    assert out[0].dtype == np.float32 and float(out[0]) == 3.0
    assert out[1].dtype == np.int16
    assert isinstance(out[2], mjax.Array) and out[2].weak_type
    np.testing.assert_array_equal(out[3], np.arange(3))


def test_jit_of_lax_functions():
    @mjax.jit
    def f(x, y):
        z = lax.dot_general(x, y, (((1,), (0,)), ((), ())))
        z = lax.add(z, lax.broadcast_in_dim(jnp.ones(3), (2, 3), (1,)))
        return lax.reduce_sum(lax.exp(z), (1,))
    x = np.ones((2, 4), np.float32)
    y = np.full((4, 3), 0.25, np.float32)
    np.testing.assert_allclose(f(x, y), np.exp(x @ y + 1).sum(1),
                               rtol=tol(1e-6, 2e-4))     # (exp on a TPU: JAX's 2e-4)


def test_eval_shape_and_shape_dtype_struct():
    out = mjax.eval_shape(lambda x, y: (x @ y, {"s": x.sum()}),
                          mjax.ShapeDtypeStruct((2, 3), np.float32), jnp.ones((3, 5)))
    assert out[0].shape == (2, 5) and out[0].dtype == np.float32
    assert out[1]["s"].shape == () and out[1]["s"].dtype == np.float32
    # jit accepts abstract arguments for staging
    low = mjax.jit(lambda x: x * 2).lower(mjax.ShapeDtypeStruct((4,), np.int32))
    assert "tensor<4xi32>" in low.as_text()


def test_make_jaxpr_compact_form_and_mlir():
    jaxpr = mjax.make_jaxpr(lambda x, y: jnp.sin(x) * y)(np.ones(3, np.float32), 2.0)
    text = str(jaxpr)
    assert text.startswith("{ lambda ; a:f32[3] b:f32[]. let")
    assert "sin a" in text and "mul" in text and text.rstrip().endswith("}")
    assert '"jaxpr.sin"' in jaxpr.mlir
    assert "in (" in text


def test_make_jaxpr_static_argnums_and_pytree_out():
    jaxpr = mjax.make_jaxpr(lambda x, n: [x] * n, static_argnums=1)(1.0, 2)
    assert str(jaxpr).rstrip().endswith("in (a, a) }")
    j, shapes = mjax.make_jaxpr(lambda x: {"y": x + 1}, return_shape=True)(np.ones(2))
    assert shapes["y"].shape == (2,)


def test_large_captured_constant_shows_as_constvar():
    c = jnp.arange(5.0)
    jaxpr = mjax.make_jaxpr(lambda x: x + c)(np.ones(5, np.float32))
    assert str(jaxpr).startswith("{ lambda a:f32[5]; b:f32[5]. let")


def test_jit_output_is_array_and_keeps_tree():
    from collections import namedtuple
    P = namedtuple("P", "a b")

    @mjax.jit
    def f(x):
        return P(a=x, b=[x * 2, None, (x,)])
    out = f(jnp.ones(2))
    assert isinstance(out, P) and out.b[1] is None
    assert isinstance(out.b[0], mjax.Array)
    np.testing.assert_allclose(out.b[2][0], [1, 1])


def test_array_of_traced_values_and_constants():
    out = mjax.jit(lambda x: jnp.array([x, x * 2, 1.0]))(1.5)
    np.testing.assert_array_equal(out, [1.5, 3.0, 1.0])
    out = mjax.jit(lambda x: jnp.asarray([[x, 0.0], [0.0, x]]))(2.0)
    np.testing.assert_array_equal(out, [[2, 0], [0, 2]])


def test_unsupported_jit_options_raise_not_implemented():
    absent = "cuda" if mjax.default_backend() == "tpu" else "tpu"    # (not this machine's)
    with pytest.raises(NotImplementedError, match="backend"):
        mjax.jit(lambda x: x, backend=absent)
    with pytest.raises(NotImplementedError):
        mjax.jit(backend=absent)(lambda x: x)
    with pytest.raises(TypeError):     # (not a jit option in JAX 0.10 either)
        mjax.jit(lambda x: x, abstracted_axes=("n",))
    assert mjax.jit(lambda x: x * 2, backend="cpu")(3.0) == 6.0
    assert mjax.jit(lambda x: x * 2, device=mjax.devices()[0])(3.0) == 6.0
    assert mjax.jit(lambda x: x * 2, device=mjax.devices()[-1])(3.0).devices() == {
        mjax.devices()[-1]}


def test_shardings_must_be_sharding_objects():
    for kwargs in ({"in_shardings": object()}, {"out_shardings": object()}):
        with pytest.raises(TypeError, match="Sharding objects or PartitionSpecs"):
            mjax.jit(lambda x: x, **kwargs)(1.0)


@pytest.mark.parametrize("options", [{}, {"static_argnums": 1},
                                     {"compiler_options": {"xla_cpu_enable_fast_math": False}}])
def test_new_jit_of_the_same_function_reuses_its_traces_as_jax(options):
    # (JAX's Common Gotchas page: a second jit(f) does not run f's side effects again,
    # and keeps the global f read when first traced.)
    import jax

    def run(lib):
        traces = []
        g = [0.0]

        def f(x, n=1):
            traces.append(1)
            return x + g[0] * n
        first = float(lib.jit(f, **options)(4.0, 1))
        g[0] = 10.0
        second = float(lib.jit(f, **options)(5.0, 1))
        return first, second, len(traces)
    assert run(mjax) == run(jax) == (4.0, 5.0, 1)


@pytest.mark.parametrize("J", [mjax, jax], ids=["mjax", "jax"])
def test_eval_shape_passes_shape_dtype_structs_through_and_keeps_weak_types(J):
    """An output that is a ShapeDtypeStruct already comes back as it is, also under a
    trace (lineax's FunctionLinearOperator); the struct's repr and equality count its
    weak type, as JAX's."""
    s = J.ShapeDtypeStruct((3,), np.float32)
    assert J.eval_shape(lambda: s) == s
    out = J.eval_shape(lambda x: (s, x, {"n": None}), 1.0)
    assert out[0] == s and out[2] == {"n": None}
    assert out[1] == J.ShapeDtypeStruct((), np.float32, weak_type=True)
    assert out[1] != J.ShapeDtypeStruct((), np.float32)
    assert repr(out[1]) == "ShapeDtypeStruct(shape=(), dtype=float32, weak_type=True)"

    def inner(x):
        assert J.eval_shape(lambda: (s, x))[0] == s
        return x * 2
    assert J.jit(inner)(np.float32(1.0)) == 2.0


@pytest.mark.parametrize("J", [mjax, jax], ids=["mjax", "jax"])
def test_clear_caches_retraces_and_keeps_results(J):
    """jax.clear_caches (blackjax's tests call it between cases)."""
    traces = []

    @J.jit
    def f(x):
        traces.append(1)
        return x * 2
    f(1.0)
    f(1.0)
    assert len(traces) == 1
    J.clear_caches()
    assert f(1.0) == 2.0 and len(traces) == 2
    assert float(J.lax.fori_loop(0, 3, lambda i, c: c + i, 0)) == 3
    J.clear_caches()
    assert float(J.numpy.sin(J.numpy.zeros(()))) == 0.0


def _jit_argument_errors(lib):
    def f(x, *, s):
        return x

    def h(x, y):
        return x

    def p(x, /, y):
        return x

    def kw(x, **rest):
        return x

    def var(*xs):
        return xs

    out = []
    for fun, options in [(f, dict(static_argnames="t")), (h, dict(static_argnums=5)),
                         (h, dict(static_argnums=-3)), (h, dict(static_argnums=-2)),
                         (h, dict(donate_argnames="z")), (h, dict(donate_argnums=3)),
                         (p, dict(static_argnames="x")), (kw, dict(static_argnames="t")),
                         (var, dict(static_argnums=5)), (len, dict(static_argnums=1))]:
        try:
            lib.jit(fun, **options)
            out.append("ok")
        except ValueError as e:
            out.append(str(e))
    return out


def test_static_and_donated_arguments_checked_as_jax():
    assert _jit_argument_errors(mjax) == _jit_argument_errors(jax)


def test_numpy_integer_argnums_as_jax():
    """static_argnums/donate_argnums given as NumPy integers name those arguments, as in
    JAX (np.int64(0) is argument 0, not no argument)."""
    for argnums in (np.int64(0), np.int32(1), [np.int64(1)], (np.int64(0), 1)):
        mine = mjax.jit(lambda x, n: x * n, static_argnums=argnums)
        theirs = jax.jit(lambda x, n: x * n, static_argnums=argnums)
        assert mine.static_argnums == tuple(sorted({int(i) for i in np.atleast_1d(argnums)}))
        assert int(mine(2, 3)) == int(theirs(2, 3)) == 6
    donating = mjax.jit(lambda x: x + 1, donate_argnums=np.int64(0))
    assert donating.donate_argnums == (0,)
    x = mjax.numpy.ones(3)
    donating(x)
    assert x.is_deleted()
