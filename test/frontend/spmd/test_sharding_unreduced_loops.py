"""An unreduced carry through scan loops (JAX's sharding-ad page: gradients of reduced
weights accumulated over microbatches): the loop bodies keep partial sums, and the one
all-reduce is the final reshard's, as in JAX; the numbers are JAX's."""
from __future__ import annotations

import re

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax


def _step(lib, unroll=1):
    jnp = lib.numpy

    def loss(stacked_ws, batch):
        def apply_layer(xs, w):
            return jnp.tanh(xs @ w), None
        final_xs, _ = lib.lax.scan(apply_layer, batch, stacked_ws)
        return jnp.sum(final_xs ** 2)

    @lib.jit
    def step(stacked_ws, xs):
        def microbatch_step(grad_acc, xs_mb):
            grads = lib.grad(loss)(stacked_ws, xs_mb)
            assert lib.typeof(grads).sharding.spec.unreduced == {"X"}
            return grad_acc + grads, None
        grad_acc = lib.reshard(jnp.zeros_like(stacked_ws), lib.P(unreduced={"X"}))
        grad_acc, _ = lib.lax.scan(microbatch_step, grad_acc, xs, unroll=unroll)
        grads = lib.reshard(grad_acc, lib.P())
        return lib.reshard(stacked_ws, lib.P()) - 0.01 * grads
    return step


def _run(lib, jnp, ws, xs, unroll=1):
    mesh = lib.make_mesh((2,), ("X",), axis_types=(lib.sharding.AxisType.Explicit,),
                         devices=lib.devices()[:2])
    with lib.set_mesh(mesh):
        ws = lib.device_put(jnp.asarray(ws), lib.P(reduced={"X"}))
        xs = lib.device_put(jnp.asarray(xs), lib.P(None, "X", None))
        step = _step(lib, unroll)
        out = np.asarray(step(ws, xs))
        hlo = step.lower(ws, xs).compile().as_text()
    return out, hlo


def _all_reduces(hlo: str) -> list:
    """(computation, op_name) of each all-reduce of the compiled HLO text."""
    found, comp = [], None
    for line in hlo.splitlines():
        if line and not line.startswith(" ") and "{" in line:
            comp = line.split(" ")[0] if not line.startswith("ENTRY") else "ENTRY"
        if "all-reduce(" in line or "all-reduce-start(" in line:
            name = re.search(r'op_name="([^"]*)"', line)
            found.append((comp, name and name.group(1)))
    return found


@pytest.mark.parametrize("unroll", [1, 2])   # (2: 5 steps, one after the loop)
def test_unreduced_carry_reduced_once_outside_the_loops(unroll):
    rng = np.random.RandomState(0)
    ws = (np.stack([np.eye(4)] * 3) / 2 + 0.1 * rng.randn(3, 4, 4)).astype(np.float32)
    xs = rng.randn(5, 2, 4).astype(np.float32)
    mine, my_hlo = _run(mjax, mjax.numpy, ws, xs, unroll)
    theirs, their_hlo = _run(jax, jjnp, ws, xs, unroll)
    np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-6)
    assert _all_reduces(their_hlo) == [("ENTRY", "jit(step)/reshard")]
    assert _all_reduces(my_hlo) == _all_reduces(their_hlo)


def test_unreduced_carry_numbers_match_an_unsharded_step():
    # (the same step on one device: the sum of the microbatch gradients, no partials)
    rng = np.random.RandomState(1)
    ws = rng.randn(3, 4, 4).astype(np.float32) / 2
    xs = rng.randn(5, 2, 4).astype(np.float32)
    mine, _ = _run(mjax, mjax.numpy, ws, xs)

    def loss(w, batch):
        def apply_layer(h, wi):
            return jjnp.tanh(h @ wi), None
        final, _ = jax.lax.scan(apply_layer, batch, w)
        return jjnp.sum(final ** 2)
    grads = sum(np.asarray(jax.grad(loss)(ws, x)) for x in xs)
    np.testing.assert_allclose(mine, ws - 0.01 * grads, rtol=1e-5, atol=1e-6)
