"""What JAX 0.10.2's tests/lax_autodiff_test.py, linalg_test.py and nn_test.py need of
mjax's public behaviour and of the jax._src aliases they import, each checked against real
jax: check_grads on bfloat16 and with per-dtype tolerance dicts, jvp's TypeError for a
float0 tangent of a float primal, and the jax._src names (lax.linalg, numpy.util,
ad_checkpoint, cudnn.scaled_matmul_stablehlo, lib.cuda_versions, core)."""
import warnings

import ml_dtypes
import numpy as np
import pytest

import jax
import jax.numpy as jnp
import jax.flatten_util
import jax.test_util
import mjax
import mjax.numpy as mjnp
import mjax.flatten_util
import mjax.test_util
from jax._src import ad_checkpoint as j_ad_checkpoint
from jax._src import core as j_core
from jax._src.cudnn import scaled_matmul_stablehlo as j_smm
from jax._src.lax import linalg as j_lax_linalg
from jax._src.numpy import util as j_np_util
from mjax._src import ad_checkpoint as m_ad_checkpoint
from mjax._src import core as m_core
from mjax._src import lib as m_lib
from mjax._src.cudnn import scaled_matmul_stablehlo as m_smm
from mjax._src.lax import linalg as m_lax_linalg
from mjax._src.numpy import util as m_np_util


# ---- check_grads ------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float16, np.float32])
def test_check_grads_on_low_precision_floats(dtype):
    # bfloat16 is inexact: its tangents are bfloat16, not float0 (NumPy's issubdtype says
    # it is not inexact)
    x = np.linspace(0.5, 1.5, 6).astype(dtype).reshape(2, 3)
    for lib in (jax, mjax):
        # (linear, so eps=1 is exact; JAX's testBroadcastGrad)
        lib.test_util.check_grads(lambda v: lib.lax.broadcast(v, (2,)) * 3, (x,), 2,
                                  ["fwd", "rev"], eps=1.)


def test_check_grads_takes_tolerance_dicts():
    x = np.linspace(0.5, 1.5, 4).astype(np.float32)
    tol = {ml_dtypes.bfloat16: 1.0, np.float16: 0.5, np.float32: 1e-3}
    for lib in (jax, mjax):
        lib.test_util.check_grads(lambda v: lib.numpy.sin(v) * v, (x,), 2, ["fwd", "rev"],
                                  atol=tol, rtol=tol)


def test_check_grads_tolerance_dict_is_used():
    # a wrong derivative must still fail with a dict whose entry is tight
    @mjax.custom_jvp
    def f(x):
        return x * x

    @f.defjvp
    def f_jvp(p, t):
        return f(p[0]), 2.2 * p[0] * t[0]
    x = np.linspace(0.5, 1.5, 4).astype(np.float32)
    with pytest.raises(AssertionError):
        mjax.test_util.check_grads(f, (x,), 1, ["fwd"], atol={np.float32: 1e-3},
                                   rtol={np.float32: 1e-3})
    # and a loose one for float32 lets it pass, as in JAX
    mjax.test_util.check_grads(f, (x,), 1, ["fwd"], atol={np.float32: 10.},
                               rtol={np.float32: 10.})


# ---- jvp's check of float0 tangents ----------------------------------------------------------
@pytest.mark.parametrize("dtype", [ml_dtypes.bfloat16, np.float32])
def test_jvp_float0_tangent_for_float_primal_is_type_error(dtype):
    x, t = np.ones(3, dtype), np.zeros(3, jax.dtypes.float0)
    with pytest.raises(TypeError) as je:
        jax.jvp(lambda v: v * 2, (x,), (t,))
    with pytest.raises(TypeError) as me:
        mjax.jvp(lambda v: v * 2, (x,), (t,))
    assert str(me.value) == str(je.value)


def test_jvp_float0_tangent_for_int_primal_still_works():
    x, t = np.arange(3, dtype=np.int32), np.zeros(3, jax.dtypes.float0)
    jo, jt = jax.jvp(lambda v: v * 2, (x,), (t,))
    mo, mt = mjax.jvp(lambda v: v * 2, (x,), (t,))
    np.testing.assert_array_equal(np.asarray(mo), np.asarray(jo))
    assert np.asarray(mt).dtype == np.asarray(jt).dtype == jax.dtypes.float0


# ---- jax._src aliases -------------------------------------------------------------------------
def test_src_lax_linalg_functions():
    a = np.array([[4., 1., 2.], [1., 3., 0.], [2., 0., 5.]], np.float32)
    for name in ("lu", "geqrf", "qr", "cholesky", "eigh"):
        jout, mout = getattr(j_lax_linalg, name)(a), getattr(m_lax_linalg, name)(a)
        for j, m in zip(jax.tree.leaves(jout), mjax.tree.leaves(mout)):
            assert np.asarray(m).dtype == np.asarray(j).dtype
            if name != "eigh":
                np.testing.assert_allclose(np.asarray(m), np.asarray(j), rtol=1e-5,
                                           atol=1e-5)
    c = np.ones((3, 2), np.float32)
    np.testing.assert_allclose(
        np.asarray(m_lax_linalg.symmetric_product(c, a, alpha=2., beta=.5)),
        np.asarray(j_lax_linalg.symmetric_product(c, a, alpha=2., beta=.5)), rtol=1e-6)
    with pytest.raises(NotImplementedError, match="lax.linalg.lu"):
        m_lax_linalg._lu_python(a)


@pytest.mark.parametrize("args", [
    (np.arange(3, dtype=np.int32),), (np.ones(2, np.float16), np.int8(3)),
    (np.ones(2, bool), 2.0), (np.ones(2, np.int16), np.ones(2, np.complex64))])
def test_src_numpy_util_promote_dtypes_inexact(args):
    jout, mout = j_np_util.promote_dtypes_inexact(*args), m_np_util.promote_dtypes_inexact(*args)
    assert len(mout) == len(jout)
    for j, m in zip(jout, mout):
        assert m.dtype == j.dtype and m.shape == j.shape
        np.testing.assert_array_equal(np.asarray(m), np.asarray(j))


def test_src_ad_checkpoint_saved_residuals():
    # (which residuals are saved is each compiler's own: mjax keeps more for softmax than
    # JAX's 3, so JAX's testSoftmaxGradFlag fails; the avals and descriptions agree in kind)
    x = np.linspace(-1, 1, 6).astype(np.float32)
    jres = j_ad_checkpoint.saved_residuals(jax.nn.softmax, x)
    mres = m_ad_checkpoint.saved_residuals(mjax.nn.softmax, x)
    assert mres and jres
    for (ma, md), (ja, jd) in zip(mres, jres):
        assert type(ma).__name__ == type(ja).__name__ == "ShapedArray"
        assert isinstance(md, str) and isinstance(jd, str)
    assert m_ad_checkpoint.saved_residuals is mjax.ad_checkpoint.saved_residuals
    assert m_ad_checkpoint.checkpoint_name is mjax.ad_checkpoint.checkpoint_name


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_src_cudnn_quantize(mode):
    jcfg = jax.nn.get_scaled_dot_general_config(mode, global_scale=(
        jnp.array(1.0, np.float32) if mode == "nvfp4" else None))
    mcfg = mjax.nn.get_scaled_dot_general_config(mode, global_scale=(
        mjnp.array(1.0, np.float32) if mode == "nvfp4" else None))
    x = np.random.RandomState(0).randn(2, 4, 64).astype(np.float32)
    jq, js = j_smm.quantize(jnp.asarray(x), jcfg)
    mq, ms = m_smm.quantize(mjnp.asarray(x), mcfg)
    assert mq.dtype == jq.dtype and ms.dtype == js.dtype
    assert mq.shape == jq.shape and ms.shape == js.shape
    np.testing.assert_array_equal(np.asarray(mq).astype(np.float32),
                                  np.asarray(jq).astype(np.float32))
    np.testing.assert_array_equal(np.asarray(ms).astype(np.float32),
                                  np.asarray(js).astype(np.float32))


def test_src_lib_cuda_versions_and_core_error():
    from jax._src import lib as j_lib
    assert m_lib.cuda_versions is None
    assert (j_lib.cuda_versions is None) == (jax.default_backend() != "gpu")
    assert issubclass(m_core.ConcretizationTypeError, TypeError)
    assert issubclass(j_core.ConcretizationTypeError, TypeError)
    with pytest.raises(m_core.ConcretizationTypeError):
        mjax.jit(lambda v: int(v))(1.0)


def test_check_grads_nan_matches_nan():
    # acos off its domain: both derivatives are nan, which NumPy's assert_allclose (JAX's
    # check) takes as equal
    x = np.array([2.0, 3.0], np.float32)
    for lib in (jax, mjax):
        lib.test_util.check_grads(lib.lax.acos, (x,), 2, ["fwd", "rev"])
    # a nan against a number still fails
    @mjax.custom_vjp
    def f(x):
        return x * 1.0
    f.defvjp(lambda x: (f(x), None), lambda _, g: (g * np.float32(np.nan),))
    with pytest.raises(AssertionError, match="VJP"):
        mjax.test_util.check_grads(f, (np.ones(2, np.float32),), 1, ["rev"])


@pytest.mark.parametrize("idxs,axes", [
    ((np.array([-1, -2]),), (0,)), ((np.array([5, -7, 2], np.int32),), (1,)),
    ((np.array([-1, 2]), np.array([0, -3])), (0, 2)),
    ((np.array([1, 200], np.uint8),), (2,)), ((np.array([-100, 3], np.int8),), (0,))])
def test_index_take_wraps_indices(idxs, axes):
    # JAX's index_take takes indices modulo the axis size (testIndexTakeGrad's -1, -2)
    src = np.arange(60, dtype=np.float32).reshape(3, 4, 5)
    got = mjax.lax.index_take(src, idxs, axes)
    want = jax.lax.index_take(src, idxs, axes)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    f = lambda s, lib: lib.lax.index_take(s, idxs, axes)
    jt = jax.jvp(lambda s: f(s, jax), (src,), (np.ones_like(src),))[1]
    mt = mjax.jvp(lambda s: f(s, mjax), (src,), (np.ones_like(src),))[1]
    np.testing.assert_array_equal(np.asarray(mt), np.asarray(jt))


# ---- tree_util_test's needs ----------------------------------------------------------------
def test_unravel_is_dtype_polymorphic_for_one_dtype():
    x = np.arange(10, dtype=np.float32)
    for lib in (jax, mjax):
        flat, unravel = lib.flatten_util.ravel_pytree({"a": x, "b": x[:3]})
        back = unravel(flat < 5.3)
        assert back["a"].dtype == np.bool_ and back["a"].shape == (10,)
    jflat, jun = jax.flatten_util.ravel_pytree((x, x[:3]))
    mflat, mun = mjax.flatten_util.ravel_pytree((x, x[:3]))
    for j, m in zip(jun(jflat < 4), mun(mflat < 4)):
        np.testing.assert_array_equal(np.asarray(m), np.asarray(j))
    # two dtypes: unravel still wants the promoted dtype, as JAX's
    _, mun2 = mjax.flatten_util.ravel_pytree((x, np.arange(3)))
    _, jun2 = jax.flatten_util.ravel_pytree((x, np.arange(3)))
    with pytest.raises(TypeError) as je:
        jun2(np.zeros(13, np.bool_))
    with pytest.raises(TypeError) as me:
        mun2(np.zeros(13, np.bool_))
    assert str(me.value) == str(je.value)


@pytest.mark.parametrize("prefix,full", [
    ((1, 2, 3), (0, {"a": 0, "b": 0}, (0, 0))), ([1, {"k": 2}], [[0, 0], {"k": (0, 0, 0)}]),
    ((1, 2), (0, {"a": 0, "b": 0}, (0, 0))), ((1, {"a": 0}), (0, {"a": 0, "b": 0}))])
def test_broadcast_flattened_prefix_with_treedef(prefix, full):
    from jax._src.tree_util import broadcast_flattened_prefix_with_treedef as jb
    from mjax._src.tree_util import broadcast_flattened_prefix_with_treedef as mb
    jl, jt = jax.tree_util.tree_flatten(prefix)
    ml, mt = mjax.tree_util.tree_flatten(prefix)
    try:
        want = jb(jl, jt, jax.tree_util.tree_structure(full))
    except Exception:   # (JAX raises; mjax raises JAX's ValueError of tree_broadcast)
        with pytest.raises(ValueError, match="pytree structure error"):
            mb(ml, mt, mjax.tree_util.tree_structure(full))
        return
    assert mb(ml, mt, mjax.tree_util.tree_structure(full)) == want


def test_dispatch_registry_flattens_as_default():
    from mjax._src.tree_util import default_registry, dispatch_registry

    class Box:
        def __init__(self, x):
            self.x = x
    mjax.tree_util.register_pytree_node(Box, lambda o: ((o.x,), None),
                                        lambda _, xs: Box(xs[0]))
    l1, t1 = default_registry.flatten(Box([1, 2]))
    l2, t2 = dispatch_registry.flatten(Box([1, 2]))
    assert l1 == l2 == [1, 2] and t1 == t2


def test_numerical_jvp_equal_infinities_differ_by_zero():
    # reduce_window max with -inf init: windows wholly in padding are -inf on both sides
    # of the central difference (JAX's testReduceWindowGrad)
    x = np.arange(8, dtype=np.float32).reshape(2, 4)

    def f(lib):
        return lambda v: lib.lax.reduce_window(v, -np.inf, lib.lax.max, (1, 2), (1, 1),
                                               [(0, 3), (1, 2)])
    t = np.ones_like(x)
    from jax._src import public_test_util as jptu
    jn = jptu.numerical_jvp(f(jax), (x,), (t,))
    mn = mjax.test_util.numerical_jvp(f(mjax), (x,), (t,))
    np.testing.assert_allclose(np.asarray(mn), np.asarray(jn), rtol=1e-3)
    assert not np.isnan(np.asarray(mn)).any()
    for lib in (jax, mjax):
        lib.test_util.check_grads(f(lib), (x,), 2, ["fwd", "rev"], eps=1e-2)


# ---- lax_control_flow_test's imports -------------------------------------------------------
def test_src_lax_control_flow_and_interpreters():
    from jax._src.interpreters import batching as jbatching
    from jax._src.interpreters import mlir as jmlir
    from jax._src.lax import control_flow as jcf
    from mjax._src.interpreters import batching as mbatching
    from mjax._src.interpreters import mlir as mmlir
    from mjax._src.lax import control_flow as mcf
    assert mbatching is mjax.interpreters.batching and mmlir is mjax.interpreters.mlir
    assert hasattr(jbatching, "primitive_batchers") and hasattr(mbatching, "primitive_batchers")
    assert hasattr(jmlir, "register_lowering") and hasattr(mmlir, "register_lowering")
    xs = np.arange(5, dtype=np.float32)
    for name, run in [
            ("scan", lambda cf: cf.scan(lambda c, x: (c + x, c * x), 0., xs)),
            ("cond", lambda cf: cf.cond(True, lambda v: v + 1, lambda v: v - 1, xs)),
            ("fori_loop", lambda cf: cf.fori_loop(0, 3, lambda i, v: v * 2 + i, xs)),
            ("associative_scan", lambda cf: cf.associative_scan(np.add, xs))]:
        for j, m in zip(jax.tree.leaves(run(jcf)), mjax.tree.leaves(run(mcf))):
            np.testing.assert_allclose(np.asarray(m), np.asarray(j), err_msg=name)


# ---- nn_test's one_hot ------------------------------------------------------------------------
def test_one_hot_traced_num_classes_is_concretization_error():
    for lib in (jax, mjax):
        with pytest.raises(lib.errors.ConcretizationTypeError,
                           match=r"in jax.nn.one_hot argument `num_classes`"):
            lib.jit(lib.nn.one_hot)(3, 5)
    # a concrete array is a size, as in JAX
    np.testing.assert_array_equal(np.asarray(mjax.nn.one_hot(np.arange(3), np.int64(4))),
                                  np.asarray(jax.nn.one_hot(np.arange(3), np.int64(4))))


@pytest.mark.parametrize("x,warns", [(np.array([1.0]), True), (np.array([2], np.float16), True),
                                     (np.array([1], np.int8), False),
                                     (np.array([2], np.uint32), False)])
def test_one_hot_non_integer_input_warns(x, warns):
    for lib in (jax, mjax):
        with warnings.catch_warnings(record=True) as w:
            warnings.simplefilter("always")
            out = lib.nn.one_hot(x, 3)
        got = [str(m.message) for m in w if issubclass(m.category, DeprecationWarning)
               and "one_hot" in str(m.message)]
        dt = lib.numpy.asarray(x).dtype   # (canonical: float64 -> float32)
        assert got == ([f"jax.nn.one_hot input should be integer-typed; got dtype={dt}"]
                       if warns else []), lib.__name__
    np.testing.assert_array_equal(np.asarray(mjax.nn.one_hot(x, 3)),
                                  np.asarray(jax.nn.one_hot(x, 3)))


# ---- nn_test's dot_product_attention in float16 --------------------------------------------
@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16])
def test_dot_product_attention_half_floats_on_this_target(dtype):
    # float16's F16_F16_F32 algorithm is not on the CPU: JAX falls back to the default
    # precision (mjax failed at lowering)
    q = np.random.RandomState(0).randn(1, 8, 2, 4).astype(dtype)

    def loss(lib):
        return lambda x: lib.nn.dot_product_attention(x, x, x).astype(np.float32).sum()
    np.testing.assert_allclose(
        np.asarray(mjax.nn.dot_product_attention(q, q, q), np.float32),
        np.asarray(jax.nn.dot_product_attention(q, q, q), np.float32), rtol=2e-2, atol=2e-2)
    np.testing.assert_allclose(np.asarray(mjax.grad(loss(mjax))(q), np.float32),
                               np.asarray(jax.grad(loss(jax))(q), np.float32),
                               rtol=5e-2, atol=5e-2)
