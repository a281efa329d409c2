"""lax.split as the `split` primitive (jaxpr.split), against jax: printed jaxprs of
lax.split and of its grad and vmap; values of jnp.split and its relatives under jit, grad,
vmap and jvp; errors; and the point of the primitive: the gradient of a split is one
concatenate, not a pad per piece added up (which XLA runs as several full-size writes)."""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp
from mjax import lax as mlax

from test_stack_unstack import assert_tree_close

RNG = np.random.default_rng(5)


def rand(shape, dtype=np.float32):
    x = RNG.standard_normal(shape) * 3
    return (x > 0 if dtype == np.bool_ else x).astype(dtype)


def jaxpr_text(make, lib, *args):
    text = str(lib.make_jaxpr(make(lib))(*args))
    if "np.int64(" in text:
        # JAX's jnp.split passes NumPy integers as sizes, printed as np.int64(2), which
        # makes the line long enough to wrap: as the same equation with ints prints
        text = re.sub(r"np\.int64\((-?\d+)\)", r"\1", text)
        text = re.sub(r"\[\n\s+(axis=\d+)\n\s+(sizes=\([^)]*\))\n\s+\]", r"[\1 \2]", text)
    return text


X6, M26, T234 = rand((6,)), rand((2, 6)), rand((2, 3, 4))
JAXPR_CASES = {
    "lax_split": (lambda lib: lambda x: lib.lax.split(x, [1, 3, 2]), (X6,)),
    "lax_split_axis": (lambda lib: lambda x: lib.lax.split(x, (2, 4), axis=1), (M26,)),
    "lax_split_neg_axis": (lambda lib: lambda x: lib.lax.split(x, [3, 1], axis=-1), (T234,)),
    "jnp_split": (lambda lib: lambda x: lib.numpy.split(x, 3, axis=-1), (M26,)),
    "jnp_split_indices": (lambda lib: lambda x: lib.numpy.split(x, [1, 4]), (X6,)),
    "jnp_array_split": (lambda lib: lambda x: lib.numpy.array_split(x, 4), (X6,)),
    "grad_one_piece": (lambda lib: lib.grad(lambda x: lib.numpy.split(x, 3)[1].sum()),
                       (X6,)),
    "grad_all_pieces": (lambda lib: lib.grad(
        lambda x: sum((p ** 2).sum() for p in lib.numpy.split(x, [2, 3], axis=1))), (M26,)),
    "vmap_split": (lambda lib: lib.vmap(lambda x: lib.numpy.split(x, [1, 4])), (M26,)),
    "vmap_split_axis1": (lambda lib: lib.vmap(lambda x: lib.lax.split(x, [1, 3], axis=1),
                                              in_axes=1), (T234,)),
    "jvp_split": (lambda lib: lambda x: lib.jvp(lambda y: lib.lax.split(y, [4, 2]), (x,),
                                                (x,)), (X6,)),
}


@pytest.mark.parametrize("name", JAXPR_CASES)
def test_jaxpr_as_jax_prints_it(name):
    make, args = JAXPR_CASES[name]
    mine = jaxpr_text(make, mjax, *args)
    assert "split[" in mine
    assert mine == jaxpr_text(make, jax, *args)


VALUE_CASES = {
    "split_f32": (lambda np_: lambda x: np_.split(x, 2, axis=1), rand((3, 4))),
    "split_i32": (lambda np_: lambda x: np_.split(x, [1, 1, 3]), rand((5,), np.int32)),
    "split_bool": (lambda np_: lambda x: np_.split(x, 2), rand((4, 2), np.bool_)),
    "array_split_uneven": (lambda np_: lambda x: np_.array_split(x, 3, axis=-1),
                           rand((2, 7))),
    "hsplit": (lambda np_: lambda x: np_.hsplit(x, 2), rand((2, 4, 3))),
    "vsplit": (lambda np_: lambda x: np_.vsplit(x, [1]), rand((3, 2))),
    "dsplit": (lambda np_: lambda x: np_.dsplit(x, 3), rand((2, 2, 6))),
    "empty_piece": (lambda np_: lambda x: np_.split(x, [0, 2, 2]), rand((4,))),
}


@pytest.mark.parametrize("name", VALUE_CASES)
@pytest.mark.parametrize("how", ["eager", "jit"])
def test_values_as_jax(name, how):
    make, x = VALUE_CASES[name]
    f_m, f_j = make(mnp), make(jnp)
    if how == "jit":
        f_m, f_j = mjax.jit(f_m), jax.jit(f_j)
    assert_tree_close(f_m(x), f_j(x))


def _weighted(np_):
    def f(x):
        pieces = np_.split(x, [1, 3], axis=1)
        return sum((w * np_.sin(p)).sum() for w, p in zip((1.0, -2.0, 3.0), pieces))
    return f


def test_grad_vmap_jvp_as_jax():
    x = rand((4, 5))
    assert_tree_close(mjax.grad(_weighted(mnp))(x), jax.grad(_weighted(jnp))(x))
    xs = rand((3, 4, 5))
    assert_tree_close(mjax.vmap(mjax.grad(_weighted(mnp)))(xs),
                      jax.vmap(jax.grad(_weighted(jnp)))(xs))
    t = rand((4, 5))
    assert_tree_close(mjax.jvp(lambda y: mnp.split(y, 5, axis=1), (x,), (t,)),
                      jax.jvp(lambda y: jnp.split(y, 5, axis=1), (x,), (t,)))
    # (second order: the transpose's concatenate is itself differentiated)
    h = lambda np_, lib: lib.hessian(lambda y: (np_.split(y, [2])[1] ** 3).sum())  # noqa: E731
    y = rand((5,))
    assert_tree_close(h(mnp, mjax)(y), h(jnp, jax)(y))


def test_gradient_is_one_concatenate_without_pads():
    def loss(np_):
        return lambda w, x: sum(((x @ p) ** 2).sum() for p in np_.split(w, 3, axis=1))
    w, x = rand((8, 12)), rand((5, 8))
    text = mjax.jit(mjax.grad(loss(mnp))).lower(w, x).as_text()
    assert "stablehlo.pad" not in text
    assert text.count("stablehlo.concatenate") == 1
    np.testing.assert_allclose(mjax.jit(mjax.grad(loss(mnp)))(w, x),
                               jax.jit(jax.grad(loss(jnp)))(w, x), rtol=1e-5)


def test_split_p_is_the_primitive():
    assert mlax.split_p.name == "split" and mlax.split_p.multiple_results
    out = mlax.split_p.bind(mnp.arange(6.0), sizes=(2, 4), axis=0)
    assert [o.shape for o in out] == [(2,), (4,)]


def test_typed_keys_split_as_jax():
    km, kj = mjax.random.split(mjax.random.key(1), 6), jax.random.split(jax.random.key(1), 6)
    got = [mjax.random.key_data(k) for k in mnp.split(km, [2, 5])]
    want = [jax.random.key_data(k) for k in jnp.split(kj, [2, 5])]
    assert_tree_close(got, want)


@pytest.mark.parametrize("sizes, axis, err, words", [
    ([2, 2], 0, ValueError, "Sum of sizes 4 must be equal to dimension 6"),
    ([7, -1], 0, ValueError, "Sizes passed to split must be nonnegative"),
    ([6], 1, ValueError, "out of bounds"),
])
def test_errors_as_jax(sizes, axis, err, words):
    x = np.arange(6.0, dtype=np.float32)
    with pytest.raises(err, match=words):
        mlax.split(x, sizes, axis)
    with pytest.raises(err):
        jax.lax.split(x, sizes, axis)
