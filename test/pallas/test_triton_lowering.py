"""--jaxpr-pallas-to-triton: the Triton modules built for Pallas kernels verify, have the
structure of the kernels JAX's Pallas builds for the same programs (jax is the oracle:
it lowers its own Pallas kernels for CUDA without a GPU), and sit in the custom call XLA's
GPU backend compiles. The inputs are the hand-written kernels of the lit test
test/passes/pallas_triton.mlir (one IR contract, two checks)."""
import collections
import pathlib

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
import pytest
from jax.experimental import pallas as jpl
from jax.experimental.pallas import triton as jplt
from jaxlib.mlir import ir, passmanager

import mjax.passes  # noqa: F401  (registers the passes)
from mjax.dialect.context import context
from mjax.passes import run_pipeline
from mjax.passes.ir_util import nested_ops, symbol_refs
from mjax.passes.jaxpr_pallas_to_triton import live_functions
from mjax.passes.triton.kernel import (TRITON_CALL_TARGET, launch_grid, lower_pallas_call,
                                       sanitize_name)
from mjax.passes.registry import PassError

LIT = pathlib.Path(__file__).resolve().parents[1] / "passes" / "pallas_triton.mlir"
KERNELS = {}
for _chunk in LIT.read_text().split("// -----"):
    _name = next(line.split("@")[1].split("(")[0] for line in _chunk.splitlines()
                 if line.startswith("func.func @"))
    KERNELS[_name] = _chunk


def parse(text: str) -> ir.Module:
    with context(), ir.Location.unknown(context()):
        return ir.Module.parse(text)


def the_call(module):
    return next(op for op in nested_ops(module) if op.name == "jaxpr.pallas_call")


def build(name):
    """(Triton module, launch grid, kernel name) of the lit test's kernel `name`."""
    module = parse(KERNELS[name])
    with context(), ir.Location.unknown(context()):
        return lower_pallas_call(module, the_call(module))


def op_counts(module) -> collections.Counter:
    return collections.Counter(op.name for op in nested_ops(module))


def tt_func(module):
    [fn] = [op for op in module.body.operations if op.operation.name == "tt.func"]
    return fn.operation


# ---- the modules verify and have the expected structure ------------------------------
@pytest.mark.parametrize("name", sorted(KERNELS))
def test_triton_module_verifies(name):
    tmod, launch, kname = build(name)
    assert tmod.operation.verify()
    fn = tt_func(tmod)
    ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
    module = parse(KERNELS[name])
    call = the_call(module)
    # one pointer per input and output array, of the array's element type, no results
    assert len(ftype.inputs) == len(call.operands) + len(call.results)
    elts = [ir.RankedTensorType(v.type).element_type for v in list(call.operands)
            + list(call.results)]
    assert [str(t) for t in ftype.inputs] == [f"!tt.ptr<{e}>" for e in elts]
    assert not ftype.results
    assert ir.StringAttr(fn.attributes["sym_name"]).value == kname == name + "_kernel"
    counts = op_counts(tmod)
    assert counts["tt.return"] == 1
    assert not any(n.startswith("jaxpr.") for n in counts)


def test_matmul_structure():
    tmod, launch, _ = build("matmul")
    counts = op_counts(tmod)
    assert launch == [4, 4, 1]
    assert counts["scf.for"] == 1 and counts["tt.dot"] == 1
    assert counts["tt.load"] == 2 and counts["tt.store"] == 1
    assert counts["tt.get_program_id"] == 2
    [loop] = [op for op in nested_ops(tmod) if op.name == "scf.for"]
    # the dot and both block loads are inside the K loop; the store after it
    inner = op_counts(loop)
    assert inner["tt.dot"] == 1 and inner["tt.load"] == 2 and inner["tt.store"] == 0
    # the loop runs K / bk = 256 / 32 = 8 times, carrying only the accumulator (the
    # fori_loop index is the induction variable)
    lb, ub, step = (v.owner.attributes["value"] for v in list(loop.operands)[:3])
    assert [ir.IntegerAttr(a).value for a in (lb, ub, step)] == [0, 8, 1]
    assert [str(r.type) for r in loop.results] == ["tensor<64x64xf32>"]
    [dot] = [op for op in nested_ops(tmod) if op.name == "tt.dot"]
    assert str(dot.operands[0].type) == "tensor<64x32xf32>"
    assert str(dot.operands[1].type) == "tensor<32x64xf32>"


def test_masked_structure():
    tmod, launch, _ = build("masked")
    [load] = [op for op in nested_ops(tmod) if op.name == "tt.load"]
    [store] = [op for op in nested_ops(tmod) if op.name == "tt.store"]
    assert len(load.operands) == 3          # ptr, mask, other
    assert len(store.operands) == 3         # ptr, value, mask
    assert load.operands[1] == store.operands[2]
    assert str(load.operands[1].type) == "tensor<128xi1>"


def test_softmax_structure():
    tmod, launch, _ = build("softmax")
    counts = op_counts(tmod)
    assert launch == [8, 1, 1]
    assert counts["tt.reduce"] == 2 and counts["tt.extern_elementwise"] == 1
    assert counts["tt.load"] == 1 and counts["tt.store"] == 1


# ---- against JAX's own Pallas Triton lowering ----------------------------------------
def _jax_triton_call(f, *args):
    """JAX's custom call for `f` lowered for CUDA: (backend config dict, parsed module)."""
    lowered = jax.jit(f).trace(*args).lower(lowering_platforms=("cuda",))
    text = lowered.as_text()
    hlo = lowered.compiler_ir("stablehlo")
    calls = []

    def visit(op):
        if op.name == "stablehlo.custom_call":
            calls.append(op)
        return ir.WalkResult.ADVANCE
    hlo.operation.walk(visit)
    [call] = calls
    cfg = ir.DictAttr(call.attributes["mhlo.backend_config"])
    config = {cfg[i].name: cfg[i].attr for i in range(len(cfg))}
    blob = ir.StringAttr(config["ir"]).value_bytes
    with context():
        tmod = ir.Module.parse(blob)
        # JAX leaves dead ops (a swap's unused old value is loaded) for Triton to drop;
        # fold the same way ours is folded before counting.
        passmanager.PassManager.parse("builtin.module(canonicalize,cse)").run(tmod.operation)
    values = {k: (ir.IntegerAttr(v).value if isinstance(v, ir.IntegerAttr) else None)
              for k, v in config.items()}
    assert TRITON_CALL_TARGET in text
    return values, tmod


def _ours(name):
    module = parse(KERNELS[name])
    with context(), ir.Location.unknown(context()):
        run_pipeline(module, "jaxpr-pallas-to-triton")
    [call] = [op for op in nested_ops(module) if op.name == "stablehlo.custom_call"]
    assert ir.StringAttr(call.attributes["call_target_name"]).value == TRITON_CALL_TARGET
    cfg = ir.DictAttr(call.attributes["mhlo.backend_config"])
    config = {cfg[i].name: cfg[i].attr for i in range(len(cfg))}
    tmod = ir.Module.parse(ir.StringAttr(config["ir"]).value_bytes, context())
    assert tmod.operation.verify()
    values = {k: (ir.IntegerAttr(v).value if isinstance(v, ir.IntegerAttr) else None)
              for k, v in config.items()}
    return values, tmod


_MEMORY_AND_LOOPS = ("tt.load", "tt.store", "tt.dot", "scf.for", "tt.reduce",
                     "tt.get_program_id", "tt.atomic_rmw")


def _compare(name, jax_f, *args):
    ours, our_mod = _ours(name)
    theirs, their_mod = _jax_triton_call(jax_f, *args)
    for key in ("grid_x", "grid_y", "grid_z", "num_warps", "num_stages"):
        assert ours[key] == theirs[key], key
    oc, tc = op_counts(our_mod), op_counts(their_mod)
    assert {k: oc[k] for k in _MEMORY_AND_LOOPS} == {k: tc[k] for k in _MEMORY_AND_LOOPS}
    # the same pointer arguments
    ft = lambda m: [str(t) for t in ir.FunctionType(ir.TypeAttr(
        tt_func(m).attributes["function_type"]).value).inputs]
    assert ft(our_mod) == ft(their_mod)


def test_add_matches_jax():
    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[...]
    spec = jpl.BlockSpec((128,), lambda i: (i,))
    x = jnp.zeros((256,), jnp.float32)
    f = lambda x, y: jpl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((256,), x.dtype),
                                     grid=(2,), in_specs=[spec, spec], out_specs=spec,
                                     compiler_params=jplt.CompilerParams())(x, y)
    _compare("add", f, x, x)


def test_matmul_matches_jax():
    def kernel(x_ref, y_ref, o_ref):
        def body(k, acc):
            a = x_ref[:, jpl.ds(k * 32, 32)]
            b = y_ref[jpl.ds(k * 32, 32), :]
            return acc + jnp.dot(a, b, preferred_element_type=jnp.float32)
        o_ref[...] = jax.lax.fori_loop(0, 8, body, jnp.zeros((64, 64), jnp.float32))
    x = jnp.zeros((256, 256), jnp.float32)
    f = lambda x, y: jpl.pallas_call(
        kernel, out_shape=jax.ShapeDtypeStruct((256, 256), jnp.float32), grid=(4, 4),
        in_specs=[jpl.BlockSpec((64, 256), lambda i, j: (i, 0)),
                  jpl.BlockSpec((256, 64), lambda i, j: (0, j))],
        out_specs=jpl.BlockSpec((64, 64), lambda i, j: (i, j)),
        compiler_params=jplt.CompilerParams(num_warps=8, num_stages=2))(x, y)
    _compare("matmul", f, x, x)


def test_masked_matches_jax():
    def kernel(x_ref, o_ref):
        idx = jpl.program_id(0) * 128 + jnp.arange(128)
        mask = idx < 200
        v = jplt.load(x_ref, mask=mask, other=0.0)
        jplt.store(o_ref, v * v, mask=mask)
    spec = jpl.BlockSpec((128,), lambda i: (i,))
    x = jnp.zeros((200,), jnp.float32)
    f = lambda x: jpl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((200,), x.dtype),
                                  grid=(2,), in_specs=[spec], out_specs=spec,
                                  compiler_params=jplt.CompilerParams())(x)
    _compare("masked", f, x)


def test_softmax_matches_jax():
    def kernel(x_ref, o_ref):
        v = x_ref[...]
        e = jnp.exp(v - jnp.max(v))
        o_ref[...] = e / jnp.sum(e)
    spec = jpl.BlockSpec((None, 128), lambda i: (i, 0))
    x = jnp.zeros((8, 128), jnp.float32)
    f = lambda x: jpl.pallas_call(kernel, out_shape=jax.ShapeDtypeStruct((8, 128), x.dtype),
                                  grid=(8,), in_specs=[spec], out_specs=spec,
                                  compiler_params=jplt.CompilerParams(num_warps=2))(x)
    _compare("softmax", f, x)


# ---- the pass: custom call, cleanup, errors ------------------------------------------
def test_custom_call_replaces_pallas_call_and_kernel():
    module = parse(KERNELS["matmul"])
    with context(), ir.Location.unknown(context()):
        run_pipeline(module, "jaxpr-pallas-to-triton")
    names = [op.operation.name for op in nested_ops(module)]
    assert "jaxpr.pallas_call" not in names
    funcs = [ir.StringAttr(op.attributes["sym_name"]).value for op in module.body.operations]
    assert funcs == ["matmul"]   # the kernel and its index maps are gone
    [call] = [op for op in nested_ops(module) if op.name == "stablehlo.custom_call"]
    assert str(call.attributes["operand_layouts"]) == (
        "[dense<[1, 0]> : tensor<2xindex>, dense<[1, 0]> : tensor<2xindex>]")
    assert module.operation.verify()


def test_missing_rule_is_located_error():
    text = KERNELS["add"].replace('"jaxpr.add"', '"jaxpr.nextafter"')
    module = parse(text)
    with pytest.raises(PassError, match="no Triton lowering rule for 'jaxpr.nextafter'") as e:
        with context(), ir.Location.unknown(context()):
            run_pipeline(module, "jaxpr-pallas-to-triton")
    line = next(i for i, l in enumerate(text.splitlines(), 1) if "jaxpr.nextafter" in l)
    assert e.value.location is not None and f":{line}:" in str(e.value)


@pytest.mark.parametrize("grid,launch,folded", [
    ((), [1, 1, 1], False), ((5,), [5, 1, 1], False), ((2, 3, 4), [2, 3, 4], False),
    ((2, 3, 4, 5), [120, 1, 1], True), ((2, 70000), [140000, 1, 1], True)])
def test_launch_grid(grid, launch, folded):
    assert launch_grid(grid) == (launch, folded)


def test_folded_grid_program_ids():
    """A 4-D grid runs as one x dimension; each program id is recovered row-major
    (the last grid dim fastest) by unsigned rem/div."""
    text = KERNELS["add"].replace("grid = array<i64: 2>", "grid = array<i64: 1, 1, 1, 2>")
    text = text.replace("func.func private @add_kernel_index_map(%i: tensor<i32>)",
                        "func.func private @add_kernel_index_map(%a: tensor<i32>, "
                        "%b: tensor<i32>, %c: tensor<i32>, %i: tensor<i32>)")
    module = parse(text)
    with context(), ir.Location.unknown(context()):
        tmod, launch, _ = lower_pallas_call(module, the_call(module))
    assert launch == [2, 1, 1]
    assert tmod.operation.verify()
    counts = op_counts(tmod)
    assert counts["tt.get_program_id"] == 1
    assert counts["arith.remui"] >= 1


# ---- every elementwise/structural rule builds a module that verifies -----------------
def _elementwise_kernel(op_text: str, in_types: list[str], out_type: str) -> str:
    """A kernel loading one 128-element block per input, applying `op_text` (an op
    producing %r from %a0, %a1, ...), and storing %r."""
    shape_of = lambda t: t[len("tensor<"):-1].rsplit("x", 1)
    refs = [f"memref<{shape_of(t)[0]}x{shape_of(t)[1]}>" for t in in_types]
    out_ref = f"memref<{shape_of(out_type)[0]}x{shape_of(out_type)[1]}>"
    args = ", ".join(f"%x{i}: {r}" for i, r in enumerate(refs))
    lines = [f"func.func private @k({args}, %o: {out_ref}) {{",
             '  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>']
    for i, (r, t) in enumerate(zip(refs, in_types)):
        n = shape_of(t)[0]
        lines.append(f'  %a{i} = "jaxpr.ref_get"(%x{i}, %c0) {{sizes = array<i64: {n}>, '
                     f'squeezed = array<i64>}} : ({r}, tensor<i32>) -> {t}')
    lines.append("  " + op_text)
    n = shape_of(out_type)[0]
    lines.append(f'  %old = "jaxpr.ref_swap"(%o, %r, %c0) {{sizes = array<i64: {n}>, '
                 f'squeezed = array<i64>}} : ({out_ref}, {out_type}, tensor<i32>) -> '
                 f'{out_type}')
    lines += ["  return", "}",
              "func.func private @m(%i: tensor<i32>) -> tensor<i32> {",
              "  return %i : tensor<i32>", "}"]
    arrays = [t.replace(f"<{shape_of(t)[0]}x", f"<{2 * int(shape_of(t)[0])}x")
              for t in in_types]
    out_array = out_type.replace(f"<{n}x", f"<{2 * int(n)}x")
    spec = f"{{block_shape = array<i64: {n}>, index_map = @m}}"
    lines += [f"func.func @main({', '.join(f'%p{i}: {t}' for i, t in enumerate(arrays))}) "
              f"-> {out_array} {{",
              f'  %0 = "jaxpr.pallas_call"({", ".join(f"%p{i}" for i in range(len(arrays)))}) '
              f'{{callee = @k, name = "k", grid = array<i64: 2>, '
              f'in_specs = [{", ".join([spec] * len(arrays))}], out_specs = [{spec}], '
              f'interpret = false}} : ({", ".join(arrays)}) -> {out_array}',
              f"  return %0 : {out_array}", "}"]
    return "\n".join(lines)


F, I, U, B, H = ("tensor<128xf32>", "tensor<128xi32>", "tensor<128xui32>",
                 "tensor<128xi1>", "tensor<128xbf16>")
UNARY_FLOAT = ["exp", "exp2", "expm1", "log", "log1p", "sqrt", "rsqrt", "cbrt", "sin", "cos",
               "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh", "asinh", "acosh",
               "atanh", "erf", "erfc", "erf_inv", "lgamma", "floor", "ceil", "neg", "abs",
               "sign", "logistic"]
CASES = (
    [(f'%r = "jaxpr.{n}"(%a0) : ({F}) -> {F}', [F], F) for n in UNARY_FLOAT]
    + [(f'%r = "jaxpr.{n}"(%a0) : ({H}) -> {H}', [H], H) for n in ("exp", "tanh", "neg")]
    + [(f'%r = "jaxpr.{n}"(%a0, %a1) : ({t}, {t}) -> {t}', [t, t], t)
       for n in ("add", "sub", "mul", "div", "rem", "max", "min") for t in (F, I, U)]
    + [(f'%r = "jaxpr.{n}"(%a0, %a1) : ({t}, {t}) -> {t}', [t, t], t)
       for n in ("and", "or", "xor") for t in (I, B)]
    + [(f'%r = "jaxpr.{n}"(%a0, %a1) : ({I}, {I}) -> {I}', [I, I], I)
       for n in ("shift_left", "shift_right_arithmetic", "shift_right_logical")]
    + [(f'%r = "jaxpr.{n}"(%a0, %a1) : ({t}, {t}) -> {B}', [t, t], B)
       for n in ("eq", "ne", "lt", "le", "gt", "ge") for t in (F, I, U)]
    + [(f'%r = "jaxpr.{n}"(%a0, %a1) : ({F}, {F}) -> {F}', [F, F], F)
       for n in ("atan2", "pow")]
    + [(f'%r = "jaxpr.{n}"(%a0) : ({I}) -> {I}', [I], I)
       for n in ("neg", "abs", "sign", "not", "population_count", "clz")]
    + [(f'%r = "jaxpr.not"(%a0) : ({B}) -> {B}', [B], B),
       (f'%r = "jaxpr.is_finite"(%a0) : ({F}) -> {B}', [F], B),
       (f'%r = "jaxpr.round"(%a0) {{rounding_method = 1 : i64}} : ({F}) -> {F}', [F], F),
       (f'%r = "jaxpr.integer_pow"(%a0) {{y = 5 : i64}} : ({F}) -> {F}', [F], F),
       (f'%r = "jaxpr.integer_pow"(%a0) {{y = -2 : i64}} : ({F}) -> {F}', [F], F),
       (f'%r = "jaxpr.select_n"(%a0, %a1, %a2) : ({B}, {F}, {F}) -> {F}', [B, F, F], F),
       (f'%r = "jaxpr.select_n"(%a0, %a1, %a2, %a3) : ({I}, {F}, {F}, {F}) -> {F}',
        [I, F, F, F], F),
       (f'%r = "jaxpr.clamp"(%a0, %a1, %a2) : ({F}, {F}, {F}) -> {F}', [F, F, F], F),
       (f'%r = "jaxpr.bitcast_convert_type"(%a0) {{new_dtype = i32}} : ({F}) -> {I}', [F], I),
       (f'%r = "jaxpr.stop_gradient"(%a0) : ({F}) -> {F}', [F], F)]
    + [(f'%r = "jaxpr.convert_element_type"(%a0) {{new_dtype = {d}}} : ({s}) -> {t}', [s], t)
       for s in (F, I, U, B, H) for t, d in ((F, "f32"), (I, "i32"), (U, "ui32"),
                                             (B, "i1"), (H, "bf16")) if s != t]
)


@pytest.mark.parametrize("op_text,ins,out", CASES, ids=[c[0].split('"')[1] + ":"
                                                          + c[1][0] for c in CASES])
def test_rule_builds_verifying_module(op_text, ins, out):
    module = parse(_elementwise_kernel(op_text, ins, out))
    with context(), ir.Location.unknown(context()):
        tmod, _, _ = lower_pallas_call(module, the_call(module))
    assert tmod.operation.verify()
    counts = op_counts(tmod)
    assert counts["tt.load"] == len(ins) and counts["tt.store"] == 1


def test_bool_refs_are_bytes():
    """XLA stores booleans one per byte: a bool ref is an i8 pointer; loads compare with
    zero, stores widen."""
    module = parse(_elementwise_kernel(f'%r = "jaxpr.not"(%a0) : ({B}) -> {B}', [B], B))
    with context(), ir.Location.unknown(context()):
        tmod, _, _ = lower_pallas_call(module, the_call(module))
    text = str(tmod)
    assert "!tt.ptr<i8>" in text and "!tt.ptr<i1>" not in text
    assert "arith.cmpi ne" in text and "arith.extui" in text


# ---- the compile pipeline ------------------------------------------------------------
def test_pipeline_for_gpu_only():
    from mjax.tracing.lowering import PIPELINE, pipeline_for
    assert pipeline_for("cpu") == PIPELINE
    for platform in ("cuda", "rocm", "gpu"):
        names = [n for n, _ in pipeline_for(platform)]
        assert names.count("jaxpr-pallas-to-triton") == 1
        at = names.index("jaxpr-pallas-to-triton")
        assert names[at + 1] in ("jaxpr-pallas-interpret", "jaxpr-to-stablehlo")
        assert names.index("jaxpr-expand-transforms") < at
    assert dict(pipeline_for("rocm"))["jaxpr-pallas-to-triton"] == "platform=rocm"


def test_gpu_pipeline_gives_stablehlo():
    """After the Triton pass the usual lowering finishes the module: StableHLO only."""
    module = parse(KERNELS["softmax"])
    with context(), ir.Location.unknown(context()):
        run_pipeline(module, "jaxpr-pallas-to-triton,jaxpr-inline,jaxpr-dce,"
                             "jaxpr-to-stablehlo,canonicalize,cse,symbol-dce")
    text = str(module)
    assert "jaxpr." not in text and "memref" not in text
    assert text.count("stablehlo.custom_call @__gpu$xla.gpu.triton") == 1


# ---- kernels traced by mjax.experimental.pallas, against JAX's Pallas ----------------
import mjax  # noqa: E402
import mjax.numpy as mnp  # noqa: E402
from mjax.experimental import pallas as mpl  # noqa: E402
from mjax.experimental.pallas import triton as mplt  # noqa: E402


def _ours_traced(f, *args):
    """mjax's custom call config and Triton module for jit(f)(*args) on a GPU."""
    from mjax.tracing.lowering import pipeline_for
    text = mjax.jit(f).trace(*args).as_text(debug_info=True)
    module = parse(text)
    steps = pipeline_for("cuda")
    steps = steps[:[n for n, _ in steps].index("jaxpr-pallas-to-triton") + 1]
    with context(), ir.Location.unknown(context()):
        run_pipeline(module, steps)
    live = [op for fn in live_functions(module) for op in nested_ops(fn)]
    assert not [op for op in live if op.name == "jaxpr.pallas_call"]
    [call] = [op for op in live if op.name == "stablehlo.custom_call"]
    cfg = ir.DictAttr(call.attributes["mhlo.backend_config"])
    config = {cfg[i].name: cfg[i].attr for i in range(len(cfg))}
    tmod = ir.Module.parse(ir.StringAttr(config["ir"]).value_bytes, context())
    assert tmod.operation.verify()
    values = {k: (ir.IntegerAttr(v).value if isinstance(v, ir.IntegerAttr) else None)
              for k, v in config.items()}
    return values, tmod


def _both(make, shapes, **call_kw):
    """`make(lib, jnp, lax, pl, params)` builds f(*arrays) for a library; compares mjax's
    Triton kernel with JAX's for zero arrays of `shapes`."""
    jf = make(jax, jnp, jax.lax, jpl, jplt.CompilerParams, jplt)
    mf = make(mjax, mnp, mjax.lax, mpl, mplt.CompilerParams, mplt)
    jargs = [jnp.zeros(s, d) for s, d in shapes]
    margs = [mnp.zeros(s, d) for s, d in shapes]
    ours, our_mod = _ours_traced(mf, *margs)
    theirs, their_mod = _jax_triton_call(jf, *jargs)
    for key in ("grid_x", "grid_y", "grid_z", "num_warps", "num_stages"):
        assert ours[key] == theirs[key], key
    oc, tc = op_counts(our_mod), op_counts(their_mod)
    assert {k: oc[k] for k in _MEMORY_AND_LOOPS} == {k: tc[k] for k in _MEMORY_AND_LOOPS}
    ft = lambda m: [str(t) for t in ir.FunctionType(ir.TypeAttr(
        tt_func(m).attributes["function_type"]).value).inputs]
    assert ft(our_mod) == ft(their_mod)
    return our_mod


def _make_matmul(lib, jnp, lax, pl, params, gpu):
    bm, bn, bk = 32, 32, 16

    def kernel(x_ref, y_ref, o_ref):
        def body(i, acc):
            a = x_ref[:, pl.ds(i * bk, bk)]
            b = y_ref[pl.ds(i * bk, bk), :]
            return acc + jnp.dot(a, b, preferred_element_type=jnp.float32)
        acc = lax.fori_loop(0, 128 // bk, body, jnp.zeros((bm, bn), jnp.float32))
        o_ref[...] = acc.astype(o_ref.dtype)
    return lambda x, y: pl.pallas_call(
        kernel, out_shape=lib.ShapeDtypeStruct((128, 64), jnp.float32), grid=(4, 2),
        in_specs=[pl.BlockSpec((bm, 128), lambda i, j: (i, 0)),
                  pl.BlockSpec((128, bn), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((bm, bn), lambda i, j: (i, j)),
        compiler_params=params(num_warps=4, num_stages=2))(x, y)


def test_traced_matmul_matches_jax():
    mod = _both(_make_matmul, [((128, 128), jnp.float32), ((128, 64), jnp.float32)])
    [loop] = [op for op in nested_ops(mod) if op.name == "scf.for"]
    assert op_counts(loop)["tt.dot"] == 1


def _make_softmax(lib, jnp, lax, pl, params, gpu):
    def kernel(x_ref, o_ref):
        v = x_ref[...]
        e = jnp.exp(v - jnp.max(v, axis=1, keepdims=True))
        o_ref[...] = e / jnp.sum(e, axis=1, keepdims=True)
    spec = pl.BlockSpec((4, 64), lambda i: (i, 0))
    return lambda x: pl.pallas_call(kernel, out_shape=lib.ShapeDtypeStruct((16, 64), x.dtype),
                                    grid=(4,), in_specs=[spec], out_specs=spec,
                                    compiler_params=params(num_warps=2))(x)


def test_traced_softmax_matches_jax():
    _both(_make_softmax, [((16, 64), jnp.float32)])


def _make_layer_norm(lib, jnp, lax, pl, params, gpu):
    def kernel(x_ref, w_ref, o_ref):
        x = x_ref[...]
        mean = jnp.mean(x)
        var = jnp.mean((x - mean) ** 2)
        o_ref[...] = (x - mean) * lax.rsqrt(var + 1e-5) * w_ref[...]
    row = pl.BlockSpec((None, 128), lambda i: (i, 0))
    return lambda x, w: pl.pallas_call(
        kernel, out_shape=lib.ShapeDtypeStruct((8, 128), x.dtype), grid=(8,),
        in_specs=[row, pl.BlockSpec((128,), lambda i: (0,))], out_specs=row,
        compiler_params=params())(x, w)


def test_traced_layer_norm_matches_jax():
    _both(_make_layer_norm, [((8, 128), jnp.float32), ((128,), jnp.float32)])


def _make_masked(lib, jnp, lax, pl, params, gpu):
    def kernel(x_ref, o_ref):
        idx = pl.program_id(0) * 64 + jnp.arange(64)
        mask = idx < 100
        v = gpu.load(x_ref, mask=mask, other=0.0)
        gpu.store(o_ref, v + 1.0, mask=mask)
    spec = pl.BlockSpec((64,), lambda i: (i,))
    return lambda x: pl.pallas_call(kernel, out_shape=lib.ShapeDtypeStruct((100,), x.dtype),
                                    grid=(2,), in_specs=[spec], out_specs=spec,
                                    compiler_params=params())(x)


def test_traced_masked_matches_jax():
    mod = _both(_make_masked, [((100,), jnp.float32)])
    [load] = [op for op in nested_ops(mod) if op.name == "tt.load"]
    assert len(load.operands) == 3


def _make_flash(lib, jnp, lax, pl, params, gpu):
    """Flash-attention style: one query block per program, a fori_loop over key/value
    blocks keeping a running max and sum."""
    bq, bk, d, n = 16, 16, 16, 64

    def kernel(q_ref, k_ref, v_ref, o_ref):
        q = q_ref[...]

        def body(i, carry):
            acc, m, l = carry
            k = k_ref[pl.ds(i * bk, bk), :]
            v = v_ref[pl.ds(i * bk, bk), :]
            s = jnp.dot(q, k.T, preferred_element_type=jnp.float32)
            m_new = jnp.maximum(m, jnp.max(s, axis=1))
            p = jnp.exp(s - m_new[:, None])
            scale = jnp.exp(m - m_new)
            l_new = l * scale + jnp.sum(p, axis=1)
            acc = acc * scale[:, None] + jnp.dot(p, v, preferred_element_type=jnp.float32)
            return acc, m_new, l_new
        init = (jnp.zeros((bq, d), jnp.float32), jnp.full((bq,), -jnp.inf, jnp.float32),
                jnp.zeros((bq,), jnp.float32))
        acc, m, l = lax.fori_loop(0, n // bk, body, init)
        o_ref[...] = acc / l[:, None]
    return lambda q, k, v: pl.pallas_call(
        kernel, out_shape=lib.ShapeDtypeStruct((n, d), jnp.float32), grid=(n // bq,),
        in_specs=[pl.BlockSpec((bq, d), lambda i: (i, 0)),
                  pl.BlockSpec((n, d), lambda i: (0, 0)),
                  pl.BlockSpec((n, d), lambda i: (0, 0))],
        out_specs=pl.BlockSpec((bq, d), lambda i: (i, 0)),
        compiler_params=params(num_warps=4, num_stages=2))(q, k, v)


def test_traced_flash_attention_matches_jax():
    mod = _both(_make_flash, [((64, 16), jnp.float32)] * 3)
    [loop] = [op for op in nested_ops(mod) if op.name == "scf.for"]
    inner = op_counts(loop)
    assert inner["tt.dot"] == 2 and inner["tt.load"] == 2


def _make_atomic(lib, jnp, lax, pl, params, gpu):
    def kernel(x_ref, o_ref):
        gpu.atomic_add(o_ref, (pl.ds(0, 32),), x_ref[...])
    return lambda x: pl.pallas_call(
        kernel, out_shape=lib.ShapeDtypeStruct((32,), x.dtype), grid=(4,),
        in_specs=[pl.BlockSpec((32,), lambda i: (i,))],
        out_specs=pl.BlockSpec((32,), lambda i: (0,)), compiler_params=params())(x)


def test_traced_atomic_add_matches_jax():
    _both(_make_atomic, [((128,), jnp.float32)])


def test_traced_when_and_program_ids():
    """pl.when on a 2-D grid: scf.if around the store; both program ids used."""
    def kernel(x_ref, o_ref):
        o_ref[...] = mnp.zeros((16, 16), mnp.float32)

        @mpl.when(mpl.program_id(1) == 0)
        def _():
            o_ref[...] = x_ref[...] * 2.0
    f = lambda x: mpl.pallas_call(
        kernel, out_shape=mjax.ShapeDtypeStruct((32, 32), mnp.float32), grid=(2, 2),
        in_specs=[mpl.BlockSpec((16, 16), lambda i, j: (i, j))],
        out_specs=mpl.BlockSpec((16, 16), lambda i, j: (i, j)))(x)
    _, mod = _ours_traced(f, mnp.zeros((32, 32), mnp.float32))
    counts = op_counts(mod)
    assert counts["scf.if"] == 1 and counts["tt.get_program_id"] == 2
    [if_op] = [op for op in nested_ops(mod) if op.name == "scf.if"]
    assert op_counts(if_op)["tt.store"] == 1 and counts["tt.store"] == 2


# ---- 2-D structural rules: each builds a verifying module ----------------------------
def _kernel_2d(body: str, out_type: str) -> str:
    """A kernel reading one (16, 32) f32 block as %a0 and storing `body`'s %r."""
    dims = list(ir.RankedTensorType(ir.Type.parse(out_type, context())).shape)
    out_ref = f"memref<{out_type[len('tensor<'):-1]}>"
    zeros = ", ".join(["%c0"] * len(dims))
    sizes = ", ".join(map(str, dims))
    out_array = out_type
    idx_t = ", ".join(["tensor<i32>"] * len(dims))
    return "\n".join([
        f"func.func private @k(%x: memref<16x32xf32>, %o: {out_ref}) {{",
        '  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>',
        '  %a0 = "jaxpr.ref_get"(%x, %c0, %c0) {sizes = array<i64: 16, 32>, squeezed = '
        'array<i64>} : (memref<16x32xf32>, tensor<i32>, tensor<i32>) -> tensor<16x32xf32>',
        "  " + body,
        f'  %old = "jaxpr.ref_swap"(%o, %r{", " if dims else ""}{zeros}) {{sizes = '
        f'array<i64{": " if dims else ""}{sizes}>, squeezed = array<i64>}} : ({out_ref}, '
        f'{out_type}{", " if dims else ""}{idx_t}) -> {out_type}',
        "  return", "}",
        "func.func private @mx(%i: tensor<i32>) -> (tensor<i32>, tensor<i32>) {",
        '  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>',
        "  return %c0, %c0 : tensor<i32>, tensor<i32>", "}",
        f"func.func private @mo(%i: tensor<i32>) -> ({idx_t}) {{",
        '  %c0 = "jaxpr.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>',
        f"  return {zeros}{' : ' if dims else ''}{idx_t}", "}",
        f"func.func @main(%x: tensor<16x32xf32>) -> {out_array} {{",
        f'  %0 = "jaxpr.pallas_call"(%x) {{callee = @k, name = "k", grid = array<i64: 1>, '
        f'in_specs = [{{block_shape = array<i64: 16, 32>, index_map = @mx}}], out_specs = '
        f'[{{block_shape = array<i64{": " if dims else ""}{sizes}>, index_map = @mo}}], '
        f'interpret = false}} : (tensor<16x32xf32>) -> {out_array}',
        f"  return %0 : {out_array}", "}"])


T = "tensor<16x32xf32>"
STRUCTURAL = [
    (f'%r = "jaxpr.transpose"(%a0) {{permutation = array<i64: 1, 0>}} : ({T}) -> '
     f'tensor<32x16xf32>', "tensor<32x16xf32>", "tt.trans"),
    (f'%r = "jaxpr.reshape"(%a0) {{new_sizes = array<i64: 512>}} : ({T}) -> tensor<512xf32>',
     "tensor<512xf32>", "tt.reshape"),
    (f'%r = "jaxpr.reduce_sum"(%a0) {{axes = array<i64: 0, 1>}} : ({T}) -> tensor<f32>',
     "tensor<f32>", "tt.reduce"),
    (f'%r = "jaxpr.reduce_max"(%a0) {{axes = array<i64: 1>}} : ({T}) -> tensor<16xf32>',
     "tensor<16xf32>", "tt.reduce"),
    (f'%r = "jaxpr.reduce_prod"(%a0) {{axes = array<i64: 0>}} : ({T}) -> tensor<32xf32>',
     "tensor<32xf32>", "tt.reduce"),
    (f'%r = "jaxpr.argmax"(%a0) {{axes = array<i64: 1>, index_dtype = i32}} : ({T}) -> '
     f'tensor<16xi32>', "tensor<16xi32>", "tt.reduce"),
    (f'%r = "jaxpr.argmin"(%a0) {{axes = array<i64: 0>, index_dtype = i32}} : ({T}) -> '
     f'tensor<32xi32>', "tensor<32xi32>", "tt.reduce"),
    (f'%r = "jaxpr.iota"() {{dtype = f32, shape = array<i64: 16, 32>, dimension = 1 : i64}} '
     f': () -> {T}', T, "tt.make_range"),
    (f'%s = "jaxpr.reduce_sum"(%a0) {{axes = array<i64: 1>}} : ({T}) -> tensor<16xf32>\n'
     f'  %r = "jaxpr.broadcast_in_dim"(%s) {{shape = array<i64: 16, 32>, broadcast_dimensions '
     f'= array<i64: 0>}} : (tensor<16xf32>) -> {T}', T, "tt.broadcast"),
    (f'%s = "jaxpr.reduce_sum"(%a0) {{axes = array<i64: 0>}} : ({T}) -> tensor<32xf32>\n'
     f'  %r = "jaxpr.expand_dims"(%s) {{dimensions = array<i64: 0>}} : (tensor<32xf32>) -> '
     f'tensor<1x32xf32>', "tensor<1x32xf32>", "tt.reshape"),
    (f'%n = "jaxpr.exp"(%a0) : ({T}) -> {T}\n'
     f'  %r = "jaxpr.concatenate"(%a0, %n) {{dimension = 1 : i64}} : ({T}, {T}) -> '
     f'tensor<16x64xf32>', "tensor<16x64xf32>", "tt.join"),
    (f'%n = "jaxpr.neg"(%a0) : ({T}) -> {T}\n'
     f'  %r = "jaxpr.concatenate"(%a0, %n) {{dimension = 0 : i64}} : ({T}, {T}) -> '
     f'tensor<32x32xf32>', "tensor<32x32xf32>", "tt.join"),
    (f'%n = "jaxpr.neg"(%a0) : ({T}) -> {T}\n'
     f'  %r = "jaxpr.stack"(%a0, %n) {{axis = 0 : i64}} : ({T}, {T}) -> '
     f'tensor<2x16x32xf32>', "tensor<2x16x32xf32>", "tt.join"),
    (f'%n = "jaxpr.exp"(%a0) : ({T}) -> {T}\n'
     f'  %r = "jaxpr.stack"(%a0, %n) {{axis = 2 : i64}} : ({T}, {T}) -> '
     f'tensor<16x32x2xf32>', "tensor<16x32x2xf32>", "tt.join"),
    (f'%n = "jaxpr.exp"(%a0) : ({T}) -> {T}\n'
     f'  %s = "jaxpr.stack"(%a0, %n) {{axis = 1 : i64}} : ({T}, {T}) -> tensor<16x2x32xf32>\n'
     f'  %u:2 = "jaxpr.unstack"(%s) {{axis = 1 : i64}} : (tensor<16x2x32xf32>) -> ({T}, {T})\n'
     f'  %r = "jaxpr.sub"(%u#1, %u#0) : ({T}, {T}) -> {T}', T, "tt.split"),
    (f'%r = "jaxpr.cumsum"(%a0) {{axis = 1 : i64}} : ({T}) -> {T}', T, "tt.scan"),
    (f'%r = "jaxpr.cumprod"(%a0) {{axis = 0 : i64, reverse = true}} : ({T}) -> {T}', T,
     "tt.scan"),
    (f'%r = "jaxpr.cummax"(%a0) {{axis = 1 : i64, reverse = true}} : ({T}) -> {T}', T,
     "tt.scan"),
    (f'%r = "jaxpr.cummin"(%a0) {{axis = 0 : i64}} : ({T}) -> {T}', T, "tt.scan"),
    (f'%r = "jaxpr.dot_general"(%a0, %a0) {{dimension_numbers = [[[0], [0]], [[], []]], '
     f'preferred_element_type = f32}} : ({T}, {T}) -> tensor<32x32xf32>',
     "tensor<32x32xf32>", "tt.dot"),
    (f'%r = "jaxpr.dot_general"(%a0, %a0) {{dimension_numbers = [[[1], [1]], [[], []]], '
     f'precision = ["HIGHEST", "HIGHEST"], preferred_element_type = f32}} : ({T}, {T}) -> '
     f'tensor<16x16xf32>', "tensor<16x16xf32>", "tt.dot"),
]


@pytest.mark.parametrize("body,out,expect", STRUCTURAL,
                         ids=[b.split('"')[-2] if '"' in b else b for b, _, _ in STRUCTURAL])
def test_structural_rule_verifies(body, out, expect):
    module = parse(_kernel_2d(body, out))
    with context(), ir.Location.unknown(context()):
        tmod, _, _ = lower_pallas_call(module, the_call(module))
    assert tmod.operation.verify()
    assert op_counts(tmod)[expect] >= 1


def test_dot_precision():
    """f32 dots use TF32 (JAX's GPU default) unless a HIGHEST precision asks for IEEE."""
    texts = []
    for body, out, _ in STRUCTURAL[-2:]:
        module = parse(_kernel_2d(body, out))
        with context(), ir.Location.unknown(context()):
            texts.append(str(lower_pallas_call(module, the_call(module))[0]))
    assert "inputPrecision = tf32" in texts[0] and "tt.trans" in texts[0]
    assert "tt.dot" in texts[1] and "inputPrecision" not in texts[1]  # ieee: the default


def test_input_output_aliases():
    text = KERNELS["add"].replace("interpret = false, compiler_params = {}",
                                  "interpret = false, input_output_aliases = array<i64: 1, 0>")
    module = parse(text)
    with context(), ir.Location.unknown(context()):
        run_pipeline(module, "jaxpr-pallas-to-triton")
    [call] = [op for op in nested_ops(module) if op.name == "stablehlo.custom_call"]
    assert "operand_index = 1" in str(call.attributes["output_operand_aliases"])


def test_jit_lowering_on_gpu_emits_jax_custom_call(monkeypatch):
    """With a GPU default backend, jit(...).lower() of a pallas_call gives the custom call
    JAX gives for the same kernel, attribute for attribute (the kernel bytes aside)."""
    import re
    from mjax.runtime import backend
    monkeypatch.setattr(backend, "_DEFAULT", [backend.Platform("xla", "cuda")])

    def make(lib, jnp_, pl, params):
        def add_kernel(x_ref, y_ref, o_ref):
            o_ref[...] = x_ref[...] * 2.0 + y_ref[...]
        spec = pl.BlockSpec((64, 32), lambda i, j: (i, j))
        return lambda x, y: pl.pallas_call(
            add_kernel, out_shape=lib.ShapeDtypeStruct((128, 64), jnp_.float32),
            grid=(2, 2), in_specs=[spec, spec], out_specs=spec,
            compiler_params=params(num_warps=2))(x, y)
    ms = mjax.ShapeDtypeStruct((128, 64), mnp.float32)
    ours = mjax.jit(make(mjax, mnp, mpl, mplt.CompilerParams)).trace(ms, ms).lower().as_text()
    js = jax.ShapeDtypeStruct((128, 64), jnp.float32)
    theirs = jax.jit(make(jax, jnp, jpl, jplt.CompilerParams)).trace(js, js).lower(
        lowering_platforms=("cuda",)).as_text()

    def call_line(text):
        [line] = [l.strip() for l in text.splitlines() if "stablehlo.custom_call" in l]
        return re.sub(r'ir = "(?:[^"\\]|\\.)*"', 'ir = "..."', line)
    assert call_line(ours) == call_line(theirs)
    assert "jaxpr." not in ours


# ---- running the kernels: a NumPy interpreter of the Triton IR (no GPU in CI) --------
from triton_interpreter import run_triton  # noqa: E402  (test/pallas is on sys.path)

RUN_CASES = {
    "matmul": (_make_matmul, [((128, 128), np.float32), ((128, 64), np.float32)]),
    "softmax": (_make_softmax, [((16, 64), np.float32)]),
    "layer_norm": (_make_layer_norm, [((8, 128), np.float32), ((128,), np.float32)]),
    "masked": (_make_masked, [((100,), np.float32)]),
    "flash": (_make_flash, [((64, 16), np.float32)] * 3),
    "atomic": (_make_atomic, [((128,), np.float32)]),
}
# Interpret mode fills outputs no kernel wrote with NaN (as JAX's does), so a kernel that
# only accumulates atomically is checked against NumPy on zero-initialized outputs.
NUMPY_REFERENCE = {"atomic": lambda x: x.reshape(4, 32).sum(0)}


def _make_nested(lib, jnp, lax, pl, params, gpu):
    """A kernel calling a jitted helper (a call op) with cumsum, where, gelu, sigmoid."""
    @lib.jit
    def helper(v):
        return jnp.cumsum(v, axis=0) * 0.1 + jnp.where(v > 0.5, 1.0, 0.0)

    def kernel(x_ref, o_ref):
        v = x_ref[...]
        o_ref[...] = helper(v) + lib.nn.gelu(v) + lib.nn.sigmoid(v)
    spec = pl.BlockSpec((64,), lambda i: (i,))
    return lambda x: pl.pallas_call(kernel, out_shape=lib.ShapeDtypeStruct((128,), x.dtype),
                                    grid=(2,), in_specs=[spec], out_specs=spec,
                                    compiler_params=params())(x)


RUN_CASES["nested_calls"] = (_make_nested, [((128,), np.float32)])


def _interpreted(f, *inputs):
    """f's outputs with its pallas_calls in interpret mode under XLA (pipeline_for("cpu"):
    compiled for a CPU, mjax.jit(f) with interpret=False raises, as JAX does)."""
    from mjax.tracing.lowering import pipeline_for
    from mjax.runtime import get_backend
    module = parse(mjax.jit(f).trace(*inputs).as_text())
    with context(), ir.Location.unknown(context()):
        run_pipeline(module, pipeline_for("cpu"))
    return get_backend("cpu").compile(str(module)).run_numpy(*inputs)


def _run_config(values, tmod, inputs, out_shapes):
    grid = (values["grid_x"], values["grid_y"], values["grid_z"])
    return run_triton(tmod, inputs, [np.zeros(s, np.float32) for s in out_shapes], grid)


@pytest.mark.parametrize("name", sorted(RUN_CASES))
def test_kernel_runs_like_interpret_mode_and_jax(name):
    """Our Triton kernel, run program by program, gives what mjax's interpret mode gives
    on CPU, and what JAX's own Triton kernel for the same code gives (run the same way)."""
    make, shapes = RUN_CASES[name]
    rng = np.random.default_rng(0)
    inputs = [rng.standard_normal(s).astype(d) for s, d in shapes]
    mf = make(mjax, mnp, mjax.lax, mpl, mplt.CompilerParams, mplt)
    jf = make(jax, jnp, jax.lax, jpl, jplt.CompilerParams, jplt)
    if name in NUMPY_REFERENCE:
        expected = NUMPY_REFERENCE[name](*inputs)
    else:
        [expected] = _interpreted(mf, *inputs)
    ours = _run_config(*_ours_traced(mf, *[mnp.zeros(s, d) for s, d in shapes]), inputs,
                       [expected.shape])[0]
    theirs = _run_config(*_jax_triton_call(jf, *[jnp.zeros(s, d) for s, d in shapes]),
                         inputs, [expected.shape])[0]
    np.testing.assert_allclose(theirs, expected, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(ours, expected, rtol=1e-4, atol=1e-5)


def test_matmul_kernel_against_numpy():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((256, 256)).astype(np.float32)
    y = rng.standard_normal((256, 256)).astype(np.float32)
    module = parse(KERNELS["matmul"])
    with context(), ir.Location.unknown(context()):
        tmod, launch, _ = lower_pallas_call(module, the_call(module))
    [out] = run_triton(tmod, [x, y], [np.zeros((256, 256), np.float32)], tuple(launch))
    np.testing.assert_allclose(out, x.astype(np.float64) @ y, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("grid", [(1, 1, 1, 2), (2, 2, 2, 2)])
def test_folded_grid_runs_every_block(grid):
    """A 4-D grid folded into x: each program still finds its own block."""
    n = int(np.prod(grid))
    text = KERNELS["add"].replace("grid = array<i64: 2>",
                                  f"grid = array<i64: {', '.join(map(str, grid))}>")
    text = text.replace("tensor<256xf32>", f"tensor<{128 * n}xf32>")
    strides = [int(np.prod(grid[k + 1:])) for k in range(4)]
    body = ['  %s{0} = "jaxpr.constant"() {{value = dense<{1}> : tensor<i32>}} : () -> '
            'tensor<i32>'.format(k, s) for k, s in enumerate(strides)]
    body += [f'  %m{k} = "jaxpr.mul"(%g{k}, %s{k}) : (tensor<i32>, tensor<i32>) -> tensor<i32>'
             for k in range(4)]
    body += ['  %t0 = "jaxpr.add"(%m0, %m1) : (tensor<i32>, tensor<i32>) -> tensor<i32>',
             '  %t1 = "jaxpr.add"(%t0, %m2) : (tensor<i32>, tensor<i32>) -> tensor<i32>',
             '  %t2 = "jaxpr.add"(%t1, %m3) : (tensor<i32>, tensor<i32>) -> tensor<i32>',
             "  return %t2 : tensor<i32>"]
    text = text.replace(
        "func.func private @add_kernel_index_map(%i: tensor<i32>) -> tensor<i32> {\n"
        "  return %i : tensor<i32>",
        "func.func private @add_kernel_index_map(%g0: tensor<i32>, %g1: tensor<i32>, "
        "%g2: tensor<i32>, %g3: tensor<i32>) -> tensor<i32> {\n" + "\n".join(body))
    module = parse(text)
    with context(), ir.Location.unknown(context()):
        tmod, launch, _ = lower_pallas_call(module, the_call(module))
    assert launch == [n, 1, 1]
    rng = np.random.default_rng(2)
    x, y = (rng.standard_normal(128 * n).astype(np.float32) for _ in range(2))
    [out] = run_triton(tmod, [x, y], [np.zeros(128 * n, np.float32)], tuple(launch))
    np.testing.assert_array_equal(out, x + y)


def test_control_kernel_runs():
    """The lit test's control-flow kernel: fori over [pid, 4), a step-2 while, pl.when
    storing on program 0 only, then every program atomically adds its block."""
    rng = np.random.default_rng(3)
    x = rng.standard_normal(64).astype(np.float32)
    module = parse(KERNELS["control"])
    with context(), ir.Location.unknown(context()):
        tmod, launch, _ = lower_pallas_call(module, the_call(module))
    [out] = run_triton(tmod, [x], [np.zeros(16, np.float32)], tuple(launch))
    v0 = x[:16]
    acc = v0 * 5                          # program 0: v + 4 more v's
    for _ in range(2):                    # i = 0, 2 < 4: two squarings
        acc = acc * acc
    expected = acc + x.reshape(4, 16).sum(0)
    np.testing.assert_allclose(out, expected, rtol=1e-5)


# ---- each elementwise rule computes what the StableHLO lowering of the op computes ----
_NP = {"f32": np.float32, "bf16": ml_dtypes.bfloat16, "i32": np.int32, "ui32": np.uint32,
       "i1": np.bool_}


def _case_inputs(op_text, ins, rng):
    """Inputs in each op's domain (no division by zero, shifts under 32, non-negative
    values into unsigned conversions, select_n cases in range)."""
    arrays = []
    for k, t in enumerate(ins):
        elt = t[len("tensor<128x"):-1]
        n = 256
        if elt in ("f32", "bf16"):
            a = rng.uniform(-0.95, 0.95, n)
            if "new_dtype = ui32" in op_text:
                a = np.abs(a) * 100
            elif "new_dtype = i32" in op_text and "convert" in op_text:
                a = a * 100
        elif elt == "i32":
            a = rng.integers(1, 50, n) * rng.choice([-1, 1], n)
            if "shift" in op_text and k == 1:
                a = rng.integers(-3, 40, n)      # past the bit width, and negative
            if "select_n" in op_text and k == 0:
                a = rng.integers(0, 3, n)
            if "new_dtype = ui32" in op_text:
                a = np.abs(a)
        elif elt == "ui32":
            a = rng.integers(1, 1000, n)
        else:
            a = rng.random(n) < 0.5
        arrays.append(np.asarray(a).astype(_NP[elt]))
    return arrays


@pytest.mark.parametrize("op_text,ins,out", CASES, ids=[c[0].split('"')[1] + ":"
                                                          + c[1][0] for c in CASES])
def test_rule_computes_like_stablehlo(op_text, ins, out):
    from mjax.tracing.lowering import pipeline_for
    from mjax.runtime import get_backend
    text = _elementwise_kernel(op_text, ins, out)
    inputs = _case_inputs(op_text, ins, np.random.default_rng(len(op_text)))
    module = parse(text)
    with context(), ir.Location.unknown(context()):
        tmod, launch, _ = lower_pallas_call(module, the_call(module))
    out_dt = _NP[out[len("tensor<128x"):-1]]
    [got] = run_triton(tmod, inputs, [np.zeros(256, out_dt)], tuple(launch))
    cpu = parse(text)
    with context(), ir.Location.unknown(context()):
        run_pipeline(cpu, pipeline_for("cpu"))
    [want] = get_backend("cpu").compile(str(cpu)).run_numpy(*inputs)
    if np.dtype(out_dt).kind == "f" or out_dt is ml_dtypes.bfloat16:
        tol = 2e-2 if out_dt is ml_dtypes.bfloat16 else 2e-5
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32),
                                   rtol=tol, atol=tol)
    else:
        np.testing.assert_array_equal(got, want)


# NaN inputs too, except into products (NaN through a dot is not a rule of ours).
NUMERIC_STRUCTURAL = [(b, o, e, nan) for b, o, e in STRUCTURAL for nan in (False, True)
                      if not (nan and "dot_general" in b)]


@pytest.mark.parametrize("body,out,expect,with_nan", NUMERIC_STRUCTURAL,
                         ids=[b.split('"')[-2] + ("+nan" if n else "")
                              for b, _, _, n in NUMERIC_STRUCTURAL])
def test_structural_rule_computes_like_stablehlo(body, out, expect, with_nan):
    """2-D rules against the StableHLO lowering; with NaNs too (reductions and argmax
    propagate or pick them as XLA does)."""
    from mjax.tracing.lowering import pipeline_for
    from mjax.runtime import get_backend
    text = _kernel_2d(body, out)
    rng = np.random.default_rng(7)
    x = rng.standard_normal((16, 32)).astype(np.float32)
    x[3, 5] = x[3, 9]                       # a tie: argmax/argmin take the first
    if with_nan:
        x[2, 7] = x[11, 30] = np.nan
    module = parse(text)
    with context(), ir.Location.unknown(context()):
        tmod, launch, _ = lower_pallas_call(module, the_call(module))
    out_t = ir.RankedTensorType(ir.Type.parse(out, context()))
    out_dt = np.int32 if str(out_t.element_type) == "i32" else np.float32
    [got] = run_triton(tmod, [x], [np.zeros(out_t.shape, out_dt)], tuple(launch))
    cpu = parse(text)
    with context(), ir.Location.unknown(context()):
        run_pipeline(cpu, pipeline_for("cpu"))
    [want] = get_backend("cpu").compile(str(cpu)).run_numpy(x)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("batch", [(3,), (2, 3)])
def test_vmapped_kernel_runs(batch):
    """vmap gives the pallas_call leading grid dims (a 4-D grid folds into x); the Triton
    kernel still computes every batch element's blocks."""
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2.0 + 1.0
    spec = mpl.BlockSpec((8, 32), lambda i, j: (i, j))
    f = lambda x: mpl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct((16, 64),
                                                                          mnp.float32),
                                  grid=(2, 2), in_specs=[spec], out_specs=spec)(x)
    for _ in batch:
        f = mjax.vmap(f)
    shape = batch + (16, 64)
    x = np.random.default_rng(4).standard_normal(shape).astype(np.float32)
    values, tmod = _ours_traced(f, mnp.zeros(shape, mnp.float32))
    grid = (values["grid_x"], values["grid_y"], values["grid_z"])
    assert int(np.prod(grid)) == int(np.prod(batch)) * 4
    [out] = run_triton(tmod, [x], [np.zeros(shape, np.float32)], grid)
    np.testing.assert_array_equal(out, x * 2 + 1)


def test_dead_functions_are_not_compiled():
    """A pallas_call in a private function nothing references is left alone (symbol-dce
    removes it later); the live one is compiled."""
    text = KERNELS["add"].replace("func.func @add(", "func.func private @dead(")
    text += text.split("// CALL-NOT:     @add_kernel")[-1].split(
        "func.func private @add_kernel(")[0]
    text += KERNELS["add"][KERNELS["add"].index("func.func @add("):]
    module = parse(text)
    with context(), ir.Location.unknown(context()):
        run_pipeline(module, "jaxpr-pallas-to-triton")
    names = [op.name for op in nested_ops(module)]
    assert names.count("stablehlo.custom_call") == 1
    assert names.count("jaxpr.pallas_call") == 1
    # the dead call's kernel and index map stay: the module still verifies
    with context(), ir.Location.unknown(context()):
        run_pipeline(module, "jaxpr-verify")


@pytest.mark.parametrize("x64", [False, True])
def test_index_maps_with_floor_division(x64):
    """Index maps using // and % (lowered by the rules too, on the program ids), a
    program id and an iota in the body; the same with x64 on (int64 iota)."""
    def kernel(x_ref, o_ref):
        shift = (mpl.program_id(0) // 2).astype(mnp.float32)
        o_ref[...] = x_ref[...] + shift + mnp.arange(32).astype(mnp.float32)[None, :]
    f = lambda x: mpl.pallas_call(
        kernel, out_shape=mjax.ShapeDtypeStruct((32, 64), mnp.float32), grid=(4,),
        in_specs=[mpl.BlockSpec((16, 32), lambda i: (i // 2, i % 2))],
        out_specs=mpl.BlockSpec((16, 32), lambda i: (i % 2, i // 2)))(x)
    x = np.random.default_rng(5).standard_normal((32, 64)).astype(np.float32)
    with mjax.enable_x64(x64):
        values, tmod = _ours_traced(f, mnp.zeros((32, 64), mnp.float32))
        [expected] = _interpreted(f, x)
    [out] = run_triton(tmod, [x], [np.zeros((32, 64), np.float32)], (values["grid_x"], 1, 1))
    # program i reads block (i // 2, i % 2) and writes block (i % 2, i // 2)
    ref = np.zeros_like(x)
    for i in range(4):
        src = x[16 * (i // 2):16 * (i // 2) + 16, 32 * (i % 2):32 * (i % 2) + 32]
        ref[16 * (i % 2):16 * (i % 2) + 16, 32 * (i // 2):32 * (i // 2) + 32] = (
            src + i // 2 + np.arange(32))
    np.testing.assert_array_equal(out, ref)
    np.testing.assert_array_equal(out, expected)


def test_grad_of_custom_vjp_around_kernels_on_gpu(monkeypatch):
    """grad of a custom_vjp whose forward and backward are Pallas kernels: on a GPU both
    kernels (forward and backward pass) become Triton custom calls, nothing else stays."""
    from mjax.runtime import backend
    monkeypatch.setattr(backend, "_DEFAULT", [backend.Platform("xla", "cuda")])
    spec = mpl.BlockSpec((64,), lambda i: (i,))

    def scale_kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 3.0

    def pcall(x):
        return mpl.pallas_call(scale_kernel, grid=(2,), in_specs=[spec], out_specs=spec,
                               out_shape=mjax.ShapeDtypeStruct((128,), mnp.float32))(x)

    @mjax.custom_vjp
    def f(x):
        return pcall(x)
    f.defvjp(lambda x: (pcall(x), None), lambda _, g: (pcall(g),))
    s = mjax.ShapeDtypeStruct((128,), mnp.float32)
    text = mjax.jit(mjax.grad(lambda x: mnp.sum(f(x) ** 2))).trace(s).lower().as_text()
    assert text.count(f"stablehlo.custom_call @{TRITON_CALL_TARGET}") == 2
    assert "jaxpr." not in text and "memref" not in text


def test_rocm_platform_option():
    """platform=rocm: device math from ocml, one pipeline stage by default (as JAX)."""
    module = parse(KERNELS["softmax"].replace("compiler_params = {num_warps = 2 : i64}",
                                              "compiler_params = {}"))
    with context(), ir.Location.unknown(context()):
        run_pipeline(module, "jaxpr-pallas-to-triton{platform=rocm}")
    [call] = [op for op in nested_ops(module) if op.name == "stablehlo.custom_call"]
    cfg = ir.DictAttr(call.attributes["mhlo.backend_config"])
    assert ir.IntegerAttr(cfg["num_stages"]).value == 1
    assert ir.IntegerAttr(cfg["num_warps"]).value == 4
    tmod = ir.Module.parse(ir.StringAttr(cfg["ir"]).value_bytes, context())
    assert '"__ocml_exp_f32"' in str(tmod) and "__nv_" not in str(tmod)


def test_every_op_has_a_triton_cell():
    """Each op of the dialect has a Triton rule or a reason it has none (the error says
    it), and no rule or reason names an op the dialect lacks."""
    from mjax.dialect.core import OPS
    from mjax.passes.rules.tables import TRITON
    assert not set(TRITON.rules) & set(TRITON.reasons)
    ops = set(OPS.values())
    missing = sorted(op.OPERATION_NAME for op in ops - set(TRITON.rules) - set(TRITON.reasons))
    assert not missing, f"ops with neither a Triton rule nor a reason: {missing}"
    unknown = sorted(op.__name__ for op in (set(TRITON.rules) | set(TRITON.reasons)) - ops)
    assert not unknown, f"Triton cells for ops the dialect does not define: {unknown}"


def test_unsupported_op_error_gives_the_reason():
    text = KERNELS["add"].replace(
        '%s = "jaxpr.add"(%a, %b) : (tensor<128xf32>, tensor<128xf32>) -> tensor<128xf32>',
        '%s = "jaxpr.rev"(%a) {dimensions = array<i64: 0>} : (tensor<128xf32>) -> '
        'tensor<128xf32>')
    module = parse(text)
    with pytest.raises(PassError, match=r"'jaxpr.rev'.*index the ref instead"):
        with context(), ir.Location.unknown(context()):
            run_pipeline(module, "jaxpr-pallas-to-triton")


# ---- the Pallas documentation kernels of test/pallas/pallas_kernels.py ---------------
import pallas_kernels as K  # noqa: E402  (test/pallas is on sys.path)


def _run_traced(f, inputs, out_shapes):
    """Runs f's (single) Pallas kernel, compiled for a GPU, in the Triton interpreter."""
    values, tmod = _ours_traced(f, *[mnp.zeros(a.shape, a.dtype) for a in inputs])
    grid = (values["grid_x"], values["grid_y"], values["grid_z"])
    return run_triton(tmod, inputs, [np.zeros(s, np.float32) for s in out_shapes], grid)


def _lib(**kw):
    return dict(pl=mpl, jnp=mnp, lax=mjax.lax, jax=mjax, interpret=False, **kw)


def test_doc_kernels_add_and_matmul():
    rng = np.random.default_rng(10)
    x, y = (rng.standard_normal(256).astype(np.float32) for _ in range(2))
    [out] = _run_traced(lambda a, b: K.add(x=a, y=b, block=64, **_lib()), [x, y], [(256,)])
    np.testing.assert_array_equal(out, x + y)
    [out] = _run_traced(lambda a, b: K.add(x=a, y=b, **_lib()), [x, y], [(256,)])
    np.testing.assert_array_equal(out, x + y)            # no grid: one whole-array block
    a = rng.standard_normal((64, 32)).astype(np.float32)
    b = rng.standard_normal((32, 48)).astype(np.float32)
    [out] = _run_traced(lambda p, q: K.matmul(x=p, y=q, **_lib()), [a, b], [(64, 48)])
    np.testing.assert_allclose(out, a.astype(np.float64) @ b, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("rows", [1, 4])
def test_doc_kernel_softmax(rows):
    x = (np.random.default_rng(11).standard_normal((16, 64)) * 3).astype(np.float32)
    [out] = _run_traced(lambda a: K.softmax(x=a, rows=rows, **_lib()), [x], [(16, 64)])
    np.testing.assert_allclose(out, K.np_softmax(x), rtol=1e-5, atol=1e-7)


def test_doc_kernel_flash_attention():
    rng = np.random.default_rng(12)
    q, k, v = (rng.standard_normal((64, 16)).astype(np.float32) for _ in range(3))
    [out] = _run_traced(lambda a, b, c: K.flash_attention(q=a, k=b, v=c, bq=16, bk=16,
                                                          **_lib()), [q, k, v], [(64, 16)])
    np.testing.assert_allclose(out, K.np_attention(q, k, v), rtol=1e-4, atol=1e-5)


def test_doc_kernel_layer_norm_forward():
    """The forward kernel (three outputs, rank-0 refs for the per-row mean and rstd)."""
    rng = np.random.default_rng(13)
    x = rng.standard_normal((8, 128)).astype(np.float32)
    w, b = (rng.standard_normal(128).astype(np.float32) for _ in range(2))
    ln = K.layer_norm(**_lib())
    values, tmod = _ours_traced(ln, *[mnp.zeros(a.shape, a.dtype) for a in (x, w, b)])
    out, mean, rstd = run_triton(tmod, [x, w, b], [np.zeros((8, 128), np.float32),
                                                   np.zeros(8, np.float32),
                                                   np.zeros(8, np.float32)],
                                 (values["grid_x"], 1, 1))
    np.testing.assert_allclose(out, K.np_layer_norm(x, w, b), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(mean, x.mean(1), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rstd, 1 / np.sqrt(x.var(1) + 1e-5), rtol=1e-4)


def test_element_block_dims_are_a_clear_error():
    def kernel(w_ref, o_ref):
        o_ref[...] = w_ref[0:4] + w_ref[2:6]
    f = lambda a: mpl.pallas_call(
        kernel, out_shape=mjax.ShapeDtypeStruct((16,), mnp.float32), grid=(4,),
        in_specs=[mpl.BlockSpec((mpl.Element(6, (1, 1)),), lambda i: (4 * i,))],
        out_specs=mpl.BlockSpec((4,), lambda i: (i,)))(a)
    with pytest.raises(PassError, match="pl.Element block dimensions are not supported"):
        _ours_traced(f, mnp.zeros(16, mnp.float32))


def test_doc_kernel_scratch_is_a_clear_error():
    x = np.zeros((32, 32), np.float32)
    from mjax.experimental.pallas import tpu as pltpu
    f = lambda a, b: K.matmul_k_grid(x=a, y=b, scratch=pltpu.VMEM, **_lib())
    with pytest.raises(PassError, match="scratch buffers are not supported"):
        _ours_traced(f, mnp.zeros(x.shape, x.dtype), mnp.zeros(x.shape, x.dtype))


# ---- any pallas_call of a traced program, alone: Triton kernel vs interpret mode ------
def _extract(module, call) -> str:
    """A module whose @main runs only `call` on its own arguments, with the functions it
    names (kernel, index maps, what they call)."""
    funcs = {op.sym_name.value: op for op in module.body.operations
             if op.operation.name == "func.func"}
    need, todo = set(), [call]
    while todo:
        op = todo.pop()
        refs: set = set()
        for inner in [op] + nested_ops(op):
            symbol_refs(inner.attributes.values(), refs)
        for r in refs - need:
            need.add(r)
            todo.append(funcs[r].operation)
    types = [str(v.type) for v in call.operands]
    rtypes = [str(r.type) for r in call.results]
    asm = call.get_asm(print_generic_op_form=True)
    head, rest = asm.split('"jaxpr.pallas_call"(', 1)
    rest = rest.split(")", 1)[1]
    args = ", ".join(f"%a{i}" for i in range(len(types)))
    body = f'%r:{len(rtypes)} = "jaxpr.pallas_call"({args}){rest}'
    outs = ", ".join(f"%r#{i}" for i in range(len(rtypes)))
    main = (f"func.func @main({', '.join(f'%a{i}: {t}' for i, t in enumerate(types))}) -> "
            f"({', '.join(rtypes)}) {{\n  {body}\n  return {outs} : {', '.join(rtypes)}\n}}")
    return "\n".join([str(funcs[n].operation) for n in sorted(need)] + [main])


def _check_each_call(f, *avals):
    """Every pallas_call f runs (after the transformations are expanded) as a Triton
    kernel in the interpreter equals the same call in interpret mode under XLA."""
    from mjax.tracing.lowering import pipeline_for
    from mjax.runtime import get_backend
    module = parse(mjax.jit(f).trace(*avals).as_text())
    with context(), ir.Location.unknown(context()):
        run_pipeline(module, "jaxpr-expand-transforms")
    calls = [op for fn in live_functions(module) for op in nested_ops(fn)
             if op.name == "jaxpr.pallas_call"]
    rng = np.random.default_rng(20)
    for call in calls:
        text = _extract(module, call)
        inputs = [rng.uniform(0.5, 1.5, tuple(ir.RankedTensorType(v.type).shape)).astype(
            np.float32) for v in call.operands]
        gpu = parse(text)
        with context(), ir.Location.unknown(context()):
            tmod, launch, _ = lower_pallas_call(gpu, the_call(gpu))
        outs = run_triton(tmod, inputs, [np.zeros(ir.RankedTensorType(r.type).shape,
                                                  np.float32) for r in call.results],
                          tuple(launch))
        cpu = parse(text)
        with context(), ir.Location.unknown(context()):
            run_pipeline(cpu, pipeline_for("cpu"))
        wants = get_backend("cpu").compile(str(cpu)).run_numpy(*inputs)
        for got, want in zip(outs, wants):
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
    return len(calls)


def test_layer_norm_grad_kernels_match_interpret_mode():
    """grad of the documentation's layer norm (custom_vjp over a forward and a backward
    kernel): both kernels, compiled for a GPU, compute what interpret mode computes."""
    ln = K.layer_norm(**_lib())
    loss = lambda x, w, b: mnp.sum(ln(x, w, b) * mnp.arange(128.0))
    s = [mjax.ShapeDtypeStruct((8, 128), mnp.float32), mjax.ShapeDtypeStruct((128,),
         mnp.float32), mjax.ShapeDtypeStruct((128,), mnp.float32)]
    assert _check_each_call(mjax.grad(loss, argnums=(0, 1, 2)), *s) >= 2   # fwd, bwd


def test_vmapped_doc_kernels_match_interpret_mode():
    """vmap (a leading grid dim) of the softmax and flash-attention kernels."""
    sm = mjax.vmap(lambda a: K.softmax(x=a, rows=2, **_lib()))
    assert _check_each_call(sm, mjax.ShapeDtypeStruct((3, 8, 64), mnp.float32)) == 1
    fa = mjax.vmap(lambda a, b, c: K.flash_attention(q=a, k=b, v=c, bq=16, bk=16, **_lib()))
    s = mjax.ShapeDtypeStruct((2, 32, 16), mnp.float32)
    assert _check_each_call(fa, s, s, s) == 1


@pytest.mark.parametrize("name,want", [("add_kernel", "add_kernel"), ("my-kernel.v2",
                                       "my_kernel_v2"), ("2d", "_2d"), ("<lambda>", "_lambda_")])
def test_kernel_names_are_ptx_names(name, want):
    assert sanitize_name(name) == want
    text = KERNELS["add"].replace('name = "add_kernel"', f'name = "{name}"')
    module = parse(text)
    with context(), ir.Location.unknown(context()):
        tmod, _, kname = lower_pallas_call(module, the_call(module))
    assert kname == want and ir.StringAttr(tt_func(tmod).attributes["sym_name"]).value == want
