"""What the lowering speed-ups of issue #11 rely on, checked directly: uniform constants
become the same splat attribute, shared op parameters are never aliased, one DCE sweep
finds every dead op, an upstream pass manager is reused per thread only, inlining still
reaches calls inside inlined bodies."""
from __future__ import annotations

import threading

import numpy as np
import pytest
from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect import context
from mjax.passes import registry, run_pipeline
from mjax.passes.jaxpr_dce import remove_dead_ops


def _full_path(array):
    # The attribute built from all the elements (what dense_elements did for any
    # contiguous array before it looked for uniform ones).
    return A._dense_elements(np.ascontiguousarray(array))


@pytest.mark.parametrize("array", [
    np.full((128, 64), 2.5, np.float32),
    np.zeros((40, 3), np.int32),
    np.full((33,), -0.0),                                     # -0.0 splat
    np.array([0.0] * 20 + [-0.0] * 20),                       # equal, not the same bits
    np.full((30,), np.nan, np.float32),
    np.full((9, 9), 7, np.uint8),
    np.full((5, 7), 1.5, np.float16).T,                       # not contiguous
    np.arange(64.0).reshape(8, 8),                            # not uniform
    np.r_[np.ones(20, np.int64), 2],                          # differs only at the end
    np.ones((20,), bool),
    np.full((3, 7), 1 + 2j),
])
def test_uniform_constant_same_attribute(array):
    with context():
        got, want = A.dense_elements(array), _full_path(array)
        assert got == want
        assert str(got) == str(want)
        np.testing.assert_array_equal(A.dense_to_numpy(got), array)


def test_mixed_zero_signs_are_not_a_splat():
    with context():
        attr = A.dense_elements(np.array([0.0] * 20 + [-0.0] * 20))
        assert not ir.DenseElementsAttr(attr).is_splat
        out = A.dense_to_numpy(attr)
        assert np.signbit(out[20:]).all() and not np.signbit(out[:20]).any()


REDUCE_TWICE = """
func.func @f(%x: tensor<4x8xf32>, %g: tensor<5x2xi32>) -> (tensor<f32>, tensor<f32>) {
  %0 = "jaxpr.reduce_sum"(%x) {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  %1 = "jaxpr.reduce_sum"(%x) {axes = array<i64: 0, 1>} : (tensor<4x8xf32>) -> tensor<f32>
  return %0, %1 : tensor<f32>, tensor<f32>
}
"""


def _ops(module):
    fn = next(iter(module.body.operations))
    return [op for op in fn.regions[0].blocks[0].operations][:-1]


def test_params_shared_per_attributes_but_not_aliased():
    with context(), ir.Location.unknown():
        a, b = _ops(ir.Module.parse(REDUCE_TWICE))
        pa = a.params
        assert pa == b.params == {"axes": (0, 1), **{k: pa[k] for k in pa if k != "axes"}}
        pa["axes"] = "changed"
        pa["extra"] = 1
        assert b.params["axes"] == (0, 1) and "extra" not in b.params
        assert a.params["axes"] == (0, 1)


def test_params_with_mutable_parts_are_fresh_each_time():
    from mjax.dialect.builder import Builder
    from mjax.dialect.types import ShapedArray, tensor_type
    with context(), ir.Location.unknown():
        m = ir.Module.create()
        block = m.body
        fn_ty = ir.FunctionType.get([tensor_type(ShapedArray((5, 3), np.float32)),
                                     tensor_type(ShapedArray((4, 1), np.int32))], [])
        from jaxlib.mlir.dialects import func as func_d
        fn = func_d.FuncOp("f", fn_ty, ip=ir.InsertionPoint(block))
        entry = fn.add_entry_block()
        b = Builder(ir.InsertionPoint(entry))
        dn = {"offset_dims": (1,), "collapsed_slice_dims": (0,), "start_index_map": (0,),
              "operand_batching_dims": (), "start_indices_batching_dims": ()}
        y = b.emit("gather", entry.arguments[0], entry.arguments[1],
                   dimension_numbers=dn, slice_sizes=(1, 3))[0]
        op = y.owner.opview
        first = op.params
        first["dimension_numbers"]["offset_dims"] = (9,)
        assert op.params["dimension_numbers"]["offset_dims"] == (1,)


def test_dce_one_sweep_removes_chains_and_region_users():
    chain = "\n".join(f'  %{i + 1} = "jaxpr.sin"(%{i}) : (tensor<f32>) -> tensor<f32>'
                      for i in range(30))
    text = f"""
func.func @f(%a: tensor<f32>) -> tensor<f32> {{
  %0 = "jaxpr.cos"(%a) : (tensor<f32>) -> tensor<f32>
{chain}
  %w = "test.wrap"(%a) ({{
  ^bb0(%b: tensor<f32>):
    %d = "jaxpr.mul"(%b, %30) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "test.yield"(%b) : (tensor<f32>) -> ()
  }}) : (tensor<f32>) -> tensor<f32>
  return %w : tensor<f32>
}}
"""
    with context(), ir.Location.unknown():
        m = ir.Module.parse(text)
        assert remove_dead_ops(m.operation) == 32   # the mul in the region, 30 sins, cos
        left = str(m)
        assert "jaxpr." not in left and "test.wrap" in left


def test_upstream_pass_manager_reused_in_a_thread_only():
    text = """
func.func @f(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.add %x, %x : tensor<4xf32>
  %1 = stablehlo.add %x, %x : tensor<4xf32>
  %2 = stablehlo.multiply %0, %1 : tensor<4xf32>
  return %2 : tensor<4xf32>
}
"""
    with context():
        outs = []
        for _ in range(3):
            m = ir.Module.parse(text)
            run_pipeline(m, "canonicalize,cse")
            outs.append(str(m))
        assert outs[0] == outs[1] == outs[2]
        assert outs[0].count("stablehlo.add") == 1      # cse ran every time
        here = registry._upstream("cse", "")
        assert registry._upstream("cse", "") is here
        there = []
        t = threading.Thread(target=lambda: there.append(registry._upstream("cse", "")))
        t.start()
        t.join()
        assert there[0] is not here
    with pytest.raises(ValueError, match="unknown pass 'no-such-pass'"):
        run_pipeline(ir.Module.parse("module {}", context()), "no-such-pass")


def test_inline_reaches_calls_inside_inlined_bodies():
    text = """
func.func private @h(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.sin"(%x) : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
func.func private @g(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.call"(%x) {callee = @h} : (tensor<f32>) -> tensor<f32>
  %1 = "jaxpr.cos"(%0) : (tensor<f32>) -> tensor<f32>
  return %1 : tensor<f32>
}
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %0 = "jaxpr.call"(%x) {callee = @g} : (tensor<f32>) -> tensor<f32>
  return %0 : tensor<f32>
}
"""
    with context():
        m = ir.Module.parse(text)
        run_pipeline(m, "jaxpr-inline,jaxpr-dce")
        out = str(m)
        assert "jaxpr.call" not in out and "@g" not in out and "@h" not in out
        assert out.index("jaxpr.sin") < out.index("jaxpr.cos")


def test_nested_int_tuples_encoded_once_and_bools_kept_apart():
    with context():
        dn = (((1,), (0,)), ((), ()))
        first = A.encode(dn)
        assert A.encode((((1,), (0,)), ((), ()))) is first
        assert str(first) == "[[array<i64: 1>, array<i64: 0>], [array<i64>, array<i64>]]"
        assert A.decode(first) == dn
        ints, bools = A.encode(((1,), (0,))), A.encode(((True,), (False,)))
        assert ints != bools
        assert A.decode(bools) == ((True,), (False,))
        assert type(A.decode(bools)[0][0]) is bool
