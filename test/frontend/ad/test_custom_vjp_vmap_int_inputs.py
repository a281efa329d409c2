"""grad of a vmapped custom_vjp function that takes integer inputs (no cotangent: its bwd
returns None for them), as JAX: the bwd's cotangents are those of the differentiable
inputs only, and each keeps its own input's batch dim (mjax gave a float input the
integer input's dim before it, summing its cotangent over the batch: a type error at
lowering). Splash attention's kernel is such a function (its int8 mask tables)."""
from functools import partial

import numpy as np
import pytest

import jax
import jax.numpy as jnp

import mjax
import mjax.numpy as mjnp


def _make(J, jnp_, nondiff: bool, int_in_res: bool):
    if nondiff:
        @partial(J.custom_vjp, nondiff_argnames=("scale",))
        def g(info, x, y, scale):
            return x * y * scale + info[0].astype(jnp_.float32)
    else:
        @J.custom_vjp
        def g(info, x, y, scale=2.0):
            return x * y * scale + info[0].astype(jnp_.float32)

    def fwd(info, x, y, scale=2.0):
        return g(info, x, y, scale=scale), ((x, y, info) if int_in_res else (x, y))

    def bwd(*a):
        (scale, res, ct) = a if nondiff else (2.0,) + a
        x, y = res[:2]
        cts = (None, ct * y * scale, ct * x * scale)
        return cts if nondiff else cts + (None,)      # (scale: a primal input there)
    g.defvjp(fwd, bwd)
    return g


CASES = [(nondiff, res, batched_info, jit)
         for nondiff in (False, True) for res in (False, True)
         for batched_info in (False, True) for jit in (False, True)]


@pytest.mark.parametrize("nondiff,int_in_res,batched_info,jit", CASES)
def test_grad_of_vmapped_custom_vjp_with_int_input(nondiff, int_in_res, batched_info, jit):
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    y = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    info = np.arange(6, dtype=np.int8).reshape(2, 3) if batched_info else \
        np.arange(3, dtype=np.int8)
    out = []
    for J, jnp_ in ((jax, jnp), (mjax, mjnp)):
        g = _make(J, jnp_, nondiff, int_in_res)
        i = jnp_.asarray(info)

        def loss(a, b, i=i, g=g, J=J):
            f = J.vmap(lambda i, a, b: g(i, a, b, scale=2.0),
                       in_axes=(0 if batched_info else None, 0, 0))
            return (f(i, a, b) ** 2).sum()
        d = J.grad(loss, argnums=(0, 1))
        out.append([np.asarray(v) for v in (J.jit(d) if jit else d)(x, y)])
    want, got = out
    for w, v in zip(want, got):
        assert v.shape == w.shape == x.shape
        np.testing.assert_allclose(v, w, rtol=1e-6, atol=1e-6)
    # (NumPy: d/dx of sum((2xy + c)^2) = 4y(2xy + c))
    c = (info[:, 0][:, None, None] if batched_info else info[0]).astype(np.float32)
    np.testing.assert_allclose(got[0], 4 * y * (2 * x * y + c), rtol=1e-5, atol=1e-5)
