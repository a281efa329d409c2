"""custom_jvp/custom_vjp calls see their arguments as JAX's do: keywords bound to
positions, defaults filled in (nondiff_argnums may name a defaulted parameter: flax's fp8
dot_general), and JAX's TypeError for calls that cannot be bound."""
import functools

import jax
import pytest

import mjax


def _scaled(lib, seen):
    @functools.partial(lib.custom_jvp, nondiff_argnums=(1,))
    def f(x, p=3.0):
        return x * p

    @f.defjvp
    def f_jvp(p, primals, tangents):
        seen.append((p, len(primals)))
        return f(primals[0], p), tangents[0] * p
    return f


def _product(lib):
    @lib.custom_vjp
    def g(x, y=2.0):
        return x * y
    g.defvjp(lambda x, y: (g(x, y), (x, y)), lambda r, ct: (ct * r[1], ct * r[0]))
    return g


def test_defaults_reach_the_rules():
    results = []
    for lib in (mjax, jax):
        seen = []
        f = _scaled(lib, seen)
        results.append((float(lib.grad(f)(2.0)), float(lib.grad(f)(2.0, 5.0)),
                        float(lib.grad(lambda x: f(x, p=4.0))(1.0)),
                        float(lib.grad(_product(lib))(3.0)), seen))
    assert results[0] == results[1]
    assert results[0][-1] == [(3.0, 1), (5.0, 1), (4.0, 1)]


@pytest.mark.parametrize("call", ["too_many", "unknown_keyword", "missing"])
def test_unbindable_calls_are_jaxs_type_error(call):
    messages = []
    for lib in (mjax, jax):
        g = _product(lib)
        args, kwargs = {"too_many": ((1.0, 2.0, 3.0), {}), "unknown_keyword": ((1.0,), {"z": 2.0}),
                        "missing": ((), {})}[call]
        with pytest.raises(TypeError) as e:
            g(*args, **kwargs)
        messages.append(str(e.value))
    assert messages[0] == messages[1]
