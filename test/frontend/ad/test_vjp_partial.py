"""The functions vjp and linearize return are `tree_util.Partial` pytrees, as in JAX:
they can be returned from jit, passed into jit, vmapped over and differentiated through.
Values are checked against jax."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp

X = np.array([0.3, -1.2, 2.0], np.float32)
CT = np.array([1.0, 0.5, -2.0], np.float32)


def close(a, b):
    for u, v in zip(jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)):
        np.testing.assert_allclose(np.asarray(u), np.asarray(v), rtol=1e-5, atol=1e-6)


def _apply(f, c):
    return f(c)


def test_vjp_returns_a_partial_pytree():
    _, f_vjp = mjax.vjp(jnp.sin, X)
    assert isinstance(f_vjp, mjax.tree_util.Partial)
    leaves = mjax.tree_util.tree_leaves(f_vjp)
    assert len(leaves) >= 1 and all(hasattr(x, "shape") for x in leaves)


@pytest.mark.parametrize("where", ["eager", "returned_from_jit"])
def test_vjp_function_through_jit(where):
    def f(x, y):
        return jnp.sin(x) * y + x ** 2
    y = np.float32(1.5)
    if where == "eager":
        _, m = mjax.vjp(lambda x: f(x, y), X)
    else:
        m = mjax.jit(lambda x, y: mjax.vjp(lambda a: f(a, y), x)[1])(X, y)
    _, j = jax.vjp(lambda x: jjnp.sin(x) * y + x ** 2, X)
    close(m(CT), j(CT))
    close(mjax.jit(_apply)(m, CT), j(CT))
    close(mjax.vmap(lambda c: m(c))(np.stack([CT, 2 * CT])),
          jax.vmap(lambda c: j(c))(np.stack([CT, 2 * CT])))


def test_vjp_function_closing_over_traced_values_returned_from_jit():
    # The closed-over y is a tracer of the jit: it becomes a leaf of the Partial.
    m = mjax.jit(lambda x, y: mjax.vjp(lambda a: a * y + jnp.cos(a), x)[1])(X, 3.0)
    j = jax.jit(lambda x, y: jax.vjp(lambda a: a * y + jjnp.cos(a), x)[1])(X, 3.0)
    close(m(CT), j(CT))
    close(mjax.jit(_apply)(m, CT), j(CT))


def test_vjp_function_of_pytrees_and_aux():
    def f(p):
        return {"a": p["w"] * 2.0, "b": jnp.sum(p["v"] ** 2)}, p["w"]
    p = {"w": X, "v": CT}
    m = mjax.jit(lambda p: mjax.vjp(f, p, has_aux=True)[1])(p)
    j = jax.vjp(lambda p: ({"a": p["w"] * 2.0, "b": jjnp.sum(p["v"] ** 2)}, p["w"]),
                p, has_aux=True)[1]
    ct = {"a": CT, "b": np.float32(2.0)}
    close(m(ct), j(ct))
    close(mjax.jit(_apply)(m, ct), j(ct))


def test_vjp_function_errors_keep_jax_messages():
    m = mjax.jit(lambda x: mjax.vjp(jnp.sin, x)[1])(X)
    with pytest.raises(TypeError, match="must be called with a single argument"):
        m(CT, CT)
    with pytest.raises(ValueError, match="unexpected JAX type"):
        m(np.ones(4, np.float32))


def test_grad_through_a_vjp_function_passed_to_jit():
    def g(x):
        _, f_vjp = mjax.vjp(jnp.sin, x)
        return jnp.sum(mjax.jit(_apply)(f_vjp, jnp.ones_like(x))[0])

    def gj(x):
        _, f_vjp = jax.vjp(jjnp.sin, x)
        return jjnp.sum(jax.jit(_apply)(f_vjp, jjnp.ones_like(x))[0])
    close(mjax.grad(g)(X), jax.grad(gj)(X))


def test_linearize_function_through_jit():
    m_out, m = mjax.linearize(jnp.tanh, X)
    _, j = jax.linearize(jjnp.tanh, X)
    assert isinstance(m, mjax.tree_util.Partial)
    close(m(CT), j(CT))
    close(mjax.jit(_apply)(m, CT), j(CT))
    m2 = mjax.jit(lambda x: mjax.linearize(jnp.tanh, x)[1])(X)
    close(m2(CT), j(CT))
    with pytest.raises(ValueError, match="inconsistent"):
        m2(np.ones(4, np.float32))


def test_partial_as_in_jax_docs():
    add_one = mjax.tree_util.Partial(jnp.add, 1)
    out = mjax.jit(lambda f, x: f(x))(add_one, 2)
    ref = jax.jit(lambda f, x: f(x))(jax.tree_util.Partial(jjnp.add, 1), 2)
    assert out.dtype == ref.dtype and int(out) == int(ref) and out.weak_type


@pytest.mark.parametrize("where", ["eager", "jit"])
def test_opaque_residuals_are_kept_and_args_res_replaces_only_its_uses(where):
    # JAX's VJP: the residuals the forward computed are `opaque_residuals`; a new
    # args_res value changes only the cotangents that read that argument.
    W1, W2 = np.full((3, 3), 0.5, np.float32), np.arange(9., dtype=np.float32).reshape(3, 3)
    x0 = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    ct = np.ones((2, 3), np.float32)

    def run(lib, jnp_):
        _, f_vjp = lib.vjp(lambda W, x: jnp_.tanh(x @ W), W1, x0)
        n_leaves = len(lib.tree_util.tree_leaves(f_vjp))
        shapes = [r.shape for r in f_vjp.opaque_residuals]
        f_vjp.args_res[0] = W2
        call = lib.jit(lambda f, c: f(c)) if where == "jit" else (lambda f, c: f(c))
        return n_leaves, shapes, call(f_vjp, ct)
    n, shapes, grads = run(mjax, jnp)
    n_jax, shapes_jax, grads_jax = run(jax, jjnp)
    assert (n, shapes) == (n_jax, shapes_jax)
    close(grads, grads_jax)
