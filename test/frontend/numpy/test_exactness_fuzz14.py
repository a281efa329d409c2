"""Differences from JAX found by the fourteenth differential round (jax.numpy): var, std,
nanvar and nanstd computed eagerly round as JAX's jitted functions do (ddof is an argument
of the program, so the division is not folded into a reciprocal multiplication); nanmean
with an integer dtype divides as integers; max/min of an empty bool slice are refused."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp


def _same(got, want):
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype and g.shape == w.shape
    assert g.tobytes() == w.tobytes(), (g, w)
    assert got.weak_type == want.weak_type


def _data(dtype, seed):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return rng.random((3, 4)) < 0.5
    if np.dtype(dtype).kind == "i":
        return rng.integers(-9, 9, (3, 4)).astype(dtype)
    v = rng.normal(size=(3, 4)) * 3
    if np.dtype(dtype).kind == "c":
        v = v + 1j * rng.normal(size=(3, 4))
    return v.astype(dtype)


@pytest.mark.parametrize("name", ["var", "std", "nanvar", "nanstd"])
@pytest.mark.parametrize("dtype", [np.float32, np.bool_, np.int32, np.complex64])
def test_variance_rounds_as_jax_eagerly(name, dtype):
    for seed in range(6):
        a = _data(dtype, seed)
        _same(getattr(mnp, name)(a, axis=0), getattr(jnp, name)(a, axis=0))
        _same(getattr(mnp, name)(a, ddof=1), getattr(jnp, name)(a, ddof=1))
    f = lambda L: (lambda x: getattr(L.numpy, name)(x, axis=0))  # noqa: E731
    _same(mjax.jit(f(mjax))(a), jax.jit(f(jax))(a))


@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.uint32])
def test_nanmean_integer_dtype_divides_as_integers(dtype):
    a = _data(np.complex64, 1)
    _same(mnp.nanmean(a, axis=0, dtype=dtype), jnp.nanmean(a, axis=0, dtype=dtype))
    with pytest.raises(TypeError):
        jnp.nanmean(a, axis=0, dtype=bool)
    with pytest.raises(TypeError):
        mnp.nanmean(a, axis=0, dtype=bool)


@pytest.mark.parametrize("name", ["max", "min", "nanmax", "nanmin", "ptp"])
def test_empty_bool_extremum_is_refused(name):
    e = np.zeros((0, 3), bool)
    with pytest.raises(ValueError):
        getattr(jnp, name)(e, axis=0)
    with pytest.raises(ValueError):
        getattr(mnp, name)(e, axis=0)
    if name in ("max", "min"):
        _same(getattr(mnp, name)(e, axis=0, initial=True),
              getattr(jnp, name)(e, axis=0, initial=True))


@pytest.mark.parametrize("decimals", [-1, 1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.complex64])
def test_round_decimals_rounds_as_jax_eagerly(decimals, dtype):
    # (JAX's round is one program, where XLA divides by 10**decimals as a multiplication)
    a = _data(dtype, decimals + 7).reshape(-1)
    _same(mnp.round(a, decimals), jnp.round(a, decimals))
    _same(mnp.around(a, decimals=decimals), jnp.around(a, decimals=decimals))


@pytest.mark.parametrize("scalar", [3, 3.0, 0.5, True])
@pytest.mark.parametrize("name", ["float_power", "floor_divide", "remainder", "fmod",
                                  "hypot", "copysign", "heaviside"])
def test_python_scalar_operand_is_a_program_argument(name, scalar):
    # JAX's jitted function traces the scalar: XLA does not fold pow(x, 3) into x*x*x.
    a = _data(np.float32, 3).reshape(-1)
    _same(getattr(mnp, name)(a, scalar), getattr(jnp, name)(a, scalar))
    _same(getattr(mnp, name)(scalar, a), getattr(jnp, name)(scalar, a))
    c = _data(np.complex64, 4).reshape(-1)
    if name == "float_power":
        _same(mnp.float_power(c, scalar), jnp.float_power(c, scalar))
    i = _data(np.int8, 5).reshape(-1)
    if name in ("floor_divide", "remainder", "fmod"):
        _same(getattr(mnp, name)(i, 3), getattr(jnp, name)(i, 3))   # (weak: stays int8)


@pytest.mark.parametrize("spacing", [0.3, 3, 0.7])
def test_gradient_rounds_as_jax(spacing):
    a = _data(np.float32, 2)
    _same(mnp.gradient(a.reshape(-1), spacing), jnp.gradient(a.reshape(-1), spacing))
    _same(mnp.gradient(a, spacing, 0.1)[1], jnp.gradient(a, spacing, 0.1)[1])
    coords = (np.arange(4.0) ** 1.5 * spacing).astype(np.float32)
    f = lambda L: (lambda x, c: L.numpy.gradient(x, c, axis=1))  # noqa: E731
    _same(f(mjax)(a, coords), f(jax)(a, coords))
    _same(mjax.jit(f(mjax))(a, coords), jax.jit(f(jax))(a, coords))


@pytest.mark.parametrize("s", [3.0, 0.1, 7])
def test_interp_rounds_as_jax_eagerly(s):
    x = _data(np.float32, 3).reshape(-1)
    xp = np.linspace(-3, 3, 7, dtype=np.float32)
    fp = np.arange(7.0, dtype=np.float32) / s
    _same(mnp.interp(x, xp, fp), jnp.interp(x, xp, fp))
    _same(mnp.interp(x, xp, fp, left=s / 7, right=-s), jnp.interp(x, xp, fp, left=s / 7,
                                                                  right=-s))


@pytest.mark.parametrize("name", ["floor_divide", "remainder", "fmod", "divmod"])
def test_bool_operands_divide_as_int32_under_x64(name):
    a, b = np.array([True, False, True]), np.array([True, True, False])
    with jax.enable_x64(True), mjax.enable_x64(True):
        for args in ((a, b), (a, True), (True, True)):
            got, want = getattr(mnp, name)(*args), getattr(jnp, name)(*args)
            for g, w in zip(mjax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
                _same(g, w)


@pytest.mark.parametrize("dtype", [np.int32, np.bool_, np.float16])
def test_gradient_promotes_with_its_spacings(dtype):
    # (JAX promotes f with the spacings: a Python float keeps an integer f's result weak,
    # float64 coordinates widen it under x64)
    f = _data(dtype, 1)
    _same(mnp.gradient(f, 0.3, 2)[0], jnp.gradient(f, 0.3, 2)[0])
    with jax.enable_x64(True), mjax.enable_x64(True):
        coords = np.arange(4.0) ** 2
        _same(mnp.gradient(f, coords, axis=1), jnp.gradient(f, coords, axis=1))


@pytest.mark.parametrize("size", [4, 9])
def test_intersect1d_pads_indices_out_of_bounds(size):
    a = np.array([3, 1, 2, 3, 5, 1, 7, 2], np.int32)
    b = np.array([[2, 9], [5, 3]], np.int32)
    got = mnp.intersect1d(a, b, size=size, return_indices=True)
    want = jnp.intersect1d(a, b, size=size, return_indices=True)
    for g, w in zip(got, want):
        _same(g, w)
