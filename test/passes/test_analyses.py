"""The facts passes share (passes/analyses.py): the tracer's op names and liveness, the
walks and the dead-code search they let the pipeline's passes skip, and that the passes
still run where their ops are: modules read from text, modules changed after tracing,
passes (users' too) that add ops. Every skip is checked against the pipeline without
facts: the same StableHLO, op for op and location for location."""
from __future__ import annotations

import numpy as np
import pytest
from jaxlib.mlir import ir

import mjax
import mjax.numpy as jnp
from mjax import lax
from mjax.dialect import Builder, context
from mjax.tracing.lowering import clone_module, lower_module
from mjax.passes import Pass, analyses, builder_before, run_pipeline, walk
from mjax.passes.analyses import Census, recorded_op_names, walk_op_names

X = np.linspace(0.1, 1.0, 4).astype(np.float32)


def _traced(f, *args):
    return mjax.jit(f).trace(*args)._traced.module


def _text(module) -> str:
    return module.operation.get_asm(enable_debug_info=True)


def _chain(v):
    for _ in range(3):
        v = jnp.sin(v) * 1.01 + 0.5 - v
    return v


def test_tracer_records_the_op_names_a_walk_finds():
    m = _traced(_chain, X)
    assert recorded_op_names(m) == walk_op_names(m) == {
        "builtin.module", "func.func", "func.return", "jaxpr.sin", "jaxpr.mul", "jaxpr.constant",
        "jaxpr.add", "jaxpr.sub"}
    assert recorded_op_names(clone_module(m)) == recorded_op_names(m)


@pytest.mark.parametrize("f", [
    lambda v: lax.cond(v[0] > 0, jnp.sin, jnp.cos, v),      # a region op
    lambda v: mjax.jit(jnp.sin)(v) + 1,                      # a call of another function
    lambda v: mjax.grad(lambda u: jnp.sum(jnp.sin(u)))(v),   # a transformation op
], ids=["cond", "nested_jit", "grad"])
def test_tracer_records_nothing_it_did_not_stage_itself(f):
    assert recorded_op_names(_traced(f, X)) is None


def test_census_liveness_with_several_results():
    with context(), ir.Location.unknown():
        m = ir.Module.parse("""
          func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
            %0:2 = "jaxpr.sort"(%x, %x)
                : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
            return %x : tensor<4xf32>
          }""")
        op = m.body.operations[0].regions[0].blocks[0].operations[0]
        a, b = op.results[0], op.results[1]

        class Sort:
            OPERATION_NAME, num_regions = "jaxpr.sort", 0
        c = Census()
        c.staged(Sort, (), [a, b])
        assert not c.all_used()
        c.returned([b])          # one of its two results used: the op is live
        assert c.all_used()
        c.staged(Sort, (), [a])
        assert not c.all_used()


@pytest.mark.parametrize("f, gone", [
    (lambda v: (jnp.sin(v), v * 2)[1], ['"jaxpr.sin"']),
    (lambda v: (jnp.cos(jnp.sin(v) + 1.0), jnp.exp(v))[1],
     ['"jaxpr.sin"', '"jaxpr.cos"', '"jaxpr.add"']),
    (lambda v: (jnp.float32(3) + 0, v + 1)[1], ["3.000000e+00"]),
    (_chain, []),
], ids=["dead_op", "dead_chain", "dead_constant", "all_live"])
def test_dead_ops_traced_are_removed_and_skips_change_nothing(f, gone, monkeypatch):
    def lowered():
        m = clone_module(_traced(f, X))
        jaxpr = lower_module(m, keep_jaxpr=True)     # (the last jaxpr form too)
        return _text(jaxpr), _text(m)
    fast = lowered()
    for text in gone:      # (gone before lowering: StableHLO's canonicalize would too)
        assert text not in fast[0]
    np.testing.assert_allclose(np.asarray(mjax.jit(f)(X)), np.asarray(f(X)), rtol=1e-6)
    # Without any fact (every pass walks, --jaxpr-dce searches): the same program.
    monkeypatch.setattr(analyses, "record", lambda *a: None)
    assert lowered() == fast


class AddDeadCosine(Pass):
    """Puts an unused jaxpr.cos beside every jaxpr.sin (a pass that adds ops, declaring
    nothing kept)."""
    point = "after-tracing"

    def run(self, module):
        for op in walk(module, "jaxpr.sin"):
            builder_before(op).cos(op.operands[0])


class CallSquare(Pass):
    """Squares every jaxpr.sin's operand through a call of a new private @square."""
    point = "after-tracing"

    def run(self, module):
        with context(), ir.Location.unknown():
            t = walk(module, "jaxpr.sin")[0].operands[0].type
            module.body.append(ir.Operation.parse(f"""
              func.func private @square(%x: {t}) -> {t} {{
                %0 = "jaxpr.mul"(%x, %x) : ({t}, {t}) -> {t}
                return %0 : {t}
              }}"""))
            for op in walk(module, "jaxpr.sin"):
                call = ir.Operation.create(
                    "jaxpr.call", results=[t], operands=[op.operands[0]],
                    attributes={"callee": ir.FlatSymbolRefAttr.get("square")},
                    ip=ir.InsertionPoint(op))
                op.operation.operands[0] = call.result


def test_a_pass_that_adds_dead_ops_is_followed_by_dce():
    # The tracer says "no dead op"; a user's pass adds some: its facts are forgotten.
    f = lambda v: jnp.sin(v) * 2    # noqa: E731
    assert analyses.recorded_op_names(_traced(f, X)) is not None
    text = mjax.jit(f, passes=[AddDeadCosine()]).lower(X).as_text()
    assert "stablehlo.cosine" not in text and "stablehlo.sine" in text


def test_a_pass_that_adds_calls_is_followed_by_inlining():
    f = lambda v: jnp.sin(v) + 1    # noqa: E731
    jf = mjax.jit(f, passes=[CallSquare()])
    text = jf.lower(X).as_text()
    assert "call" not in text and "stablehlo.multiply" in text
    np.testing.assert_allclose(np.asarray(jf(X)), np.sin(X * X) + 1, rtol=1e-6)


def test_facts_forgotten_after_a_pass_that_does_not_keep_them():
    # Run bare (jit wraps users' passes in a check that runs a pipeline of its own)
    m = _traced(lambda v: jnp.sin(v) * 2, X)
    run_pipeline(m, [AddDeadCosine(), ("jaxpr-dce", "")])
    assert "jaxpr.cos" not in walk_op_names(m)
    m = _traced(lambda v: jnp.sin(v) * 2, X)
    run_pipeline(m, [CallSquare(), ("jaxpr-inline", "prune=true"), ("jaxpr-dce", "")])
    assert walk_op_names(m) == {"builtin.module", "func.func", "func.return", "jaxpr.mul",
                                "jaxpr.sin", "jaxpr.constant"}


def test_facts_forgotten_when_the_module_changed_behind_them():
    m = _traced(lambda v: jnp.sin(v) * 2, X)
    assert recorded_op_names(m) is not None
    with context(), ir.Location.unknown():
        sin = walk(m, "jaxpr.sin")[0]
        Builder(ir.InsertionPoint(sin)).emit("cos", sin.operands[0])   # dead, unrecorded
    assert recorded_op_names(m) is None
    lower_module(m)
    assert "stablehlo.cosine" not in _text(m)


MODULE_TEXT = """
func.func private @sq(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "jaxpr.mul"(%x, %x) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @main(%a: tensor<4xf32>) -> tensor<4xf32> {
  %d = "jaxpr.exp"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %0 = "jaxpr.call"(%a) {callee = @sq} : (tensor<4xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


def test_module_from_text_inlined_and_cleaned():
    with context():
        m = ir.Module.parse(MODULE_TEXT)
    assert recorded_op_names(m) is None
    run_pipeline(m, "jaxpr-discharge-state,jaxpr-expand-transforms,jaxpr-inline{prune=true},"
                    "jaxpr-dce")
    assert walk_op_names(m) == {"builtin.module", "func.func", "func.return", "jaxpr.mul"}


def _with_refs(v):
    r = mjax.new_ref(v)
    r[...] += 1.0
    return mjax.freeze(r) * jnp.sin(v)


@pytest.mark.parametrize("f", [
    _with_refs,
    lambda v: (jnp.sin(v), v * 2)[1],
    lambda v: mjax.jit(jnp.sin)(v) + jnp.cos(v),
    lambda v: mjax.grad(lambda u: jnp.sum(jnp.sin(u) * u))(v),
    lambda v: lax.fori_loop(0, 3, lambda i, c: c * jnp.sin(c), v),
    _chain,
], ids=["refs", "dead_op", "nested_jit", "grad", "fori", "chain"])
def test_module_from_text_lowers_as_the_traced_one(f):
    traced = _traced(f, X)
    with context():
        parsed = ir.Module.parse(_text(traced))
    assert recorded_op_names(parsed) is None
    ours = clone_module(traced)
    lower_module(ours)
    lower_module(parsed)
    assert _text(parsed) == _text(ours)


def test_op_names_outside_a_pipeline_walk_and_forget():
    m = _traced(lambda v: jnp.sin(v) * 2, X)
    assert recorded_op_names(m) is not None
    assert analyses.op_names(m) == walk_op_names(m)    # (a pass run by hand: it walks)
    assert recorded_op_names(m) is None                # and nothing is trusted after it
    assert not analyses.known_live(m)


def test_facts_do_not_outlive_the_pipeline_or_a_failed_pass():
    m = _traced(_chain, X)
    run_pipeline(m, "jaxpr-inline,jaxpr-dce")
    assert recorded_op_names(m) is None

    class Fails(Pass):
        def run(self, module):
            analyses.preserve(module)
            raise RuntimeError("boom")
    m = _traced(_chain, X)
    with pytest.raises(RuntimeError):
        run_pipeline(m, [Fails()])
    assert recorded_op_names(m) is None
