"""The array API standard's names in mjax.numpy, checked against jax.numpy."""
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp


def test_array_api_version():
    assert mnp.__array_api_version__ == jnp.__array_api_version__ == "2024.12"


@pytest.mark.parametrize("x64", [False, True])
def test_namespace_info_matches_jax(x64):
    with mjax.enable_x64(x64):
        import jax
        with jax.enable_x64(x64):
            mine, theirs = mnp.__array_namespace_info__(), jnp.__array_namespace_info__()
            assert mine.capabilities() == theirs.capabilities()
            assert mine.default_device() is theirs.default_device() is None
            assert mine.devices()[0] is None and len(mine.devices()) == len(theirs.devices())
            assert mine.default_dtypes() == theirs.default_dtypes()
            for kind in (None, "bool", "signed integer", "unsigned integer", "integral",
                         "real floating", "complex floating", "numeric",
                         ("bool", "complex floating")):
                assert mine.dtypes(kind=kind) == theirs.dtypes(kind=kind), kind


def test_namespace_info_bad_kind():
    with pytest.raises(ValueError, match="unknown kind"):
        mnp.__array_namespace_info__().dtypes(kind="floating")


def test_creation_functions_take_device():
    import inspect
    dev = mjax.devices()[0]
    for name in ("arange", "asarray", "array", "empty", "empty_like", "eye", "full",
                 "full_like", "linspace", "ones", "ones_like", "zeros", "zeros_like",
                 "astype"):
        assert "device" in inspect.signature(getattr(mnp, name)).parameters, name
    out = mnp.zeros((2, 3), dtype=np.float32, device=dev)
    assert out.devices() == {dev} and out.shape == (2, 3)
    np.testing.assert_array_equal(np.asarray(mnp.arange(4, device=dev)), np.arange(4))
    np.testing.assert_array_equal(np.asarray(mnp.astype(np.ones(2), np.int32, device=dev)),
                                  np.ones(2, np.int32))
    # Under jit the placement is jit's; the value is unchanged.
    got = mjax.jit(lambda x: mnp.full_like(x, 7, device=dev))(np.ones(3, np.float32))
    np.testing.assert_array_equal(np.asarray(got), np.full(3, 7, np.float32))


@pytest.mark.parametrize("fn", ["var", "std"])
def test_var_std_correction_and_mean(fn):
    x = np.random.default_rng(0).normal(size=(4, 5)).astype(np.float32)
    for kw in ({"correction": 1}, {"correction": 0.5, "axis": 1}, {"ddof": 2, "axis": 0}):
        np.testing.assert_allclose(np.asarray(getattr(mnp, fn)(x, **kw)),
                                   np.asarray(getattr(jnp, fn)(x, **kw)), rtol=1e-5)
    mu = x.mean(0, keepdims=True)
    np.testing.assert_allclose(np.asarray(getattr(mnp, fn)(x, axis=0, mean=mu)),
                               np.asarray(getattr(jnp, fn)(x, axis=0, mean=mu)), rtol=1e-5)
    with pytest.raises(ValueError, match="simultaneously"):
        getattr(mnp, fn)(x, ddof=1, correction=1)


def test_clip_names_and_reshape_copy():
    import inspect
    assert list(inspect.signature(mnp.clip).parameters) == ["arr", "min", "max"]
    x = np.arange(-3, 4)
    for args, kw in (((-1, 2), {}), ((), {"min": 0}), ((), {"max": 1}), ((None, 1), {})):
        np.testing.assert_array_equal(np.asarray(mnp.clip(x, *args, **kw)),
                                      np.asarray(jnp.clip(x, *args, **kw)))
    np.testing.assert_array_equal(np.asarray(mnp.reshape(x[:6], (2, 3), copy=True)),
                                  x[:6].reshape(2, 3))


def test_composites_run_fused_eagerly_with_the_same_results():
    from mjax.numpy.array_api import fused_when_eager
    x = np.random.default_rng(1).normal(size=(3, 4)).astype(np.float32)
    calls = []

    def f(a, axis, scale=1.0):
        calls.append(type(a).__name__)
        return mnp.std(a, axis=axis) * scale

    g = fused_when_eager(f)
    for axis in (0, 1, (0, 1)):
        np.testing.assert_allclose(np.asarray(g(x, axis, scale=2.0)),
                                   2 * np.asarray(jnp.std(x, axis=axis)), rtol=1e-5)
    assert all(c != "ndarray" for c in calls)  # traced, not run on the NumPy input
    n = len(calls)
    g(x, 0, scale=2.0)
    assert len(calls) == n  # cached: no new trace for the same shapes and static args
    # Data-dependent shapes cannot be traced: those calls run op by op, as before.
    np.testing.assert_array_equal(np.asarray(mnp.nonzero(np.array([0, 3, 0, 4]))[0]),
                                  [1, 3])
    np.testing.assert_array_equal(np.asarray(mnp.where(np.array([0, 1, 1]))[0]), [1, 2])
    np.testing.assert_array_equal(np.asarray(mnp.repeat(np.arange(3), np.array([1, 0, 2]))),
                                  [0, 2, 2])
    # Under an outer trace the function is traced inline.
    got = mjax.jit(lambda a: mnp.var(a, axis=1, correction=1))(x)
    np.testing.assert_allclose(np.asarray(got), np.var(x, axis=1, ddof=1), rtol=1e-5)


@pytest.mark.parametrize("x64", [False, True])
def test_cumulative_sum_widens_small_integers(x64):
    from frontend_util import x64 as both_x64
    with both_x64(x64):
        for dt in (np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.int64, np.float32):
            x = (np.arange(5) % 3).astype(dt)
            got, want = mnp.cumulative_sum(x), jnp.cumulative_sum(x)
            assert got.dtype == want.dtype, (dt, got.dtype, want.dtype)
            np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
        got = mnp.cumulative_sum(np.ones(3, np.int8), include_initial=True, dtype=np.int16)
        assert got.dtype == np.int16 and list(np.asarray(got)) == [0, 1, 2, 3]


def test_fused_meshgrid_of_empty_arrays_and_keywords():
    xs = [np.zeros(0, np.uint8), np.arange(3, dtype=np.uint8)]
    for indexing in ("xy", "ij"):
        got = mnp.meshgrid(*xs, indexing=indexing)
        want = jnp.meshgrid(*xs, indexing=indexing)
        assert [g.shape for g in got] == [w.shape for w in want]


@pytest.mark.parametrize("dt", [np.uint8, np.int8, np.bool_, np.int32, np.float32,
                                np.complex64])
def test_vecdot_keeps_the_product_dtype(dt):
    a = (np.arange(12).reshape(4, 3) % 3).astype(dt)
    b = (np.arange(3) + 1).astype(dt)
    for f in (mnp.vecdot, mnp.linalg.vecdot):
        got, want = f(a, b), jnp.vecdot(a, b)
        assert got.dtype == want.dtype, (dt, got.dtype, want.dtype)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
