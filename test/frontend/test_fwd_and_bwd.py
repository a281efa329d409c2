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
