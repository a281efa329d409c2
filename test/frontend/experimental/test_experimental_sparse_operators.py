"""The rest of mjax.experimental.sparse against jax.experimental.sparse and NumPy: gather,
convolution, sampled dot_general, rev, indexing forms, `**`, BCSR's concatenate and
broadcast, and the operators BCSR/COO/CSR/CSC share (eagerly and under jit)."""
import jax.experimental.sparse as jsparse
import jax.lax as jlax
import numpy as np
import pytest

import mjax
import mjax.experimental.sparse as msparse
import mjax.lax as mlax

RNG = np.random.RandomState(2)
A = (RNG.randn(4, 6) * (RNG.rand(4, 6) < 0.4)).astype(np.float32)
A[0, 1] = 1.5


def _dense(x):
    return np.asarray(x.todense() if hasattr(x, "todense") else x)


def _both(f, *args):
    """f(mod, sparse A) for mjax (eager, jit) and JAX; all three as dense arrays."""
    ours = msparse.BCOO.fromdense(A)
    theirs = jsparse.BCOO.fromdense(A)
    return (_dense(f(msparse, mlax, ours)), _dense(mjax.jit(lambda s: f(msparse, mlax, s))(ours)),
            _dense(f(jsparse, jlax, theirs)))


CASES = {
    "gather": lambda sp, lax, s: sp.bcoo_gather(
        s, np.array([[1], [3], [0]], np.int32),
        lax.GatherDimensionNumbers(offset_dims=(1,), collapsed_slice_dims=(0,),
                                   start_index_map=(0,)), slice_sizes=(1, 6)),
    "conv": lambda sp, lax, s: sp.bcoo_conv_general_dilated(
        sp.bcoo_reshape(s, new_sizes=(1, 1, 24)), np.ones((1, 1, 3), np.float32),
        window_strides=(1,), padding="VALID"),
    "sampled": lambda sp, lax, s: sp.bcoo_dot_general_sampled(
        np.asarray(A), np.asarray(A.T), s.indices,
        dimension_numbers=(((1,), (0,)), ((), ()))),
    "rev": lambda sp, lax, s: sp.bcoo_rev(s, dimensions=(0, 1)),
    "getitem_int_slice": lambda sp, lax, s: s[-1, 1:5:2],
    "getitem_ellipsis": lambda sp, lax, s: s[..., 2],
    "getitem_negative_step": lambda sp, lax, s: s[::-2],
    "pow": lambda sp, lax, s: s ** 3,
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_jax(case):
    eager, jitted, ref = _both(CASES[case])
    np.testing.assert_allclose(eager, ref, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(jitted, ref, rtol=1e-5, atol=1e-6)


def test_bcsr_concatenate_and_broadcast():
    ours, theirs = msparse.BCSR.fromdense(A), jsparse.BCSR.fromdense(A)
    got = msparse.bcsr_concatenate([ours, ours], dimension=0)
    np.testing.assert_array_equal(_dense(got), np.concatenate([A, A]))
    np.testing.assert_array_equal(_dense(got), _dense(
        jsparse.bcsr_concatenate([theirs, theirs], dimension=0)))
    got = msparse.bcsr_broadcast_in_dim(ours, shape=(2, 4, 6), broadcast_dimensions=(1, 2))
    np.testing.assert_array_equal(_dense(got), np.broadcast_to(A, (2, 4, 6)))
    got = msparse.bcsr_sum_duplicates(ours)
    np.testing.assert_array_equal(_dense(got), A)


@pytest.mark.parametrize("fmt", ["BCSR", "COO", "CSR", "CSC"])
def test_shared_operators(fmt):
    m = getattr(msparse, fmt).fromdense(A)
    np.testing.assert_array_equal(_dense(m + m), 2 * A)
    np.testing.assert_array_equal(_dense(m - m), 0 * A)
    np.testing.assert_allclose(_dense(m.sum(0)), A.sum(0), rtol=1e-6)
    np.testing.assert_array_equal(_dense(m[1]), A[1])
    np.testing.assert_array_equal(_dense(mjax.jit(lambda x: (x + x)[2:])(m)), 2 * A[2:])


@pytest.mark.parametrize("layout", [(0, 0), (1, 0)])
def test_multiply_sparse_of_very_sparse_arrays(layout):
    """Few stored elements: the product pairs them (no dense form); duplicates add up."""
    rng = np.random.RandomState(3)
    x = (rng.randn(2, 60, 80, 2) * (rng.rand(2, 60, 80, 1) < 0.002)).astype(np.float32)
    y = (rng.randn(2, 60, 80, 2) * (rng.rand(2, 60, 80, 1) < 0.002)).astype(np.float32)
    y[:, :30] = x[:, :30]
    nb, nd = layout
    a = msparse.BCOO.fromdense(x, n_batch=nb, n_dense=nd)
    b = msparse.BCOO.fromdense(y, n_batch=nb, n_dense=nd)
    b = b + b                                        # (every index twice)
    ref = jsparse.bcoo_multiply_sparse(jsparse.BCOO.fromdense(x, n_batch=nb, n_dense=nd),
                                       jsparse.BCOO.fromdense(2 * y, n_batch=nb, n_dense=nd))
    for got in (msparse.bcoo_multiply_sparse(a, b),
                mjax.jit(msparse.bcoo_multiply_sparse)(a, b)):
        np.testing.assert_allclose(_dense(got), 2 * x * y, rtol=1e-6)
        np.testing.assert_allclose(_dense(got), _dense(ref), rtol=1e-6)
