"""vmap of the indexing family (gather, scatter*, dynamic_slice, dynamic_update_slice) with
batched operands, indices and updates in every combination, against jax.vmap and a loop."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp
from mjax import lax as mlax
from frontend_util import check

RNG = np.random.default_rng(0)
X = RNG.normal(size=(4, 5, 3)).astype(np.float32)        # batch 4 of (5, 3)
I = RNG.integers(-1, 6, size=(4, 2, 1)).astype(np.int32)  # batch 4 of (2, 1): some out of range
U = RNG.normal(size=(4, 2, 3)).astype(np.float32)        # batch 4 of (2, 3)
S = np.array([0, 3, 1, 7], np.int32)                      # batch 4 of scalar starts


def _loop(f, in_axes, args):
    size = next(a.shape[d] for a, d in zip(args, in_axes) if d is not None)
    def example(a, d, k):
        return a if d is None else a[(slice(None),) * (d % a.ndim) + (k,)]
    outs = [f(*[example(a, d, k) for a, d in zip(args, in_axes)]) for k in range(size)]
    return np.stack([np.asarray(o) for o in outs])


def _check(mf, jf, args, in_axes, out_axes=0):
    # (Arrays on both sides: vmap hands an unmapped NumPy argument to the function as
    # it is, where `x.at` does not exist)
    want = jax.vmap(jf, in_axes=in_axes, out_axes=out_axes)(*map(jnp.asarray, args))
    args = list(map(mnp.asarray, args))
    check(mjax.vmap(mf, in_axes=in_axes, out_axes=out_axes)(*args), want)
    check(mjax.jit(mjax.vmap(mf, in_axes=in_axes, out_axes=out_axes))(*args), want)
    if out_axes == 0:
        np.testing.assert_allclose(_loop(mf, in_axes, list(map(mnp.asarray, args))), want,
                                   rtol=1e-6)


def _first(args, axes):
    """Unbatched arguments are example 0 of the batch."""
    return [a if d is not None else a[0] for a, d in zip(args, axes)]


AXES2 = [(0, None), (None, 0), (0, 0)]
AXES3 = [(0, None, None), (None, 0, None), (None, None, 0), (0, 0, None), (None, 0, 0),
         (0, 0, 0), (0, None, 0)]


def _rows_gather(lax, mode="clip"):
    """x[i[:, 0]] for a (5, 3) x and (2, 1) i, written as the gather numpy indexing emits."""
    def f(x, i):
        dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                        start_index_map=(0,))
        return lax.gather(x, i, dn, slice_sizes=(1, 3), mode=mode)
    return f


@pytest.mark.parametrize("in_axes", AXES2, ids=str)
def test_gather_rows(in_axes):
    _check(_rows_gather(mlax), _rows_gather(jax.lax), _first([X, I], in_axes), in_axes)


@pytest.mark.parametrize("in_axes", AXES2, ids=str)
def test_gather_batched_on_last_axes(in_axes):
    axes = tuple(None if d is None else -1 for d in in_axes)
    args = [np.moveaxis(X, 0, -1), np.moveaxis(I, 0, -1)]
    args = [a if d is not None else f[0] for a, d, f in zip(args, axes, (X, I))]
    _check(_rows_gather(mlax, "fill"), _rows_gather(jax.lax, "fill"), args, axes)


@pytest.mark.parametrize("mode", ["clip", "fill"])
@pytest.mark.parametrize("in_axes", AXES2, ids=str)
def test_lax_gather_modes_and_moved_axes(in_axes, mode):
    # Batch axes not at the front: x batched on axis 2, indices on axis 1.
    xs = np.moveaxis(X, 0, 2)
    idx = I.reshape(4, 2, 1).transpose(1, 0, 2)
    axes = tuple(None if d is None else (2, 1)[k] for k, d in enumerate(in_axes))
    args = [xs if axes[0] is not None else X[0], idx if axes[1] is not None else I[0, :, None]]

    def mk(lax):
        def f(x, i):
            dn = lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                            start_index_map=(0,))
            return lax.gather(x, i, dn, slice_sizes=(1, 3), mode=mode)
        return f
    _check(mk(mlax), mk(jax.lax), args, axes)


@pytest.mark.parametrize("in_axes", AXES2, ids=str)
def test_gather_with_operand_batching_dims(in_axes):
    # A gather that already has batching dims keeps them, shifted.
    x = RNG.normal(size=(4, 3, 5)).astype(np.float32)
    i = RNG.integers(0, 5, size=(4, 3, 2, 1)).astype(np.int32)

    def mk(lax):
        def f(x, i):
            dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,),
                                            start_index_map=(1,), operand_batching_dims=(0,),
                                            start_indices_batching_dims=(0,))
            return lax.gather(x, i, dn, slice_sizes=(1, 1), mode="clip")
        return f
    _check(mk(mlax), mk(jax.lax), _first([x, i], in_axes), in_axes)


def _rows_scatter(lax, name, mode="clip"):
    """x.at[i[:, 0]].<op>(u) for a (5, 3) x, (2, 1) i and (2, 3) u, as a lax scatter."""
    def f(x, i, u):
        dn = lax.ScatterDimensionNumbers(update_window_dims=(1,), inserted_window_dims=(0,),
                                         scatter_dims_to_operand_dims=(0,))
        return getattr(lax, name)(x, i, u, dn, mode=mode)
    return f


@pytest.mark.parametrize("name", ["scatter", "scatter_add", "scatter_mul", "scatter_min",
                                  "scatter_max"])
@pytest.mark.parametrize("in_axes", AXES3, ids=str)
def test_scatter_family(in_axes, name):
    args = _first([X, I % 5, U], in_axes)
    if name == "scatter":  # which duplicate wins is unspecified: use distinct indices
        args[1] = np.array([[0, 3], [1, 2], [4, 0], [2, 3]], np.int32)[..., None][
            slice(None) if in_axes[1] is not None else 0]
    _check(_rows_scatter(mlax, name), _rows_scatter(jax.lax, name), args, in_axes)


@pytest.mark.parametrize("in_axes", AXES3, ids=str)
def test_scatter_add_duplicates_and_drop(in_axes):
    idx = np.array([[1, 1], [0, 9], [4, 4], [-1, 3]], np.int32)[..., None]  # repeats, OOB
    args = _first([X, idx, U], in_axes)
    _check(_rows_scatter(mlax, "scatter_add", "fill"),
           _rows_scatter(jax.lax, "scatter_add", "fill"), args, in_axes)


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (0, 0), (1, 0)], ids=str)
def test_dynamic_slice(in_axes):
    xs = np.moveaxis(X, 0, 1) if in_axes[0] == 1 else X
    args = [xs if in_axes[0] is not None else X[0], S if in_axes[1] is not None else S[2]]

    def mk(lax):
        return lambda x, s: lax.dynamic_slice(x, (s, 1), (3, 2))
    _check(mk(mlax), mk(jax.lax), args, in_axes)


@pytest.mark.parametrize("in_axes", [(0, None, None), (None, 0, None), (None, None, 0),
                                     (0, 0, None), (0, None, 0), (None, 0, 0), (0, 0, 0)],
                         ids=str)
def test_dynamic_update_slice(in_axes):
    upd = RNG.normal(size=(4, 2, 3)).astype(np.float32)
    args = _first([X, upd, S], in_axes)

    def mk(lax):
        return lambda x, u, s: lax.dynamic_update_slice(x, u, (s, 0))
    _check(mk(mlax), mk(jax.lax), args, in_axes)


def _pick(lax):
    """sin(w[i[0]]) for a (5,) w and (1,) i: a scalar, so grad applies."""
    def f(w, i):
        dn = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,),
                                        start_index_map=(0,))
        return lax.sin(lax.gather(w, i, dn, slice_sizes=(1,), mode="clip"))
    return f


def test_grad_of_vmap_and_vmap_of_grad():
    w = RNG.normal(size=(5,)).astype(np.float32)
    idx = np.array([[1], [3], [1], [4]], np.int32)
    for axes in [(None, 0), (0, 0)]:
        ws = np.stack([w * (k + 1) for k in range(4)]) if axes[0] == 0 else w
        check(mjax.vmap(mjax.grad(_pick(mlax)), axes)(ws, idx),
              jax.vmap(jax.grad(_pick(jax.lax)), axes)(ws, idx))
    # grad through the batched gather: its transpose is a batched scatter_add.
    check(mjax.grad(lambda w: mjax.vmap(_pick(mlax), (None, 0))(w, idx)[2])(w),
          jax.grad(lambda w: jax.vmap(_pick(jax.lax), (None, 0))(w, idx)[2])(w))

    def ds_vjp(lax, vjp):
        def f(x, s):
            y, pull = vjp(lambda x: lax.sin(lax.dynamic_slice(x, (s, 0), (2, 3))), x)
            return pull(y)[0]
        return f
    check(mjax.vmap(ds_vjp(mlax, mjax.vjp))(X, S), jax.vmap(ds_vjp(jax.lax, jax.vjp))(X, S))


def test_nested_vmap_gather():
    xs = RNG.normal(size=(2, 4, 5, 3)).astype(np.float32)
    idx = RNG.integers(0, 5, size=(2, 4, 2, 1)).astype(np.int32)
    mf, jf = _rows_gather(mlax), _rows_gather(jax.lax)
    check(mjax.vmap(mjax.vmap(mf))(xs, idx), jax.vmap(jax.vmap(jf))(xs, idx))
    check(mjax.vmap(mjax.vmap(mf, (None, 0)), (0, None))(xs[:, 0], idx[0]),
          jax.vmap(jax.vmap(jf, (None, 0)), (0, None))(xs[:, 0], idx[0]))
    idx_t = idx.transpose(1, 0, 2, 3)
    check(mjax.vmap(mjax.vmap(mf), (0, 1), 1)(xs, idx_t),
          jax.vmap(jax.vmap(jf), (0, 1), 1)(xs, idx_t))


# ---- NumPy-style indexing (composes gather/scatter with structural ops) ----------------------
I1 = RNG.integers(-5, 5, size=(4, 2)).astype(np.int32)   # batch 4 of (2,), negative too


@pytest.mark.parametrize("in_axes", AXES2, ids=str)
def test_numpy_advanced_indexing(in_axes):
    args = _first([X, I1], in_axes)
    f = lambda x, i: x[i, 1:] * 2.0  # noqa: E731
    _check(f, f, args, in_axes)


@pytest.mark.parametrize("in_axes", AXES2, ids=str)
def test_numpy_traced_integer_index(in_axes):
    args = _first([X, S % 5], in_axes)
    f = lambda x, s: x[s]  # noqa: E731
    _check(f, f, args, in_axes)


@pytest.mark.parametrize("method", ["set", "add", "mul", "min", "max"])
@pytest.mark.parametrize("in_axes", [(0, None, None), (None, 0, None), (None, None, 0),
                                     (0, 0, 0)], ids=str)
def test_numpy_indexed_updates(in_axes, method):
    idx = np.array([[0, 3], [1, 2], [4, 0], [2, 3]], np.int32)   # distinct per example
    args = _first([X, idx, U], in_axes)

    def f(x, i, u):
        return getattr(x.at[i], method)(u)
    _check(f, f, args, in_axes)


def test_numpy_take_along_axis():
    idx = RNG.integers(0, 5, size=(4, 2, 3)).astype(np.int32)
    _check(lambda x, i: mnp.take_along_axis(x, i, axis=0),
           lambda x, i: jnp.take_along_axis(x, i, axis=0), [X, idx], (0, 0))
