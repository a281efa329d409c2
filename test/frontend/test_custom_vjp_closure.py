"""A custom_vjp whose fwd (and bwd) call the function itself while it closes over traced
values: differentiating the forward pass again applies the custom rule, as in JAX (it
used to be inlined, so second derivatives under jit differed). Checked against jax."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp


def make_outer(J, np_):
    def outer(x, y):
        @J.custom_vjp
        def f(x):
            return np_.sin(x) * y

        def f_fwd(x):
            out = f(x)
            return out, (x, out * y)

        def f_bwd(res, g):
            x, oy = res
            return (g * np_.cos(x) * y + oy * 0.0 + f(x) * g,)
        f.defvjp(f_fwd, f_bwd)
        return f(x) * f(x + 1.0)
    return outer


@pytest.mark.parametrize("how", ["grad", "jit_grad", "grad_grad", "jit_grad_grad",
                                 "vmap_grad_x", "vmap_grad_y"])
def test_self_calling_custom_vjp_closing_over_traced_values(how):
    def build(J, np_):
        o = make_outer(J, np_)
        return {"grad": J.grad(o), "jit_grad": J.jit(J.grad(o)),
                "grad_grad": J.grad(J.grad(o)), "jit_grad_grad": J.jit(J.grad(J.grad(o))),
                "vmap_grad_x": lambda x, y: J.vmap(J.grad(o), (0, None))(np_.stack([x, x]), y),
                "vmap_grad_y": lambda x, y: J.vmap(J.grad(o), (None, 0))(x, np_.stack([y, y])),
                }[how]
    got = build(mjax, jnp)(np.float32(2.0), np.float32(3.0))
    want = build(jax, jjnp)(np.float32(2.0), np.float32(3.0))
    np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-6)
