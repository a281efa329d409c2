"""pl.pallas_call's semantics: out-of-bounds blocks (padding), masks, ref indexing,
squeezed dims, atomics, aliases, control flow over refs, and clear errors."""
import importlib.util
import os

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.experimental import pallas as jpl

import mjax
import mjax.numpy as jnp
from mjax import lax
from mjax.experimental import pallas as pl


def rnd(*shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def close(a, b, tol=1e-6):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=tol, atol=tol)


def sds(shape, dtype=np.float32):
    return mjax.ShapeDtypeStruct(shape, dtype)


# ---- padding: grids that do not divide the array ----------------------------------------
def test_partial_blocks_2d_match_jax():
    x = rnd(7, 12)

    def run(pl_, jnp_, jax_, x=x):
        def kernel(x_ref, o_ref):
            o_ref[...] = x_ref[...] * 2.0 + pl_.program_id(1).astype(jnp_.float32)
        spec = pl_.BlockSpec((3, 5), lambda i, j: (i, j))
        return pl_.pallas_call(kernel, out_shape=jax_.ShapeDtypeStruct(x.shape, x.dtype),
                               grid=(3, 3), in_specs=[spec], out_specs=spec,
                               interpret=True)(x)
    want = x * 2 + (np.arange(12) // 5)[None, :]
    close(run(pl, jnp, mjax), want)
    close(run(jpl, jjnp, jax), want)      # the oracle agrees
    close(mjax.jit(lambda x: run(pl, jnp, mjax, x))(x), want)


def test_out_of_bounds_reads_see_padding_nan():
    # The last block of 3 over 8 elements reads one padded element: NaN, as in JAX.
    x = np.arange(8, dtype=np.float32)

    def kernel(x_ref, o_ref):
        o_ref[...] = jnp.broadcast_to(jnp.sum(x_ref[...]), o_ref.shape)
    out = pl.pallas_call(kernel, out_shape=sds((8,)), grid=(3,),
                         in_specs=[pl.BlockSpec((3,), lambda i: (i,))],
                         out_specs=pl.BlockSpec((3,), lambda i: (i,)), interpret=True)(x)
    close(out[:6], [3, 3, 3, 12, 12, 12])
    assert np.isnan(np.asarray(out[6:])).all()


def test_int_padding_and_grid_as_int():
    x = np.arange(10, dtype=np.int32)

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1
    out = pl.pallas_call(kernel, out_shape=sds((10,), np.int32), grid=3,
                         in_specs=[pl.BlockSpec((4,), lambda i: i)],
                         out_specs=pl.BlockSpec((4,), lambda i: i), interpret=True)(x)
    np.testing.assert_array_equal(out, x + 1)


# ---- masks ----------------------------------------------------------------------------------
def test_masked_load_store_over_the_edge():
    n, b = 10, 4
    x = rnd(n)

    def kernel(x_ref, o_ref):
        i = pl.program_id(0)
        idx = i * b + jnp.arange(b)
        mask = idx < n
        v = pl.load(x_ref, (pl.ds(i * b, b),), mask=mask, other=-1.0)
        pl.store(o_ref, (pl.ds(i * b, b),), v * 2.0, mask=mask)
    out = pl.pallas_call(kernel, out_shape=sds((n,)), grid=(pl.cdiv(n, b),),
                         interpret=True)(x)
    close(out, 2 * x)


def test_masked_load_other_fills():
    x = rnd(8)

    def kernel(x_ref, o_ref):
        mask = jnp.arange(8) % 2 == 0
        o_ref[...] = pl.load(x_ref, (slice(None),), mask=mask, other=5.0)
    out = pl.pallas_call(kernel, out_shape=sds((8,)), interpret=True)(x)
    close(out, np.where(np.arange(8) % 2 == 0, x, 5.0))


# ---- ref indexing -----------------------------------------------------------------------------
def test_ref_indexing_forms():
    x = rnd(4, 6)

    def kernel(x_ref, o_ref):
        o_ref[0, :] = x_ref[3, :]                  # integer index: squeezed
        o_ref[1] = x_ref[-1] * 2.0                 # negative int, trailing dims implied
        o_ref[2, pl.ds(1, 4)] = x_ref[2, 2:6]      # pl.ds and a static slice
        row = x_ref.at[1]                          # a view
        o_ref[3, :] = row[...] + row[pl.ds(0, 6)]
    out = pl.pallas_call(kernel, out_shape=sds((4, 6)),
                         input_output_aliases={}, interpret=True)(x)
    out = np.asarray(out)
    close(out[0], x[3])
    close(out[1], 2 * x[3])
    close(out[2, 1:5], x[2, 2:6])
    close(out[3], 2 * x[1])


def test_dynamic_integer_index_and_fori_loop_over_rows():
    x = rnd(5, 3)

    def kernel(x_ref, o_ref):
        def body(i, c):
            o_ref[i, :] = x_ref[4 - i, :] + i.astype(jnp.float32)
            return c
        lax.fori_loop(0, 5, body, 0)
    out = pl.pallas_call(kernel, out_shape=sds((5, 3)), interpret=True)(x)
    close(out, x[::-1] + np.arange(5)[:, None])


def test_squeezed_block_dims():
    x = rnd(3, 8)

    def kernel(x_ref, o_ref):
        assert x_ref.shape == (8,)
        o_ref[...] = jnp.cumsum(x_ref[...])
    for sq in (None, pl.Squeezed(), pl.squeezed):
        out = pl.pallas_call(kernel, out_shape=sds((3, 8)), grid=(3,),
                             in_specs=[pl.BlockSpec((sq, 8), lambda i: (i, 0))],
                             out_specs=pl.BlockSpec((sq, 8), lambda i: (i, 0)),
                             interpret=True)(x)
        close(out, np.cumsum(x, axis=1), 1e-5)


# ---- control flow over refs ----------------------------------------------------------------
def test_cond_and_when_write_refs():
    x = rnd(4, 4)

    def kernel(x_ref, o_ref):
        i = pl.program_id(0)
        lax.cond(i % 2 == 0, lambda: o_ref.__setitem__(..., x_ref[...]),
                 lambda: o_ref.__setitem__(..., -x_ref[...]))

        @pl.when(i == 3)
        def _():
            o_ref[...] = o_ref[...] * 10.0
    spec = pl.BlockSpec((None, 4), lambda i: (i, 0))
    out = pl.pallas_call(kernel, out_shape=sds((4, 4)), grid=(4,), in_specs=[spec],
                         out_specs=spec, interpret=True)(x)
    close(out, x * np.array([1, -1, 1, -10])[:, None])


def test_while_loop_reads_and_writes_scratch():
    x = rnd(8)

    def kernel(x_ref, o_ref, s_ref):
        s_ref[...] = x_ref[...]
        n = lax.while_loop(lambda k: k < 3, lambda k: _double(s_ref, k), 0)
        o_ref[...] = s_ref[...] + n.astype(jnp.float32)

    def _double(ref, k):
        ref[...] = ref[...] * 2.0
        return k + 1
    out = pl.pallas_call(kernel, out_shape=sds((8,)),
                         scratch_shapes=[pl.MemoryRef((8,), jnp.float32)],
                         interpret=True)(x)
    close(out, 8 * x + 3)


# ---- atomics, aliases, several outputs ----------------------------------------------------
def test_atomic_add_sums_blocks():
    x = rnd(16)

    def kernel(x_ref, o_ref):
        @pl.when(pl.program_id(0) == 0)
        def _():
            o_ref[...] = jnp.zeros_like(o_ref)
        old = pl.atomic_add(o_ref, (0,), jnp.sum(x_ref[...]))
        del old
    out = pl.pallas_call(kernel, out_shape=sds((1,)), grid=(4,),
                         in_specs=[pl.BlockSpec((4,), lambda i: (i,))],
                         out_specs=pl.BlockSpec((1,), lambda i: (0,)), interpret=True)(x)
    close(out, [x.sum()], 1e-5)


def test_input_output_aliases_keep_unwritten_parts():
    x = rnd(8)

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0
    f = lambda pl_, jax_: pl_.pallas_call(  # noqa: E731
        kernel, out_shape=jax_.ShapeDtypeStruct((8,), np.float32), grid=(1,),
        in_specs=[pl_.BlockSpec((4,), lambda i: (0,))],
        out_specs=pl_.BlockSpec((4,), lambda i: (1,)), input_output_aliases={0: 0},
        interpret=True)
    out = f(pl, mjax)(x)
    want = x.copy()
    want[4:] = x[:4] + 1
    close(out, want)
    close(mjax.jit(f(pl, mjax))(x), want)


def test_alias_indices_count_scalar_prefetch_leaves():
    """input_output_aliases index the flattened inputs: a scalar-prefetch argument that
    is a tuple of two arrays takes indices 0 and 1, the aliased array is input 2 (mjax
    counted prefetch arguments, not leaves, and refused it as out of range)."""
    from jax.experimental.pallas import tpu as jpltpu
    from mjax.experimental.pallas import tpu as pltpu

    def run(J, P, T):
        def kernel(pre, x_ref, o_ref):
            o_ref[...] = x_ref[...] + pre[0][0] + pre[1][0]

        def f(s, x):
            spec = P.BlockSpec((8, 128), lambda i, pre: (0, 0))
            return P.pallas_call(
                kernel, out_shape=J.ShapeDtypeStruct(x.shape, x.dtype),
                grid_spec=T.PrefetchScalarGridSpec(num_scalar_prefetch=1, grid=(1,),
                                                   in_specs=[spec], out_specs=spec),
                input_output_aliases={2: 0}, interpret=True)((s[:1], s[1:]), x)
        return np.asarray(J.jit(f)(np.array([3.0, 4.0], np.float32), rnd(8, 128)))
    got, want = run(mjax, pl, pltpu), run(jax, jpl, jpltpu)
    np.testing.assert_array_equal(got, want)
    close(got, rnd(8, 128) + 7.0)


def test_several_outputs_and_grid_spec():
    x = rnd(6)

    def kernel(x_ref, a_ref, b_ref):
        a_ref[...] = x_ref[...] * 2.0
        b_ref[...] = (x_ref[...] > 0).astype(jnp.int32)
    gs = pl.GridSpec(grid=(2,), in_specs=[pl.BlockSpec((3,), lambda i: (i,))],
                     out_specs=[pl.BlockSpec((3,), lambda i: (i,))] * 2)
    a, b = pl.pallas_call(kernel, out_shape=(sds((6,)), sds((6,), np.int32)),
                          grid_spec=gs, interpret=True)(x)
    close(a, 2 * x)
    np.testing.assert_array_equal(b, (x > 0).astype(np.int32))


def test_debug_prints_the_kernel(capsys):
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]
    pl.pallas_call(kernel, out_shape=sds((2,)), debug=True,
                   interpret=True)(np.ones(2, np.float32))
    text = capsys.readouterr().out
    assert "jaxpr.ref_get" in text and "memref<2xf32>" in text


# ---- errors ------------------------------------------------------------------------------------
def _copy(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def test_block_shape_rank_mismatch():
    with pytest.raises(ValueError, match=r"Block shape for input 0 of _copy \(= \(4,\)\) must "
                                         r"have the same number of dimensions"):
        pl.pallas_call(_copy, out_shape=sds((4, 4)), grid=(1,),
                       in_specs=[pl.BlockSpec((4,), lambda i: (i,))],
                       interpret=True)(rnd(4, 4))


def test_bad_block_sizes():
    with pytest.raises(ValueError, match="must have positive sizes"):
        pl.pallas_call(_copy, out_shape=sds((4,)), grid=(1,),
                       in_specs=[pl.BlockSpec((0,), lambda i: (i,))],
                       interpret=True)(rnd(4))
    with pytest.raises(NotImplementedError, match="BoundedSlice block dimensions"):
        pl.pallas_call(_copy, out_shape=sds((4,)), grid=(1,),
                       in_specs=[pl.BlockSpec((pl.BoundedSlice(2),), lambda i: (i,))],
                       interpret=True)(rnd(4))
    with pytest.raises(ValueError, match="pl.Element needs a positive block size"):
        pl.pallas_call(_copy, out_shape=sds((4,)), grid=(1,),
                       in_specs=[pl.BlockSpec((pl.Element(2, (-1, 0)),), lambda i: (i,))],
                       interpret=True)(rnd(4))


# ---- pl.Element: index maps give element offsets into a virtually padded array ------
def _program_ids(pl_, jnp_, lib, x_shape, block_shape, grid, index_map):
    def kernel(o_ref):
        o_ref[...] = jnp_.full(o_ref.shape, 10 * pl_.program_id(0) + pl_.program_id(1))
    return pl_.pallas_call(kernel, out_shape=lib.ShapeDtypeStruct(x_shape, np.int32),
                           grid=grid, in_specs=[],
                           out_specs=pl_.BlockSpec(block_shape, index_map),
                           interpret=True)()


@pytest.mark.parametrize("x_shape,pads,grid", [((8, 6), ((0, 0), (0, 0)), (4, 2)),
                                               ((7, 7), ((1, 0), (2, 0)), (4, 3))])
def test_element_output_blocks_match_jax(x_shape, pads, grid):
    # the Grids and BlockSpecs page's examples: output blocks at element offsets
    outs = [_program_ids(pl_, jnp_, lib, x_shape,
                         (pl_.Element(2, pads[0]), pl_.Element(3, pads[1])), grid,
                         lambda i, j: (2 * i, 3 * j))
            for pl_, jnp_, lib in ((pl, jnp, mjax), (jpl, jjnp, jax))]
    np.testing.assert_array_equal(*outs)


def _stencil(pl_, lib, x, *, interpret=True):
    """o[k] = x[k-1] + x[k] + x[k+1]: overlapping windows of 6 read at element offsets
    4*i of x padded by one element on each side."""
    def kernel(w_ref, o_ref):
        o_ref[...] = w_ref[0:4] + w_ref[1:5] + w_ref[2:6]
    n = x.shape[0]
    return pl_.pallas_call(
        kernel, out_shape=lib.ShapeDtypeStruct((n,), x.dtype), grid=(n // 4,),
        in_specs=[pl_.BlockSpec((pl_.Element(6, (1, 1)),), lambda i: (4 * i,))],
        out_specs=pl_.BlockSpec((4,), lambda i: (i,)), interpret=interpret)(x)


def test_element_input_windows_match_numpy_and_jax():
    x = rnd(16)
    want = x[:-2] + x[1:-1] + x[2:]          # (the ends read the unspecified padding)
    out = _stencil(pl, mjax, x)
    close(out[1:-1], want)
    close(out[1:-1], np.asarray(_stencil(jpl, jax, x))[1:-1])
    close(mjax.jit(lambda a: _stencil(pl, mjax, a))(x)[1:-1], want)
    xs = np.stack([x, 2 * x, -x])
    close(mjax.vmap(lambda a: _stencil(pl, mjax, a))(xs)[:, 1:-1],
          np.stack([want, 2 * want, -want]))


def test_index_map_arity_and_results():
    with pytest.raises(TypeError, match=r"cannot take 2 argument\(s\): the grid \(2, 2\)"):
        pl.pallas_call(_copy, out_shape=sds((4,)), grid=(2, 2),
                       in_specs=[pl.BlockSpec((2,), lambda i: (i,))],
                       interpret=True)(rnd(4))
    with pytest.raises(ValueError, match="must return 1 values.*Currently returning 2"):
        pl.pallas_call(_copy, out_shape=sds((4,)), grid=(2,),
                       in_specs=[pl.BlockSpec((2,), lambda i: (i, 0))],
                       interpret=True)(rnd(4))


def test_kernel_capturing_an_array():
    c = jnp.arange(4.0)

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + c
    with pytest.raises(ValueError, match=r"captures constants \['f32\[4\]'\]. You should "
                                         r"pass them as inputs"):
        pl.pallas_call(kernel, out_shape=sds((4,)), interpret=True)(rnd(4))


def test_unsupported_indexing_is_named():
    def strided(x_ref, o_ref):      # (strided reads and writes are supported: views not)
        o_ref.at[pl.ds(0, 2, 2)][...] = x_ref[pl.ds(0, 2)]
    with pytest.raises(NotImplementedError, match="strided"):
        pl.pallas_call(strided, out_shape=sds((4,)), interpret=True)(rnd(8))

    # (integer-array indices: a gather interpret mode runs, as JAX's interpreter does
    # (test_jax_pallas_tests.py); a compiled kernel's lowering refuses them by name)
    def gather(x_ref, o_ref):
        o_ref[...] = x_ref[jnp.arange(4)]
    x = rnd(8)
    np.testing.assert_array_equal(
        pl.pallas_call(gather, out_shape=sds((4,)), interpret=True)(x), x[:4])
    with pytest.raises(NotImplementedError, match="array indices"):
        pl.pallas_call(gather, out_shape=sds((4,)))(x)


def test_store_dtype_and_shape_mismatch():
    def bad_dtype(x_ref, o_ref):
        o_ref[...] = x_ref[...].astype(jnp.int32)
    with pytest.raises(ValueError, match="Invalid dtype for `swap`"):
        pl.pallas_call(bad_dtype, out_shape=sds((4,)), interpret=True)(rnd(4))

    def bad_shape(x_ref, o_ref):
        o_ref[...] = jnp.ones((3,))
    with pytest.raises(ValueError, match="Invalid shape for `swap`"):
        pl.pallas_call(bad_shape, out_shape=sds((4,)), interpret=True)(rnd(4))


def test_grid_queries_outside_kernels_and_out_of_range():
    with pytest.raises(ValueError, match="only be called inside a Pallas kernel"):
        pl.program_id(0)

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + pl.program_id(1)
    with pytest.raises(ValueError, match=r"axis 1 is out of range for the grid \(2,\)"):
        pl.pallas_call(kernel, out_shape=sds((4,)), grid=(2,), interpret=True)(rnd(4))


def test_kernel_must_return_none():
    with pytest.raises(ValueError, match="should return None"):
        pl.pallas_call(lambda x_ref, o_ref: x_ref[...], out_shape=sds((4,)),
                       interpret=True)(rnd(4))


# ---- other backends ----------------------------------------------------------------------
def test_interpret_mode_runs_under_iree():
    # The expanded call is ordinary StableHLO, so IREE runs it as XLA does. (The TPU
    # machine has no iree, a test dependency: the test skips there; elsewhere a missing
    # iree fails it, as a missing dependency should.)
    if os.environ.get("MJAX_TEST_TPU", "") not in ("", "0") and \
            importlib.util.find_spec("iree") is None:
        pytest.skip("TPU: needs iree, a test dependency not installed on the TPU machine")
    x = rnd(10)

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0 + pl.program_id(0).astype(jnp.float32)
    f = pl.pallas_call(kernel, out_shape=sds((10,)), grid=(3,),
                       in_specs=[pl.BlockSpec((4,), lambda i: (i,))],
                       out_specs=pl.BlockSpec((4,), lambda i: (i,)), interpret=True)
    out = mjax.jit(f, backend="iree")(x)
    close(out, x * 2 + np.arange(10) // 4)
