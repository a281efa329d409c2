"""pad, searchsorted, nan-reductions, unique, linalg.norm, interp, histogram, convolve,
polyval, bincount, argwhere/flatnonzero and isin against jax.numpy and NumPy."""
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


def check_tree(got, want, **kw):
    got_l, want_l = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_l) == len(want_l), (len(got_l), len(want_l))
    for i, (g, w) in enumerate(zip(got_l, want_l)):
        try:
            check(g, w, **kw)
        except AssertionError as e:
            raise AssertionError(f"leaf {i}: {e}") from None


# ---- pad ------------------------------------------------------------------------
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
    with pytest.raises(ValueError, match="non-negative"):
        jnp.pad(x, -1)
    with pytest.raises(NotImplementedError, match="mode 'median' is not supported"):
        jnp.pad(x, 1, mode="median")
    g = mjax.grad(lambda x: (jnp.pad(x, 2, mode="reflect") ** 2).sum())(x)
    want = jax.grad(lambda x: (jjnp.pad(x, 2, mode="reflect") ** 2).sum())(x)
    check(g, want)


# ---- searchsorted, interp, histogram, bincount ------------------------------------------
def test_searchsorted():
    a = np.array([1.0, 2.0, 2.0, 3.0, np.nan], np.float32)
    v = np.array([[0.0, 2.0, 2.5], [3.0, 9.0, np.nan]], np.float32)
    for side in ("left", "right"):
        want = np.searchsorted(a, v, side=side).astype(np.int32)
        check(jnp.searchsorted(a, v, side=side), want)
        check(mjax.jit(lambda a, v: jnp.searchsorted(a, v, side=side))(a, v), want)
    check(jnp.searchsorted(np.array([1, 3, 5], np.int32), 4), np.int32(2))
    perm = np.array([2, 0, 1], np.int32)
    check(jnp.searchsorted(np.array([5.0, 1.0, 3.0], np.float32), [2.0, 4.0], sorter=perm),
          np.array([1, 2], np.int32))
    with pytest.raises(ValueError, match="side must be"):
        jnp.searchsorted(a, v, side="middle")


def test_interp():
    xp = np.array([0.0, 1.0, 1.0, 3.0, 6.0], np.float32)
    fp = np.array([1.0, 2.0, 4.0, -1.0, 0.5], np.float32)
    x = np.array([-1.0, 0.0, 0.5, 1.0, 2.0, 5.9, 6.0, 7.0], np.float32)
    check(jnp.interp(x, xp, fp), jjnp.interp(x, xp, fp))
    check(mjax.jit(lambda x: jnp.interp(x, xp, fp, left=-9.0, right=9.0))(x),
          np.interp(x, xp, fp, left=-9, right=9).astype(np.float32))
    check(jnp.interp(x, xp[[0, 1, 3, 4]], fp[[0, 1, 3, 4]], period=4.0),
          np.interp(x, xp[[0, 1, 3, 4]], fp[[0, 1, 3, 4]], period=4.0).astype(np.float32))
    check(jnp.interp(np.arange(3, dtype=np.int32), np.array([0, 2]), np.array([0, 1])),
          jjnp.interp(np.arange(3, dtype=np.int32), jjnp.array([0, 2]), jjnp.array([0, 1])))


def _histograms(np_, data, w):
    edges = np.array([-2.0, -0.5, 0.0, 3.0], np.float32)
    return [np_.histogram(data, bins=5), np_.histogram(data, bins=4, range=(-1, 1)),
            np_.histogram(data, bins=edges), np_.histogram(data, bins=6, weights=w),
            np_.histogram(data, bins=3, density=True), np_.histogram(data[:4] * 0 + 1)]


def test_histogram():
    data = RNG.normal(size=50).astype(np.float32)
    w = np.abs(data)
    want = _histograms(jjnp, data, w)
    check_tree(mjax.jit(lambda d, w: _histograms(jnp, d, w))(data, w), want, rtol=1e-5)
    check_tree(jnp.histogram(data, bins=5), want[0])          # eagerly
    np.testing.assert_allclose(np.asarray(want[3][0]), np.histogram(data, 6, weights=w)[0],
                               rtol=1e-5)
    check_tree(jnp.histogram(np.array([1, 2, 3], np.int32), bins=2),
               jjnp.histogram(np.array([1, 2, 3], np.int32), bins=2))


def test_bincount():
    check(jnp.bincount(INTS), np.bincount(INTS).astype(np.int32))
    check(jnp.bincount(INTS, minlength=9), np.bincount(INTS, minlength=9).astype(np.int32))
    w = RNG.uniform(size=10).astype(np.float32)
    check(jnp.bincount(INTS, w), np.bincount(INTS, w).astype(np.float32))
    odd = np.array([-1, 0, 2, 7], np.int32)
    check(mjax.jit(lambda x: jnp.bincount(x, length=4))(odd), jjnp.bincount(odd, length=4))
    with pytest.raises(mjax.errors.ConcretizationTypeError, match="length"):
        mjax.jit(jnp.bincount)(INTS)


# ---- nan functions ---------------------------------------------------------------
NAN_FNS = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean", "nanargmax", "nanargmin",
           "nanvar", "nanstd"]


def _nan_outputs(np_, x):
    out = {}
    for name in NAN_FNS:
        f = getattr(np_, name)
        out[name] = f(x)
        out[name + "_1"] = f(x, axis=1)
        if name not in ("nanargmax", "nanargmin"):
            out[name + "_0k"] = f(x, axis=0, keepdims=True)
    out["nancumsum"] = np_.nancumsum(x, axis=1)
    out["nancumprod"] = np_.nancumprod(x)
    out["nanvar_ddof"] = np_.nanvar(x, axis=1, ddof=1)
    return out


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
def test_nan_functions_match_jax_under_jit_and_eagerly():
    got = mjax.jit(lambda x: _nan_outputs(jnp, x))(NANS)
    want = _nan_outputs(jjnp, jjnp.asarray(NANS))
    assert sorted(got) == sorted(want)
    for k in want:
        check(got[k], want[k], rtol=2e-5, atol=1e-5)
    check(jnp.nanmean(NANS, axis=1), np.nanmean(NANS, axis=1))
    check(jnp.nanmax(NANS, axis=0), np.nanmax(NANS, axis=0))
    check(jnp.nanargmin(NANS[:2], axis=1), np.nanargmin(NANS[:2], axis=1).astype(np.int32))
    check(jnp.nansum(INTS), np.int32(INTS.sum()))
    check(jnp.nanmax(INTS), INTS.max())
    g = mjax.grad(lambda x: jnp.nanmean(jnp.sin(x)) + jnp.nanmax(x))(NANS[:2])
    check(g, jax.grad(lambda x: jjnp.nanmean(jjnp.sin(x)) + jjnp.nanmax(x))(NANS[:2]))


# ---- unique, isin, argwhere, flatnonzero ---------------------------------------------------
def test_unique_concrete_matches_numpy():
    x = np.array([[3.0, 1.0, 2.0], [3.0, np.nan, 1.0], [5.0, np.nan, 2.0]], np.float32)
    vals, idx, inv, cnt = jnp.unique(x, return_index=True, return_inverse=True,
                                     return_counts=True)
    w_vals, w_idx, w_inv, w_cnt = jjnp.unique(x, return_index=True, return_inverse=True,
                                              return_counts=True)
    check(vals, w_vals)
    for g, w in ((idx, w_idx), (inv, w_inv), (cnt, w_cnt)):
        check(g, w)
    check(jnp.unique(INTS), np.unique(INTS))
    check(jnp.unique(np.zeros(0, np.float32)), np.zeros(0, np.float32))


def test_unique_with_size_under_jit():
    x = np.array([3.0, 1.0, 2.0, 3.0, 1.0, 5.0], np.float32)
    for size, fill in ((6, None), (3, None), (7, -1.0)):
        def f(x):
            return jnp.unique(x, size=size, fill_value=fill, return_index=True,
                              return_inverse=True, return_counts=True)
        want = jjnp.unique(x, size=size, fill_value=fill, return_index=True,
                           return_inverse=True, return_counts=True)
        check_tree(mjax.jit(f)(x), tuple(want))
    with pytest.raises(mjax.errors.ConcretizationTypeError, match="size="):
        mjax.jit(jnp.unique)(x)


def test_isin_argwhere_flatnonzero():
    el = np.array([[1, 2], [3, 4]], np.int32)
    test = np.array([4, 1, 9], np.int32)
    check(jnp.isin(el, test), np.isin(el, test))
    check(mjax.jit(lambda a, b: jnp.isin(a, b, invert=True))(el, test),
          np.isin(el, test, invert=True))
    m = np.array([[0, 1, 0], [2, 0, 3]], np.int32)
    check(jnp.argwhere(m), jjnp.argwhere(m))
    check(jnp.flatnonzero(m), jjnp.flatnonzero(m))
    check(mjax.jit(lambda m: jnp.argwhere(m, size=4, fill_value=-1))(m),
          jjnp.argwhere(m, size=4, fill_value=-1))
    check(mjax.jit(lambda m: jnp.flatnonzero(m, size=2))(m), jjnp.flatnonzero(m, size=2))
    check(jnp.argwhere(np.float32(3.0)), jjnp.argwhere(np.float32(3.0)))


# ---- linalg.norm, convolve, polyval ----------------------------------------------------------
def _norms(np_, v, m, t):
    n = np_.linalg.norm
    return [n(v), n(v, 1), n(v, 2), n(v, np.inf), n(v, -np.inf), n(v, 0), n(v, 3),
            n(m), n(m, "fro"), n(m, 1), n(m, -1), n(m, np.inf), n(m, -np.inf),
            n(m, axis=0), n(m, 1, axis=1, keepdims=True), n(t), n(t, axis=(0, 2)),
            n(t, np.inf, axis=(2, 1)), n(t, keepdims=True)]


def test_norm_matches_jax():
    v, m = A[0], A
    t = RNG.normal(size=(2, 3, 4)).astype(np.float32)
    got = mjax.jit(lambda v, m, t: _norms(jnp, v, m, t))(v, m, t)
    for i, (g, w) in enumerate(zip(got, _norms(jjnp, v, m, t))):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, err_msg=str(i))
        assert g.shape == w.shape and g.dtype == w.dtype, (i, g.shape, w.shape)
    check(jnp.linalg.norm(np.array([3, 4], np.int32)), np.float32(5.0))
    for ord_ in (2, -2, "nuc"):   # through the SVD
        np.testing.assert_allclose(np.asarray(jnp.linalg.norm(m, ord_)),
                                   np.asarray(jjnp.linalg.norm(m, ord_)), rtol=1e-5)
    g = mjax.grad(lambda m: jnp.linalg.norm(m))(m)
    check(g, jax.grad(lambda m: jjnp.linalg.norm(m))(m))


def test_convolve_correlate():
    a = RNG.normal(size=7).astype(np.float32)
    v = RNG.normal(size=3).astype(np.float32)
    for mode in ("full", "same", "valid"):
        for x, y in ((a, v), (v, a), (a[:4], a[:4])):
            check(jnp.convolve(x, y, mode=mode), np.convolve(x, y, mode=mode), atol=1e-5)
            check(jnp.correlate(x, y, mode=mode), np.correlate(x, y, mode=mode), atol=1e-5)
    ints = np.array([1, 2, 3], np.int32)
    check(mjax.jit(jnp.convolve)(ints, np.array([0, 1, 1], np.int32)),
          np.convolve(ints, [0, 1, 1]).astype(np.int32))
    g = mjax.grad(lambda a: (jnp.convolve(a, v, mode="same") ** 2).sum())(a)
    check(g, jax.grad(lambda a: (jjnp.convolve(a, v, mode="same") ** 2).sum())(a),
          rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="mode must be"):
        jnp.convolve(a, v, mode="circular")


def test_polyval():
    p = np.array([2.0, -1.0, 0.5, 3.0], np.float32)
    x = np.linspace(-2, 2, 5).astype(np.float32)
    check(jnp.polyval(p, x), jjnp.polyval(p, x))
    check(mjax.jit(jnp.polyval)(np.array([1, 2, 3], np.int32), np.array([1, 2], np.int32)),
          jjnp.polyval(np.array([1, 2, 3], np.int32), np.array([1, 2], np.int32)))
    check(jnp.polyval(np.array([1, 2, 3], np.int32), 2.5),
          jjnp.polyval(jjnp.array([1, 2, 3]), 2.5))
    check(mjax.grad(lambda x: jnp.polyval(p, x))(np.float32(1.5)),
          jax.grad(lambda x: jjnp.polyval(p, x))(np.float32(1.5)))


def test_max_min_accept_where_with_initial():
    mask = A > 0
    check(jnp.max(A, axis=1, where=mask, initial=-5.0),
          jjnp.max(A, axis=1, where=mask, initial=-5.0))
    check(jnp.min(A, where=mask, initial=9.0), jjnp.min(A, where=mask, initial=9.0))
    with pytest.raises(ValueError, match="specify 'initial'"):
        jnp.max(A, where=mask)


@pytest.mark.parametrize("name,args", [
    ("sum", ([1, 2, 3],)), ("mean", ((1.0, 2.0),)), ("max", ([1, 2],)), ("std", ([1.0],)),
    ("any", ([True],)), ("sin", ([1.0],)), ("add", (1.0, [1.0])), ("multiply", ([1], 2))])
def test_lists_are_not_arrays_as_jax(name, args):
    # (Common Gotchas: jnp.sum([1, 2, 3]) raises; only jnp.array/asarray take sequences)
    with pytest.raises(TypeError) as theirs:
        getattr(jjnp, name)(*args)
    with pytest.raises(TypeError) as mine:
        getattr(mjax.numpy, name)(*args)
    assert str(mine.value).split(" (at ")[0] == str(theirs.value)


@pytest.mark.parametrize("shapes", [((3,), (4,)), ((100,), (100, 10)), ((2, 3), (3, 2)),
                                    ((), (2, 3), (4, 3))])
def test_shapes_that_do_not_broadcast_raise_as_jax(shapes):
    # (vmapped_log_probs: jnp arithmetic of (100,) and (100, 10) is JAX's ValueError)
    def run(np_):
        operands = [np_.ones(s) for s in shapes]
        with pytest.raises(Exception) as e:
            out = operands[0]
            for o in operands[1:]:
                out = np_.multiply(out, o) if len(shapes) == 2 else out + o
        return type(e.value)
    assert run(jnp) == run(jjnp)


def test_shape_mismatch_message_as_jax():
    with pytest.raises(ValueError) as e:
        jnp.ones(100) * jnp.ones((100, 10))
    assert str(e.value).startswith("Incompatible shapes for broadcasting: shapes=[(100,), "
                                   "(100, 10)]")
