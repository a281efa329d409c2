"""Helpers of the differential sweeps (test_sweep_*.py): run one function in mjax and in
the jax oracle, eagerly, under jit, grad and vmap, and compare values, shapes, dtypes,
weak types and error classes."""
import numpy as np

import jax
import mjax


def _leaves(tree, lib):
    return lib.tree_util.tree_leaves(tree)


def assert_same(got, want, rtol, atol, weak=True):
    g_leaves, w_leaves = _leaves(got, mjax), _leaves(want, jax)
    assert len(g_leaves) == len(w_leaves), (got, want)
    for g, w in zip(g_leaves, w_leaves):
        ga, wa = np.asarray(g), np.asarray(w)
        assert ga.shape == wa.shape, (ga.shape, wa.shape)
        assert ga.dtype == wa.dtype, (ga.dtype, wa.dtype)
        if weak and hasattr(w, "weak_type"):
            assert getattr(g, "weak_type", False) == w.weak_type, "weak_type differs"
        if np.issubdtype(wa.dtype, np.inexact):
            np.testing.assert_allclose(ga, wa, rtol=rtol, atol=atol, equal_nan=True)
        else:
            np.testing.assert_array_equal(ga, wa)


def outcome(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 (we compare error classes)
        return None, e


def _other(a):
    """A second batch member of a's shape and dtype, different where that is cheap."""
    a = np.asarray(a)
    if a.ndim and a.dtype != bool:
        return np.flip(a, 0).copy()
    return a


def compare(mfn, jfn, args, rtol=1e-5, atol=1e-6, modes=("eager", "jit"), weak=True,
            argnums=0, vmap_stack=False):
    """Compare mfn(*args) with jfn(*args) in each mode: eager, jit, grad (of the sum
    w.r.t. argnums), vmap (over the leading axis of every argument; with vmap_stack, over
    a new axis stacking each argument with its negation or reversal, so ranks stay)."""
    for mode in modes:
        if mode == "eager":
            m, j = (lambda: mfn(*args)), (lambda: jfn(*args))
        elif mode == "jit":
            m, j = (lambda: mjax.jit(mfn)(*args)), (lambda: jax.jit(jfn)(*args))
        elif mode == "grad":
            m = lambda: mjax.grad(lambda *a: mjax.numpy.sum(mfn(*a)), argnums)(*args)  # noqa: E731
            j = lambda: jax.grad(lambda *a: jax.numpy.sum(jfn(*a)), argnums)(*args)  # noqa: E731
        elif mode == "vmap":
            vargs = tuple(np.stack([a, _other(a)]) for a in args) if vmap_stack else args
            m = lambda: mjax.vmap(mfn)(*vargs)  # noqa: E731
            j = lambda: jax.vmap(jfn)(*vargs)  # noqa: E731
        else:
            raise ValueError(mode)
        (got, gerr), (want, werr) = outcome(m), outcome(j)
        if werr is not None or gerr is not None:
            assert gerr is not None and werr is not None, (mode, gerr, werr)
            assert isinstance(gerr, type(werr)) or isinstance(werr, type(gerr)) or (
                type(werr).__name__ == type(gerr).__name__), (mode, gerr, werr)
            continue
        assert_same(got, want, rtol, atol, weak=weak and mode in ("eager", "jit"))
