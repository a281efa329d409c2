"""mjax.fwd_and_bwd against jax.fwd_and_bwd: values, the int/tuple argnums shapes of the
result, has_aux, jitted=False, and a VJP passed between the two jitted functions."""
import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp


def _args(np_mod):
    return np_mod.arange(9.0).reshape(3, 3) / 10, np_mod.ones((2, 3))


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), (1,), -1])
@pytest.mark.parametrize("jitted", [True, False])
def test_fwd_and_bwd_matches_jax(argnums, jitted):
    outs = []
    for lib, np_mod in ((mjax, mnp), (jax, jax.numpy)):
        fwd, bwd = lib.fwd_and_bwd(lambda W, x: np_mod.tanh(x @ W), argnums, jitted=jitted)
        y, res = fwd(*_args(np_mod))
        outs.append((y, bwd(res, np_mod.ones_like(y) * 0.5)))
    (y, g), (y_ref, g_ref) = outs
    np.testing.assert_allclose(y, y_ref, rtol=1e-6)
    assert isinstance(g, tuple) == isinstance(g_ref, tuple)
    for a, b in zip(jax.tree.leaves(g), jax.tree.leaves(g_ref)):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_fwd_and_bwd_has_aux_and_reuse():
    outs = []
    for lib, np_mod in ((mjax, mnp), (jax, jax.numpy)):
        fwd, bwd = lib.fwd_and_bwd(lambda W, x: (np_mod.sin(x @ W), {"n": x.sum()}),
                                   argnums=0, has_aux=True)
        W, x = _args(np_mod)
        got = []
        for k in range(2):     # the same fwd/bwd reused with other values
            y, res, aux = fwd(W * (k + 1), x)
            got.append((y, aux["n"], bwd(res, np_mod.ones_like(y))))
        outs.append(got)
    for a, b in zip(jax.tree.leaves(outs[0]), jax.tree.leaves(outs[1])):
        np.testing.assert_allclose(a, b, rtol=1e-5)


def test_fwd_and_bwd_bad_input():
    with pytest.raises(TypeError):
        mjax.fwd_and_bwd(3, argnums=0)
    fwd, _ = mjax.fwd_and_bwd(lambda x: x * 2.0, argnums=1)
    with pytest.raises(ValueError, match="argnums"):
        fwd(1.0)


def _layer(lib):
    return lambda W, x: lib.numpy.tanh(x @ W)


def test_vjp_args_res_are_the_primal_arguments_and_can_be_put_back():
    W, x = np.full((3, 3), 0.1, np.float32), np.arange(6, dtype=np.float32).reshape(2, 3) / 10
    ct = np.ones((2, 3), np.float32)
    _, f = mjax.vjp(_layer(mjax), W, x)
    _, g = jax.vjp(_layer(jax), W, x)
    assert isinstance(f.args_res, list) and len(f.args_res) == len(g.args_res) == 2
    for a, b in zip(f.args_res, g.args_res):
        np.testing.assert_array_equal(a, b)
    f.args_res[0] = W           # restoring the same value (the VJP-objects page's use)
    for a, b in zip(f(ct), g(ct)):
        np.testing.assert_allclose(a, b, rtol=1e-6)

    def bwd(lib):
        def run(fv, W, ct):
            fv.args_res[0] = W  # inside jit: the VJP object crossed the boundary
            return fv(ct)
        return lib.jit(run)
    for a, b in zip(bwd(mjax)(f, W, ct), bwd(jax)(g, W, ct)):
        np.testing.assert_allclose(a, b, rtol=1e-6)
    d = {"hi": np.ones((4, 5), np.float32), "bye": np.ones((3, 4), np.float32)}
    _, h = mjax.vjp(lambda d: d["bye"] @ d["hi"], d)
    h.args_res = [d]
    assert jax.tree.map(np.shape, h(np.ones((3, 5), np.float32))) == (
        {"bye": (3, 4), "hi": (4, 5)},)
    with pytest.raises(ValueError, match="structure"):
        h.args_res = [1, 2]
