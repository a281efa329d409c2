"""--jaxpr-pallas-to-mosaic against JAX's Pallas TPU lowering, on a CPU: each kernel of the
corpus (mosaic_corpus.py) is exported for the TPU by JAX (`jax.export(...,
platforms=["tpu"])`, its forward-compatible form, serde version 11) and lowered by mjax's
pass; both `tpu_custom_call` bodies are decoded (base64 -> bytecode -> mosaic-serde
{serialize=false}) and compared, names and locations aside.

`EXACT` kernels print identically (SSA names aside, the kernel named @kernel): all of them
now. A kernel where mjax's frontend traced a different jaxpr than JAX's would be listed in
FRONTEND_DIFFERENCES with the reason and compared after `canonicalize,cse` on both sides,
constants by value.
"""
from __future__ import annotations

import base64
import contextlib
import difflib
import json
import os
import re

import numpy as np
import pytest

import jax  # noqa: E402  (the oracle, from the test extra: missing, the file fails)
import jax.experimental.pallas.tpu  # noqa: E402,F401

import mjax  # noqa: E402
from jaxlib.mlir import ir, passmanager  # noqa: E402
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402
from jax._src.pallas.mosaic import tpu_info as jax_tpu_info  # noqa: E402
from mjax.dialect.context import context  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402
from mjax.experimental.pallas import tpu_info as mjax_tpu_info  # noqa: E402
from mjax.passes.jaxpr_pallas_to_mosaic import JaxprPallasToMosaicPass  # noqa: E402
from mjax.passes.mosaic import kernel as _kernel  # noqa: E402,F401  (the tpu dialect)

from mosaic_corpus import corpus  # noqa: E402

EXACT = {"add", "matmul", "matmul_transposed_rhs", "acc_matmul", "softmax", "program_id",
         "fori_loop", "cond", "elementwise", "transpose_iota", "scalar_prefetch_gather",
         "run_scoped_semaphore", "sync_copy_smem_scratch", "compiler_params",
         "argmax_bitcast", "side_effects", "trivial_window", "buffered", "element_window",
         "nested_calls", "bool_refs", "split_stack_pad", "erf_inv", "guide_matmul", "tile",
         "dma", "chained_dma", "named_scopes", "vmap_scopes", "multiple_of",
         "roll", "prng", "dynamic_dma", "pallas_key", "chained_semaphores",
         "chained_dma_semaphores", "threefry_keys", "dead_read", "chained_views",
         "chained_views_squeezed", "chained_traced_views", "chained_dma_traced_view",
         "threefry_raw", "jax_ref_functions", "ref_bitcast", "ref_bitcast_strided",
         "ref_reshape_store", "strided_store", "ref_reshape_squeezed_block",
         "tpu_bitcast", "pltpu_load_store_views", "scalar_reductions",
         "int_mask", "view_windows", "with_scoped", "float_scalar_prefetch",
         "semaphore_int_shape", "matrix_vector_dot", "jitted_kernel", "dead_cond_operand",
         "vmap_scalar_prefetch", "fori_unroll", "pallas_key_samplers", "sample_block",
         "stateful", "threefry_guide", "threefry_seed"}
# kernel -> how mjax's traced jaxpr differs from JAX's: none, every kernel is exact
FRONTEND_DIFFERENCES: dict = {}
# kernels with a rank-1 block, which JAX's lowering checks against the chip's tiling
# (tpu_info.get_tpu_info): on a CPU, the oracle is told the chip is a v5e
RANK1_BLOCKS = {"threefry_guide", "fori_unroll", "int_mask"}

JAX_KERNELS = corpus(jax, jpl, jpltpu)
MJAX_KERNELS = corpus(mjax, pl, pltpu)


def custom_calls(module: ir.Module) -> list[ir.Operation]:
    out = []

    def walk(op):
        for region in op.regions:
            for block in region.blocks:
                for o in block.operations:
                    if o.operation.name == "stablehlo.custom_call":
                        out.append(o.operation)
                    walk(o.operation)
    walk(module.operation)
    return out


ATTRIBUTES = ("call_target_name", "kernel_name", "has_side_effect", "mhlo.frontend_attributes",
              "operand_layouts", "result_layouts", "output_operand_aliases")


def decode(call: ir.Operation) -> tuple[str, str]:
    """(the custom call's attributes and backend_config text, the body aside; the
    Mosaic module's text)."""
    text = ir.StringAttr(call.attributes["backend_config"]).value
    config = json.loads(text)
    body = base64.b64decode(config["custom_call_config"].pop("body"))
    attrs = {a: str(call.attributes[a]) for a in ATTRIBUTES if a in call.attributes}
    if attrs.get("has_side_effect") == "false":
        del attrs["has_side_effect"]             # (the default)
    text = text.replace(base64.b64encode(body).decode("ascii"), "<body>")
    kmod = ir.Module.parse(body)
    passmanager.PassManager.parse("builtin.module(mosaic-serde{serialize=false})").run(
        kmod.operation)
    return f"{attrs} {text}", kmod.operation.get_asm(enable_debug_info=False)


def normalize(text: str, passes: str = "") -> str:
    """The module re-printed (after `passes`), the kernel function named @kernel."""
    m = ir.Module.parse(text)
    if passes:
        passmanager.PassManager.parse(f"builtin.module({passes})").run(m.operation)
    text = m.operation.get_asm(enable_debug_info=False)
    return re.sub(r"func\.func @(?!transform_)\w+\(", "func.func @kernel(", text)


def constants_by_value(text: str) -> str:
    """`text` with each constant's SSA name replaced by its value and the constant ops
    dropped (after canonicalize hoists them, their order follows first uses, which a
    different trace of the same computation may change)."""
    names = dict(re.findall(r"(%c\w*) = arith\.constant (.*)", text))
    for name in sorted(names, key=len, reverse=True):
        text = re.sub(re.escape(name) + r"\b", f"<{names[name]}>", text)
    return "".join(line for line in text.splitlines(True) if "arith.constant" not in line)


@contextlib.contextmanager
def cpu_as_v5e(tpu_info):
    """`tpu_info` (JAX's jax._src.pallas.mosaic.tpu_info, or mjax's) answers for the CPU
    device as for one TPU v5e core (its registry of device kinds), for this block only:
    kernels that ask the chip's tiling lower on a CPU machine."""
    added = "cpu" not in tpu_info.registry
    if added:
        tpu_info.registry["cpu"] = lambda: tpu_info.get_tpu_info_for_chip(
            tpu_info.ChipVersion.TPU_V5E, 1)
    try:
        yield
    finally:
        if added:
            del tpu_info.registry["cpu"]
            getattr(tpu_info.get_tpu_info, "cache_clear", lambda: None)()


def _cpu_as_v5e():
    """cpu_as_v5e for JAX's tpu_info."""
    return cpu_as_v5e(jax_tpu_info)


def tpu_mosaic(J, f, shapes, v5e=False) -> tuple[str, str]:
    """(backend_config, Mosaic text) of the one kernel of `f`, jitted by J (jax or mjax)
    and lowered for the TPU: the export form on a CPU, the chip's on the chip, in both
    libraries. v5e: each library's tpu_info answers for the CPU as for a v5e."""
    avals = [J.ShapeDtypeStruct(s, d) for s, d in shapes]
    info = mjax_tpu_info if J is mjax else jax_tpu_info
    with cpu_as_v5e(info) if v5e else contextlib.nullcontext():
        text = (jax_tpu_text(f, avals) if J is jax else
                J.jit(f).trace(*avals).lower(lowering_platforms=("tpu",)).as_text())
    with context(), ir.Location.unknown():
        module = ir.Module.parse(text)      # (held: its ops die with it)
        # (JAX's module may have other custom calls: allocations of refs a kernel uses)
        (call,) = [c for c in custom_calls(module)
                   if str(c.attributes["call_target_name"]) == '"tpu_custom_call"']
        return decode(call)


def assert_same_mosaic(want: str, got: str, canonical: bool = False) -> None:
    """JAX's Mosaic text `want` and mjax's `got` are the same, names and locations aside;
    canonical: after canonicalize,cse, constants compared by value (for stated frontend
    differences)."""
    with context():
        if canonical:
            a, b = (constants_by_value(normalize(t, "canonicalize,cse")) for t in (want, got))
        else:
            a, b = normalize(want), normalize(got)
    assert a == b, _diff(a, b)


ON_TPU = os.environ.get("MJAX_TEST_TPU", "") not in ("", "0")   # (conftest.py's)


def assert_compiled_as_jax(jax_f, mjax_f, args) -> None:
    """The kernels compiled, not interpreted: on the chip (MJAX_TEST_TPU=1) mjax's call
    gives JAX's outputs bit for bit (the same Mosaic, the same libtpu), or refuses where
    JAX's does; off the chip both refuse with a ValueError: JAX's "Only interpret mode"
    (JAX's pipeline may first fail asking the CPU for the chip's kind: mjax then says
    either)."""
    if not ON_TPU:
        with pytest.raises(ValueError) as refused:
            jax_f(*args)
        said = str(refused.value).splitlines()[0]
        only = "Only interpret mode is supported on CPU"
        with pytest.raises(ValueError, match=f"{only}|{re.escape(said)}"):
            mjax_f(*args)
        if only not in said:
            assert said.startswith("Unsupported TPU device kind"), said
        return
    try:
        want = [np.asarray(w) for w in jax.tree.leaves(jax_f(*args))]
    except Exception:                     # (libtpu refuses it: so must mjax's call)
        with pytest.raises(Exception):
            mjax.tree.leaves(mjax_f(*args))
        return
    got = [np.asarray(g) for g in mjax.tree.leaves(mjax_f(*args))]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)


def jax_tpu_text(f, avals, export=False) -> str:
    """JAX's module of `f` for the TPU: its export (the forward-compatible form, serde
    version 11), or its jit lowered for the TPU (the same form on a CPU machine; on the
    chip, the form for the chip's libtpu: mjax's jit lowers that too)."""
    if export:
        return jax.export.export(jax.jit(f), platforms=["tpu"])(*avals).mlir_module()
    return jax.jit(f).trace(*avals).lower(lowering_platforms=("tpu",)).as_text()


def jax_lowering(name, export=False):
    f, shapes = JAX_KERNELS[name]
    avals = [jax.ShapeDtypeStruct(s, d) for s, d in shapes]
    with _cpu_as_v5e() if name in RANK1_BLOCKS else contextlib.nullcontext():
        text = jax_tpu_text(f, avals, export)
    with context():
        module = ir.Module.parse(text)      # (held: its ops die with it)
        (call,) = custom_calls(module)
        return call.attributes["kernel_name"], decode(call)


def mjax_lowering(name):
    f, shapes = MJAX_KERNELS[name]
    avals = [mjax.ShapeDtypeStruct(s, d) for s, d in shapes]
    # (lowered for the TPU, as JAX's export: transformations expanded, the pass run
    # with target-version 11)
    text = mjax.jit(f).trace(*avals).lower(lowering_platforms=("tpu",)).as_text()
    with context(), ir.Location.unknown():
        module = ir.Module.parse(text)
        (call,) = custom_calls(module)
        return call.attributes["kernel_name"], decode(call)


def _diff(a, b):
    return "".join(difflib.unified_diff(a.splitlines(True), b.splitlines(True), "jax",
                                        "mjax", n=2))


@pytest.mark.parametrize("name", sorted(JAX_KERNELS))
def test_mosaic_module_matches_jax(name):
    jax_name, (jax_config, jax_text) = jax_lowering(name)
    with context():
        mjax_name, (mjax_config, mjax_text) = mjax_lowering(name)
        assert str(mjax_name) == str(jax_name)
        assert mjax_config == jax_config
        if name in EXACT:
            a, b = normalize(jax_text), normalize(mjax_text)
        else:
            assert name in FRONTEND_DIFFERENCES, name
            a, b = (constants_by_value(normalize(t, "canonicalize,cse"))
                    for t in (jax_text, mjax_text))
        assert a == b, _diff(a, b)


def test_every_kernel_is_classified():
    assert set(JAX_KERNELS) == EXACT | set(FRONTEND_DIFFERENCES)


def test_custom_call_attributes_match_jax():
    f, shapes = JAX_KERNELS["add"]
    avals = [jax.ShapeDtypeStruct(s, d) for s, d in shapes]
    text = jax.export.export(jax.jit(f), platforms=["tpu"])(*avals).mlir_module()
    g, _ = MJAX_KERNELS["add"]
    mtext = mjax.jit(g).trace(*[mjax.ShapeDtypeStruct(s, d) for s, d in shapes]).as_text()
    with context(), ir.Location.unknown():
        jmodule = ir.Module.parse(text)
        (jcall,) = custom_calls(jmodule)
        module = ir.Module.parse(mtext)
        JaxprPallasToMosaicPass().run(module)
        (mcall,) = custom_calls(module)
        for attr in ("call_target_name", "kernel_name", "mhlo.frontend_attributes",
                     "operand_layouts", "result_layouts"):
            assert str(mcall.attributes[attr]) == str(jcall.attributes[attr]), attr
        # the kernel and its index maps are gone
        assert "jaxpr." not in str(module)


def test_serde_version_is_an_option():
    with context():
        assert JaxprPallasToMosaicPass().target_version == 11
        f, shapes = MJAX_KERNELS["matmul"]
        text = mjax.jit(f).trace(*[mjax.ShapeDtypeStruct(s, d) for s, d in shapes]).as_text()
        with ir.Location.unknown():
            module = ir.Module.parse(text)
            JaxprPallasToMosaicPass(target_version=0).run(module)
            (call,) = custom_calls(module)
            config = json.loads(ir.StringAttr(call.attributes["backend_config"]).value)
            kmod = ir.Module.parse(base64.b64decode(config["custom_call_config"]["body"]))
            version = kmod.operation.attributes["stable_mosaic.version"]
            assert ir.IntegerAttr(version).value > 11


def mjax_export_lowering(name):
    """The kernel through mjax.export(..., platforms=["tpu"]) (the frontend's route)."""
    f, shapes = MJAX_KERNELS[name]
    avals = [mjax.ShapeDtypeStruct(s, d) for s, d in shapes]
    check = mjax.export.DisabledSafetyCheck.custom_call("tpu_custom_call")
    try:
        exp = mjax.export.export(mjax.jit(f), platforms=["tpu"],
                                 disabled_checks=[check])(*avals)
    except ValueError as e:      # (interpret=False has no lowering on this route yet)
        pytest.skip(f"mjax.export does not compile TPU kernels through Mosaic: {e}")
    with context():
        module = ir.Module.parse(exp.mlir_module())
        calls = [c for c in custom_calls(module)
                 if ir.StringAttr(c.attributes["call_target_name"]).value == "tpu_custom_call"]
        if not calls:
            pytest.skip("mjax.export does not route TPU pallas_calls through "
                        "--jaxpr-pallas-to-mosaic yet (runtime/backend.py's tpu record)")
        (call,) = calls
        return call.attributes["kernel_name"], decode(call)


@pytest.mark.parametrize("name", sorted(EXACT))
def test_mjax_export_for_tpu_matches_jax(name):
    _, (jax_config, jax_text) = jax_lowering(name, export=True)
    _, (mjax_config, mjax_text) = mjax_export_lowering(name)
    with context():
        assert mjax_config == jax_config
        a, b = normalize(jax_text), normalize(mjax_text)
        assert a == b, _diff(a, b)


@pytest.mark.parametrize("name", ["chained_views", "chained_views_squeezed", "threefry_keys",
                                  "chained_traced_views", "chained_dma_traced_view",
                                  "threefry_raw", "jax_ref_functions", "tpu_bitcast",
                                  "fori_unroll", "scalar_reductions", "int_mask",
                                  "with_scoped", "float_scalar_prefetch",
                                  "semaphore_int_shape", "matrix_vector_dot",
                                  "jitted_kernel"])
def test_interpreted_values_match_jax(name):
    """The kernels whose Mosaic keeps JAX's chained views and threefry, run in TPU
    interpret mode by both libraries: the same values."""
    rng = np.random.default_rng(0)
    _, shapes = JAX_KERNELS[name]
    args = [rng.integers(0, 2**32, s, dtype=np.uint64).astype(d) if np.dtype(d).kind == "u"
            else rng.standard_normal(s).astype(d) for s, d in shapes]
    with jpltpu.force_tpu_interpret_mode():
        want = jax.tree.leaves(JAX_KERNELS[name][0](*args))
    with pltpu.force_tpu_interpret_mode():
        got = mjax.tree.leaves(MJAX_KERNELS[name][0](*args))
    assert len(got) == len(want)
    for g, w in zip(got, want):
        np.testing.assert_array_equal(np.asarray(g), np.asarray(w))


@pytest.mark.parametrize("chained", [False, True])
@pytest.mark.parametrize("api", ["ref", "pallas"])
def test_addupdate_is_refused_as_in_jax(chained, api):
    """JAX's Pallas TPU lowering has no rule for addupdate (state's `ref[idx] += v`
    primitive; `x_ref[...] += v` is a load and a store), whatever view it goes through,
    nor whether jax.ref.addupdate or the state primitive binds it: mjax's refuses it too
    with a NotImplementedError naming JAX's refusal, and both compute it interpreted
    (through one view: JAX's interpreter discharges no chained views there)."""
    from mjax.experimental.pallas import primitives as mprimitives

    def kernel(J, P, addupdate):
        def body(x_ref, o_ref):
            o_ref[...] = J.numpy.ones((16, 128), np.float32)
            view = o_ref.at[P.ds(P.program_id(0), 8)].at[P.ds(2, 4)] if chained else o_ref
            addupdate(view, x_ref[P.ds(0, 4)] if chained else x_ref[...])
        return body

    specs = dict(grid=(2,), out_shape=jax.ShapeDtypeStruct((16, 128), np.float32))
    x = jax.ShapeDtypeStruct((16, 128), np.float32)
    f = jpl.pallas_call(kernel(jax, jpl, lambda r, v: jax.ref.addupdate(r, (), v)), **specs)
    with pytest.raises(NotImplementedError, match="Unimplemented primitive in Pallas TPU "
                                                  "lowering for tc: addupdate"):
        jax.export.export(jax.jit(f), platforms=["tpu"])(x)
    madd = ((lambda r, v: mjax.ref.addupdate(r, (), v)) if api == "ref" else
            (lambda r, v: mprimitives.addupdate(r, ..., v)))
    g = pl.pallas_call(kernel(mjax, pl, madd), grid=(2,),
                       out_shape=mjax.ShapeDtypeStruct((16, 128), np.float32))
    with pytest.raises(NotImplementedError, match="no Mosaic lowering rule for "
                       "'jaxpr.ref_addupdate'.*Unimplemented primitive in Pallas TPU lowering"):
        mjax.jit(g).trace(mjax.ShapeDtypeStruct((16, 128), np.float32)).lower(
            lowering_platforms=("tpu",)).as_text()
    if chained:     # (JAX's interpreter discharges one indexer only: NotImplementedError)
        return
    value = np.arange(16 * 128, dtype=np.float32).reshape(16, 128)
    want = jpl.pallas_call(kernel(jax, jpl, lambda r, v: jax.ref.addupdate(r, (), v)),
                           interpret=True, **specs)(value)
    got = pl.pallas_call(kernel(mjax, pl, madd), grid=(2,), interpret=True,
                         out_shape=mjax.ShapeDtypeStruct((16, 128), np.float32))(value)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))



def _np_bitcast(a, dtype):
    """NumPy's model of a TPU ref's bitcast view (JAX's state/utils.py bitcast): k
    narrow rows of a column packed in one wide element, the first in its low bits."""
    dtype = np.dtype(dtype)
    src, dst = a.dtype.itemsize, dtype.itemsize
    *lead, m, n = a.shape
    if src < dst:
        k = dst // src
        return np.ascontiguousarray(a.reshape(*lead, m // k, k, n).swapaxes(-1, -2)).view(
            dtype)[..., 0]
    if src > dst:
        k = src // dst
        return a.view(dtype).reshape(*lead, m, n, k).swapaxes(-1, -2).reshape(
            *lead, m * k, n)
    return a.view(dtype)


def test_ref_bitcast_interpreted_values():
    """The Ref.bitcast kernels (JAX's TPU interpreter cannot run them: its transforms
    have no `indices`) in mjax's TPU interpret mode, against NumPy's bits."""
    import ml_dtypes
    rng = np.random.default_rng(3)
    x = rng.standard_normal((16, 128)).astype(ml_dtypes.bfloat16)
    y = rng.integers(0, 2**32, (8, 128), dtype=np.uint64).astype(np.uint32)
    z = rng.integers(-128, 128, (2, 32, 128)).astype(np.int8)
    with pltpu.force_tpu_interpret_mode():
        a, b, c = (np.asarray(v) for v in MJAX_KERNELS["ref_bitcast"][0](x, y, z))
    np.testing.assert_array_equal(a, _np_bitcast(x, np.uint32))
    assert b.dtype == x.dtype
    np.testing.assert_array_equal(b.view(np.uint16), _np_bitcast(y, np.uint16))
    np.testing.assert_array_equal(c[0], _np_bitcast(z[1], np.int32)[2:6])
    np.testing.assert_array_equal(c[1], _np_bitcast(x, np.int32)[4:8])
    np.testing.assert_array_equal(c[2], y.view(np.int32)[1:5])
    # the packed-KV reads: K rows in a word's low half, V rows in its high half
    kv = rng.standard_normal((2, 2, 16, 4, 128)).astype(ml_dtypes.bfloat16)
    with pltpu.force_tpu_interpret_mode():
        got = np.asarray(MJAX_KERNELS["ref_bitcast_strided"][0](kv))
    for i in range(2):
        rows = kv[i].reshape(128, 128)
        for h in range(2):
            np.testing.assert_array_equal(got[i, 0, h], rows[2 * h::4].astype(np.float32))
            np.testing.assert_array_equal(got[i, 1, h], rows[2 * h + 1::4].astype(np.float32))
        words = _np_bitcast(kv[i, 1].reshape(64, 128), np.uint32)[:32]
        np.testing.assert_array_equal(got[i, 2, 0].view(np.uint32), words)
        words = _np_bitcast(rows, np.uint32)[i:i + 64:2]
        np.testing.assert_array_equal(got[i, 2, 1].view(np.uint32), words)


def test_tpu_bitcast_interpreted_values():
    """pltpu.bitcast between bitwidths (jaxpr.tpu_bitcast) in mjax's TPU interpret mode
    and interpret=True, against NumPy's bits; vmapped over a leading axis too (JAX's
    batching rule: the batched array bitcast as it is)."""
    import ml_dtypes
    rng = np.random.default_rng(4)
    x, y = (rng.standard_normal((16, 128)).astype(ml_dtypes.bfloat16) for _ in range(2))
    o, w, b = _interpreted("tpu_bitcast", x, y)
    want = np.stack([x, y], 1).reshape(32, 128)           # (JAX's test: interleaved rows)
    np.testing.assert_array_equal(o.view(np.uint16), want.view(np.uint16))
    np.testing.assert_array_equal(w, _np_bitcast(x, np.uint32))
    np.testing.assert_array_equal(b, _np_bitcast(y.view(np.uint16), np.uint8))
    words = rng.integers(0, 2**32, (2, 16, 128), dtype=np.uint64).astype(np.uint32)

    def kernel(x_ref, o_ref):
        o_ref[...] = mjax.vmap(lambda v: pltpu.bitcast(v, np.uint8))(x_ref[...])

    for interpret in (True, False):
        with contextlib.nullcontext() if interpret else pltpu.force_tpu_interpret_mode():
            got = pl.pallas_call(kernel, interpret=interpret, out_shape=mjax.ShapeDtypeStruct(
                (2, 64, 128), np.uint8))(words)
        np.testing.assert_array_equal(np.asarray(got), _np_bitcast(words, np.uint8))
    with pytest.raises(ValueError, match="bitcast 1D"):
        pltpu.bitcast(np.ones((8,), np.int32), np.int8)
    with pytest.raises(ValueError, match="perfectly packed"):
        pltpu.bitcast(np.ones((3, 128), np.int8), np.int32)


def test_pltpu_load_store_of_views_interpreted_values():
    """pltpu.load/pltpu.store of bitcast and reshaped views (without a mask: JAX's
    ref[...]) in mjax's TPU interpret mode, against NumPy's bits; a mask through such a
    view is refused with a NotImplementedError."""
    import ml_dtypes
    rng = np.random.default_rng(6)
    x = rng.integers(-2**31, 2**31, (16, 128)).astype(np.int32)
    y, o = _interpreted("pltpu_load_store_views", x)
    np.testing.assert_array_equal(y, _np_bitcast(x, np.int16))
    rows = x[8:].astype(ml_dtypes.bfloat16).repeat(2, 0)
    np.testing.assert_array_equal(o, _np_bitcast(rows.view(np.uint16), np.int32))

    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]
        pltpu.store(o_ref.bitcast(np.int16), mjax.numpy.zeros((32, 128), np.int16),
                    mask=mjax.numpy.ones((32, 128), bool))

    f = pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct((16, 128), np.int32))
    with pytest.raises(NotImplementedError, match="masked store through"):
        mjax.jit(f).trace(x)


def test_view_windows_interpreted_values():
    """Windows (.at) of bitcast and reshaped views, read and written whole (the corpus
    kernel, JAX's Mosaic) and through an index of the window (its starts added to the
    access's; JAX slices the window first), in mjax's TPU interpret mode, against
    NumPy. A strided window is refused, as is a reshape of a window."""
    rng = np.random.default_rng(7)
    x = rng.integers(-2**31, 2**31, (16, 256)).astype(np.int32)
    y = rng.standard_normal((2, 16, 128)).astype(np.float32)
    o, p, q = _interpreted("view_windows", x, y)
    halves = _np_bitcast(x, np.int16)
    np.testing.assert_array_equal(o, halves[:16, :128])
    np.testing.assert_array_equal(p, y.reshape(32, 128)[8:16])          # (step i = 1)
    want = np.zeros((16, 256), np.int32)
    w16 = _np_bitcast(want, np.int16)
    w16[8:24, 128:] = o
    want = _np_bitcast(w16, np.int32)
    want.reshape(2, 8, 256)[1, 2:3] = x[3:4]
    np.testing.assert_array_equal(q, want)

    def kernel(x_ref, y_ref, p_ref, q_ref):
        i = pl.program_id(0)
        p_ref[...] = y_ref.reshape(32, 128).at[pl.ds(i * 8, 16)].at[pl.ds(i, 8)][
            pl.ds(0, 4, stride=2)]
        q_ref[...] = mjax.numpy.zeros((16, 256), np.int32)
        q_ref.bitcast(np.int16).at[pl.ds(8, 16), 128:][pl.ds(1, 4, stride=2)] = \
            x_ref.bitcast(np.int16)[pl.ds(0, 4), pl.ds(0, 128)]
        q_ref.reshape(2, 8, 256).at[1][2] = x_ref[3]

    with pltpu.force_tpu_interpret_mode():
        p, q = (np.asarray(v) for v in pl.pallas_call(kernel, grid=(2,), out_shape=(
            mjax.ShapeDtypeStruct((4, 128), np.float32),
            mjax.ShapeDtypeStruct((16, 256), np.int32)))(x, y))
    np.testing.assert_array_equal(p, y.reshape(32, 128)[8:24][1:9][0:8:2])
    want = np.zeros((16, 256), np.int32)
    w16 = _np_bitcast(want, np.int16)
    w16[8:24, 128:][1:9:2] = halves[:4, :128]
    want = _np_bitcast(w16, np.int32)
    want.reshape(2, 8, 256)[1][2] = x[3]
    np.testing.assert_array_equal(q, want)

    for view in (lambda r: r.bitcast(np.int16).at[::2], lambda r: r.reshape(
            32, 128).at[:8].reshape(16, 64)):
        def bad(x_ref, o_ref, view=view):
            o_ref[...] = view(x_ref)[...].astype(np.float32).sum() * mjax.numpy.ones(
                (8, 128), np.float32)
        f = pl.pallas_call(bad, out_shape=mjax.ShapeDtypeStruct((8, 128), np.float32))
        with pytest.raises(NotImplementedError):
            mjax.jit(f).trace(x)


def test_with_scoped_interpreted_values():
    """pl.with_scoped makes a function whose arguments come before the scoped refs (JAX
    0.10.2's; mjax called the body at once, with the refs alone)."""
    x = np.random.default_rng(8).standard_normal((8, 128)).astype(np.float32)
    (y,) = _interpreted("with_scoped", x)
    np.testing.assert_allclose(y, 8 * (x + 1) + (x + 1), rtol=1e-6)


def test_ref_bitcast_refusals_are_jax():
    """What JAX's Ref.bitcast refuses mjax's refuses with the same kind of error: a
    rank-1 view whose bitwidth changes (NotImplementedError), or not (IndexError: JAX's
    shape rule indexes the second-minor dim), a second-minor dim the ratio does not
    divide (ValueError), a view of traced size (NotImplementedError); the same
    indivisible shape with no bitwidth change traces."""
    cases = [((256,), np.float32, np.int8, NotImplementedError, False),
             ((256,), np.float32, np.uint32, IndexError, False),
             ((3, 128), np.int8, np.int16, ValueError, False),
             ((3, 128), np.int8, np.uint8, None, False),
             ((16, 128), np.float32, np.int8, NotImplementedError, True)]
    for shape, dtype, to, error, dynamic in cases:
        def kernel(J, P, to=to, dynamic=dynamic):
            def body(n_ref, x_ref, o_ref):
                view = x_ref.at[P.ds(0, n_ref[0])] if dynamic else x_ref
                o_ref[...] = view.bitcast(to)[...].astype(np.float32).sum(
                    keepdims=True) * J.numpy.ones((8, 128), np.float32)
            return body

        args = [np.ones((1,), np.int32), np.ones(shape, dtype)]
        for J, P, T in ((jax, jpl, jpltpu), (mjax, pl, pltpu)):
            f = P.pallas_call(kernel(J, P),
                              out_shape=J.ShapeDtypeStruct((8, 128), np.float32),
                              in_specs=[P.BlockSpec(memory_space=T.SMEM),
                                        P.BlockSpec(memory_space=T.VMEM)])
            if error is None:
                J.jit(f).trace(*args)
                continue
            with pytest.raises(error):
                J.jit(f).trace(*args)


def _interpreted(name, *args):
    with pltpu.force_tpu_interpret_mode():
        return [np.asarray(v) for v in mjax.tree.leaves(MJAX_KERNELS[name][0](*args))]


def test_jitted_kernel_interpreted_values():
    """A jit as the kernel and a jit called in it on a ref's window and a value (JAX
    0.10.2 inlines them; mjax captured the refs as constants): their writes, per step."""
    rng = np.random.default_rng(9)
    x = rng.integers(-100, 100, (32, 128)).astype(np.int32)
    y = rng.integers(-100, 100, (8, 128)).astype(np.int32)
    (o,) = _interpreted("jitted_kernel", x, y)
    want = x + np.repeat(np.arange(2, dtype=np.int32), 16)[:, None]
    for i in range(2):
        want[16 * i:16 * i + 8] += y * 2 * 3 + i
    np.testing.assert_array_equal(o, want)


def test_reshape_and_strided_stores_interpreted_values():
    """The corpus's writes through reshaped and bitcast views and strided writes in
    mjax's TPU interpret mode, against NumPy (JAX's TPU interpreter cannot run views
    with a ReshapeTransform: it reads their `indices`). Each grid step rewrites the
    outputs whole first, so the last step's (i = 1) writes are the result."""
    import ml_dtypes
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 16, 128)).astype(np.float32)
    o, p = _interpreted("ref_reshape_store", x)
    want = x.copy()
    want[1].reshape(64, 32)[8:16] = x[0, :8, :32]
    want.reshape(4, 8, 128)[3] += x[1, :8]
    want.reshape(2, 16, 128)[:, 1, :] = x[:, 2, :] * 2.0
    np.testing.assert_array_equal(o, want)
    words = _np_bitcast(x.astype(ml_dtypes.bfloat16), np.uint32)
    words.reshape(16, 128)[1:3] = 0x03030303        # (int8 rows 4..11: words 1, 2)
    np.testing.assert_array_equal(p, words)
    x, m = rng.standard_normal((16, 128)).astype(np.float32), rng.standard_normal((8, 128))
    o, b, p = _interpreted("strided_store", x, m.astype(np.float32))
    want = np.zeros((16, 128), np.float32)
    want[1::2] = x[:8]
    want[1:14:4, :64] += x[8:12, 64:]
    want[::2] *= 3.0
    np.testing.assert_array_equal(o, want)
    want_b = np.zeros((16, 128), bool)
    want_b[1::2] = m > 0
    np.testing.assert_array_equal(b, want_b)
    want = np.zeros((32, 128), np.float32)
    want[17:32:2] = x[:8]
    want[0:8:2] = np.full((4, 128), 7, np.uint32).view(np.float32)
    np.testing.assert_array_equal(p, want)
    x = rng.standard_normal((2, 16, 128)).astype(np.float32)
    np.testing.assert_array_equal(_interpreted("ref_reshape_squeezed_block", x)[0], x)


@pytest.mark.parametrize("interpret", ["tpu", "discharge"])
def test_strided_stores_match_jax_interpreted(interpret):
    """Strided stores (and `+=` through them) with static and traced starts, run by
    JAX's interpreters and mjax's: the same values."""
    def kernel(J, P):
        def body(x_ref, o_ref):
            i = P.program_id(0)
            o_ref[...] = J.numpy.ones((16, 128), np.float32)
            o_ref[P.ds(i, 8, stride=2), :] = x_ref[P.ds(0, 8), :]
            o_ref[3::4, P.ds(64, 64)] += x_ref[P.ds(8, 4), P.ds(0, 64)]
            o_ref[P.ds(2 * i, 2, stride=5), P.ds(7, 1)] = x_ref[P.ds(12, 2), P.ds(1, 1)]
        return body

    x = np.random.default_rng(1).standard_normal((16, 128)).astype(np.float32)
    outs = []
    for J, P, T in ((jax, jpl, jpltpu), (mjax, pl, pltpu)):
        with T.force_tpu_interpret_mode() if interpret == "tpu" else \
                contextlib.nullcontext():
            f = P.pallas_call(kernel(J, P), grid=(2,), interpret=interpret == "discharge",
                              out_shape=J.ShapeDtypeStruct((16, 128), np.float32))
            outs.append(np.asarray(f(x)))
    want = np.ones((16, 128), np.float32)
    want[1:16:2] = x[:8]
    want[3::4, 64:] += x[8:12, :64]
    want[2:8:5, 7] = x[12:14, 1]
    np.testing.assert_array_equal(outs[1], want)
    np.testing.assert_array_equal(outs[1], outs[0])


def test_reshape_and_strided_store_refusals_are_jax():
    """What JAX's lowering refuses of writes through reshaped views and strided writes
    mjax's refuses with the same error: a reshape of a rank-1 ref, of a block squeezed
    in its last two dims; a masked strided store is a NotImplementedError in both."""
    def rank1(J, P, T):
        def body(x_ref, o_ref):
            o_ref.reshape(8, 128)[...] = x_ref[...].reshape(8, 128)
        return P.pallas_call(body, out_shape=J.ShapeDtypeStruct((1024,), np.float32)), \
            (1024,)

    def squeezed_minor(J, P, T):
        def body(x_ref, o_ref):
            o_ref.reshape(2, 8, 64)[...] = x_ref[...].reshape(2, 8, 64)
        spec = P.BlockSpec((8, None, 128), lambda i: (0, i, 0))
        return P.pallas_call(body, in_specs=[spec], out_specs=spec, grid=(1,),
                             out_shape=J.ShapeDtypeStruct((8, 1, 128), np.float32)), \
            (8, 1, 128)

    def masked_strided(J, P, T):
        def body(x_ref, o_ref):
            m = J.lax.broadcasted_iota(np.int32, (8, 128), 1) < 64
            T.store(o_ref.at[P.ds(0, 8, stride=2)], x_ref[P.ds(0, 8)], mask=m)
        return P.pallas_call(body, out_shape=J.ShapeDtypeStruct((16, 128), np.float32)), \
            (16, 128)

    cases = [(rank1, "Reshape 1D ref is not supported"),
             (squeezed_minor, "Reshape a ref with squeezed dimension on last two"),
             (masked_strided, "strided")]
    for make, message in cases:
        f, shape = make(jax, jpl, jpltpu)
        with _cpu_as_v5e(), pytest.raises(NotImplementedError, match=message):
            jax.export.export(jax.jit(f), platforms=["tpu"])(
                jax.ShapeDtypeStruct(shape, np.float32))
        g, _ = make(mjax, pl, pltpu)
        with pytest.raises(NotImplementedError, match=message):
            mjax.jit(g).trace(mjax.ShapeDtypeStruct(shape, np.float32)).lower(
                lowering_platforms=("tpu",)).as_text()
