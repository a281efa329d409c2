"""vmap leaves a call whose results nothing reads unbatched (grad's staged value call:
vmap of grad batches only the forward and backward parts), but still batches a dead call
with effects (its callback runs once per example, as in JAX), and the gradients stay
JAX's."""
from __future__ import annotations

import re

import numpy as np
from jaxlib.mlir import ir

import jax
import jax.numpy as jnp
import mjax
import mjax.numpy as mnp
from mjax.dialect import context
from mjax.passes import run_pipeline

RNG = np.random.default_rng(3)


def _functions(module) -> set[str]:
    return set(re.findall(r"func\.func (?:private )?@\"?([\w<>]+)", str(module)))


def _loss(np_, p, x, t):
    w, b = p
    return np_.mean((np_.tanh(x @ w + b) - t) ** 2)


def test_vmap_of_grad_batches_forward_and_backward_only():
    p = (RNG.standard_normal((4, 3)).astype(np.float32), np.zeros(3, np.float32))
    x, t = RNG.standard_normal((5, 4)).astype(np.float32), np.ones((5, 3), np.float32)

    def per_example(lib, np_):
        return lib.vmap(lib.grad(lambda p, x, t: _loss(np_, p, x, t)), in_axes=(None, 0, 0))

    module = mjax.jit(per_example(mjax, mnp)).trace(p, x, t)._traced.module
    with context():
        module = ir.Module.parse(str(module))
        run_pipeline(module, "jaxpr-expand-transforms")
    names = _functions(module)
    batched = {n for n in names if n.endswith("_batched")}
    assert any("fwd" in n for n in batched) and any("bwd" in n for n in batched), names
    assert not any("primal" in n for n in batched), names     # (the dead value call)
    got = mjax.jit(per_example(mjax, mnp))(p, x, t)
    want = jax.jit(per_example(jax, jnp))(p, x, t)
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def test_dead_call_with_a_callback_is_still_batched(capfd):
    x = np.arange(3, dtype=np.float32)

    def f(lib):
        def inner(y):
            lib.debug.print("seen {}", y)
            return y * 2.0

        def g(y):
            lib.jit(inner)(y)       # (its result unused: only the print matters)
            return y + 1.0
        return lib.jit(lib.vmap(g))

    out = f(mjax)(x)
    mjax.block_until_ready(out)
    mjax.effects_barrier()
    got = sorted(line for line in capfd.readouterr().out.splitlines() if "seen" in line)
    jax.block_until_ready(f(jax)(x))
    jax.effects_barrier()
    want = sorted(line for line in capfd.readouterr().out.splitlines() if "seen" in line)
    np.testing.assert_allclose(np.asarray(out), x + 1.0)
    assert len(want) == 3 and got == want
