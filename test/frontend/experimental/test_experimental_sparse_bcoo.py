"""mjax.experimental.sparse's BCOO ops against jax.experimental.sparse and NumPy: every op
on arrays of several layouts (n_batch, n_dense), eagerly, under jit, under vmap (over a
batch dimension of the sparse operand) and under grad with respect to the stored data."""
import os

import jax
import jax.experimental.sparse as jsparse
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.experimental.sparse as msparse
import mjax.numpy as mjnp

FULL = os.environ.get("MJAX_TEST_TIER") == "full"
RNG = np.random.RandomState(0)
X = (RNG.randn(3, 4, 2) * (RNG.rand(3, 4, 1) < 0.5)).astype(np.float32)
X[0, 0] = 0.
Y = RNG.randn(2, 5).astype(np.float32)
LAYOUTS = [(0, 0), (1, 0), (0, 1), (1, 1)] if FULL else [(0, 0), (1, 1)]


def _dense(x):
    return np.asarray(x.todense() if hasattr(x, "todense") else x)


def _pair(mod, jnp_mod):
    """Ops as functions of (module, sparse operand): each returns a sparse or dense result."""
    return {
        "todense": lambda s: s.todense(),
        "transpose": lambda s: mod.bcoo_transpose(s, permutation=(0, 1, 2)) if s.n_dense
        else s.transpose((1, 0, 2)),
        "matmul": lambda s: s @ jnp_mod.asarray(Y),
        "rmatmul": lambda s: mod.bcoo_dot_general(
            jnp_mod.asarray(RNG_T), s, dimension_numbers=(((1,), (0,)), ((), ()))),
        "dot_general_batch": lambda s: mod.bcoo_dot_general(
            s, jnp_mod.asarray(B3), dimension_numbers=(((1,), (1,)), ((0,), (0,)))),
        "spsp": lambda s: mod.bcoo_dot_general(
            s, s, dimension_numbers=(((1, 2), (1, 2)), ((), ()))),
        "mul_scalar": lambda s: s * 3.0,
        "mul_dense": lambda s: s * jnp_mod.asarray(X + 1),
        "mul_sparse": lambda s: mod.bcoo_multiply_sparse(s, s),
        "neg": lambda s: -s,
        "add_sparse": lambda s: s + s,
        "sum_axis": lambda s: mod.bcoo_reduce_sum(s, axes=(1,)),
        "sum_all": lambda s: s.sum(),
        "slice": lambda s: mod.bcoo_slice(s, start_indices=(1, 1, 0), limit_indices=(3, 4, 2),
                                          strides=(1, 2, 1)),
        "dynamic_slice": lambda s: mod.bcoo_dynamic_slice(s, (1, 2, 0), (2, 2, 2)),
        "getitem": lambda s: s[1],
        "broadcast": lambda s: mod.bcoo_broadcast_in_dim(
            s, shape=(2, 3, 4, 2), broadcast_dimensions=(1, 2, 3)),
        "concatenate": lambda s: mod.bcoo_concatenate([s, s], dimension=1),
        "reshape": lambda s: mod.bcoo_reshape(s, new_sizes=(3, 8)),
        "squeeze": lambda s: mod.bcoo_squeeze(s[:1], dimensions=(0,)),
        "sum_duplicates": lambda s: mod.bcoo_sum_duplicates(s + s, nse=2 * s.nse),
        "sort_indices": lambda s: mod.bcoo_sort_indices(s),
        "extract": lambda s: mod.bcoo_extract(s, jnp_mod.asarray(X * 2 + 1)),
        "update_layout": lambda s: mod.bcoo_update_layout(s, n_batch=0, n_dense=0),
    }


RNG_T = RNG.randn(5, 3).astype(np.float32)
B3 = RNG.randn(3, 4, 6).astype(np.float32)
NUMPY = {
    "todense": lambda x: x, "transpose": lambda x: x.transpose(1, 0, 2),
    "matmul": lambda x: x @ Y, "rmatmul": lambda x: np.einsum("ab,bcd->acd", RNG_T, x),
    "dot_general_batch": lambda x: np.einsum("bkd,bke->bde", x, B3),
    "spsp": lambda x: np.einsum("akd,bkd->ab", x, x),
    "mul_scalar": lambda x: x * 3, "mul_dense": lambda x: x * (X + 1),
    "mul_sparse": lambda x: x * x, "neg": lambda x: -x, "add_sparse": lambda x: x + x,
    "sum_axis": lambda x: x.sum(1), "sum_all": lambda x: x.sum(),
    "slice": lambda x: x[1:3, 1:4:2], "dynamic_slice": lambda x: x[1:3, 2:4],
    "getitem": lambda x: x[1], "broadcast": lambda x: np.broadcast_to(x, (2,) + x.shape),
    "concatenate": lambda x: np.concatenate([x, x], 1), "reshape": lambda x: x.reshape(3, 8),
    "squeeze": lambda x: x[0], "sum_duplicates": lambda x: 2 * x,
    "sort_indices": lambda x: x, "extract": lambda x: (x != 0).any(-1, keepdims=True) *
    (X * 2 + 1), "update_layout": lambda x: x,
}
OPS = sorted(NUMPY)
JAX_DENSE = {"spsp": lambda x: jjnp.einsum("akd,bkd->ab", x, x),
             "reshape": lambda x: x.reshape(3, 8),
             "matmul": lambda x: x @ Y,
             "rmatmul": lambda x: jjnp.einsum("ab,bcd->acd", RNG_T, x),
             "transpose": lambda x: x.transpose(1, 0, 2),
             "dot_general_batch": lambda x: jjnp.einsum("bkd,bke->bde", x, B3)}
M_OPS, J_OPS = _pair(msparse, mjnp), _pair(jsparse, jjnp)


def _numpy(op, x, layout):
    if op == "transpose" and layout[1]:
        return x
    if op == "extract":     # stored blocks: (batch, sparse) positions that hold a nonzero
        return (x != 0).any(-1, keepdims=True) * (X * 2 + 1) if layout[1] else \
            (x != 0) * (X * 2 + 1)
    return NUMPY[op](x)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", OPS)
def test_bcoo_op_eager_and_jit(op, layout):
    nb, nd = layout
    if op == "dot_general_batch" and nd:
        pytest.skip("contracting a dense dimension of 2 with 4: shapes differ by design")
    ours = msparse.BCOO.fromdense(X, n_batch=nb, n_dense=nd)
    theirs = jsparse.BCOO.fromdense(X, n_batch=nb, n_dense=nd)
    want = _numpy(op, X, layout)
    got = _dense(M_OPS[op](ours))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    try:
        ref = _dense(J_OPS[op](theirs))
    except (NotImplementedError, ValueError, TypeError, AssertionError):
        ref = None      # (JAX refuses some layouts mjax takes)
    if ref is not None:
        np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-5)
    jitted = mjax.jit(lambda s: M_OPS[op](s))(ours)
    np.testing.assert_allclose(_dense(jitted), want, rtol=1e-5, atol=1e-5)


GRAD_OPS = ["todense", "matmul", "rmatmul", "mul_dense", "mul_sparse", "sum_axis", "slice",
            "dynamic_slice", "broadcast", "concatenate", "reshape", "spsp", "transpose",
            "dot_general_batch", "sum_duplicates", "update_layout"]


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("op", GRAD_OPS if FULL else GRAD_OPS[:8] + ["spsp", "reshape"])
def test_bcoo_op_grad_wrt_data(op, layout):
    nb, nd = layout
    if op == "dot_general_batch" and nd:
        pytest.skip("shapes differ by design")
    ours = msparse.BCOO.fromdense(X, n_batch=nb, n_dense=nd)
    theirs = jsparse.BCOO.fromdense(X, n_batch=nb, n_dense=nd)
    w = RNG.randn(*np.shape(_numpy(op, X, layout))).astype(np.float32)

    def loss(mod, ops, jn, s):
        return lambda d: (jn.asarray(w) * mod.todense(ops[op](
            mod.BCOO((d, s.indices), shape=s.shape)))).sum()
    g = mjax.grad(loss(msparse, M_OPS, mjnp, ours))(ours.data)
    try:
        ref = jax.grad(loss(jsparse, J_OPS, jjnp, theirs))(theirs.data)
    except (NotImplementedError, ValueError, TypeError, AssertionError):  # JAX lacks it
        ref = jax.grad(lambda d: (w * JAX_DENSE[op](jsparse.BCOO(
            (d, theirs.indices), shape=X.shape).todense())).sum())(theirs.data)
    # (padding elements' gradients are a convention: JAX's concatenate moves its first
    # operand's padding into the second's range, where its zeros then count)
    idx = np.asarray(theirs.indices)
    stored = (idx < np.array(X.shape[nb:X.ndim - nd])).all(-1)
    stored = np.broadcast_to(stored.reshape(stored.shape + (1,) * nd), np.shape(g))
    np.testing.assert_allclose(np.where(stored, np.asarray(g), 0),
                               np.where(stored, np.asarray(ref), 0), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", ["todense", "matmul", "mul_dense", "mul_sparse", "sum_axis",
                                "slice", "add_sparse", "neg", "spsp", "extract",
                                "sum_duplicates"])
def test_bcoo_op_under_vmap(op):
    """vmap over a leading batch dimension of the sparse operand (n_batch=1 outside)."""
    stack = np.stack([X, X[::-1] * 2])
    outer = msparse.BCOO.fromdense(stack, n_batch=1)
    if op in ("extract", "mul_dense"):
        pytest.skip("the dense operand's shape is that of one element")
    got = mjax.vmap(lambda s: mjnp.asarray(_dense_or(M_OPS[op](s))))(outer)
    want = np.stack([_numpy(op, x, (0, 0)) for x in stack])
    np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)


def _dense_or(x):
    return x.todense() if hasattr(x, "todense") else x


@pytest.mark.parametrize("layout", [(0, 0), (1, 0), (2, 0), (0, 1), (1, 1), (2, 1)]
                         if FULL else LAYOUTS)
def test_fromdense_layouts_match_jax(layout):
    nb, nd = layout
    a = msparse.BCOO.fromdense(X, n_batch=nb, n_dense=nd)
    b = jsparse.BCOO.fromdense(X, n_batch=nb, n_dense=nd)
    assert (a.n_batch, a.n_dense, a.nse) == (b.n_batch, b.n_dense, b.nse)
    np.testing.assert_array_equal(np.asarray(a.indices), np.asarray(b.indices))
    np.testing.assert_array_equal(np.asarray(a.data), np.asarray(b.data))
    c = mjax.jit(lambda x: msparse.BCOO.fromdense(x, nse=a.nse, n_batch=nb, n_dense=nd))(X)
    np.testing.assert_array_equal(np.asarray(c.indices), np.asarray(b.indices))


def test_sum_duplicates_and_sort_match_jax():
    idx = np.array([[2, 1], [0, 0], [2, 1], [3, 3], [0, 0]], np.int32)   # [3, 3]: padding
    data = np.arange(1, 6, dtype=np.float32)
    ours = msparse.BCOO((data, idx), shape=(3, 3))
    theirs = jsparse.BCOO((data, idx), shape=(3, 3))
    for f in (lambda m: m.sum_duplicates(), lambda m: m.sort_indices()):
        a, b = f(ours), f(theirs)
        np.testing.assert_array_equal(np.asarray(a.indices), np.asarray(b.indices))
        np.testing.assert_array_equal(np.asarray(a.data), np.asarray(b.data))


def test_constructors():
    for k in (-1, 0, 2):
        np.testing.assert_array_equal(np.asarray(msparse.eye(3, 4, k).todense()),
                                      np.asarray(jsparse.eye(3, 4, k).todense()))
    e = msparse.empty((2, 3), n_batch=1, nse=2)
    assert (e.shape, e.n_batch, e.nse) == ((2, 3), 1, 2)
    np.testing.assert_array_equal(np.asarray(e.todense()), np.zeros((2, 3)))
    r = msparse.random_bcoo(mjax.random.key(0), (5, 6), nse=0.3, n_batch=1)
    j = jsparse.random_bcoo(jax.random.key(0), (5, 6), nse=0.3, n_batch=1)
    assert (r.shape, r.nse, r.n_batch) == (j.shape, j.nse, j.n_batch)
    assert all(len({tuple(i) for i in row}) == r.nse for row in np.asarray(r.indices))


def test_errors_name_the_problem():
    m = msparse.BCOO.fromdense(X)
    with pytest.raises(TypeError, match=r"\(3, 4, 2\)"):
        m @ np.ones((3, 3), np.float32)
    with pytest.raises(ValueError, match="nse must be given"):
        mjax.jit(lambda x: msparse.BCOO.fromdense(x))(X)
    with pytest.raises(NotImplementedError, match="bcoo_dot_general"):
        msparse.bcoo_dot_general_p.bind()
    with pytest.raises(ValueError, match="do not fit"):
        msparse.bcoo_slice(m, start_indices=(0, 0, 0), limit_indices=(9, 1, 1))
