"""What the docstring examples of `jax`, `jax.nn` and `jax.tree_util` showed mjax lacking,
against jax as the oracle: the narrow float types (float8_e8m0fnu, float4_e2m1fn, ...),
jax.nn's block-scaled matmuls, jax._src.tree_util.flatten_one_level and vmap's unmapped
outputs returned as the function made them.

JAX has no CPU lowering of its block-scaled matmul (NotImplementedError): the oracle for
scaled_matmul is its documented formula (scales repeated over their blocks, then a dot in
the result type, as XLA's GPU expansion computes it), and for scaled_dot_general JAX's own
code with that formula as its matmul (monkeypatched)."""
import functools

import jax
import jax.numpy as jjnp
import ml_dtypes
import numpy as np
import pytest
from jax._src import tree_util as jax_src_tree_util
from jax._src.cudnn import scaled_matmul_stablehlo as jax_scaled

import mjax
import mjax.numpy as mnp
from mjax._src import tree_util as mjax_src_tree_util
from mjax.nn import block_scaled

NARROW = ["float8_e8m0fnu", "float4_e2m1fn", "float8_e3m4", "float8_e4m3", "int2", "uint2"]


def _m(x):
    return mnp.asarray(np.asarray(x))


def _f32(x):
    return np.asarray(x).astype(np.float32)


# ---- narrow dtypes ---------------------------------------------------------------------

@pytest.mark.parametrize("name", NARROW)
def test_narrow_dtypes_make_arrays_and_jaxprs_as_jax(name):
    def run(jx, jnp):
        x = jnp.ones((3,), getattr(jnp, name))
        y = jx.jit(lambda v: (v.astype(jnp.float32) * 2).astype(v.dtype))(x)
        text = str(jx.make_jaxpr(lambda v: v.astype(jnp.float32))(x))
        ext = jx.jit(lambda v: (v.max(), v.min()))(jnp.arange(3).astype(x.dtype))
        return (repr(x), repr(y), np.asarray(y).tolist(), text.split(".")[0],
                repr(ext))
    assert run(mjax, mnp) == run(jax, jjnp)


# ---- scaled_matmul ---------------------------------------------------------------------

def _dequantized_dot(a, b, sa, sb, dtype):
    def deq(x, s):
        x = jjnp.asarray(x).astype(dtype)
        return x * jjnp.repeat(jjnp.asarray(s).astype(dtype), x.shape[-1] // s.shape[-1], -1)
    return jax.lax.dot_general(deq(a, sa), deq(b, sb), (((2,), (2,)), ((0,), (0,))),
                               preferred_element_type=dtype)


@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16, np.float16])
def test_scaled_matmul_is_the_dequantized_dot(dtype):
    k1, k2 = jax.random.split(jax.random.PRNGKey(0))
    a = jax.random.normal(k1, (2, 16, 64), jjnp.float8_e4m3fn)
    b = jax.random.normal(k2, (2, 8, 64), jjnp.float8_e5m2)
    sa = jax.random.uniform(k1, (2, 16, 2), minval=0.3, maxval=4).astype(jjnp.float8_e8m0fnu)
    sb = jax.random.uniform(k2, (2, 8, 2), minval=0.3, maxval=4).astype(jjnp.float8_e8m0fnu)
    got = mjax.nn.scaled_matmul(_m(a), _m(b), _m(sa), _m(sb), preferred_element_type=dtype)
    want = _dequantized_dot(a, b, sa, sb, dtype)
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(_f32(got), _f32(want), rtol=2e-2 if dtype != np.float32 else 1e-6)


def test_scaled_matmul_docstring_case_and_vmap():
    a, b = mnp.array([1, 2, 3]).reshape((1, 1, 3)), mnp.array([4, 5, 6]).reshape((1, 1, 3))
    s = mnp.array([0.5]).reshape((1, 1, 1))
    got = mjax.nn.scaled_matmul(a, b, s, s)
    want = _dequantized_dot(np.asarray(a), np.asarray(b), np.asarray(s), np.asarray(s),
                            np.float32)
    assert got.dtype == want.dtype and np.array_equal(got, want)
    xs = np.random.RandomState(0).randn(3, 2, 4, 8).astype(np.float32)
    sc = np.abs(xs[..., ::4]) + 1
    out = mjax.vmap(mjax.nn.scaled_matmul)(xs, xs, sc, sc)
    for i in range(3):
        np.testing.assert_allclose(out[i], _dequantized_dot(xs[i], xs[i], sc[i], sc[i],
                                                            np.float32), rtol=1e-5)


@pytest.mark.parametrize("shapes", [
    ((2, 4, 64), (2, 8, 64), (4, 2), (8, 2), "ndim"),
    ((2, 4, 64), (2, 8, 32), (2, 4, 2), (2, 8, 2), None),
    ((2, 4, 64), (2, 8, 64), (2, 4, 2), (2, 8, 1), None),
    ((2, 4, 64), (2, 8, 64), (2, 2, 2), (2, 8, 2), None),
])
def test_scaled_matmul_shape_errors_as_jax(shapes):
    def err(nn, jnp):
        a, b, sa, sb, _ = shapes
        try:
            nn.scaled_matmul(*(jnp.ones(s) for s in (a, b, sa, sb)))
        except Exception as e:  # noqa: BLE001
            return type(e), str(e)
        return None
    got, want = err(mjax.nn, mnp), err(jax.nn, jjnp)
    assert want is not None and got == want


# ---- configs and scaled_dot_general ---------------------------------------------------

@pytest.fixture
def jax_oracle_matmul(monkeypatch):
    """JAX's scaled_dot_general with its block-scaled matmul computed by the formula."""
    def wrapper(lhs, rhs, ls, rs, preferred_element_type=np.float32):
        return _dequantized_dot(lhs, rhs, ls, rs, np.dtype(preferred_element_type))
    monkeypatch.setattr(jax_scaled, "scaled_matmul_wrapper", wrapper)


def _configs(nn, jnp, mode):
    gs = None if mode == "mxfp8" else jnp.asarray(np.array([0.5], np.float32))
    return [nn.get_scaled_dot_general_config(mode, gs)] * 3


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
def test_configs_print_as_jax(mode):
    assert repr(_configs(mjax.nn, mnp, mode)) == repr(_configs(jax.nn, jjnp, mode))
    with pytest.raises(ValueError, match="Unsupported mode: fp8"):
        mjax.nn.get_scaled_dot_general_config("fp8")


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
@pytest.mark.parametrize("dtype", [np.float32, ml_dtypes.bfloat16])
def test_quantize_is_jaxs_bit_for_bit(mode, dtype):
    x = np.random.RandomState(1).randn(2, 8, 64).astype(dtype) * 3
    x[0, 0, :32] = 0        # (an all-zero block: the e8m0 scale's underflow case)
    qj, sj = jax_scaled.quantize(jjnp.asarray(x), _configs(jax.nn, jjnp, mode)[0])
    qm, sm = block_scaled._quantize(_m(x), _configs(mjax.nn, mnp, mode)[0])
    assert (qm.dtype, sm.dtype) == (qj.dtype, sj.dtype)
    assert np.array_equal(_f32(qm), _f32(qj), equal_nan=True)
    assert np.array_equal(_f32(sm), _f32(sj), equal_nan=True)


DOTS = [((2, 32, 64), (2, 64, 64), (((2,), (2,)), ((0,), (0,)))),
        ((64, 32), (32, 64), (((0,), (1,)), ((), ()))),
        ((2, 32, 4, 8), (4, 2, 8, 32), (((1,), (3,)), ((0,), (1,))))]


@pytest.mark.parametrize("mode", ["mxfp8", "nvfp4"])
@pytest.mark.parametrize("lhs_shape,rhs_shape,dn", DOTS)
def test_scaled_dot_general_and_its_gradient_as_jax(jax_oracle_matmul, mode, lhs_shape,
                                                    rhs_shape, dn):
    rs = np.random.RandomState(2)
    x = rs.randn(*lhs_shape).astype(np.float32) * 2
    y = rs.randn(*rhs_shape).astype(np.float32)

    def run(jx, nn, jnp):
        f = functools.partial(nn.scaled_dot_general, dimension_numbers=dn,
                              configs=_configs(nn, jnp, mode))
        out = jx.jit(f)(jnp.asarray(x), jnp.asarray(y))
        grads = jx.jit(jx.grad(lambda a, b: (f(a, b) * jnp.arange(out.size).reshape(
            out.shape) / out.size).sum(), argnums=(0, 1)))(jnp.asarray(x), jnp.asarray(y))
        return [out] + list(grads)
    for got, want in zip(run(mjax, mjax.nn, mnp), run(jax, jax.nn, jjnp)):
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(_f32(got), _f32(want), rtol=1e-5, atol=1e-5)


def test_scaled_dot_general_options_as_jax():
    x = np.ones((2, 32, 64), np.float32)
    dn = (((2,), (2,)), ((0,), (0,)))
    got = mjax.nn.scaled_dot_general(x, x, dn, mnp.bfloat16)      # (no configs: dot_general)
    want = jax.nn.scaled_dot_general(x, x, dn, jjnp.bfloat16)
    assert got.dtype == want.dtype and np.array_equal(_f32(got), _f32(want))
    with pytest.warns(DeprecationWarning):
        mjax.nn.scaled_dot_general(x, x, dn, implementation="cudnn")
    for bad in (np.float64, np.int32, None):
        with pytest.raises(TypeError, match="preferred_element_type"):
            mjax.nn.scaled_dot_general(x, x, dn, bad, configs=_configs(mjax.nn, mnp, "mxfp8"))
        with pytest.raises(TypeError, match="preferred_element_type"):
            jax.nn.scaled_dot_general(x, x, dn, bad, configs=_configs(jax.nn, jjnp, "mxfp8"))
    odd = np.ones((2, 32, 48), np.float32)
    for nn, jnp in ((mjax.nn, mnp), (jax.nn, jjnp)):
        with pytest.raises(AssertionError):
            nn.scaled_dot_general(odd, odd, dn, configs=_configs(nn, jnp, "mxfp8"))


# ---- jax._src.tree_util ------------------------------------------------------------------

@pytest.mark.parametrize("tree", [{"a": [1, 2], "b": {"c": 3}}, (1, [2]), [None, 3], None])
def test_flatten_one_level_as_jax(tree):
    got = mjax_src_tree_util.flatten_one_level(tree)
    want = jax_src_tree_util.flatten_one_level(tree)
    assert (list(got[0]), got[1]) == (list(want[0]), want[1])


def test_flatten_one_level_of_a_leaf_raises_as_jax():
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        mjax_src_tree_util.flatten_one_level(1.0)
    with pytest.raises(ValueError, match="can't tree-flatten type"):
        jax_src_tree_util.flatten_one_level(1.0)


# ---- vmap's unmapped outputs ------------------------------------------------------------

VMAP_CASES = [   # (the function, given the numpy module of the framework, axes, y)
    (lambda jnp: lambda x, y: (x + y, y * 2.), (0, None), (0, None), 4.),
    (lambda jnp: lambda x, y: y, (0, None), None, 4.),
    (lambda jnp: lambda x, y: y, (0, None), None, 4),
    (lambda jnp: lambda x, y: y, (0, None), None, True),
    (lambda jnp: lambda x, y: y, (0, None), None, 1j),
    (lambda jnp: lambda x, y: y, (0, None), 0, 4.),
    (lambda jnp: lambda x, y: 3.0, (0, None), None, 4.),
    (lambda jnp: lambda x, y: (x, 2), (0, None), (0, None), 4.),
    (lambda jnp: lambda x, y: y + 1, (0, None), None, np.float32(2)),
    (lambda jnp: lambda x, y: jnp.sin(y), (0, None), None, 2.),
]


def _described(tree):
    leaves = jax.tree_util.tree_leaves(tree)
    return [(type(v).__name__.replace("ArrayImpl", "Array"), repr(v)) for v in leaves]


@pytest.mark.parametrize("case", range(len(VMAP_CASES)))
def test_vmap_returns_unmapped_outputs_as_jax(case):
    make, in_axes, out_axes, y = VMAP_CASES[case]
    xs = np.arange(2.0, dtype=np.float32)
    got = mjax.vmap(make(mnp), in_axes=in_axes, out_axes=out_axes)(mnp.asarray(xs), y)
    want = jax.vmap(make(jjnp), in_axes=in_axes, out_axes=out_axes)(jjnp.asarray(xs), y)
    assert _described(got) == _described(want)


def test_vmap_unmapped_scalars_of_equal_value_keep_their_types():
    # 2, 2.0 and True hash alike: the staged program of one is not the other's.
    f = mjax.vmap(lambda x, y: y, in_axes=(0, None), out_axes=None)
    g = jax.vmap(lambda x, y: y, in_axes=(0, None), out_axes=None)
    xs = np.arange(2.0, dtype=np.float32)
    for y in (2, 2.0, True, 1, 4.0, 5.0):
        got, want = f(xs, y), g(xs, y)
        assert type(got) is type(want) and got == want
