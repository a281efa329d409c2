"""jnp.dot / matmul / @ / vdot / inner on rank-1 operands: one dot_general on the vector
itself, as JAX emits (no reshape to a matrix), with values, derivatives and batching
checked against jax."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp

SHAPES = [((5, 4), (4,)), ((4,), (4, 5)), ((4,), (4,)), ((2, 3, 4), (4,)),
          ((4,), (2, 4, 5)), ((3, 4), (4, 5)), ((2, 3, 4), (2, 4, 5))]


def _args(sa, sb, dtype=np.float32):
    r = np.random.RandomState(len(sa) * 10 + len(sb))
    return r.randn(*sa).astype(dtype), r.randn(*sb).astype(dtype)


def _everything(J, np_, fn, a, b):
    f = getattr(np_, fn)

    def loss(a, b):
        return np_.sum(np_.sin(f(a, b)))
    out = [f(a, b), *J.grad(loss, argnums=(0, 1))(a, b),
           J.jvp(f, (a, b), (2 * a, -b))[1],
           J.vmap(f, in_axes=(0, None))(np.stack([a, 2 * a]), b),
           J.vmap(f, in_axes=(None, 0))(a, np.stack([b, 3 * b])),
           *J.vmap(J.grad(loss, argnums=(0, 1)))(np.stack([a, 2 * a]), np.stack([b, 3 * b]))]
    return [np.asarray(x) for x in out]


@pytest.mark.parametrize("fn", ["dot", "matmul"])
@pytest.mark.parametrize("sa,sb", SHAPES)
def test_values_grads_batching_match_jax(fn, sa, sb):
    a, b = _args(sa, sb)
    for got, want in zip(_everything(mjax, jnp, fn, a, b), _everything(jax, jjnp, fn, a, b)):
        assert got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("f", [lambda np_: np_.dot, lambda np_: np_.matmul,
                               lambda np_: (lambda a, b: a @ b), lambda np_: np_.inner,
                               lambda np_: np_.vdot])
@pytest.mark.parametrize("sa,sb", [((5, 4), (4,)), ((4,), (4, 5)), ((4,), (4,)),
                                   ((4,), (2, 4, 5))])
def test_one_dot_general_on_the_vector(f, sa, sb):
    a, b = _args(sa, sb)
    if f(jjnp) is jjnp.inner and len(sa) > 1 and len(sb) > 1:
        pytest.skip("inner contracts the last axes")
    try:
        want = str(jax.make_jaxpr(f(jjnp))(a, b))
    except (TypeError, ValueError):
        pytest.skip("jax rejects these shapes for this function")
    got = str(mjax.make_jaxpr(f(jnp))(a, b))
    assert got.count("dot_general") == want.count("dot_general") == 1
    assert ("reshape" in got) == ("reshape" in want)
    dn = want.split("dimension_numbers=")[1].split("\n")[0]
    assert dn in got


@pytest.mark.parametrize("dtype", [np.int32, np.complex64])
def test_vector_products_of_other_dtypes(dtype):
    a, b = _args((3, 4), (4,), dtype)
    for fn in ("dot", "matmul", "vdot"):
        x, y = (a[0], b) if fn == "vdot" else (a, b)
        np.testing.assert_allclose(getattr(jnp, fn)(x, y), getattr(jjnp, fn)(x, y),
                                   rtol=1e-5)


def test_contracting_size_mismatch_is_a_type_error():
    # (JAX's words: its dot_general's, naming the contracting sizes)
    with pytest.raises(TypeError, match=r"dot_general requires contracting dimensions to "
                                        r"have the same shape, got \(4,\) and \(3,\)"):
        jnp.ones((5, 4)) @ jnp.ones(3)
