"""mjax.numpy functions whose output shape depends on values (nonzero, one-argument where,
unique, repeat, arange, boolean masks, set operations, shapes and axes given as traced
ints...) work inside grad & co. called outside jit, where JAX knows the values, and raise
JAX's error classes under jit and vmap. Every case runs with real jax and with mjax;
values (or error classes) must agree."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mjnp

BOTH = [(jax, jjnp), (mjax, mjnp)]
X3 = np.array([1., -2., 3.], np.float32)
X4 = np.array([1., 2., 1., 3.], np.float32)


def _outcome(case, lib, jnp):
    try:
        out = case(lib, jnp)
    except Exception as e:  # noqa: BLE001 - the class is what is compared
        return "error", e
    return "ok", jax.tree_util.tree_map(np.asarray, out)


def check_same(case):
    (kind_j, theirs), (kind_m, mine) = (_outcome(case, *b) for b in BOTH)
    if kind_j == "error":
        assert kind_m == "error", f"jax raised {type(theirs).__name__}; mjax returned {mine}"
        names = [c.__name__ for c in type(mine).__mro__]
        assert type(theirs).__name__ in names, (theirs, mine)
        return
    if kind_m == "error":
        raise AssertionError(f"jax returned {theirs}; mjax raised") from mine
    leaves_j, leaves_m = jax.tree_util.tree_leaves(theirs), jax.tree_util.tree_leaves(mine)
    assert len(leaves_j) == len(leaves_m)
    for a, b in zip(leaves_m, leaves_j):
        assert np.shape(a) == np.shape(b), (a, b)
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


def _arr(jnp, x):
    return jnp.asarray(x)


# ---- inside an eager grad: JAX knows the values ----------------------------------------
EAGER = {
    "nonzero": lambda L, J: L.grad(lambda x: J.sum(x[J.nonzero(x > 0)[0]]))(_arr(J, X3)),
    "where_one_arg": lambda L, J: L.grad(
        lambda x: J.sum(J.where(x > 0)[0] * x[0]))(_arr(J, X3)),
    "flatnonzero": lambda L, J: L.grad(lambda x: J.sum(x[J.flatnonzero(x > 0)]))(_arr(J, X3)),
    "argwhere": lambda L, J: L.grad(
        lambda x: J.sum(x[J.argwhere(x > 0)[:, 0]]))(_arr(J, X3)),
    "bool_mask": lambda L, J: L.grad(lambda x: J.sum(x[x > 0] ** 2))(_arr(J, X3)),
    "bool_mask_2d": lambda L, J: L.grad(
        lambda x: J.sum(x[x > 0] ** 2))(_arr(J, X3.reshape(3, 1) * X3)),
    "bool_mask_set": lambda L, J: L.grad(
        lambda x: J.sum(x.at[x > 0].set(0.) * x))(_arr(J, X3)),
    "compress": lambda L, J: L.grad(lambda x: J.sum(J.compress(x > 0, x)))(_arr(J, X3)),
    "extract": lambda L, J: L.grad(lambda x: J.sum(J.extract(x > 0, x) ** 2))(_arr(J, X3)),
    "arange_int_arg": lambda L, J: L.grad(lambda x, n: J.sum(J.arange(n) * x))(2., 3),
    "arange_traced": lambda L, J: L.grad(
        lambda x: J.sum(J.arange(x.sum().astype(int)) * x[0]))(_arr(J, [1., 2.])),
    "arange_traced_start_stop": lambda L, J: L.grad(
        lambda x: J.sum(J.arange(x[0].astype(int), x[1].astype(int)) * x[2]))(
        _arr(J, [1., 4., 2.])),
    "unique": lambda L, J: L.value_and_grad(lambda x: J.sum(J.unique(x) ** 2))(_arr(J, X4)),
    "unique_all_outputs": lambda L, J: L.grad(lambda x: sum(
        J.sum(o) for o in J.unique(x, return_index=True, return_inverse=True,
                                   return_counts=True)[1:]) * x[0])(_arr(J, X4)),
    "unique_axis": lambda L, J: L.grad(lambda x: J.sum(J.unique(x, axis=0)))(
        _arr(J, np.array([[1., 2.], [1., 2.], [0., 1.]], np.float32))),
    "unique_values": lambda L, J: L.grad(lambda x: J.sum(J.unique_values(x)))(_arr(J, X4)),
    "unique_counts": lambda L, J: L.grad(
        lambda x: J.sum(J.unique_counts(x)[1] * x[0]))(_arr(J, X4)),
    "union1d": lambda L, J: L.grad(lambda x: J.sum(J.union1d(x, x + 1)))(_arr(J, X3)),
    "setdiff1d": lambda L, J: L.grad(
        lambda x: J.sum(J.setdiff1d(x, J.array([3.])) * x[0]))(_arr(J, X3)),
    "intersect1d": lambda L, J: L.grad(
        lambda x: J.sum(J.intersect1d(x, J.array([3., 1.])) * x[1]))(_arr(J, X3)),
    "setxor1d": lambda L, J: L.grad(
        lambda x: J.sum(J.setxor1d(x, J.array([3., 5.])) * x[1]))(_arr(J, X3)),
    "repeat_array": lambda L, J: L.grad(
        lambda x: J.sum(J.repeat(x, J.array([1, 2, 1])) ** 2))(_arr(J, X3)),
    "repeat_traced": lambda L, J: L.grad(
        lambda x: J.sum(J.repeat(x, (x > 0).astype(int) + 1) ** 2))(_arr(J, X3)),
    "bincount": lambda L, J: L.grad(
        lambda x: J.sum(J.bincount((x > 0).astype(int)) * x[:2]))(_arr(J, X3)),
    "bincount_weights": lambda L, J: L.grad(
        lambda x: J.sum(J.bincount(J.array([0, 2, 2]), weights=x) ** 2))(_arr(J, X3)),
    "delete": lambda L, J: L.grad(lambda x: J.sum(J.delete(x, J.argmax(x)) ** 2))(_arr(J, X3)),
    "insert": lambda L, J: L.grad(
        lambda x: J.sum(J.insert(x, J.argmin(x), 5.) * x[0]))(_arr(J, X3)),
    "trim_zeros": lambda L, J: L.grad(lambda x: J.sum(J.trim_zeros(x) ** 2))(
        _arr(J, [0., 1., -2., 3., 0.])),
    "place": lambda L, J: L.grad(lambda x: J.sum(
        J.place(x, x > 0, J.array([9.]), inplace=False) * x))(_arr(J, X3)),
    "roots": lambda L, J: L.grad(lambda x: J.sum(J.roots(x).real))(_arr(J, [0., 1., -3., 2.])),
    "pad_traced_width": lambda L, J: L.grad(
        lambda x: J.sum(J.pad(x, x[2].astype(int) - 2) ** 2))(_arr(J, X3)),
    "zeros_traced_len": lambda L, J: L.grad(
        lambda x: J.sum(J.zeros(x.sum().astype(int)) + x[0]))(_arr(J, [1., 2.])),
    "zeros_int_of_traced": lambda L, J: L.grad(
        lambda x: J.sum(J.zeros(int(x.sum())) + x[0]))(_arr(J, [1., 2.])),
    "zeros_of_shape": lambda L, J: L.grad(lambda x: J.sum(J.zeros(x.shape[0]) + x))(_arr(J, X3)),
    "full_traced_len": lambda L, J: L.grad(
        lambda x: J.sum(J.full(x.sum().astype(int), x[0])))(_arr(J, [1., 2.])),
    "slice_int_of_traced": lambda L, J: L.grad(lambda x: x[:int(x.sum())].sum())(
        _arr(J, [1., 0., 1., 5.])),
    "tile_traced": lambda L, J: L.grad(lambda x: J.sum(J.tile(x, x[0].astype(int)) ** 2))(
        _arr(J, [2., 3.])),
    "expand_dims_traced": lambda L, J: L.grad(
        lambda x: J.sum(J.expand_dims(x, x[0].astype(int)) ** 2))(_arr(J, [0., 2.])),
    "sum_traced_axis": lambda L, J: L.grad(
        lambda x: (J.sum(x, axis=x[0, 0].astype(int)) ** 2).sum())(
        _arr(J, [[1., 2.], [3., 1.]])),
    "diag_traced_k": lambda L, J: L.grad(lambda x: J.sum(J.diag(x, k=x[0, 0].astype(int))))(
        _arr(J, [[1., 2.], [1., 1.]])),
    "array_split_traced": lambda L, J: L.grad(
        lambda x: J.sum(J.array_split(x, x[0].astype(int))[0] ** 2))(_arr(J, [2., 2., 3.])),
    "choose_raise": lambda L, J: L.grad(lambda x: J.choose(
        (x[:2] > 1).astype(int), [x[:2], x[1:]]).sum())(_arr(J, X3 ** 2)),
    "choose_raise_out_of_range": lambda L, J: L.grad(lambda x: J.choose(
        (x[:2] * 3).astype(int), [x[:2], x[1:]]).sum())(_arr(J, X3 ** 2)),
    "ravel_multi_index_raise": lambda L, J: L.grad(lambda x: x[J.ravel_multi_index(
        ((x - 1).astype(int),), (3,))].sum())(_arr(J, [1., 2., 3.])),
    "ravel_multi_index_out_of_range": lambda L, J: L.grad(lambda x: x[J.ravel_multi_index(
        ((x * 2).astype(int),), (3,))].sum())(_arr(J, [1., 2., 3.])),
    "histogram_traced_bins": lambda L, J: L.grad(lambda x: J.histogram(
        x, bins=x[0].astype(int) + 1)[1].sum())(_arr(J, [1., 2., 3., 4.])),
    "split_traced_sections": lambda L, J: L.grad(
        lambda x: J.split(x, x[0].astype(int) + 1)[0].sum())(_arr(J, [1., 2., 3., 4.])),
    "roll_traced_axis": lambda L, J: L.grad(lambda x: (J.roll(x, 1, axis=x[0, 0].astype(int))
                                                       * J.arange(4.).reshape(2, 2)).sum())(
        _arr(J, [[1., 2.], [3., 4.]])),
    "jacrev_nonzero": lambda L, J: L.jacrev(lambda x: x[J.nonzero(x > 0)[0]])(_arr(J, X3)),
    "jvp_unique": lambda L, J: L.jvp(lambda x: J.unique(x) * x[0], (_arr(J, X4),),
                                     (_arr(J, np.ones(4, np.float32)),)),
    "hessian_bool_mask": lambda L, J: L.hessian(lambda x: J.sum(x[x > 0] ** 3))(_arr(J, X3)),
}


@pytest.mark.parametrize("name", sorted(EAGER))
def test_eager_grad_knows_values(name):
    check_same(EAGER[name])


# ---- under jit / vmap the values are abstract: JAX's errors ------------------------------
ABSTRACT = {
    "nonzero": lambda L, J: L.jit(lambda x: J.nonzero(x > 0))(X3),
    "where_one_arg": lambda L, J: L.jit(lambda x: J.where(x > 0))(X3),
    "arange": lambda L, J: L.jit(lambda n: J.arange(n))(3),
    "unique": lambda L, J: L.jit(lambda x: J.unique(x))(X3),
    "repeat": lambda L, J: L.jit(lambda x, r: J.repeat(x, r))(X3, np.array([1, 2, 1])),
    "zeros": lambda L, J: L.jit(lambda n: J.zeros(n))(3),
    "zeros_tuple": lambda L, J: L.jit(lambda n: J.zeros((n, 2)))(3),
    "full": lambda L, J: L.jit(lambda n: J.full(n, 1.))(3),
    "tile": lambda L, J: L.jit(lambda n: J.tile(J.ones(2), n))(3),
    "expand_dims": lambda L, J: L.jit(lambda n: J.expand_dims(J.ones(2), n))(0),
    "sum_axis": lambda L, J: L.jit(lambda n: J.sum(J.ones((2, 2)), axis=n))(0),
    "array_split": lambda L, J: L.jit(lambda n: J.array_split(J.ones(4), n))(2),
    "diag_k": lambda L, J: L.jit(lambda n: J.diag(J.ones((2, 2)), k=n))(0),
    "pad": lambda L, J: L.jit(lambda n: J.pad(J.ones(2), n))(1),
    "bool_mask": lambda L, J: L.jit(lambda x: x[x > 0])(X3),
    "bincount": lambda L, J: L.jit(lambda x: J.bincount(x))(np.array([0, 1, 1])),
    "delete": lambda L, J: L.jit(lambda x: J.delete(x, J.argmax(x)))(X3),
    "trim_zeros": lambda L, J: L.jit(lambda x: J.trim_zeros(x))(X3),
    "roots": lambda L, J: L.jit(lambda x: J.roots(x))(X3),
    "setdiff1d": lambda L, J: L.jit(lambda x: J.setdiff1d(x, J.array([2.])))(X3),
    "union1d": lambda L, J: L.jit(lambda x: J.union1d(x, x))(X3),
    "grad_of_jit": lambda L, J: L.grad(L.jit(lambda x: J.sum(J.unique(x))))(X3),
    "jit_of_grad": lambda L, J: L.jit(L.grad(lambda x: J.sum(x[J.nonzero(x > 0)[0]])))(X3),
    "vmap": lambda L, J: L.vmap(lambda x: J.sum(x[J.nonzero(x > 0)[0]]))(X3[None]),
    "vmap_in_grad": lambda L, J: L.grad(lambda x: L.vmap(
        lambda r: J.sum(r[J.nonzero(r > 0)[0]]))(x[None]).sum())(X3),
    "cond_body_in_grad": lambda L, J: L.grad(lambda x: L.lax.cond(
        True, lambda v: J.sum(v[v > 0]), lambda v: J.sum(v), x))(X3),
    "vmap_bool_mask": lambda L, J: L.vmap(lambda r: J.sum(r[r > 0]))(X3[None]),
    "compress": lambda L, J: L.jit(lambda x: J.compress(x > 0, x))(X3),
    "choose_raise": lambda L, J: L.jit(lambda a: J.choose(a, [J.zeros(2), J.ones(2)]))(
        np.array([0, 1])),
    "split_traced_sections": lambda L, J: L.jit(lambda n: J.split(J.ones(4), n))(2),
    "ravel_multi_index_raise": lambda L, J: L.jit(lambda a: J.ravel_multi_index(
        (a,), (3,)))(np.array([0, 1])),
    "extract": lambda L, J: L.jit(lambda x: J.extract(x > 0, x))(X3),
}


# ---- under jit, what JAX traces although the values are abstract -------------------------
X23 = np.arange(6.).reshape(2, 3).astype(np.float32)
TRACEABLE = {
    "insert_scalar": lambda L, J: L.jit(lambda x, i: J.insert(x, i, 9.))(X3, 2),
    "insert_negative": lambda L, J: L.jit(lambda x, i: J.insert(x, i, J.array([7., 8.])))(
        X3, -1),
    "insert_clipped": lambda L, J: L.jit(lambda x, i: J.insert(x, i, 1.))(X3, 9),
    "insert_array": lambda L, J: L.jit(lambda x, i: J.insert(x, i, J.array([1., 2., 3.])))(
        X3, np.array([3, 0, 3])),
    "insert_axis0": lambda L, J: L.jit(lambda x, i: J.insert(x, i, J.array([7., 8., 9.]),
                                                             axis=0))(X23, 1),
    "insert_axis1_columns": lambda L, J: L.jit(lambda x, i: J.insert(
        x, i, J.array([[1.], [2.]]), axis=1))(X23, np.array([0, 2])),
    "insert_grad": lambda L, J: L.jit(L.grad(lambda x, i: J.sum(J.insert(x, i, x[0]) ** 2)))(
        X3, 1),
    "place": lambda L, J: [L.jit(lambda x, m, v: J.place(x, m, v, inplace=False))(X23, m, v)
                           for m in (X23 > 2, X23 > 10, X23 % 2 == 0)
                           for v in (np.array([9.]), np.array([1., 2., 3., 4., 5., 6., 7.]))],
    "setdiff1d_size": lambda L, J: L.jit(lambda x: J.setdiff1d(x, J.array([2.]), size=4))(
        np.array([3., 1., 2., 1.], np.float32)),
    "setdiff1d_size_fill": lambda L, J: L.jit(lambda x: J.setdiff1d(
        x, J.array([2.]), size=2, fill_value=7))(np.array([2., 2., 5.], np.float32)),
    "setdiff1d_size_eager_int": lambda L, J: J.setdiff1d(np.array([1, 2, 3, 3]),
                                                         np.array([2]), size=4),
    "insert_out_of_range_eager": lambda L, J: [
        J.insert(J.arange(3.), i, 1.) for i in (9, -9, np.array([5, -7]))],
    "compress_size": lambda L, J: L.jit(lambda x: J.compress(x > 0, x, size=3))(X3),
}


@pytest.mark.parametrize("name", sorted(TRACEABLE))
def test_traceable_under_jit(name):
    check_same(TRACEABLE[name])


@pytest.mark.parametrize("name", sorted(ABSTRACT))
def test_abstract_values_raise_jax_errors(name):
    check_same(ABSTRACT[name])


# ---- a vmap body inside an eager grad: closed-over values are known, mapped ones not ----
def _closure_if(L, J):
    def f(x):
        def body(r):
            if x[0] > 0:
                return r * x[0]
            return r * x[1]
        return L.vmap(body)(J.ones(3)).sum()
    return f


def _mapped_if(L, J):
    def f(x):
        def body(r):
            return r * x[0] if r > 0 else r
        return L.vmap(body)(J.ones(3) * x[1]).sum()
    return f


VMAP_BODY = {
    "closure_if": lambda L, J: [L.grad(_closure_if(L, J))(J.array(v)) for v in
                                ([1., 2.], [-1., 2.])],
    "closure_nonzero": lambda L, J: L.grad(lambda x: L.vmap(
        lambda r: r[J.nonzero(x > 0)[0]].sum())(J.ones((2, 3))).sum() * x[0])(_arr(J, X3)),
    "closure_in_nested_vmap": lambda L, J: L.grad(lambda x: L.vmap(L.vmap(
        lambda r: r * x[0] if x[1] > 0 else r))(J.ones((2, 2))).sum())(_arr(J, [2., 1.])),
    "mapped_if_raises": lambda L, J: L.grad(_mapped_if(L, J))(_arr(J, [2., 1.])),
    "closure_if_under_jit_raises": lambda L, J: L.jit(L.grad(_closure_if(L, J)))(
        _arr(J, [1., 2.])),
    "closure_if_plain_vmap_of_jit_arg_raises": lambda L, J: L.jit(
        lambda x: L.vmap(lambda r: r * x if x > 0 else r)(J.ones(2)))(1.),
}


@pytest.mark.parametrize("name", sorted(VMAP_BODY))
def test_vmap_body_in_eager_grad(name):
    check_same(VMAP_BODY[name])


def test_eager_grad_still_differentiates_through_mask_selection():
    # Finite differences check the derivative of the selected path itself.
    f = lambda x: mjnp.sum(mjnp.sin(x[x > 0]) * mjnp.repeat(x[x > 0], 2)[::2])  # noqa: E731
    x = np.array([0.5, -1.0, 1.5, 2.0], np.float32)
    g = np.asarray(mjax.grad(f)(x))
    eps = 1e-3
    for i in range(4):
        d = np.zeros(4, np.float32)
        d[i] = eps
        fd = (float(f(x + d)) - float(f(x - d))) / (2 * eps)
        np.testing.assert_allclose(g[i], fd, rtol=1e-2, atol=1e-3)


def _numpy_in_custom_vjp(lib, jnp):
    """A custom_vjp whose primal and fwd run NumPy on their arguments (jaxopt's SciPy
    wrappers): JAX runs fwd on the primal values, so NumPy may read them under eager
    grad and jacrev, even of a value computed from the differentiated input."""
    @lib.custom_vjp
    def f(x):
        return jnp.asarray(np.sin(np.asarray(x)))

    def fwd(x):
        return jnp.asarray(np.sin(np.asarray(x))), x
    f.defvjp(fwd, lambda x, g: (g * jnp.cos(x),))
    x = jnp.arange(3.)
    return (lib.grad(lambda x: f(x).sum())(x), lib.jacrev(f)(x),
            lib.jacrev(lambda b: f(b * 2.))(x))


def test_custom_vjp_fwd_sees_primal_values_under_eager_grad():
    check_same(_numpy_in_custom_vjp)
