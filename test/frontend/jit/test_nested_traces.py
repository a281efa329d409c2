"""A jit called inside other traces is traced once per argument types, as JAX reuses a
jitted function's jaxpr (mjax/jit/nested_traces.py): trace counts against jax's, and values
when a kept trace is reused in other traces (other modules, under grad and vmap, with a
closure, with custom derivatives)."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np

import mjax
import mjax.numpy as mjnp


def _counts(lib, jnp):
    n = []

    @lib.jit
    def inner(x):
        n.append(1)
        return x * 2.0

    out = {}
    lib.jit(lambda x: inner(x))(1.0)
    lib.jit(lambda x: inner(x) + 1.0)(1.0)
    out["two outer jits"] = len(n)
    lib.jit(lambda x: inner(x) + inner(x))(3.0)
    out["twice in one trace"] = len(n)
    lib.grad(lambda x: inner(x))(1.0)
    lib.grad(lambda x: inner(x))(2.0)
    out["under grad"] = len(n)
    lib.vmap(lambda x: inner(x))(jnp.ones(3))
    out["under vmap"] = len(n)
    lib.jit(lambda x: inner(x))(jnp.ones(2))
    out["other shape"] = len(n)
    f2 = lib.jit(lambda x: inner(x) - 1.0)
    f2.lower(1.0)
    f2.lower(1.0).compile()
    out["lowered twice"] = len(n)
    return out


def test_trace_counts_match_jax():
    assert _counts(mjax, mjnp) == _counts(jax, jjnp)


def _values(lib, jnp):
    w = jnp.arange(3.0)

    @lib.jit
    def layer(x):
        return jnp.tanh(x * w)           # closes over a concrete array

    @lib.custom_vjp
    def scaled(x):
        return x * 3.0

    scaled.defvjp(lambda x: (x * 3.0, None), lambda _, g: (g * 10.0,))

    @lib.jit
    def with_rule(x):
        return scaled(x) + layer(x)

    x = jnp.array([0.5, -1.0, 2.0])
    out = [lib.jit(lambda x: layer(x))(x),
           lib.jit(lambda x: layer(layer(x)) + 1.0)(x),
           lib.grad(lambda x: layer(x).sum())(x),
           lib.vmap(layer)(jnp.stack([x, -x])),
           lib.jit(lambda x: with_rule(x).sum())(x),            # traced outside grad first
           lib.grad(lambda x: with_rule(x).sum())(x),           # then reused under grad
           lib.jit(lib.grad(lambda x: with_rule(x).sum()))(x),
           lib.jacrev(with_rule)(x)]

    def outer(y):                          # a closure over an outer tracer: not kept
        return lib.jit(lambda z: z * y)(x).sum()
    out += [lib.grad(outer)(2.0), lib.grad(outer)(3.0)]
    return out


def test_kept_traces_give_jax_values_in_other_traces():
    for a, b in zip(_values(mjax, mjnp), _values(jax, jjnp)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-6)
