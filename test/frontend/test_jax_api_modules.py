"""JAX's modules for libraries (issue 21.2) and small public-API gaps (21.5), each
checked against real jax: flatten_util, image, extend.random, extend.linear_util,
api_util, monitoring, interpreters' rule tables, extend.core.Primitive, round(array),
compiler_ir("hlo"), reading bfloat16 arrays without importing jax, dtype predicates and
*_like of scalar types and ShapeDtypeStructs, isinstance(tracer, jax.Array), out_sharding
of typeof, custom_gradient, pytype_aval_mappings and the private dtype names libraries use."""
import dataclasses
import subprocess
import sys
import warnings

import numpy as np
import pytest

import jax
import jax._src.dtypes as jdt
import jax._src.tree_util as jax_src_tree_util
import jax.api_util
import jax.extend.core
import jax.extend.random
import jax.flatten_util
import jax.image
import jax.numpy as jnp
import mjax
import mjax.core
import mjax.numpy as mnp
from mjax import api_util, flatten_util, image, monitoring, tree_util
from mjax._src import dtypes as mdt
from mjax._src import tree_util as mjax_src_tree_util
from mjax.extend import core as ecore
from mjax.extend import linear_util as lu
from mjax.extend import random as erandom
from mjax.interpreters import ad, batching
from mjax.interpreters import mlir as imlir


@pytest.mark.parametrize("tree", [
    {"a": np.ones((2, 3), np.float32), "b": [np.arange(3, dtype=np.int32), np.float16(2)]},
    [np.ones(2, np.float32), (np.zeros((1, 2), np.float32),)],
    [],
])
def test_ravel_pytree_matches_jax(tree):
    jflat, junravel = jax.flatten_util.ravel_pytree(tree)
    mflat, munravel = flatten_util.ravel_pytree(tree)
    assert mflat.dtype == jflat.dtype and mflat.shape == jflat.shape
    np.testing.assert_array_equal(np.asarray(mflat), np.asarray(jflat))
    back_j, back_m = junravel(jflat), munravel(mflat)
    assert tree_util.tree_structure(back_m) == tree_util.tree_structure(tree)
    for a, b in zip(jax.tree_util.tree_leaves(back_j), tree_util.tree_leaves(back_m)):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert munravel == flatten_util.ravel_pytree(tree)[1]  # hashable, equal by structure


def test_ravel_pytree_unravel_refuses_another_dtype():
    _, unravel = flatten_util.ravel_pytree([np.ones(2, np.float32), np.arange(2)])
    with pytest.raises(TypeError, match="unravel function given array of dtype int32"):
        unravel(mnp.zeros(4, np.int32))


def test_ravel_pytree_under_jit_and_grad():
    def loss(p):
        flat, _ = flatten_util.ravel_pytree(p)
        return mnp.sum(flat ** 2)
    p = {"w": np.arange(3.0, dtype=np.float32), "b": np.float32(2.0)}
    g = mjax.jit(mjax.grad(loss))(p)
    np.testing.assert_allclose(np.asarray(g["w"]), 2 * p["w"])
    np.testing.assert_allclose(np.asarray(g["b"]), 4.0)


METHODS = ["nearest", "linear", "cubic", "lanczos3", "lanczos5", "cubic-pytorch", "area"]


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("antialias", [True, False])
def test_image_resize_matches_jax(method, antialias):
    x = np.random.RandomState(0).rand(5, 7, 3).astype(np.float32)
    for shape in [(9, 4, 3), (3, 11, 3)]:
        np.testing.assert_allclose(
            np.asarray(image.resize(x, shape, method, antialias)),
            np.asarray(jax.image.resize(x, shape, method, antialias)), atol=1e-5)


def test_image_scale_and_translate_and_integer_input_match_jax():
    x = np.random.RandomState(1).rand(6, 6).astype(np.float32)
    args = ((8, 5), (0, 1), np.array([1.5, 0.8], np.float32), np.array([0.3, -0.2],
                                                                      np.float32))
    np.testing.assert_allclose(np.asarray(image.scale_and_translate(x, *args, "cubic")),
                               np.asarray(jax.image.scale_and_translate(x, *args, "cubic")),
                               atol=1e-5)
    xi = (x * 100).astype(np.int32)
    a, b = image.resize(xi, (4, 9), "linear"), jax.image.resize(xi, (4, 9), "linear")
    assert a.dtype == b.dtype
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
    with pytest.raises(ValueError, match="Unknown resize method"):
        image.resize(x, (3, 3), "bogus")
    with pytest.raises(ValueError, match="Nearest neighbor"):
        image.scale_and_translate(x, *args, "nearest")


def test_threefry_2x32_matches_jax():
    count = np.arange(7, dtype=np.uint32).reshape(7)
    key = (np.uint32(3), np.uint32(9))
    np.testing.assert_array_equal(np.asarray(erandom.threefry_2x32(key, count)),
                                  np.asarray(jax.extend.random.threefry_2x32(key, count)))


def test_linear_util_transformations():
    def f(x, y):
        return x + y

    def scale(k, *args):
        ans = yield args, {}
        yield ans * k

    @lu.transformation_with_aux2
    def with_aux(inner, store, *args):
        out = inner(*args)
        store.store("aux")
        return out

    g, aux = with_aux(lu.transformation(scale, lu.wrap_init(f), 10))
    assert g.call_wrapped(1, 2) == 30 and aux() == "aux"
    with pytest.raises(lu.StoreException):
        lu.transformation_with_aux2(lambda inner, store, *a: inner(*a),
                                    lu.wrap_init(f))[1]()


def test_api_util_matches_jax():
    t = (1, {"a": 2, "b": (3, 4)})
    axes = (0, {"a": None, "b": 1})
    assert api_util.flatten_axes("in_axes", tree_util.tree_structure(t), axes) == \
        jax.api_util.flatten_axes("in_axes", jax.tree_util.tree_structure(t), axes)
    assert api_util.rebase_donate_argnums((3, 4), (0, 1)) == \
        jax.api_util.rebase_donate_argnums((3, 4), (0, 1))
    tree = ((1, (2, 3)), {})
    assert api_util.donation_vector((0,), (), tree_util.tree_structure(tree)) == \
        jax.api_util.donation_vector((0,), (), jax.tree_util.tree_structure(tree))
    fun, out_tree = api_util.flatten_fun_nokwargs(
        lu.wrap_init(lambda a, b: {"s": a + b}), tree_util.tree_structure((1, 2)))
    assert fun.call_wrapped(1, 2) == [3] and out_tree() == tree_util.tree_structure({"s": 0})


def test_monitoring_listeners():
    seen = []
    listener = lambda event, **kw: seen.append((event, kw))  # noqa: E731
    monitoring.register_event_listener(listener)
    try:
        monitoring.record_event("/lib/x", n=1)
    finally:
        monitoring.unregister_event_listener(listener)
    monitoring.record_event("/lib/y")
    assert seen == [("/lib/x", {"n": 1})]
    with pytest.raises(AssertionError):
        monitoring.unregister_event_listener(listener)


def test_user_primitive_registers_rules_and_runs():
    p = ecore.Primitive("my_double")
    p.def_impl(lambda x: x * 2)
    p.def_abstract_eval(lambda x: x)
    ad.defjvp(p, lambda t, x: t * 2)
    batching.defvectorized(p)
    imlir.register_lowering(p, imlir.lower_fun(lambda x: x * 2, multiple_results=False))
    assert p in ad.primitive_jvps and p in batching.primitive_batchers
    np.testing.assert_array_equal(np.asarray(p.bind(mnp.arange(3.0))), [0.0, 2.0, 4.0])
    # (test/frontend/tracing/test_user_primitives.py checks every transformation against jax)
    assert float(mjax.jit(p.bind)(1.5)) == 3.0 and float(mjax.grad(p.bind)(1.5)) == 2.0
    np.testing.assert_array_equal(np.asarray(mjax.vmap(p.bind)(mnp.arange(3.0))),
                                  [0.0, 2.0, 4.0])
    with pytest.raises(NotImplementedError, match="Evaluation rule for 'other'"):
        ecore.Primitive("other").bind(1.0)


@pytest.mark.parametrize("x,nd", [(2.6, None), (2.567, 2), (-1.5, None), (7.25, 1)])
def test_round_of_an_array_as_jax(x, nd):
    a, b = round(mnp.array(x), nd), round(jnp.array(x), nd)
    assert a.dtype == b.dtype
    np.testing.assert_allclose(np.asarray(a), np.asarray(b))


def test_compiler_ir_hlo_text():
    hlo = mjax.jit(lambda x: x * 2 + 1).lower(1.0).compiler_ir("hlo")
    text = hlo.as_hlo_text()
    assert text.startswith("HloModule") and "multiply" in text and "add" in text
    assert "stablehlo" in str(mjax.jit(lambda x: x + 1).lower(1.0).compiler_ir())


def test_bfloat16_to_numpy_never_imports_jax():
    # Rank-0 arrays put from the host and sub-byte types (int4) go through jaxlib calls
    # that try to import jax: mjax refuses them that import.
    code = ("import sys, numpy as np, mjax, mjax.numpy as jnp\n"
            "x = jnp.arange(6, dtype=jnp.bfloat16).reshape(2, 3)\n"
            "y = mjax.jit(lambda a: (a * 2).T)(x)\n"
            "print(np.asarray(x).tolist(), np.asarray(y).tolist(), "
            "np.asarray(jnp.full((1,), 1.5, jnp.float8_e4m3fn)).item(), "
            "np.asarray(jnp.array(1.5, jnp.bfloat16)).item(), "
            "np.asarray(jnp.asarray(np.arange(3).astype(jnp.int4.dtype))).tolist(), "
            "'jax' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=300, check=True).stdout.split("\n")[-2]
    assert out == ("[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] [[0.0, 6.0], [2.0, 8.0], "
                   "[4.0, 10.0]] 1.5 1.5 [0, 1, 2] False")


@pytest.mark.parametrize("name", ["iscomplexobj", "isrealobj"])
@pytest.mark.parametrize("arg", ["float32", "complex64", "int8", "bfloat16", "sds_c64",
                                 "none", "1j", "list"])
def test_dtype_predicates_on_scalar_types_as_jax(name, arg):
    def value(m):
        return {"sds_c64": m.ShapeDtypeStruct((2,), np.complex64), "none": None,
                "1j": 1j, "list": [1.0, 2.0]}.get(arg) if arg in (
            "sds_c64", "none", "1j", "list") else getattr(m.numpy, arg)
    assert getattr(mnp, name)(value(mjax)) == getattr(jnp, name)(value(jax))


@pytest.mark.parametrize("name,extra", [("zeros_like", ()), ("ones_like", ()),
                                        ("full_like", (3,)), ("empty_like", ())])
@pytest.mark.parametrize("kw", [{}, {"dtype": np.int8}, {"shape": (4,)}])
def test_like_of_shape_dtype_struct_as_jax(name, extra, kw):
    got = getattr(mnp, name)(mjax.ShapeDtypeStruct((2, 3), np.float32), *extra, **kw)
    want = getattr(jnp, name)(jax.ShapeDtypeStruct((2, 3), np.float32), *extra, **kw)
    assert (got.shape, got.dtype, got.weak_type) == (want.shape, want.dtype,
                                                     want.weak_type)
    if name != "empty_like":
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    traced = mjax.jit(lambda: getattr(mnp, name)(
        mjax.ShapeDtypeStruct((2,), np.int32), *extra))()
    assert traced.shape == (2,) and traced.dtype == np.int32


def test_like_of_a_weakly_typed_array_stays_weak_as_jax():
    for m, n in ((mjax, mnp), (jax, jnp)):
        assert n.zeros_like(n.asarray(1.0)).weak_type
        assert m.jit(lambda x: n.full_like(x, 2))(1.0).weak_type
        assert not n.ones_like(n.asarray(1.0), dtype=np.float32).weak_type


def test_tracers_and_key_arrays_are_instances_of_array_as_jax():
    def kinds(m):
        seen = []

        def f(x):
            seen.append((isinstance(x, m.Array), isinstance(x, m.numpy.ndarray)))
            return x
        m.jit(f)(m.numpy.ones(2))
        m.vmap(f)(m.numpy.ones(2))
        m.grad(f)(1.0)
        key = m.random.key(0)
        seen.append((isinstance(key, m.Array), isinstance(np.ones(2), m.Array),
                     isinstance(1.0, m.numpy.ndarray), isinstance(m.numpy.ones(2), m.Array)))
        return seen
    assert kinds(mjax) == kinds(jax)
    assert issubclass(type(mnp.ones(2)), mjax.Array) and repr(mjax.Array) == "<class 'mjax.Array'>"


def test_samplers_take_out_sharding_of_typeof_as_jax():
    def run(m):
        def g(x):
            return m.random.normal(m.random.key(0), x.shape,
                                   out_sharding=m.typeof(x).sharding)
        x = m.numpy.ones(3)
        outs = [g(x), m.jit(g)(x), m.numpy.zeros(2, out_sharding=m.typeof(x).sharding)]
        mesh = m.make_mesh((1,), ("x",), axis_types=(m.sharding.AxisType.Explicit,))
        with m.set_mesh(mesh):
            y = m.device_put(m.numpy.ones(4), m.P("x"))
            eager = g(y)
            outs += [eager, m.jit(g)(y)]
        return outs, eager.sharding.spec
    got, got_spec = run(mjax)
    want, want_spec = run(jax)
    assert tuple(got_spec) == tuple(want_spec) == ("x",)
    for a, b in zip(got, want):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_custom_gradient_as_jax():
    def run(m):
        jn = m.numpy

        @m.custom_gradient
        def f(x):
            return x ** 2, lambda g: (g * x,)

        @m.custom_gradient
        def h(x, y):
            z = jn.sin(x) * y
            return z, lambda g: (g * 3.0, g * z)

        @m.custom_gradient
        def k(x):
            return jn.exp(x), lambda g: g * 10.0
        return [f(3.), m.grad(f)(3.), m.grad(m.grad(f))(3.), *m.grad(h, (0, 1))(1., 2.),
                m.jit(m.grad(lambda x: h(x, x)))(0.5), m.vmap(m.grad(k))(jn.arange(3.)),
                *m.value_and_grad(k)(1.0)]
    for a, b in zip(run(mjax), run(jax), strict=True):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)


def test_private_dtype_names_libraries_import_as_jax():
    for t in (np.float32, jnp.float8_e4m3fn, jnp.float8_e5m2, jnp.bfloat16, np.int32):
        assert mdt.supports_inf(t) == jdt.supports_inf(t), t
    assert mdt.DType is jdt.DType is np.dtype
    for dt in (mdt, jdt):   # flax.linen's fp8 meta dtype, defined at import
        @dataclasses.dataclass(frozen=True)
        class Meta(dt.ExtendedDType):
            float_dtype: np.dtype
            type: type = dt.extended
            name = "meta"
        assert Meta(np.dtype(np.float32)).type is dt.extended
    assert isinstance(mjax.random.key(0).dtype, mdt.ExtendedDType)
    assert isinstance(jax.random.key(0).dtype, jdt.ExtendedDType)


def test_pytype_aval_mappings_as_jax():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        theirs = jax.core.pytype_aval_mappings
    ours = mjax.core.pytype_aval_mappings
    for x in (np.ones((2, 3)), np.float32(2), np.arange(3, dtype=np.int8)):
        a, b = ours[type(x)](x), theirs[type(x)](x)
        assert (a.shape, a.dtype) == (b.shape, b.dtype)

    class Holder:   # a library's own type, mapped as TFP maps its variables
        def __init__(self, v):
            self.v = np.asarray(v, np.float32)
    ours[Holder] = lambda h: ours[np.ndarray](h.v)
    try:
        assert mjax.typeof(Holder([1.0, 2.0])).shape == (2,)
    finally:
        del ours[Holder]


def test_private_prefix_errors_as_jax():
    for prefix, full in [({"a": 1, "b": [2.0]}, {"a": 1, "b": 2.0}),
                         ((1, 2), (1, 2, 3)), ([1], [[1, 2]])]:
        got = [str(e("in_axes")) for e in mjax_src_tree_util.prefix_errors(prefix, full)]
        want = [str(e("in_axes")) for e in jax_src_tree_util.prefix_errors(prefix, full)]
        assert got == want


def test_parse_flags_with_absl_reads_option_flags():
    before = mjax.config.jax_default_matmul_precision
    try:
        mjax.config.parse_flags_with_absl(["prog", "-q", "--jax_default_matmul_precision=high",
                                           "--other_flag=1"])
        assert mjax.config.jax_default_matmul_precision == "high"
    finally:
        mjax.config.update("jax_default_matmul_precision", before)
    mjax.config.parse_flags_with_absl()   # (pytest's own arguments: nothing to apply)


def test_named_call_as_jax():
    def f(x):
        return mnp.sin(x) * 2
    g = mjax.named_call(f, name="my_block")
    assert g.__name__ == "f" and mjax.named_call(f).__name__ == "f"
    assert "my_block" in mjax.jit(g).lower(1.0).as_text(debug_info=True)
    assert "my_block" in jax.jit(jax.named_call(lambda x: jnp.sin(x) * 2, name="my_block")).lower(
        1.0).as_text(debug_info=True)
    np.testing.assert_allclose(np.asarray(mjax.grad(g)(1.0)), np.cos(1.0) * 2, rtol=1e-6)


def test_opaque_trace_state_tells_traces_apart_as_jax():
    def seen(m, ext):
        outside = [ext.get_opaque_trace_state(convention="haiku")]
        states = []

        def f(x):
            states.append((ext.get_opaque_trace_state(), ext.get_opaque_trace_state()))
            return x
        m.jit(f)(1.0)
        m.grad(f)(1.0)
        return ([a == b for a, b in states] + [a == outside[0] for a, _ in states]
                + [outside[0] == ext.get_opaque_trace_state()])
    assert seen(mjax, ecore) == seen(jax, jax.extend.core) == [True, True, False, False, True]
