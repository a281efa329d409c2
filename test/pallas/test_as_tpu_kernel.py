"""mjax.experimental.mosaic.as_tpu_kernel against JAX's, on a CPU: the same hand-written
Mosaic module (built once with jaxlib's bindings) is made a kernel by both libraries and
lowered for the TPU (`jit(f).trace(...).lower(lowering_platforms=("tpu",))`); both
`tpu_custom_call`s are decoded (base64 -> bytecode -> mosaic-serde{serialize=false}) and
must agree: the backend_config's fields, the op's attributes and the Mosaic body.
Off the TPU, calling a kernel raises JAX's NotImplementedError in both; on the chip
(MJAX_TEST_TPU=1) both run it and give the same values.
"""
from __future__ import annotations

import os

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle, from the test extra)
from jax._src.frozen_dict import FrozenDict  # noqa: E402  (JAX hashes its parameters)
from jax._src.interpreters import mlir as jax_mlir  # noqa: E402
from jax.experimental import mosaic as jmosaic  # noqa: E402

import mjax  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from jaxlib.mosaic.python import tpu  # noqa: E402
from mjax.dialect.context import context  # noqa: E402
from mjax.experimental import mosaic  # noqa: E402

from test_mosaic_differential import custom_calls, decode, normalize  # noqa: E402

ON_TPU = os.environ.get("MJAX_TEST_TPU", "") not in ("", "0")
VMEM = "#tpu.memory_space<vmem>"
BLOCK = f"memref<8x128xf32, {VMEM}>"

# One block, no grid: o = x + x.
DOUBLE = f"""
module {{
  func.func @main(%x: {BLOCK}, %o: {BLOCK}) attributes {{dimension_semantics = [],
      scalar_prefetch = 0 : i64, scratch_operands = 0 : i64}} {{
    %c0 = arith.constant 0 : index
    %v = vector.load %x[%c0, %c0] : {BLOCK}, vector<8x128xf32>
    %w = arith.addf %v, %v : vector<8x128xf32>
    vector.store %w, %o[%c0, %c0] : {BLOCK}, vector<8x128xf32>
    return
  }}
}}
"""

# A grid of 2 row blocks of (16, 128) arrays, each window placed by a transform function:
# o = x + y.
_WINDOW = "{transform_indices = @transform_%d, window_bounds = array<i64: 8, 128>}"
ADD = f"""
module {{
  func.func @add(%i: i32, %x: {BLOCK}, %y: {BLOCK}, %o: {BLOCK}) attributes {{
      dimension_semantics = [#tpu.dimension_semantics<parallel>],
      iteration_bounds = array<i64: 2>, scalar_prefetch = 0 : i64, scratch_operands = 0 : i64,
      tpu.core_type = #tpu.core_type<tc>,
      window_params = [{", ".join(_WINDOW % k for k in range(3))}]}} {{
    %c0 = arith.constant 0 : index
    %a = vector.load %x[%c0, %c0] : {BLOCK}, vector<8x128xf32>
    %b = vector.load %y[%c0, %c0] : {BLOCK}, vector<8x128xf32>
    %s = arith.addf %a, %b : vector<8x128xf32>
    vector.store %s, %o[%c0, %c0] : {BLOCK}, vector<8x128xf32>
    return
  }}
""" + "".join(f"""
  func.func @transform_{k}(%i: i32) -> (i32, i32) {{
    %c0 = arith.constant 0 : i32
    return %i, %c0 : i32, i32
  }}""" for k in range(3)) + "\n}\n"

# Two results of two dtypes: o1 = x * 2 (f32), o2 = n + 1 (i32).
TWO = f"""
module {{
  func.func @main(%x: {BLOCK}, %n: memref<8x128xi32, {VMEM}>, %o1: {BLOCK},
                  %o2: memref<8x128xi32, {VMEM}>) attributes {{dimension_semantics = [],
      scalar_prefetch = 0 : i64, scratch_operands = 0 : i64}} {{
    %c0 = arith.constant 0 : index
    %v = vector.load %x[%c0, %c0] : {BLOCK}, vector<8x128xf32>
    %two = arith.constant dense<2.0> : vector<8x128xf32>
    %w = arith.mulf %v, %two : vector<8x128xf32>
    vector.store %w, %o1[%c0, %c0] : {BLOCK}, vector<8x128xf32>
    %m = vector.load %n[%c0, %c0] : memref<8x128xi32, {VMEM}>, vector<8x128xi32>
    %one = arith.constant dense<1> : vector<8x128xi32>
    %k = arith.addi %m, %one : vector<8x128xi32>
    vector.store %k, %o2[%c0, %c0] : memref<8x128xi32, {VMEM}>, vector<8x128xi32>
    return
  }}
}}
"""

# A SparseCore kernel (its core type) over a core-parallel grid of one core: the config
# names the device type (and the one core), and takes no layout passes.
HBM = "memref<8x128xf32, #tpu.memory_space<hbm>>"
SPARSE_CORE = f"""
module {{
  func.func @main(%i: i32, %x: {HBM}, %o: {HBM}) attributes {{
      dimension_semantics = [#tpu.dimension_semantics<core_parallel>],
      iteration_bounds = array<i64: 1>, scalar_prefetch = 0 : i64, scratch_operands = 0 : i64,
      tpu.core_type = #tpu.core_type<sc_vector_subcore>,
      window_params = [{{transform_indices = @t0}}, {{transform_indices = @t1}}]}} {{
    return
  }}
  func.func @t0(%i: i32) -> (i32, i32) {{
    %c0 = arith.constant 0 : i32
    return %c0, %c0 : i32, i32
  }}
  func.func @t1(%i: i32) -> (i32, i32) {{
    %c0 = arith.constant 0 : i32
    return %c0, %c0 : i32, i32
  }}
}}
"""

F32 = ((8, 128), np.float32)
KERNELS = {   # name -> (module text, argument (shape, dtype)s, result (shape, dtype)s)
    "double": (DOUBLE, [F32], F32),
    "add": (ADD, [((16, 128), np.float32)] * 2, ((16, 128), np.float32)),
    "two": (TWO, [F32, ((8, 128), np.int32)], (F32, ((8, 128), np.int32))),
    "sparse_core": (SPARSE_CORE, [F32], F32),
}


def jax_module(text: str) -> ir.Module:
    """The module built in a context of JAX's (as a JAX user makes one)."""
    ctx = jax_mlir.make_ir_context()
    tpu.register_dialect(ctx)
    with ctx, ir.Location.unknown():
        return ir.Module.parse(text)


def _out_type(S, result):
    if isinstance(result[0], tuple) and isinstance(result[0][0], tuple):
        return tuple(S(s, d) for s, d in result)
    return S(*result)


# parameter set -> (JAX's keywords, mjax's keywords)
def _params(J, M):
    return {
        "defaults": ({}, {}),
        "named": ({"kernel_name": "my_kernel"}, {"kernel_name": "my_kernel"}),
        "everything": (
            dict(kernel_name="k", cost_estimate=dict(flops=1024, transcendentals=3,
                                                     bytes_accessed=8192,
                                                     remote_bytes_transferred=0),
                 vmem_limit_bytes=1 << 20,
                 flags=FrozenDict({"xla_b": 3, "xla_a": True, "xla_c": 0.5}),
                 allow_input_fusion=[True], input_output_aliases=((0, 0),),
                 internal_scratch_in_bytes=4096,
                 has_side_effects=J.TpuSideEffectType.DATAFLOW_SIDE_EFFECTING,
                 disable_bounds_checks=True, disable_semaphore_checks=True,
                 shape_invariant_numerics=True, metadata=FrozenDict({"b": "1", "a": "x"})),
            dict(kernel_name="k", cost_estimate=dict(flops=1024, transcendentals=3,
                                                     bytes_accessed=8192,
                                                     remote_bytes_transferred=0),
                 vmem_limit_bytes=1 << 20, flags={"xla_b": 3, "xla_a": True, "xla_c": 0.5},
                 allow_input_fusion=[True], input_output_aliases=((0, 0),),
                 internal_scratch_in_bytes=4096,
                 has_side_effects=M.TpuSideEffectType.DATAFLOW_SIDE_EFFECTING,
                 disable_bounds_checks=True, disable_semaphore_checks=True,
                 shape_invariant_numerics=True, metadata={"b": "1", "a": "x"})),
        "side_effecting": ({"has_side_effects": J.TpuSideEffectType.SIDE_EFFECTING,
                            "serialization_format": None, "needs_layout_passes": True},
                           {"has_side_effects": M.TpuSideEffectType.SIDE_EFFECTING,
                            "serialization_format": None, "needs_layout_passes": True}),
        "memory_spaces": ({"output_memory_spaces": (J.TpuMemorySpace.HBM,),
                           "input_memory_spaces": (J.TpuMemorySpace.VMEM,)},
                          {"output_memory_spaces": (M.TpuMemorySpace.HBM,),
                           "input_memory_spaces": (M.TpuMemorySpace.VMEM,)}),
        "tiling": ({"tiling": J.Tiling.COMPACT}, {"tiling": M.Tiling.COMPACT}),
    }


CASES = [("double", p) for p in _params(jmosaic, mosaic) if p != "tiling"] + [
    ("add", "defaults"), ("add", "named"), ("two", "defaults"), ("two", "named"),
    ("sparse_core", "defaults"), ("sparse_core", "tiling")]


def _lowered_calls(text):
    with context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        return [decode(c) for c in custom_calls(module)]


@pytest.mark.parametrize("name,params", CASES)
@pytest.mark.parametrize("source", ["module", "text"])
def test_custom_call_matches_jax(name, params, source):
    text, args, result = KERNELS[name]
    jkw, mkw = _params(jmosaic, mosaic)[params]
    module = jax_module(text)
    jk = jmosaic.as_tpu_kernel(module, _out_type(jax.ShapeDtypeStruct, result), **jkw)
    mk = mosaic.as_tpu_kernel(module if source == "module" else text,
                              _out_type(mjax.ShapeDtypeStruct, result), **mkw)
    jtext = jax.jit(lambda *a: jk(*a)).trace(
        *[jax.ShapeDtypeStruct(s, d) for s, d in args]).lower(
        lowering_platforms=("tpu",)).as_text()
    mtext = mjax.jit(lambda *a: mk(*a)).trace(
        *[mjax.ShapeDtypeStruct(s, d) for s, d in args]).lower(
        lowering_platforms=("tpu",)).as_text()
    (jcall,), (mcall,) = _lowered_calls(jtext), _lowered_calls(mtext)
    assert mcall[0] == jcall[0]               # attributes and backend_config, body aside
    with context():
        assert normalize(mcall[1]) == normalize(jcall[1])      # the Mosaic body
    assert "jaxpr." not in mtext


def test_the_comparison_can_fail():
    """Another kernel, or other parameters, give another custom call."""
    text, args, result = KERNELS["double"]
    calls = []
    for kw in ({}, {"vmem_limit_bytes": 1 << 20}):
        k = mosaic.as_tpu_kernel(text, mjax.ShapeDtypeStruct(*result), **kw)
        calls += _lowered_calls(mjax.jit(k).trace(
            *[mjax.ShapeDtypeStruct(s, d) for s, d in args]).lower(
            lowering_platforms=("tpu",)).as_text())
    k = mosaic.as_tpu_kernel(TWO, (mjax.ShapeDtypeStruct(*F32),
                                   mjax.ShapeDtypeStruct((8, 128), np.int32)))
    calls += _lowered_calls(mjax.jit(k).trace(
        mjax.ShapeDtypeStruct(*F32), mjax.ShapeDtypeStruct((8, 128), np.int32)).lower(
        lowering_platforms=("tpu",)).as_text())
    (c0, b0), (c1, b1), (c2, b2) = calls
    assert c0 != c1 and b0 == b1 and b0 != b2


def test_the_jaxpr_holds_one_tpu_custom_call():
    text, args, result = KERNELS["double"]
    k = mosaic.as_tpu_kernel(text, mjax.ShapeDtypeStruct(*result), kernel_name="dbl",
                             cost_estimate={"flops": 1, "transcendentals": 0,
                                            "bytes_accessed": 8})
    traced = mjax.jit(k).trace(mjax.ShapeDtypeStruct(*F32)).as_text()
    assert traced.count('"jaxpr.tpu_custom_call"') == 1
    assert 'kernel_name = "dbl"' in traced and "vector.load" in traced
    assert "has_side_effects" not in traced          # (defaults left out)


@pytest.mark.parametrize("name", ["double", "add", "two"])
def test_calling_off_the_tpu_raises_as_jax(name):
    """Off the TPU both libraries refuse to compile the kernel with the same
    NotImplementedError; on the chip both run it, with the same values (or, where
    libtpu refuses the hand-written module for JAX, refuse it too)."""
    text, args, result = KERNELS[name]
    rng = np.random.default_rng(0)
    values = [rng.integers(0, 100, s).astype(d) for s, d in args]
    jk = jmosaic.as_tpu_kernel(jax_module(text), _out_type(jax.ShapeDtypeStruct, result))
    mk = mosaic.as_tpu_kernel(text, _out_type(mjax.ShapeDtypeStruct, result))
    if ON_TPU:
        try:
            want = jax.tree.leaves(jk(*values))
        except Exception:                 # (libtpu's refusal: mjax hands it the same call)
            with pytest.raises(Exception):
                mk(*values)
            return
        for got, w in zip(mjax.tree.leaves(mk(*values)), want):
            np.testing.assert_array_equal(np.asarray(got), np.asarray(w))
        return
    message = "MLIR translation rule for primitive 'tpu_custom_call' not found for platform cpu"
    with pytest.raises(NotImplementedError, match=message):
        jk(*values)
    with pytest.raises(NotImplementedError, match=message):
        mk(*values)


@pytest.mark.parametrize("kw,message", [
    ({"collective_id": 3}, "collective_id has to be unspecified or None when not using a "
                           "custom barrier"),
    ({"vmem_limit_bytes": 1.5}, "vmem_limit_bytes must be an int"),
])
def test_parameters_the_module_cannot_take_raise_as_jax(kw, message):
    with pytest.raises(ValueError, match=message):
        jmosaic.as_tpu_kernel(jax_module(DOUBLE), jax.ShapeDtypeStruct(*F32), **kw)
    with pytest.raises(ValueError, match=message):
        mosaic.as_tpu_kernel(DOUBLE, mjax.ShapeDtypeStruct(*F32), **kw)


def test_tiling_is_for_sparse_core_kernels():
    with pytest.raises(ValueError, match="explicit tiling is only supported for SparseCore"):
        jmosaic.as_tpu_kernel(jax_module(DOUBLE), jax.ShapeDtypeStruct(*F32),
                              tiling=jmosaic.Tiling.COMPACT)
    with pytest.raises(ValueError, match="explicit tiling is only supported for SparseCore"):
        mosaic.as_tpu_kernel(DOUBLE, mjax.ShapeDtypeStruct(*F32), tiling=mosaic.Tiling.COMPACT)


def test_one_kernel_runs_on_one_kind_of_core():
    mixed = SPARSE_CORE.replace("func.func @t1(%i: i32) -> (i32, i32) {",
                                "func.func @t1(%i: i32) -> (i32, i32) attributes "
                                "{tpu.core_type = #tpu.core_type<tc>} {")
    message = "A single Mosaic kernel cannot contain both TensorCore and SparseCore"
    with pytest.raises(ValueError, match=message):
        jmosaic.as_tpu_kernel(jax_module(mixed), jax.ShapeDtypeStruct(*F32))
    with pytest.raises(ValueError, match=message):
        mosaic.as_tpu_kernel(mixed, mjax.ShapeDtypeStruct(*F32))


def test_a_module_that_does_not_verify_is_refused_when_made():
    bad = DOUBLE.replace("vector<8x128xf32>\n    %w", "vector<8x64xf32>\n    %w")
    with pytest.raises(Exception):
        jmosaic.as_tpu_kernel(jax_module(bad), jax.ShapeDtypeStruct(*F32))
    with pytest.raises(ir.MLIRError):
        mosaic.as_tpu_kernel(bad, mjax.ShapeDtypeStruct(*F32))


def test_transformations_are_refused():
    k = mosaic.as_tpu_kernel(DOUBLE, mjax.ShapeDtypeStruct(*F32))
    x = mjax.ShapeDtypeStruct(*F32)
    with pytest.raises(Exception, match="Differentiation rule for 'tpu_custom_call'"):
        mjax.jit(mjax.grad(lambda v: k(v).sum())).trace(x).lower(
            lowering_platforms=("tpu",))
    with pytest.raises(Exception, match="tpu_custom_call does not support non-trivial "
                                        "batching"):
        mjax.jit(mjax.vmap(k)).trace(mjax.ShapeDtypeStruct((2, 8, 128), np.float32)).lower(
            lowering_platforms=("tpu",))


def test_effects_keep_an_unused_kernel():
    """A side-effecting kernel stays when its result is unused; a pure one goes."""
    def lowered(effects):
        k = mosaic.as_tpu_kernel(DOUBLE, mjax.ShapeDtypeStruct(*F32),
                                 has_side_effects=effects)

        def f(x):
            k(x)
            return x
        return mjax.jit(f).trace(mjax.ShapeDtypeStruct(*F32)).lower(
            lowering_platforms=("tpu",)).as_text()
    assert "tpu_custom_call" not in lowered(mosaic.TpuSideEffectType.PURE)
    assert "tpu_custom_call" in lowered(mosaic.TpuSideEffectType.SIDE_EFFECTING)
