"""A custom_vjp whose fwd (and bwd) call the function itself while it closes over traced
values: differentiating the forward pass again applies the custom rule, as in JAX
(inlining the call instead would change second derivatives under jit). Checked against
jax."""
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


def test_custom_rules_called_outside_transformations_run_the_function_as_jax():
    # JAX calls the function itself (no rule runs): Python scalars stay Python values,
    # and the rules' side effects do not happen.
    import collections

    import jax
    import jax.numpy as jjnp
    Point = collections.namedtuple("Point", ["x", "y"])

    def results(J, np_):
        calls = []

        @J.custom_jvp
        def f(pt):
            calls.append("f")
            return {"a": pt.x ** 2, "b": (np_.sin(pt.x), np_.cos(pt.y))}

        @f.defjvp
        def f_jvp(primals, tangents):
            calls.append("jvp")
            return f(primals[0]), f(tangents[0])

        @J.custom_vjp
        def g(x):
            calls.append("g")
            return x * 3.0

        g.defvjp(lambda x: (calls.append("fwd"), (g(x), None))[1],
                 lambda r, ct: (calls.append("bwd"), (ct,))[1])
        out = f(Point(1.0, 2.0)), g(2.0)
        return out, calls
    (mine, my_calls), (theirs, their_calls) = results(mjax, jnp), results(jax, jjnp)
    assert my_calls == their_calls
    assert type(mine[0]["a"]) is type(theirs[0]["a"]) is float
    assert type(mine[1]) is type(theirs[1]) is float
    np.testing.assert_allclose(mine[0]["b"], theirs[0]["b"], rtol=1e-6)
