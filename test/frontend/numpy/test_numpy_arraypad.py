"""jnp.pad (every mode, constant values, errors) against NumPy, eagerly and under jit."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest
import mjax
from frontend_util import check
import mjax.numpy as jnp


RNG = np.random.default_rng(2)
A = RNG.uniform(-3, 3, (3, 4)).astype(np.float32)
NANS = np.where(RNG.uniform(size=(3, 4)) < 0.3, np.nan, A).astype(np.float32)
NANS[2] = np.nan                                   # one all-NaN row
INTS = RNG.integers(0, 6, (10,)).astype(np.int32)
PADS = [((1, 2),), (2,), ((0, 1), (3, 0)), ((4, 5), (1, 7))]
MODES = ["constant", "edge", "reflect", "symmetric", "wrap"]


@pytest.mark.parametrize("mode", MODES)
def test_pad_matches_numpy_eager_and_jit(mode):
    x = np.arange(12, dtype=np.int32).reshape(3, 4)
    fn = mjax.jit(lambda x: [jnp.pad(x, p, mode=mode) for p in PADS])
    for p, got in zip(PADS, fn(x)):
        check(got, np.pad(x, p, mode=mode))
    check(jnp.pad(x, PADS[-1], mode=mode), np.pad(x, PADS[-1], mode=mode))
    one = np.array([5.0], np.float32)                       # a length-1 axis
    check(jnp.pad(one, (2, 3), mode=mode), np.pad(one, (2, 3), mode=mode))


def test_pad_constant_values_and_errors():
    x = A
    check(jnp.pad(x, 1, constant_values=7.5), np.pad(x, 1, constant_values=7.5))
    check(jnp.pad(x, ((1, 0), (0, 2)), constant_values=((1, 2), (3, 4))),
          np.pad(x, ((1, 0), (0, 2)), constant_values=((1, 2), (3, 4))))
    check(mjax.jit(lambda x, v: jnp.pad(x, 2, constant_values=v))(x, np.float32(-1)),
          np.pad(x, 2, constant_values=-1))
    with pytest.raises(ValueError, match="negative"):
        jnp.pad(x, -1)
    with pytest.raises(NotImplementedError, match="Unimplemented padding mode 'nope'"):
        jnp.pad(x, 1, mode="nope")
    g = mjax.grad(lambda x: (jnp.pad(x, 2, mode="reflect") ** 2).sum())(x)
    want = jax.grad(lambda x: (jjnp.pad(x, 2, mode="reflect") ** 2).sum())(x)
    check(g, want)


@pytest.mark.parametrize("mode,kwargs", [
    ("median", {}), ("maximum", {"stat_length": 2}), ("mean", {"stat_length": ((1, 2), (2, 1))}),
    ("minimum", {}), ("linear_ramp", {"end_values": (5, -1)}),
    ("reflect", {"reflect_type": "odd"}), ("symmetric", {"reflect_type": "odd"})])
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_pad_statistic_ramp_and_odd_modes_match_numpy(mode, kwargs, dtype):
    x = np.arange(1, 13).reshape(3, 4).astype(dtype)
    widths = ((1, 7), (5, 0))     # wider than the array: reflections repeat
    got = jnp.pad(x, widths, mode, **kwargs)
    want = jjnp.pad(x, widths, mode, **kwargs)
    assert got.dtype == want.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)


def test_pad_callable_mode_matches_jax():
    def fill(row, width, axis, kw):
        row = row.at[:width[0]].set(kw.get("value", 7))
        return row.at[row.shape[0] - width[1]:].set(-1) if width[1] else row
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    check(jnp.pad(x, 2, fill, value=3), jjnp.pad(x, 2, fill, value=3))
