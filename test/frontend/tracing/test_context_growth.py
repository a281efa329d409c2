"""A loop of eager transformations (grad, vjp, jvp, vmap called outside jit, a fresh jit
of the same program lowered again) reaches a steady state in the names it interns in the
process-wide MLIR context: every function a trace creates is named through
mjax.core.Trace, and each new name is a StringAttr/FlatSymbolRefAttr kept for the life of
the process. Once warm, a call must create only names an earlier call created.

Results are compared with real jax (the test-only oracle). Names are counted per module
(mjax.tracing.staging.fresh_name), so each eager call's fresh module repeats the names of the
call before.
"""
from __future__ import annotations

import jax
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp
from mjax import core
from mjax.ad import staging as ad_staging


def _loss(np_):
    return lambda w, x: np_.sum(np_.tanh(x @ w) ** 2)


_W = np.linspace(-1.0, 1.0, 16, dtype=np.float32).reshape(4, 4)
_X = np.linspace(0.5, 1.5, 12, dtype=np.float32).reshape(3, 4)

_CALLS = {
    "grad": lambda m, np_, f: m.grad(f)(_W, _X),
    "vjp": lambda m, np_, f: m.vjp(f, _W, _X)[1](np.float32(1.0)),
    "jvp": lambda m, np_, f: m.jvp(lambda w: f(w, _X), (_W,), (_W,)),
    "vmap": lambda m, np_, f: m.vmap(lambda r: np_.sin(r) * 2)(_X),
    "jit_lower": lambda m, np_, f: m.jit(lambda w: f(w, _X)).lower(_W).as_text(),
    "grad_of_jit": lambda m, np_, f: m.grad(m.jit(f))(_W, _X),
    "vjp_of_jit": lambda m, np_, f: m.vjp(m.jit(f), _W, _X)[1](np.float32(1.0)),
}


@pytest.mark.parametrize("kind", sorted(_CALLS))
def test_eager_results_match_jax(kind):
    got = _CALLS[kind](mjax, mnp, _loss(mnp))
    if kind == "jit_lower":
        assert "func" in got
        return
    want = _CALLS[kind](jax, jax.numpy, _loss(jax.numpy))
    for g, w in zip(jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-5, atol=1e-6)


def _names_per_call(kind, calls, monkeypatch):
    """The set of function names Trace was given during each of `calls` calls."""
    seen: list = []
    init = core.Trace.__init__

    def recording(self, module=None, name="", *args, **kwargs):
        seen[-1].add(name)
        return init(self, module, name, *args, **kwargs)
    monkeypatch.setattr(core.Trace, "__init__", recording)
    identity = ad_staging.program_identity

    def recording_program(module, *args, **kwargs):
        # (every function of an eager call's program, those copied in included)
        for op in module.body.operations:
            if "sym_name" in op.attributes:
                seen[-1].add(str(op.attributes["sym_name"]))
        return identity(module, *args, **kwargs)
    monkeypatch.setattr(ad_staging, "program_identity", recording_program)
    f = _loss(mnp)
    for _ in range(calls):
        seen.append(set())
        _CALLS[kind](mjax, mnp, f)
    return seen


@pytest.mark.parametrize("kind", sorted(_CALLS))
def test_warm_eager_calls_create_no_new_names(kind, monkeypatch):
    per_call = _names_per_call(kind, 12, monkeypatch)
    warm = set().union(*per_call[:4])
    new = set().union(*per_call[4:]) - warm
    assert not new, f"{kind}: {len(new)} new names after warm-up, e.g. {sorted(new)[:5]}"


def test_fresh_names_skip_functions_added_by_other_code():
    # (the passes copy functions into a module under their own names: a staged name
    # numbered past them must not repeat one, or a call would name the wrong function;
    # optimistix's fixed-point jvp tests hit this)
    from jaxlib.mlir import ir
    from mjax.dialect import context
    from mjax.tracing.staging import fresh_name
    with context(), ir.Location.unknown():
        module = ir.Module.parse("func.func private @f_0() { return }")
        first = fresh_name(module, "f")
        assert first == "f_1"
        with ir.InsertionPoint(module.body):
            for name in (first, "f_2", "f_7"):
                copy = ir.Operation.parse(f"func.func private @{name}() {{ return }}")
                module.body.append(copy)
        assert fresh_name(module, "f") == "f_8"
