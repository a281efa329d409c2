"""The transformation core: IR helpers (passes/ir_util.py), the block interpreter
(passes/interpreter.py), the derived-function table (passes/derived.py) and the
expansion table (passes/expansion.py), including ops with nested regions."""
from __future__ import annotations

import numpy as np
import pytest
from jaxlib.mlir import ir

from mjax.dialect import context
from mjax.dialect.ops import transforms as T
from mjax.passes import PassError, run_pipeline
from mjax.passes.autodiff import expand_transforms, jvp_function, vjp_functions
from mjax.passes.derived import DerivedTable
from mjax.passes.rules.tables import EXPAND
from mjax.passes.interpreter import Env, interpret
from mjax.passes.ir_util import (FunctionTable, clone_into, dependent_results, entry_block,
                                 nested_ops)
from mjax.passes.jaxpr_inline import Inline

SIN_MUL = """
func.func @f(%x: tensor<f64>, %y: tensor<f64>) -> (tensor<f64>, tensor<f64>) {
  %0 = "jaxpr.sin"(%x) : (tensor<f64>) -> tensor<f64>
  %1 = "jaxpr.mul"(%0, %y) : (tensor<f64>, tensor<f64>) -> tensor<f64>
  return %1, %0 : tensor<f64>, tensor<f64>
}
"""

# A (generic, unregistered) op with a region that reads a value from outside, as a
# non-isolated region would, and one with a region and its own block argument.
REGIONS = """
func.func @r(%x: tensor<f32>, %y: tensor<f32>) -> (tensor<f32>, tensor<f32>) {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  %1 = "test.wrap"(%y) ({
  ^bb0(%a: tensor<f32>):
    %dead = "jaxpr.cos"(%a) : (tensor<f32>) -> tensor<f32>
    %2 = "jaxpr.mul"(%a, %0) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %3 = "jaxpr.mul"(%a, %0) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    %4 = "jaxpr.add"(%2, %3) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "test.yield"(%4) : (tensor<f32>) -> ()
  }) : (tensor<f32>) -> tensor<f32>
  return %1, %y : tensor<f32>, tensor<f32>
}
"""


def parse(text):
    return ir.Module.parse(text)


@pytest.fixture
def ctx():
    c = context()
    with c, ir.Location.unknown(c):
        yield c


def _numpy_rule(op, args):
    fn = {"jaxpr.sin": lambda x: np.sin(x), "jaxpr.mul": lambda x, y: x * y}[op.name]
    return [fn(*args)]


def test_interpret_forward_evaluates_a_block(ctx):
    module = parse(SIN_MUL)      # kept alive: the function's blocks belong to it
    fn = FunctionTable(module).get("f")
    block = entry_block(fn)
    outs = interpret(block, lambda op: _numpy_rule, Env(zip(block.arguments, [0.5, 3.0])))
    np.testing.assert_allclose(outs, [np.sin(0.5) * 3.0, np.sin(0.5)])


def test_interpret_reverse_accumulates_cotangents(ctx):
    # Backward pass by hand: d/dx and d/dy of out0 + 2 * out1 at (0.5, 3.0).
    module = parse(SIN_MUL)      # kept alive: the function's blocks belong to it
    fn = FunctionTable(module).get("f")
    block = entry_block(fn)
    x, y = 0.5, 3.0
    primal = {"jaxpr.sin": lambda ct: [ct * np.cos(x)],
              "jaxpr.mul": lambda ct: [ct * y, ct * np.sin(x)]}
    cts = Env(default=0.0, accumulate=lambda a, b: a + b)
    ret = list(block.operations)[-1]
    cts.write(ret.operands[0], 1.0)
    cts.write(ret.operands[1], 2.0)
    got = interpret(block, lambda op: lambda op, c: primal[op.name](c[0]), cts, reverse=True)
    np.testing.assert_allclose(got, [(y + 2.0) * np.cos(x), np.sin(x)])


def test_interpret_reports_missing_terminator(ctx):
    module = parse(SIN_MUL)
    block = entry_block(FunctionTable(module).get("f"))
    list(block.operations)[-1].erase()
    with pytest.raises(PassError, match="no func.return or jaxpr.yield"):
        interpret(block, lambda op: _numpy_rule, Env(zip(block.arguments, [0.5, 3.0])))


def test_clone_into_remaps_values_read_inside_regions(ctx):
    module = parse(REGIONS)
    fn = FunctionTable(module).get("r")
    block = entry_block(fn)
    sin, wrap = [op.operation for op in block.operations][:2]
    # Clone the region op in front of itself, reading %x instead of sin(%x) inside.
    new = clone_into(wrap, ir.InsertionPoint(wrap), {sin.results[0]: block.arguments[0]})
    inner = [op for op in nested_ops(new) if op.name == "jaxpr.mul"]
    assert inner and all(op.operands[1] == block.arguments[0] for op in inner)
    assert all(op.operands[1] == sin.results[0] for op in nested_ops(wrap)
               if op.name == "jaxpr.mul")


def test_dependent_results_see_values_read_by_regions(ctx):
    module = parse(REGIONS)
    fn = FunctionTable(module).get("r")
    assert dependent_results(fn, (0,)) == {0}       # x -> sin -> read inside test.wrap
    assert dependent_results(fn, (1,)) == {0, 1}


def test_dce_and_cse_work_inside_regions(ctx):
    module = parse(REGIONS)
    run_pipeline(module, "jaxpr-cse,jaxpr-dce")
    text = str(module)
    assert "jaxpr.cos" not in text                  # dead inside the region
    assert text.count('"jaxpr.mul"') == 1           # merged inside the region
    assert '"jaxpr.sin"' in text                    # still read by the region


def test_inline_transformation_emits_into_a_new_block(ctx):
    # A rule "interprets this region's block into a new block": here, the copying
    # transformation moves test.wrap's body into a fresh block of a new function.
    module = parse(REGIONS)
    fns = FunctionTable(module)
    wrap = [op for op in nested_ops(fns.get("r")) if op.name == "test.wrap"][0]
    from mjax.dialect.types import ShapedArray
    f32 = ShapedArray((), np.float32)
    new_fn, block = fns.create("body", [f32, f32], [f32], fns.get("r"))
    region_block = wrap.regions[0].blocks[0]
    sin_value = list(entry_block(fns.get("r")).operations)[0].results[0]
    inline = Inline(ir.InsertionPoint(block)).into(block)
    env = Env(zip(region_block.arguments, block.arguments[:1]))
    env.write(sin_value, block.arguments[1])        # the outside value it reads
    outs = interpret(region_block, inline.rule_for, env)
    from jaxlib.mlir.dialects import func as func_d
    func_d.ReturnOp(outs, ip=ir.InsertionPoint(block))
    run_pipeline(module, "jaxpr-verify")
    assert '"jaxpr.add"' in str(new_fn)


def test_derived_functions_are_reused_after_reparsing(ctx):
    module = parse(SIN_MUL.replace("@f(", "@f_pub(").replace("func.func @", "func.func @"))
    name = jvp_function(module, "f_pub", (0,), (0,))
    info = vjp_functions(module, "f_pub", (0, 1), (0,))
    again = parse(str(module))
    count = str(again).count("func.func")
    assert jvp_function(again, "f_pub", (0,), (0,)) == name
    assert vjp_functions(again, "f_pub", (0, 1), (0,)) == info
    assert str(again).count("func.func") == count   # nothing rebuilt
    table = DerivedTable(FunctionTable(again))
    assert table.get("f_pub", T.JvpOp, diff_args=(0,), diff_results=(0,)) == name
    assert table.get("f_pub", T.JvpOp, diff_args=(1,), diff_results=(0,)) is None


NESTED_VMAP = """
func.func private @f(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = "jaxpr.sin"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  return %0 : tensor<3xf32>
}
func.func private @g(%xs: tensor<2x3xf32>) -> tensor<2x3xf32> {
  %0 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %0 : tensor<2x3xf32>
}
func.func @main(%xs: tensor<2x3xf32>, %t: tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>) {
  %0:2 = "jaxpr.jvp"(%xs, %t) {callee = @g} : (tensor<2x3xf32>, tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xf32>)
  return %0#0, %0#1 : tensor<2x3xf32>, tensor<2x3xf32>
}
"""


def test_vmap_under_jvp_is_batched_then_differentiated(ctx):
    module = parse(NESTED_VMAP)
    expand_transforms(module)
    run_pipeline(module, "jaxpr-verify")
    text = str(module)
    assert "jaxpr.vmap" not in text and "jaxpr.jvp\"" not in text
    g_jvp = FunctionTable(module).get("g_jvp")
    assert "f_batched_jvp" in str(g_jvp) or "jaxpr.cos" in str(module)


def test_transformation_op_without_expansion_rule_is_a_located_error(ctx, monkeypatch):
    module = parse("""
func.func private @f(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.checkpoint"(%x) {callee = @f} : (tensor<f32>) -> tensor<f32> loc("user.py":7:3)
  return %0 : tensor<f32>
}
""")
    monkeypatch.delitem(EXPAND, T.CheckpointOp)
    with pytest.raises(PassError, match=r"user.py:7:3: error: 'jaxpr.checkpoint' op no "
                                        r"expansion rule for transformation op"):
        expand_transforms(module)


def test_jvp_registrars_record_not_linear_once():
    # An op with a JVP rule and no transpose rule is "not linear" without a second,
    # hand-written list; a registered transpose rule still wins.
    from mjax.dialect.ops import elementwise as E
    from mjax.passes.rules import JVP, TRANSPOSE
    from mjax.passes.rules import ad_util as AD
    saved = dict(TRANSPOSE.reasons), dict(JVP.rules)
    try:
        TRANSPOSE.reasons.pop(E.SinOp, None)
        AD.defjvp(E.SinOp, lambda b, t, x: b.mul(t, b.cos(x)))
        assert TRANSPOSE.reason(E.SinOp) == "not linear in its operands"
        AD.defjvp(E.NegOp, lambda b, t, x: b.neg(t))
        assert E.NegOp in TRANSPOSE        # linear ops keep their transpose rule
        assert TRANSPOSE.reason(E.NegOp) is None
    finally:
        TRANSPOSE.reasons.clear()
        TRANSPOSE.reasons.update(saved[0])
        JVP.rules.clear()
        JVP.rules.update(saved[1])


def test_batched_functions_are_reused_after_reparsing(ctx):
    # The same vmap in a module printed and parsed again batches nothing new.
    module = parse(NESTED_VMAP.replace("@main", "@main0"))
    expand_transforms(module, lower_leftovers=False)
    assert str(module).count("func.func private @f_batched(") == 1
    again = parse(str(module).replace(
        "module {", """module {
  func.func @more(%xs: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %0 = "jaxpr.vmap"(%xs) {callee = @f, in_axes = array<i64: 0>, out_axes = array<i64: 0>, axis_size = 2 : i64} : (tensor<2x3xf32>) -> tensor<2x3xf32>
    return %0 : tensor<2x3xf32>
  }""", 1))
    count = str(again).count("func.func")
    expand_transforms(again, lower_leftovers=False)
    assert str(again).count("func.func") == count
    assert '"jaxpr.call"(%arg0) {callee = @f_batched}' in str(FunctionTable(again).get("more"))
