"""The shortcuts of jit's pipeline (taken to make tracing and lowering fast) give the
module the plain pipeline gives: --jaxpr-inline's `prune` (dead functions erased first,
a function called once moved into its caller), reverse mode's direct linearize and its
partial evaluation moving the linearized function's ops instead of copying them, and
upstream passes after the first of a run without the verifier. Each program is lowered
both ways (the plain way: the linearized function split by a copying partial evaluation)
and the StableHLO text, locations included, must be the same; literal avals cached per
dtype follow x64 mode."""
from __future__ import annotations

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jaxlib.mlir import ir

import mjax
import mjax.numpy as jnp
from mjax import lax
from mjax.dialect import context
from mjax.tracing.lowering import PIPELINE
from mjax.passes import forward_mode, partial_eval, registry, reverse_mode, run_pipeline

from traced_programs import programs

_AD = ("grad", "value_and_grad", "hessian", "vmap_grad", "grad_scan", "grad_cond",
       "custom_vjp", "custom_jvp", "checkpoint", "softmax_grad", "pool_grad",
       "jacfwd_while", "checkify_vmap", "indexing")


def _twice_called(w, x):
    layer = mjax.jit(lambda w, x: jnp.tanh(x @ w))    # one function, called twice
    return jnp.sum(layer(w, layer(w, x)) ** 2)


def _selective(x, w):
    policy = mjax.checkpoint_policies.dots_saveable
    f = mjax.checkpoint(lambda x, w: jnp.sin(jnp.sin(x) @ w), policy=policy)
    return jnp.sum(f(x, w))


def _cases():
    f32 = lambda *s: np.linspace(0.5, 1.5, int(np.prod(s)), dtype=np.float32).reshape(s)
    out = [(n, fn, args) for n, fn, args in programs() if n in _AD]
    out.append(("twice_called", mjax.grad(_twice_called), (f32(3, 3), f32(2, 3))))
    out.append(("selective_checkpoint", mjax.grad(_selective), (f32(2, 2), f32(2, 2))))
    out.append(("per_example", mjax.vmap(mjax.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w))),
                                         in_axes=(None, 0)), (f32(3, 2), f32(4, 3))))
    out.append(("scan_rnn", mjax.grad(lambda h, xs: jnp.sum(lax.scan(
        lambda c, x: (jnp.tanh(c * x), c), h, xs)[0])), (f32(3), f32(4, 3))))
    return out


class _Copying(partial_eval.PartialEval):
    """Partial evaluation as it was: always copying."""

    def __init__(self, *args, move=False, **kwargs):
        super().__init__(*args, **kwargs)


def _general_path_only(*args):
    # (direct linearize off: the linearized function split by partial evaluation)
    raise forward_mode.NeedsRegions()


def _lower(text: str, plain: bool) -> str:
    with context():
        module = ir.Module.parse(text)
        if plain:
            steps = [(n, "") if n == "jaxpr-inline" else (n, o) for n, o in PIPELINE]
            # (after_each keeps every upstream pass in its own, verifying, pass manager)
            run_pipeline(module, steps, after_each=lambda name, m: None)
        else:
            run_pipeline(module, PIPELINE)
        return module.operation.get_asm(enable_debug_info=True)


@pytest.mark.parametrize("name,fn,args", _cases(), ids=[c[0] for c in _cases()])
def test_same_module_as_the_plain_pipeline(name, fn, args, monkeypatch):
    text = mjax.jit(fn).trace(*args).as_text(debug_info=True)
    fast = _lower(text, plain=False)
    monkeypatch.setattr(reverse_mode, "PartialEval", _Copying)
    monkeypatch.setattr(reverse_mode, "_linearize_direct", _general_path_only)
    assert _lower(text, plain=True) == fast
    assert "func.func private" not in fast or name in ("checkify_vmap",)


@pytest.mark.parametrize("primed", [False, True])
def test_same_module_whatever_the_constant_cache_holds(primed, monkeypatch):
    """Forward mode makes each constant once per block, as direct linearize does, so the
    two paths agree whether or not the process-wide cache of splat constants already
    knows tanh's ones (it decides which of the builder's two ways a constant is made:
    without this, the test above fails after any test that made a 2x3 f32 splat of
    1.0)."""
    from mjax.dialect import builder
    monkeypatch.setattr(builder, "_SPLATS", {})
    if primed:
        with context():
            module = ir.Module.parse("module {}")
            builder.Builder(ir.InsertionPoint(module.body), ir.Location.unknown()).constant(
                1.0, np.float32, (2, 3))
    f32 = lambda *s: np.linspace(0.5, 1.5, int(np.prod(s)), dtype=np.float32).reshape(s)
    text = mjax.jit(mjax.grad(_twice_called)).trace(f32(3, 3), f32(2, 3)).as_text(
        debug_info=True)
    fast = _lower(text, plain=False)
    monkeypatch.setattr(reverse_mode, "PartialEval", _Copying)
    monkeypatch.setattr(reverse_mode, "_linearize_direct", _general_path_only)
    assert _lower(text, plain=True) == fast


def test_prune_erases_dead_functions_and_moves_single_callees():
    text = """
    func.func private @dead(%x: tensor<f32>) -> tensor<f32> {
      %0 = "jaxpr.call"(%x) {callee = @twice} : (tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    }
    func.func private @twice(%x: tensor<f32>) -> tensor<f32> {
      %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    }
    func.func private @once(%x: tensor<f32>) -> tensor<f32> {
      %0 = "jaxpr.call"(%x) {callee = @twice} : (tensor<f32>) -> tensor<f32>
      %1 = "jaxpr.call"(%0) {callee = @twice} : (tensor<f32>) -> tensor<f32>
      return %1 : tensor<f32>
    }
    func.func @main(%a: tensor<f32>) -> tensor<f32> {
      %0 = "jaxpr.call"(%a) {callee = @once} : (tensor<f32>) -> tensor<f32>
      return %0 : tensor<f32>
    }"""
    with context():
        pruned, plain = ir.Module.parse(text), ir.Module.parse(text)
        run_pipeline(pruned, [("jaxpr-inline", "prune=true")])
        run_pipeline(plain, "jaxpr-inline,jaxpr-dce")
        got = str(pruned)
        assert got == str(plain)
        assert "@dead" not in got and "@once" not in got and "@twice" not in got
        assert got.count("jaxpr.sin") == 2
        # Without prune the pass keeps every function (mjax-opt's --jaxpr-inline).
        kept = ir.Module.parse(text)
        run_pipeline(kept, "jaxpr-inline")
        assert all(f"@{n}" in str(kept) for n in ("dead", "once", "twice"))


def test_upstream_run_groups_and_reports_unknown_passes():
    steps = [("jaxpr-dce", ""), ("canonicalize", ""), ("cse", ""), ("symbol-dce", "")]
    grouped = registry._trusting_upstream(steps)
    assert grouped[:2] == steps[:2] and grouped[2][1] == (("cse", ""), ("symbol-dce", ""))
    assert registry._trusting_upstream([("cse", "")]) == [("cse", "")]
    with context():
        module = ir.Module.parse("module {}")
        with pytest.raises(ValueError, match="unknown pass 'no-such-pass'"):
            run_pipeline(module, "canonicalize,cse,no-such-pass")


@pytest.mark.parametrize("x64", [False, True, False])
def test_literal_avals_follow_x64(x64):
    def f(x):
        return x + 1.5, 2 * x, x * np.float64(0.5) - 1, x > 0.5

    xs = [np.float32(1.25), np.int32(3), np.float64(2.0), np.int64(4)]
    prev = jax.config.jax_enable_x64
    try:
        jax.config.update("jax_enable_x64", x64)
        mjax.config.update("jax_enable_x64", x64)
        for x in xs:
            want = jax.jit(f)(x)
            got = mjax.jit(f)(x)
            for g, w in zip(got, want):
                assert g.dtype == w.dtype and g.weak_type == w.weak_type
                np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)
            grad_w = jax.grad(lambda v: jjnp.sum(f(v)[0] * f(v)[2]))(jjnp.float32(x))
            grad_g = mjax.grad(lambda v: jnp.sum(f(v)[0] * f(v)[2]))(jnp.float32(x))
            np.testing.assert_allclose(np.asarray(grad_g), np.asarray(grad_w), rtol=1e-6)
    finally:
        jax.config.update("jax_enable_x64", prev)
        mjax.config.update("jax_enable_x64", prev)
