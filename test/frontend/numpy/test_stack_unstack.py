"""lax.stack / lax.unstack as the `stack` and `unstack` primitives (jaxpr.stack,
jaxpr.unstack), against jax: printed jaxprs of jnp.stack, lax.unstack and their grad and
vmap; values under jit, grad, vmap and jvp for several dtypes and axes; errors' classes."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp
from mjax import lax as mlax

RNG = np.random.default_rng(3)
DTYPES = [np.float32, np.int32, np.bool_, np.float16, np.complex64, np.uint8]


def rand(shape, dtype=np.float32):
    x = RNG.standard_normal(shape) * 4
    if np.issubdtype(dtype, np.complexfloating):
        x = x + 1j * RNG.standard_normal(shape)
    return (x > 0 if dtype == np.bool_ else x).astype(dtype)


def jaxpr_texts(f_jax, f_mjax, *args):
    return str(mjax.make_jaxpr(f_mjax)(*args)), str(jax.make_jaxpr(f_jax)(*args))


def assert_same_jaxpr(f_jax, f_mjax, *args):
    mine, theirs = jaxpr_texts(f_jax, f_mjax, *args)
    assert mine == theirs


def assert_tree_close(got, want):
    got_l, want_l = jax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got_l) == len(want_l)
    for g, w in zip(got_l, want_l):
        assert np.asarray(g).dtype == np.asarray(w).dtype
        assert np.asarray(g).shape == np.asarray(w).shape
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


# ---- printed jaxprs -------------------------------------------------------------------------
X3, Y3 = rand((3,)), rand((3,))
M23 = rand((2, 3))
JAXPR_CASES = {
    "jnp_stack_axis1": (lambda np_: lambda a, b: np_.stack([a, b], axis=1), (X3, Y3)),
    "jnp_stack_neg_axis": (lambda np_: lambda a, b: np_.stack([a, b], axis=-1), (M23, M23)),
    "jnp_stack_mixed_dtypes": (lambda np_: lambda a, b: np_.stack([a, b]),
                               (X3, np.arange(3, dtype=np.int32))),
    "jnp_stack_dtype": (lambda np_: lambda a, b: np_.stack([a, b], dtype=np_.int32),
                        (X3, np.arange(3, dtype=np.int32))),
    "jnp_stack_weak_scalar": (lambda np_: lambda a, b: np_.stack([a, b]),
                              (1.0, np.int32(2))),
    "jnp_stack_one_array": (lambda np_: lambda a: np_.stack(a, axis=1), (rand((2, 3, 4)),)),
    "jnp_stack_single": (lambda np_: lambda a: np_.stack([a]), (M23,)),
    "jnp_stack_python_scalars": (lambda np_: lambda a: np_.stack([a, 2.0, 3]), (1.0,)),
    "jnp_unstack": (lambda np_: lambda a: np_.unstack(a, axis=-1), (M23,)),
    "lax_stack_constants": (lambda np_: lambda a: _lax(np_).stack([a, np.ones(3, np.float32),
                                                                   2.0 + a]), (X3,)),
    "lax_stack_python_scalar": (lambda np_: lambda a: _lax(np_).stack([a, 2.0]), (1.0,)),
    "lax_unstack_constant": (lambda np_: lambda a: _lax(np_).unstack(M23 + 0), (X3,)),
}


def _lax(np_):
    return jax.lax if np_ is jnp else mlax


@pytest.mark.parametrize("name", sorted(JAXPR_CASES))
def test_jnp_jaxpr_matches_jax(name):
    make, args = JAXPR_CASES[name]
    assert_same_jaxpr(make(jnp), make(mnp), *args)


@pytest.mark.parametrize("axis", [0, 1, -1, -2])
def test_lax_unstack_and_stack_jaxprs(axis):
    assert_same_jaxpr(lambda a: jax.lax.unstack(a, axis=axis),
                      lambda a: mlax.unstack(a, axis=axis), M23)
    assert_same_jaxpr(lambda a, b: jax.lax.stack([a, b, a], axis=axis),
                      lambda a, b: mlax.stack([a, b, a], axis=axis), M23, M23)


def test_grad_jaxprs_transpose_to_each_other():
    f = lambda L: lambda x: L.stack([x, x * 2]).sum()  # noqa: E731
    assert_same_jaxpr(jax.grad(f(jax.lax)), mjax.grad(f(mlax)), X3)
    # (an unused unstack result: its zero cotangent, a broadcast zero, is stacked)
    g = lambda L: lambda a: L.unstack(a, axis=1)[0].sum()  # noqa: E731
    assert_same_jaxpr(jax.grad(g(jax.lax)), mjax.grad(g(mlax)), M23)


@pytest.mark.parametrize("in_axes", [(1, None), (0, 0), (1, 1), (0, 1)])
def test_vmap_stack_jaxpr(in_axes):
    f = lambda L: lambda a, b: L.stack([a, b], axis=0)  # noqa: E731
    b = rand((3,)) if in_axes[1] is None else (M23 if in_axes[1] == 0 else M23.T)
    a = M23.T if in_axes[0] == 1 else M23
    assert_same_jaxpr(jax.vmap(f(jax.lax), in_axes), mjax.vmap(f(mlax), in_axes), a, b)


@pytest.mark.parametrize("in_axis,axis", [(0, 0), (1, 0), (1, 1), (2, -1)])
def test_vmap_unstack_jaxpr(in_axis, axis):
    x = rand((2, 3, 4))
    f = lambda L: lambda a: L.unstack(a, axis=axis)  # noqa: E731
    assert_same_jaxpr(jax.vmap(f(jax.lax), in_axis), mjax.vmap(f(mlax), in_axis), x)


# ---- values ---------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -3])
def test_stack_values_under_jit(dtype, axis):
    xs = [rand((2, 3), dtype) for _ in range(3)]
    want = jax.jit(lambda *a: jax.lax.stack(a, axis=axis))(*xs)
    got = mjax.jit(lambda *a: mlax.stack(a, axis=axis))(*xs)
    assert_tree_close(got, want)
    assert_tree_close(mnp.stack(xs, axis=axis), jnp.stack(xs, axis=axis))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axis", [0, 1, 2, -1, -2])
def test_unstack_values_under_jit(dtype, axis):
    x = rand((2, 3, 4), dtype)
    want = jax.jit(lambda a: jax.lax.unstack(a, axis=axis))(x)
    got = mjax.jit(lambda a: mlax.unstack(a, axis=axis))(x)
    assert isinstance(got, tuple)
    assert_tree_close(got, want)
    assert_tree_close(mlax.unstack(x, axis=axis), jax.lax.unstack(x, axis=axis))
    assert_tree_close(mnp.unstack(x, axis=axis), jnp.unstack(x, axis=axis))


def test_unstack_of_a_size_0_and_size_1_axis():
    assert mlax.unstack(np.zeros((0, 3), np.float32)) == ()
    assert_tree_close(mlax.unstack(np.ones((1, 3), np.float32)),
                      jax.lax.unstack(np.ones((1, 3), np.float32)))
    assert_tree_close(mjax.jit(mlax.unstack)(np.ones((1, 3), np.float32)),
                      jax.jit(jax.lax.unstack)(np.ones((1, 3), np.float32)))


@pytest.mark.parametrize("dtype", [np.float32, np.complex64], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_grad_and_jvp_values(dtype, axis):
    x, y = rand((2, 3), dtype), rand((2, 3), dtype)
    w = rand((2, 2, 3) if axis in (0, 1) else (2, 3, 2))

    def loss(L):
        def f(a, b):
            s = L.stack([a, b * b], axis=axis)
            parts = L.unstack(s * w, axis=axis)
            return jnp.real(parts[1] * 3 + parts[0]).sum() if L is jax.lax else \
                mnp.real(parts[1] * 3 + parts[0]).sum()
        return f
    assert_tree_close(mjax.grad(loss(mlax), (0, 1))(x, y), jax.grad(loss(jax.lax), (0, 1))(x, y))
    f = lambda L: lambda a: L.unstack(L.stack([a, a * a], axis=axis), axis=axis)  # noqa: E731
    assert_tree_close(mjax.jvp(f(mlax), (x,), (y,)), jax.jvp(f(jax.lax), (x,), (y,)))


@pytest.mark.parametrize("in_axes", [(0, 0), (1, 0), (None, 1), (1, None)])
@pytest.mark.parametrize("axis", [0, 1, -1])
def test_vmap_values(in_axes, axis):
    # per example: shape (4,); 5 examples along the mapped axis
    a, b = ({None: rand((4,)), 0: rand((5, 4)), 1: rand((4, 5))}[d] for d in in_axes)
    f = lambda L: lambda u, v: L.stack([u, v, u], axis=axis)  # noqa: E731
    assert_tree_close(mjax.vmap(f(mlax), in_axes)(a, b), jax.vmap(f(jax.lax), in_axes)(a, b))
    g = lambda L: lambda u: L.unstack(u, axis=axis)  # noqa: E731
    x = rand((2, 3, 4))
    for in_axis in (0, 1, 2):
        assert_tree_close(mjax.vmap(g(mlax), in_axis)(x), jax.vmap(g(jax.lax), in_axis)(x))


def test_grad_of_vmap_and_vmap_of_grad():
    xs = rand((2, 3, 4))
    f = lambda L: lambda a: (L.stack(L.unstack(a)[::-1], axis=1) ** 2 * a.T).sum()  # noqa: E731
    assert_tree_close(mjax.vmap(mjax.grad(f(mlax)))(xs), jax.vmap(jax.grad(f(jax.lax)))(xs))
    assert_tree_close(mjax.grad(lambda a: mjax.vmap(f(mlax))(a).sum())(xs),
                      jax.grad(lambda a: jax.vmap(f(jax.lax))(a).sum())(xs))


def test_primitives_and_params():
    assert mlax.stack_p.name == jax.lax.stack_p.name == "stack"
    assert mlax.unstack_p.name == jax.lax.unstack_p.name == "unstack"
    assert mlax.unstack_p.multiple_results == jax.lax.unstack_p.multiple_results
    assert mlax.stack_p.multiple_results == jax.lax.stack_p.multiple_results
    [eqn] = mjax.make_jaxpr(lambda a: mlax.unstack(a, axis=1))(M23).eqns
    [jeqn] = jax.make_jaxpr(lambda a: jax.lax.unstack(a, axis=1))(M23).eqns
    assert eqn.primitive.name == jeqn.primitive.name and dict(eqn.params) == dict(jeqn.params)
    assert_tree_close(mlax.unstack_p.bind(M23, axis=0), jax.lax.unstack_p.bind(M23, axis=0))
    assert_tree_close(mlax.stack_p.bind(X3, Y3, axis=1), jax.lax.stack_p.bind(X3, Y3, axis=1))


def test_key_arrays_stack_and_unstack():
    k = jax.random.split(jax.random.key(0))
    mk = mjax.random.split(mjax.random.key(0))
    got = mlax.stack([mk[0], mk[1]], axis=0)
    want = jax.lax.stack([k[0], k[1]], axis=0)
    np.testing.assert_array_equal(mjax.random.key_data(got), jax.random.key_data(want))
    parts = mlax.unstack(mk)
    assert len(parts) == 2
    for p, q in zip(parts, jax.lax.unstack(k)):
        np.testing.assert_array_equal(mjax.random.key_data(p), jax.random.key_data(q))


# ---- errors ---------------------------------------------------------------------------------
ERROR_CASES = {
    "lax_stack_shapes": lambda L, np_: L.stack([np_.ones(2), np_.ones(3)]),
    "lax_stack_ranks": lambda L, np_: L.stack([np_.ones(2), np_.ones((2, 1))]),
    "lax_stack_dtypes": lambda L, np_: L.stack([np_.ones(2), np_.ones(2, np_.int32)]),
    "lax_stack_axis": lambda L, np_: L.stack([np_.ones(2)], axis=2),
    "lax_stack_neg_axis": lambda L, np_: L.stack([np_.ones(2)], axis=-3),
    "lax_stack_empty": lambda L, np_: L.stack([]),
    "lax_unstack_axis": lambda L, np_: L.unstack(np_.ones(2), axis=1),
    "lax_unstack_scalar": lambda L, np_: L.unstack(np_.ones(())),
    "jnp_stack_empty": lambda L, np_: np_.stack([]),
    "jnp_stack_shapes": lambda L, np_: np_.stack([np_.ones(2), np_.ones(3)]),
    "jnp_stack_axis": lambda L, np_: np_.stack([np_.ones(2)], axis=-3),
    "jnp_stack_out": lambda L, np_: np_.stack([np_.ones(2)], out=np_.ones((1, 2))),
    "jnp_unstack_scalar": lambda L, np_: np_.unstack(np_.ones(())),
    "jit_stack_shapes": lambda L, np_: (jax.jit if L is jax.lax else mjax.jit)(
        lambda: L.stack([np_.ones(2), np_.ones(3)]))(),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_have_jax_classes(name):
    case = ERROR_CASES[name]
    with pytest.raises(Exception) as want:
        case(jax.lax, jnp)
    with pytest.raises(Exception) as got:
        case(mlax, mnp)
    assert isinstance(got.value, type(want.value)), (got.value, want.value)
    # JAX's words (mjax adds the user's line)
    if name.startswith(("lax_stack_shapes", "lax_stack_ranks", "jnp_stack_shapes")):
        assert str(want.value) in str(got.value)
