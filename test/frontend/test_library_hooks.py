"""Public JAX behaviour that libraries (equinox, numpyro) build on: custom_vjp's
symbolic_zeros (CustomVJPPrimal), Python-scalar residuals, tangent avals, traces' `main`,
transformations of callable objects, jax.lib.__version__, closure_convert."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.custom_derivatives import CustomVJPPrimal


def _mul_with_rules(seen, jax_mod):
    @jax_mod.custom_vjp
    def f(x, n):
        return x * n

    def fwd(x, n):
        seen.append((type(x).__name__, x.perturbed, n.perturbed))
        return x.value * n.value, (n.value, True, 3)

    def bwd(res, ct):
        n, flag, k = res
        assert flag is True and k == 3     # Python residuals come back as they were
        return (ct * n * k, None)

    f.defvjp(fwd, bwd, symbolic_zeros=True)
    return f


def test_custom_vjp_symbolic_zeros_as_jax():
    ours, theirs = [], []
    g = mjax.grad(lambda x: _mul_with_rules(ours, mjax)(x, 2)[()])(1.5)
    want = jax.grad(lambda x: _mul_with_rules(theirs, jax)(x, 2)[()])(1.5)
    assert float(g) == float(want) == 6.0
    assert ours[0] == theirs[0] == ("CustomVJPPrimal", True, False)
    assert CustomVJPPrimal is mjax.custom_derivatives.CustomVJPPrimal


def test_tangent_avals():
    for x, dtype in ((np.float32(1), np.float32), (np.int32(1), mjax.dtypes.float0),
                     (np.ones(3, mjax.numpy.bfloat16), mjax.numpy.bfloat16)):
        t = mjax.typeof(x).to_tangent_aval()
        assert t.dtype == np.dtype(dtype) and t.shape == np.shape(x)
        assert mjax.typeof(x).at_least_vspace() == t
        theirs = jax.typeof(jax.numpy.asarray(x)).to_tangent_aval()
        assert (t.shape, t.dtype) == (theirs.shape, theirs.dtype)


def test_tracers_name_their_trace_main():
    seen = []

    def f(x):
        y = x * 2
        trace = mjax.extend.core.find_top_trace([x])
        seen.append(isinstance(y, mjax.interpreters.ad.JVPTracer) and y._trace.main is
                    trace.main)
        return y
    mjax.jvp(f, (1.0,), (1.0,))
    assert seen == [True]


class _Callable:
    """A callable object whose __name__ is a field, not a string (as equinox modules)."""
    __name__ = property(lambda self: 3)

    def __call__(self, x):
        return x * 2


def test_transformations_of_callable_objects():
    np.testing.assert_allclose(np.asarray(mjax.vmap(_Callable())(jnp.ones(3))), 2.0)
    assert float(mjax.grad(_Callable())(1.0)) == 2.0


def test_lib_version_is_jaxlibs():
    assert mjax.lib.__version__ == jax.lib.__version__


def test_closure_convert_hoists_inexact_constants():
    w = jnp.array([1.0, 2.0, 3.0])
    n = jnp.array([1, 2, 3])

    hoisted = []

    def outer(w):
        f = lambda x: jnp.sum(jnp.sin(x * w) * n)   # noqa: E731
        conv, consts = mjax.closure_convert(f, jnp.ones(3))
        hoisted.append(len(consts))
        return conv(jnp.ones(3), *consts)
    np.testing.assert_allclose(float(outer(w)), float(np.sum(np.sin(w) * n)), rtol=1e-6)
    np.testing.assert_allclose(np.asarray(mjax.grad(outer)(w)),
                               np.asarray(np.cos(w) * n), rtol=1e-6)
    # (as JAX: concrete values stay closed over; under grad, w (traced, inexact) is
    # hoisted, n is not)
    assert hoisted == [0, 1]
    with pytest.raises(TypeError, match="structure"):
        mjax.closure_convert(lambda x: x, jnp.ones(3))[0]((jnp.ones(3),))


def test_closure_convert_feeds_custom_vjp_under_grad():
    # JAX's pattern: a custom_vjp takes a closure's hoisted values as explicit arguments;
    # the converted function must not itself close over them (else "closed-over value").
    def outer(w):
        f = lambda x: jnp.sin(x * w)   # noqa: E731
        conv, consts = mjax.closure_convert(f, jnp.ones(3))

        @mjax.custom_vjp
        def g(x, *cs):
            return conv(x, *cs)
        g.defvjp(lambda x, *cs: (conv(x, *cs), (x, cs)),
                 lambda res, ct: (ct * 2.0,) + tuple(jnp.zeros_like(c) for c in res[1]))
        return jnp.sum(g(jnp.ones(3), *consts))
    w = jnp.array([1.0, 2.0, 3.0])
    np.testing.assert_allclose(np.asarray(mjax.grad(outer)(w)), np.zeros(3))


def test_grad_passes_python_objects_in_aux_through():
    def f(x):
        return jnp.sum(x ** 2), {"name": "hi", "v": x * 2, "fn": len}

    for _ in range(2):    # (the second call runs the cached trace)
        g, aux = mjax.grad(f, has_aux=True)(jnp.ones(3))
        np.testing.assert_allclose(np.asarray(g), 2.0)
        assert aux["name"] == "hi" and aux["fn"] is len
        np.testing.assert_allclose(np.asarray(aux["v"]), 2.0)
    (value, aux), g = mjax.value_and_grad(lambda x: (x ** 2, "a"), has_aux=True)(3.0)
    assert aux == "a" and float(value) == 9.0 and float(g) == 6.0
    # under jit the object stays inside: the jitted function returns arrays only
    assert float(mjax.jit(lambda x: mjax.grad(lambda y: (y ** 2, "a"),
                                              has_aux=True)(x)[0])(3.0)) == 6.0


def test_deprecated_platform_name_option():
    # numpyro.set_platform sets it; JAX 0.10.2 still accepts it.
    saved = mjax.config.read("jax_platform_name")
    try:
        mjax.config.update("jax_platform_name", "cpu")
        assert mjax.config.jax_platform_name == "cpu" == mjax.default_backend()
        with pytest.raises(Exception):
            mjax.config.update("jax_platform_name", 3)
    finally:
        mjax.config.update("jax_platform_name", saved)


def test_live_arrays_lists_the_users_arrays():
    import gc
    gc.collect()
    base = {id(a._buf) for a in mjax.live_arrays()}
    x = jnp.arange(3.0) * 2 + 1.5        # (mjax caches the scalars' constants: not listed)
    new = [a for a in mjax.live_arrays() if id(a._buf) not in base]
    assert len(new) == 1 and np.array_equal(np.asarray(new[0]), [1.5, 3.5, 5.5])
    new[0].delete()                       # the same buffer as x's
    assert x.is_deleted()
    del x, new
    gc.collect()
    assert {id(a._buf) for a in mjax.live_arrays()} <= base


def test_cond_with_per_branch_operands_and_dimension_numbers_as_sequences():
    from mjax import lax
    for pred in (True, False):
        got = lax.cond(pred, 1.0, lambda x: x + 1, 2.0, lambda x: x * 10)
        want = jax.lax.cond(pred, 1.0, lambda x: x + 1, 2.0, lambda x: x * 10)
        assert float(got) == float(want)
        assert float(mjax.jit(lambda p: lax.cond(p, 1.0, lambda x: x + 1, 2.0,
                                                 lambda x: x * 10))(pred)) == float(want)
    dn = lax.ScatterDimensionNumbers(update_window_dims=range(0), inserted_window_dims=[0],
                                     scatter_dims_to_operand_dims=np.array([0]))
    got = lax.scatter_add(jnp.zeros(4), jnp.array([[1], [1]]), jnp.ones(2), dn)
    np.testing.assert_array_equal(np.asarray(got), [0, 2, 0, 0])
    with mjax.check_tracer_leaks(False):
        assert not mjax.config.jax_check_tracer_leaks


def test_boolean_config_states_enter_as_true():
    with mjax.check_tracer_leaks():
        assert mjax.config.jax_check_tracer_leaks
    with jax.check_tracer_leaks():                       # (the same in JAX)
        assert jax.config.jax_check_tracer_leaks
    assert not mjax.config.jax_check_tracer_leaks
    with pytest.raises(TypeError, match="requires an argument"):
        with mjax.numpy_rank_promotion():
            pass


def test_tracer_leak_check_ignores_the_traces_own_captures():
    # A captured NumPy constant is recorded by the trace itself: not a leak (numpyro's
    # truncated distributions); a tracer kept by the user's list is.
    c = np.array([1, -1], np.int32)

    @mjax.jit
    def f(x):
        return (x * c).sum()

    with mjax.check_tracer_leaks():
        assert int(f(jnp.ones(2, jnp.int32))) == 0
    kept = []

    @mjax.jit
    def g(x):
        kept.append(x * c)
        return x

    with pytest.raises(Exception, match="Leaked trace"):
        with mjax.check_tracer_leaks():
            g(jnp.ones(2, jnp.int32))


def test_tracers_arrays_and_keys_take_weak_references():
    # (TFP's JAX substrate, under distrax, caches bijector results by weakref)
    import weakref
    seen = []
    mjax.jit(lambda x: seen.append(weakref.ref(x)) or x)(1.0)
    assert len(seen) == 1
    weakref.ref(jnp.ones(2))
    weakref.ref(mjax.random.key(0))


@pytest.mark.parametrize("value", [None, [1, 2], [[1.0], [2.0]], (3,)])
def test_shape_ndim_size_of_non_arrays_warn_as_jax(value):
    for fn in ("shape", "ndim", "size"):
        with pytest.warns(DeprecationWarning, match=f"{fn} requires ndarray"):
            got = getattr(jnp, fn)(value)
        with pytest.warns(DeprecationWarning):
            assert got == getattr(jax.numpy, fn)(value)


def test_shape_ndim_size_of_arrays_scalars_and_keys():
    for v in (3, 2.0, np.ones((2, 3)), jnp.ones((2, 3)), np.float32(1),
              mjax.random.split(mjax.random.key(0), 3)):
        assert jnp.shape(v) == np.shape(v if not hasattr(v, "dtype") or
                                        "key" not in str(v.dtype) else np.empty(v.shape))
    assert jnp.size(jnp.ones((2, 3)), 1) == 3 and jnp.size(jnp.ones((2, 3)), (0, 1)) == 6
    assert jnp.ndim(mjax.random.split(mjax.random.key(0), 3)) == 1


def test_var_and_std_with_where_as_jax():
    # (flax.linen's normalization layers pass a mask)
    rng = np.random.RandomState(0)
    x = rng.randn(3, 4).astype(np.float32)
    w = rng.rand(3, 4) > 0.4
    w[1] = False                         # (a row with nothing selected: nan, as JAX)
    for kwargs in ({"axis": 1}, {}, {"axis": 0, "ddof": 1, "keepdims": True}):
        for fn in ("var", "std"):
            got = getattr(jnp, fn)(x, where=w, **kwargs)
            want = getattr(jax.numpy, fn)(x, where=w, **kwargs)
            np.testing.assert_allclose(got, want, rtol=1e-5)
    np.testing.assert_allclose(jnp.var(x.astype(np.complex64), axis=1, where=w),
                               jax.numpy.var(x.astype(np.complex64), axis=1, where=w),
                               rtol=1e-5)


def test_vjp_has_aux_passes_untraced_values_through():
    # (equinox's filter_vjp returns its non-differentiable outputs as vjp's aux)
    s = object()
    for mod in (mjax, jax):
        out, f, aux = mod.vjp(lambda x: (x * 2, (s, 2.0, x, "a", np.ones(2))), 3.0,
                              has_aux=True)
        assert float(out) == 6.0 and float(f(1.0)[0]) == 2.0
        assert aux[0] is s and type(aux[1]) is float and aux[3] == "a"
        assert type(aux[4]) is np.ndarray and float(aux[2]) == 3.0


@pytest.mark.parametrize("J", [mjax, jax], ids=["mjax", "jax"])
def test_find_top_trace_of_no_tracers_is_the_current_trace(J):
    """equinox's filter_jvp asks for the trace of an empty list of primals."""
    import importlib
    core = importlib.import_module(f"{J.__name__}.extend.core")
    outside = core.find_top_trace([])
    assert repr(outside) == "EvalTrace" and outside.main is None
    seen = []

    def f(x):
        seen.append((core.find_top_trace([]).main is core.find_top_trace([x]).main))
        return x
    J.jit(f)(1.0)
    J.jvp(f, (1.0,), (1.0,))
    assert seen == [True, True]


@pytest.mark.parametrize("J", [mjax, jax], ids=["mjax", "jax"])
def test_transformations_expose_the_functions_attributes(J):
    """JAX's wrappers copy fun.__dict__: `vmap(module).field` reads the module's field
    (equinox's BatchNorm tests read `vmap(bn).ema_state_index`)."""
    class Module:
        def __init__(self):
            self.state_index = 3

        def __call__(self, x):
            return x * 2.0

    def fn(x):
        return x * 2.0
    fn.tag = "mine"
    assert J.vmap(Module()).state_index == 3
    assert J.vmap(J.vmap(Module())).state_index == 3
    assert J.jit(Module()).state_index == 3
    for wrap in (J.jit, J.grad, J.vmap, lambda f: J.jit(J.jit(f))):
        assert wrap(fn).tag == "mine"
    assert not hasattr(J.jit(fn), "no_such_attribute")


def test_a_new_default_platform_drops_programs_compiled_for_the_old_one():
    # (on a TPU, eager programs compiled for the CPU ran on the chip's buffers: a segfault)
    from mjax.arrays import eager
    from mjax.numpy import promotion
    saved = mjax.config.read("jax_platform_name")
    jnp.arange(3.0) * 2 + 1.5
    assert eager._CACHE and promotion._SCALAR_CONSTS
    try:
        mjax.config.update("jax_platform_name", "cpu")
        assert not eager._CACHE and not promotion._SCALAR_CONSTS
        np.testing.assert_array_equal(jnp.arange(3.0) * 2 + 1.5, [1.5, 3.5, 5.5])
    finally:
        mjax.config.update("jax_platform_name", saved)
