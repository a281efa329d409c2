"""Direct linearize (passes/linearize_direct.py: primal ops emitted into the forward
part and tangent ops into the linear part in one walk) makes the module the general
path makes (the whole linearized function split by partial evaluation, then its linear
part partially evaluated again by the transposition). Each program is lowered both ways
and the StableHLO text, locations included, must be the same; the programs cover the
three ways direct linearize goes (ops placed as emitted; calls, custom rules and
control flow through the scratch block; selective checkpoints, here or in a scan body,
falling back to the general path)."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import lax
from mjax.passes import forward_mode, reverse_mode
from mjax.passes.forward_mode import NoDerivativeError

from traced_programs import programs

_AD = ("grad", "value_and_grad", "hessian", "vmap_grad", "grad_scan", "grad_cond",
       "custom_vjp", "custom_jvp", "checkpoint", "softmax_grad", "pool_grad",
       "jacfwd_while", "indexing")


def f32(*s):
    return np.linspace(0.5, 1.5, int(np.prod(s)), dtype=np.float32).reshape(s)


def _mlp(w, x):
    return jnp.sum(jnp.tanh(jnp.tanh(x @ w) @ w) ** 2)


@mjax.custom_vjp
def _scaled(x, y):
    return x * y


_scaled.defvjp(lambda x, y: (x * y, (x, y)), lambda r, g: (g * r[1] * 2.0, g * r[0]))


@mjax.custom_jvp
def _softplus(v):
    return jnp.log1p(jnp.exp(v))


_softplus.defjvp(lambda p, t: (_softplus(p[0]), t[0] * mjax.nn.sigmoid(p[0])))


def _selective(policy):
    f = mjax.checkpoint(lambda x, w: jnp.sin(jnp.sin(x) @ w) @ w, policy=policy)
    return mjax.grad(lambda x, w: jnp.sum(f(x, w)), (0, 1))


def _scan_selective(h, xs, w):
    body = mjax.checkpoint(lambda c, x: (jnp.tanh(jnp.sin(c @ w) @ w + x), c.sum()),
                           policy=mjax.checkpoint_policies.dots_saveable)
    return jnp.sum(lax.scan(body, h, xs)[0])


def _cases():
    w, x = f32(3, 3), f32(2, 3)
    cp = mjax.checkpoint_policies
    out = [(n, fn, args) for n, fn, args in programs() if n in _AD]
    out += [
        ("mlp_value_and_grad", mjax.value_and_grad(_mlp, (0, 1)), (w, x)),
        ("hessian_mlp", mjax.hessian(_mlp), (w, x)),
        ("jacrev", mjax.jacrev(lambda w, x: jnp.tanh(x @ w)), (w, x)),
        ("per_example", mjax.vmap(mjax.grad(_mlp), (None, 0)), (w, f32(4, 2, 3))),
        ("jit_inside", mjax.grad(lambda v, w: jnp.sum(mjax.jit(_mlp)(w, v))), (x, w)),
        ("custom_vjp_in_scan", mjax.grad(lambda v: lax.scan(
            lambda c, x: (_scaled(c, x), c), v, f32(3, 3))[0].sum()), (f32(3),)),
        ("custom_jvp_in_cond", mjax.grad(lambda v: lax.cond(
            v.sum() > 0, lambda: _softplus(v).sum(), lambda: v.sum())), (f32(3),)),
        ("fori", mjax.grad(lambda v: lax.fori_loop(
            0, 3, lambda i, c: jnp.sin(c) * v, v).sum()), (f32(3),)),
        ("checkpoint_nothing", _selective(cp.nothing_saveable), (w, w)),
        ("checkpoint_everything", _selective(cp.everything_saveable), (w, w)),
        ("checkpoint_dots", _selective(cp.dots_saveable), (w, w)),
        ("scan_selective", mjax.grad(_scan_selective, (0, 2)), (f32(2, 3), f32(4, 2, 3), w)),
    ]
    return out


def _lowered(fn, args) -> str:
    return mjax.jit(fn).lower(*args).compiler_ir("stablehlo").operation.get_asm(
        enable_debug_info=True)


def _general_path_only(monkeypatch):
    def refuse(*args):
        raise forward_mode.NeedsRegions()
    monkeypatch.setattr(reverse_mode, "_linearize_direct", refuse)


@pytest.mark.parametrize("name,fn,args", _cases(), ids=[c[0] for c in _cases()])
def test_same_module_as_the_general_path(name, fn, args, monkeypatch):
    direct = _lowered(fn, args)
    _general_path_only(monkeypatch)
    assert _lowered(fn, args) == direct


def test_same_values_as_jax():
    w, x = f32(3, 3), f32(2, 3)
    got = mjax.jit(mjax.grad(_mlp, (0, 1)))(w, x)
    want = jax.jit(jax.grad(lambda w, x: jjnp.sum(jjnp.tanh(jjnp.tanh(x @ w) @ w) ** 2),
                            (0, 1)))(w, x)
    for g, e in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(e), rtol=1e-5)


def test_a_rule_failing_half_way_is_the_same_error(monkeypatch):
    # sin's JVP is emitted (into the forward and linear parts) before geqrf's missing
    # rule is met: the same error either way, raised from the direct path's cleanup.
    def f(v):
        return jnp.sum(lax.linalg.geqrf(jnp.sin(v) @ v)[0])

    with pytest.raises(NoDerivativeError, match="geqrf") as direct:
        _lowered(mjax.grad(f), (f32(3, 3),))
    _general_path_only(monkeypatch)
    with pytest.raises(NoDerivativeError) as general:
        _lowered(mjax.grad(f), (f32(3, 3),))
    assert str(direct.value) == str(general.value)
