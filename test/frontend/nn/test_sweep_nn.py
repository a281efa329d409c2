"""Differential sweep of mjax.nn against jax.nn: values, dtypes, weak types, errors,
eager and under jit, grad and vmap, in float32 and x64."""
import numpy as np
import pytest

import jax
import mjax
from frontend_util import tol, x64
from sweep_util import compare

RNG = np.random.default_rng(1)
X = np.concatenate([RNG.uniform(-5, 5, 10), [0.0, 1.0, -1.0, 6.0, 0.5, -0.5]]
                   ).astype(np.float32).reshape(4, 4)
MASK = RNG.random((4, 4)) > 0.3


def _both(name):
    return getattr(mjax.nn, name), getattr(jax.nn, name)


UNARY = ["relu", "relu6", "sigmoid", "log_sigmoid", "softplus", "silu", "gelu", "elu",
         "leaky_relu", "celu", "selu", "hard_tanh", "hard_sigmoid", "hard_silu",
         "soft_sign", "mish", "identity", "tanh", "sparse_plus", "sparse_sigmoid",
         "squareplus"]


@pytest.mark.parametrize("name", UNARY)
def test_unary(name):
    m, j = _both(name)
    compare(m, j, (X,), modes=("eager", "grad"), atol=5e-6)  # gelu grad: cancellation


@pytest.mark.parametrize("name", ["relu6", "gelu", "hard_tanh", "sparse_plus"])
def test_unary_vmap(name):
    compare(*_both(name), (X,), modes=("vmap",))


@pytest.mark.parametrize("name", ["relu", "sigmoid", "gelu", "softplus", "selu"])
def test_unary_x64(name, x64_mode):
    m, j = _both(name)
    compare(m, j, (X.astype(np.float64) if x64_mode else X,), modes=("jit",))


# Python scalars keep weak types, integer inputs give floats or JAX's TypeError.
@pytest.mark.parametrize("name", ["relu", "identity", "sigmoid", "silu", "gelu"])
@pytest.mark.parametrize("x", [3, 2.5, np.int32(4), True])
def test_scalar_dtypes_and_weak_types(name, x):
    m, j = _both(name)
    compare(m, j, (x,))


def test_log1mexp():
    x = np.abs(X) + 0.01
    compare(mjax.nn.log1mexp, jax.nn.log1mexp, (x,), modes=("eager", "jit", "grad", "vmap"))


@pytest.mark.parametrize("approximate", [True, False])
def test_gelu_approximate(approximate):
    compare(lambda x: mjax.nn.gelu(x, approximate), lambda x: jax.nn.gelu(x, approximate),
            (X,), modes=("eager", "jit", "grad"), atol=5e-6)


@pytest.mark.parametrize("kw", [{}, {"axis": 0}, {"axis": (0, 1)}, {"axis": None},
                                {"where": MASK}, {"axis": 0, "where": MASK}])
@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
def test_softmax_family(name, kw):
    m, j = _both(name)
    compare(lambda x: m(x, **kw), lambda x: j(x, **kw), (X,), modes=("eager", "jit", "grad"))


@pytest.mark.parametrize("kw", [{}, {"axis": 0}, {"axis": 1, "keepdims": True},
                                {"b": np.abs(X)}, {"b": X, "return_sign": True},
                                {"where": MASK, "axis": 1}])
def test_logsumexp(kw):
    compare(lambda x: mjax.nn.logsumexp(x, **kw), lambda x: jax.nn.logsumexp(x, **kw), (X,),
            modes=("eager", "jit", "grad") if "return_sign" not in kw else ("eager", "jit"))


@pytest.mark.parametrize("kw", [{}, {"axis": 0}, {"where": MASK, "axis": 1},
                                {"keepdims": True, "axis": 1}])
def test_logmeanexp(kw):
    if "where" not in kw:
        compare(lambda x: mjax.nn.logmeanexp(x, **kw), lambda x: jax.nn.logmeanexp(x, **kw),
                (X,))
        return
    # The mask passed to both programs. Closed over, JAX's jit inlines it as a constant
    # and XLA folds the log of the count on the host, while mjax passes captured arrays to
    # its programs: a TPU then takes that log with its coarser float32 log (6e-5 off for a
    # count of 3), as JAX's own program does when the mask is an argument.
    rest = {k: v for k, v in kw.items() if k != "where"}
    compare(lambda x, w: mjax.nn.logmeanexp(x, where=w, **rest),
            lambda x, w: jax.nn.logmeanexp(x, where=w, **rest), (X, kw["where"]))
    compare(lambda x: mjax.nn.logmeanexp(x, **kw), lambda x: jax.nn.logmeanexp(x, **kw), (X,),
            rtol=tol(1e-5, 1e-4))


@pytest.mark.parametrize("kw", [{}, {"axis": 0}, {"epsilon": 1e-2}, {"where": MASK},
                                {"mean": 0.5, "variance": 2.0}])
def test_standardize(kw):
    compare(lambda x: mjax.nn.standardize(x, **kw), lambda x: jax.nn.standardize(x, **kw),
            (X,), rtol=1e-4, atol=1e-5, modes=("eager", "jit", "grad"))


@pytest.mark.parametrize("axis", [-1, 0])
def test_glu(axis):
    compare(lambda x: mjax.nn.glu(x, axis), lambda x: jax.nn.glu(x, axis), (X,),
            modes=("eager", "jit", "grad", "vmap"))
    compare(lambda x: mjax.nn.glu(x), lambda x: jax.nn.glu(x), (X[:, :3],))


@pytest.mark.parametrize("kw", [{}, {"dtype": np.int32}, {"axis": 0}, {"dtype": bool}])
@pytest.mark.parametrize("x", [np.array([0, 2, 1, 5, -1]), np.array([[1, 0], [2, 3]]),
                               np.array([0.0, 1.5, 2.0])])
def test_one_hot(x, kw):
    compare(lambda v: mjax.nn.one_hot(v, 4, **kw), lambda v: jax.nn.one_hot(v, 4, **kw),
            (x,), modes=("eager", "jit", "vmap"))


def _attention_inputs(T=5, S=6, N=4, K=2, H=8, dtype=np.float32):
    q = RNG.normal(size=(2, T, N, H)).astype(dtype)
    k = RNG.normal(size=(2, S, K, H)).astype(dtype)
    v = RNG.normal(size=(2, S, K, H)).astype(dtype)
    return q, k, v


ATTN = [{}, {"bias": RNG.normal(size=(1, 4, 5, 6)).astype(np.float32)},
        {"mask": RNG.random((2, 1, 5, 6)) > 0.3}, {"is_causal": True}, {"scale": 0.2},
        {"query_seq_lengths": np.array([3, 5], np.int32),
         "key_value_seq_lengths": np.array([6, 2], np.int32)},
        {"local_window_size": (1, 2)}, {"local_window_size": 1},
        {"is_causal": True, "mask": RNG.random((5, 6)) > 0.2,
         "bias": RNG.normal(size=(5, 6)).astype(np.float32)}]


@pytest.mark.parametrize("kw", ATTN)
def test_dot_product_attention(kw):
    q, k, v = _attention_inputs()
    compare(lambda q, k, v: mjax.nn.dot_product_attention(q, k, v, **kw),
            lambda q, k, v: jax.nn.dot_product_attention(q, k, v, **kw), (q, k, v),
            modes=("eager", "grad"), rtol=1e-4, atol=1e-5)


def test_dot_product_attention_unbatched_residual_and_vmap():
    q, k, v = _attention_inputs()
    compare(lambda q, k, v: mjax.nn.dot_product_attention(q, k, v, return_residual=True),
            lambda q, k, v: jax.nn.dot_product_attention(q, k, v, return_residual=True),
            (q[0], k[0], v[0]), rtol=1e-4, atol=1e-5, modes=("eager", "vmap"))


@pytest.mark.parametrize("bad", ["heads", "dtype", "mask_dtype", "value_shape", "impl"])
def test_dot_product_attention_errors(bad):
    q, k, v = _attention_inputs()
    kw = {}
    if bad == "heads":
        q = q[:, :, :3]
    elif bad == "dtype":
        q = q.astype(np.float16)
    elif bad == "mask_dtype":
        kw["mask"] = np.ones((2, 1, 5, 6), np.int32)
    elif bad == "value_shape":
        v = v[:, :3]
    else:
        kw["implementation"] = "bogus"
    compare(lambda q, k, v: mjax.nn.dot_product_attention(q, k, v, **kw),
            lambda q, k, v: jax.nn.dot_product_attention(q, k, v, **kw), (q, k, v),
            modes=("eager",))


INITS = [("zeros", None), ("ones", None), ("constant", (0.7,)), ("uniform", ()),
         ("uniform", (2.0,)), ("normal", ()), ("normal", (0.5,)), ("truncated_normal", ()),
         ("glorot_uniform", ()), ("glorot_normal", ()), ("he_uniform", ()),
         ("he_normal", ()), ("lecun_uniform", ()), ("lecun_normal", ()),
         ("xavier_uniform", ()), ("kaiming_normal", ()), ("orthogonal", ()),
         ("orthogonal", (2.0, 0)), ("delta_orthogonal", ())]


@pytest.mark.parametrize("name,args", INITS)
def test_initializers_bitwise(name, args):
    shape = (4, 5) if name == "orthogonal" and args else (3, 3, 4, 6)
    mi, ji = getattr(mjax.nn.initializers, name), getattr(jax.nn.initializers, name)
    if args is not None:
        mi, ji = mi(*args), ji(*args)
    compare(lambda: mi(mjax.random.key(3), shape), lambda: ji(jax.random.key(3), shape), (),
            rtol=1e-6, atol=1e-7, modes=("eager",))
    if name not in ("truncated_normal", "he_uniform", "orthogonal"):
        return
    # JAX's QR has no float16; the orthogonal family is checked in float64 instead.
    other = np.float64 if "orthogonal" in name else np.float16
    with x64(True):
        compare(lambda: mi(mjax.random.PRNGKey(3), shape, other),
                lambda: ji(jax.random.PRNGKey(3), shape, other), (), rtol=1e-3, atol=1e-3,
                modes=("eager",))


@pytest.mark.parametrize("mode,dist", [
    ("fan_in", "truncated_normal"), ("fan_out", "normal"), ("fan_avg", "uniform"),
    ("fan_geo_avg", "normal"), ("bogus", "normal"), ("fan_in", "bogus")])
def test_variance_scaling(mode, dist):
    args = (1.5, mode, dist)
    kw = {"in_axis": (0, 1), "out_axis": -1, "batch_axis": 2}
    compare(lambda: mjax.nn.initializers.variance_scaling(*args, **kw)(
        mjax.random.key(0), (2, 3, 4, 5)),
        lambda: jax.nn.initializers.variance_scaling(*args, **kw)(
            jax.random.key(0), (2, 3, 4, 5)), ())


@pytest.mark.parametrize("name,shape", [("glorot_uniform", (5,)), ("orthogonal", (5,)),
                                        ("delta_orthogonal", (3, 3)),
                                        ("delta_orthogonal", (3, 6, 4))])
def test_initializer_errors(name, shape):
    compare(lambda: getattr(mjax.nn.initializers, name)()(mjax.random.key(0), shape),
            lambda: getattr(jax.nn.initializers, name)()(jax.random.key(0), shape), ())


def test_initializer_under_jit():
    init_m = mjax.nn.initializers.he_normal()
    init_j = jax.nn.initializers.he_normal()
    got = mjax.jit(lambda k: init_m(k, (4, 3)))(mjax.random.key(5))
    want = jax.jit(lambda k: init_j(k, (4, 3)))(jax.random.key(5))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_public_names():
    missing = [n for n in dir(jax.nn) if not n.startswith("_") and not hasattr(mjax.nn, n)]
    assert not missing
    missing = [n for n in dir(jax.nn.initializers)
               if not n.startswith("_") and not hasattr(mjax.nn.initializers, n)]
    assert not missing
