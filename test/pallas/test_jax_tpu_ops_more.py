"""More of JAX's own Pallas TPU kernels (jax.experimental.pallas.ops.tpu) as user code on
mjax: ragged paged attention (vLLM's TPU attention), the Pallas PRNGs (random/threefry.py
and random/philox.py, their jax.random implementations included) and example_kernel.py.
all_gather.py needs several devices and is left out.

Each library runs this file as a child (`python [-m mjax] test_jax_tpu_ops_more.py OPS_DIR
OUT`, so `import jax` in JAX's kernel files is real jax or mjax) which, for every case,
lowers the call for the TPU (`jit(f).trace(...).lower(lowering_platforms=("tpu",))`) and
decodes its Mosaic modules, and runs it in TPU interpret mode. The tests compare the
modules (names and locations aside; after canonicalize,cse and constants by value where
mjax's frontend traces differently: FRONTEND_DIFFERENCES, now empty) and the values
(where JAX's TPU interpreter runs the case: JAX_INTERPRETER_FAILS), which are also
checked against NumPy, jax.random or the kernel's own reference. The two children take
~20 s together.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import types

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = "jax.experimental.pallas.ops.tpu"


# ---- the child ---------------------------------------------------------------------------
def _load_ops(ops_dir: str) -> None:
    """JAX's kernel packages as empty stand-ins (their files loaded by path, as user code:
    mjax has no jax.experimental.pallas.ops)."""
    for name, path in (("jax.experimental.pallas.ops", os.path.dirname(ops_dir)),
                       (PKG, ops_dir),
                       (f"{PKG}.random", os.path.join(ops_dir, "random")),
                       (f"{PKG}.ragged_paged_attention",
                        os.path.join(ops_dir, "ragged_paged_attention"))):
        if name not in sys.modules:
            mod = types.ModuleType(name)
            mod.__path__ = [path]
            sys.modules[name] = mod


def _load(ops_dir: str, rel: str):
    from jax_tpu_kernels import load     # (in the child: its `jax` is the child's)
    name = f"{PKG}.{rel[:-3].replace('/', '.')}"
    if name in sys.modules:
        return sys.modules[name]
    return load(name, os.path.join(ops_dir, rel))


def _rnd(seed, shape, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


# ragged paged attention: 3 sequences (a decode, a short and a longer prefill) over
# 16-token pages; 8 query heads over 2 KV heads (combined K/V heads: 4), head_dim 128
RPA = dict(q_lens=[1, 5, 10], kv_lens=[9, 21, 40], page_size=16, pages=16,
           pages_per_seq=4, heads=8, kv_heads=2, dim=128, tokens=16)


def rpa_inputs(dtype=np.float32):
    """(dtype: the queries' and the KV cache's, bfloat16 for a packed cache)"""
    r = RPA
    q = _rnd(20, (r["tokens"], r["heads"], r["dim"])).astype(dtype)
    kv = _rnd(21, (r["pages"], r["page_size"], 2 * r["kv_heads"], r["dim"])).astype(dtype)
    kv_lens = np.array(r["kv_lens"] + [0], np.int32)              # (max_num_seqs = 4)
    page_indices = np.random.default_rng(22).permutation(r["pages"]).astype(
        np.int32).reshape(4, r["pages_per_seq"])
    cu = np.concatenate([[0], np.cumsum(r["q_lens"]), [sum(r["q_lens"])]]).astype(np.int32)
    return q, kv, kv_lens, page_indices, cu, np.array([len(r["q_lens"])], np.int32)


def _cases(ops_dir: str):
    """case -> (function of arrays, arguments)."""
    import jax
    _load(ops_dir, "ragged_paged_attention/tuned_block_sizes.py")
    rpa = _load(ops_dir, "ragged_paged_attention/kernel.py")
    yield "ragged_paged_attention", (
        lambda *a: rpa.ragged_paged_attention(*a, sm_scale=0.125, num_kv_pages_per_block=2,
                                              num_queries_per_block=8),
        rpa_inputs())
    options = dict(sm_scale=0.125, sliding_window=12, soft_cap=20.0, k_scale=0.5,
                   v_scale=2.0)
    yield "ragged_paged_attention_options", (     # (sliding window, soft cap, kv scales)
        lambda *a: rpa.ragged_paged_attention(*a, **options, num_kv_pages_per_block=1,
                                              num_queries_per_block=16),
        rpa_inputs())
    import ml_dtypes
    # a bf16 KV cache (vLLM's usual one): K and V heads packed two to a 32-bit word,
    # which strided_load_kv reads through kv_ref.bitcast(jnp.uint32)
    yield "ragged_paged_attention_bf16", (
        lambda *a: rpa.ragged_paged_attention(*a, sm_scale=0.125, num_kv_pages_per_block=2,
                                              num_queries_per_block=8),
        rpa_inputs(ml_dtypes.bfloat16))
    # (the kernel's own references: plain jnp)
    # benchmarks/pallas_tpu_kernels.py's shapes on the chip (1024 tokens, 32 query heads
    # over 8 KV heads, a bf16 cache of 2048 16-token pages, 64 pages a sequence) with the
    # block sizes JAX's table gives there (64 pages, 32 queries): lowered only
    bf16 = ml_dtypes.bfloat16
    cu = np.array([0, 1, 2, 3, 4, 5, 6, 515] + [1024] * 10, np.int32)
    yield "ragged_paged_attention_bench_lowering", (
        lambda *a: rpa.ragged_paged_attention(*a, sm_scale=128 ** -0.5,
                                              num_kv_pages_per_block=64,
                                              num_queries_per_block=32),
        (np.zeros((1024, 32, 128), bf16), np.zeros((2048, 16, 16, 128), bf16),
         np.full(16, 1000, np.int32), np.arange(1024, dtype=np.int32).reshape(16, 64),
         cu[:17], np.array([8], np.int32)))
    yield "ragged_paged_attention_bf16_ref", (
        lambda *a: rpa.ref_ragged_paged_attention(*a, sm_scale=0.125),
        rpa_inputs(ml_dtypes.bfloat16))
    yield "ragged_paged_attention_ref", (
        lambda *a: rpa.ref_ragged_paged_attention(*a, sm_scale=0.125), rpa_inputs())
    yield "ragged_paged_attention_options_ref", (
        lambda *a: rpa.ref_ragged_paged_attention(*a, **options), rpa_inputs())
    key = np.array([7, 2**31 + 5], np.uint32)
    _load(ops_dir, "random/prng_utils.py")
    tf = _load(ops_dir, "random/threefry.py")
    yield "threefry_kernel", (
        lambda k: tf.threefry_2x32_count(k, (256, 512), (256, 512), block_size=(256, 256)),
        (key,))
    yield "threefry_padded", (lambda k: tf.plthreefry_random_bits(k, 32, (100, 300)),
                              (key,))
    yield "threefry_padded_3d", (lambda k: tf.plthreefry_random_bits(k, 32, (2, 40, 300)),
                                 (key,))
    yield "threefry_prng_impl", (
        lambda k: jax.random.uniform(jax.random.wrap_key_data(
            k, impl=tf.plthreefry_prng_impl), (64, 256)),
        (key,))
    ph = _load(ops_dir, "random/philox.py")
    yield "philox_kernel", (lambda k, o: ph.philox_4x32_count(k, (256, 512), offset=o),
                            (key, np.uint32(1000)))
    yield "philox_split", (lambda k: ph.philox_split(k, (3, 4)), (key,))
    yield "philox_prng_impl", (
        lambda k: jax.random.bits(jax.random.fold_in(jax.random.wrap_key_data(
            k, impl=ph.plphilox_prng_impl), 3), (8, 128)),
        (key,))
    ex = _load(ops_dir, "example_kernel.py")
    yield "example_double", (ex.double, (_rnd(30, (16, 256)),))


# cases JAX's TPU interpreter cannot run (an error its io_callback reports at a later
# call, so they are not tried): ragged paged attention's reshaped ref ('ReshapeTransform'
# object has no attribute 'indices'), the PRNG implementations' jitted key functions
# (KeyError: OrderedIOEffect)
JAX_INTERPRETER_FAILS = ("ragged_paged_attention", "ragged_paged_attention_options",
                         "ragged_paged_attention_bf16", "threefry_prng_impl",
                         "philox_prng_impl")


def _decode(text: str) -> list[str]:
    from test_mosaic_jax_ops import _decode as decode
    return decode(text)


def _for_the_tpu():
    """Real jax's Pallas lowering asks tpu_info about the chip (ragged paged attention's
    DMAs): on a CPU it is told the chip is a v5e, as test_mosaic_differential tells it.
    mjax's lowering asks nothing."""
    import contextlib
    import jax
    if jax.__name__ != "jax":       # (mjax, under python -m mjax)
        return contextlib.nullcontext()
    from test_mosaic_differential import _cpu_as_v5e
    return _cpu_as_v5e()


def _savable(value):
    """The value as NumPy; bfloat16 as float32 (exact; np.savez keeps no bfloat16)."""
    value = np.asarray(value)
    return value.astype(np.float32) if value.dtype.name == "bfloat16" else value


def child(ops_dir: str, out: str) -> None:
    import jax
    from jax.experimental.pallas import tpu as pltpu
    _load_ops(ops_dir)
    modules, values = {}, {}
    for name, (f, args) in _cases(ops_dir):
        if name.endswith("_ref"):      # (no kernel; a loop over the concrete num_seqs)
            values[name] = _savable(f(*args))
            continue
        try:
            with _for_the_tpu():
                text = jax.jit(f).trace(*args).lower(lowering_platforms=("tpu",)).as_text()
            modules[name] = _decode(text)
        except Exception as e:     # noqa: BLE001  (the parent reports it)
            modules[name] = f"error: {type(e).__name__}: {e}"
        if (jax.__name__ == "jax" and name in JAX_INTERPRETER_FAILS
                or name.endswith("_lowering")):
            continue
        try:
            with pltpu.force_tpu_interpret_mode():
                value = jax.jit(f)(*args)
            if jax.dtypes.issubdtype(value.dtype, jax.dtypes.prng_key):
                value = jax.random.key_data(value)
            values[name] = _savable(value)
        except Exception as e:     # noqa: BLE001
            modules[name + ":interpret"] = f"error: {type(e).__name__}: {e}"
    with open(out + ".json", "w") as f:
        json.dump(modules, f)
    np.savez(out + ".npz", **values)


# ---- the tests ----------------------------------------------------------------------------
# case -> why mjax's traced kernel differs from JAX's (compared after canonicalize,cse,
# constants by value): none, every case's Mosaic is JAX's exactly
FRONTEND_DIFFERENCES: dict = {}


def _ops_dir() -> str:
    import jax.experimental.pallas.ops.tpu as ops
    return os.path.dirname(ops.__file__)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """{"jax"|"mjax": (modules or errors by case, values by case)}: both children, run
    side by side."""
    tmp = tmp_path_factory.mktemp("ops_more")
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("MJAX_ALIAS_JAX", None)
    procs = {lib: subprocess.Popen(
        [sys.executable, *prefix, __file__, _ops_dir(), str(tmp / lib)], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for lib, prefix in (("jax", []), ("mjax", ["-m", "mjax"]))}
    out = {}
    for lib, proc in procs.items():
        log, _ = proc.communicate(timeout=600)
        assert proc.returncode == 0, f"{lib} child:\n{log[-5000:]}"
        with open(tmp / f"{lib}.json") as f:
            modules = json.load(f)
        out[lib] = (modules, dict(np.load(tmp / f"{lib}.npz")))
    return out


def _check_modules(results, names):
    from test_mosaic_differential import _diff, constants_by_value, normalize
    from mjax.dialect.context import context
    want, got = results["jax"][0], results["mjax"][0]
    for name in names:
        assert not isinstance(want[name], str), f"{name}: {want[name]}"
        assert not isinstance(got[name], str), f"{name}: {got[name]}"
        assert len(got[name]) == len(want[name]) >= 1
        with context():
            for k, (x, y) in enumerate(zip(want[name], got[name])):
                if name in FRONTEND_DIFFERENCES:
                    a, b = (constants_by_value(normalize(t, "canonicalize,cse"))
                            for t in (x, y))
                else:
                    a, b = normalize(x), normalize(y)
                assert a == b, f"{name} kernel {k}:\n{_diff(a, b)}"


def _check_values(results, names, exact=True):
    """mjax's interpreted values against real jax's, where JAX's TPU interpreter runs
    the case (see the tests for those it cannot)."""
    want, got = results["jax"][1], results["mjax"][1]
    for name in names:
        assert name in got, f"{name}: {results['mjax'][0].get(name + ':interpret')}"
        assert name in want, results["jax"][0].get(name + ":interpret")
        assert got[name].shape == want[name].shape and got[name].dtype == want[name].dtype
        if exact:
            np.testing.assert_array_equal(got[name], want[name], err_msg=name)
        else:
            np.testing.assert_allclose(got[name], want[name], rtol=2e-5, atol=2e-5,
                                       err_msg=name)


# Philox as JAX's kernel defines it (random/philox.py: 10 rounds over the words (hi0, lo0,
# hi1, lo1) = (0, count, 0, 0), key (k_hi, k_lo)), in NumPy's uint64 arithmetic
def _philox(key, counts):
    mask = np.uint64(0xFFFFFFFF)
    hi0, lo0 = np.zeros_like(counts, np.uint64), counts.astype(np.uint64)
    hi1, lo1 = np.zeros_like(hi0), np.zeros_like(hi0)
    k_hi, k_lo = np.uint64(key[0]), np.uint64(key[1])
    for r in range(10):
        a = np.uint64(0xCD9E8D57) * hi1
        b = np.uint64(0xD2511F53) * hi0
        hi0, lo0, hi1, lo1 = ((a >> np.uint64(32)) ^ lo0 ^ k_hi, a & mask,
                              (b >> np.uint64(32)) ^ lo1 ^ k_lo, b & mask)
        if r < 9:
            k_hi = (k_hi + np.uint64(0x9E3779B9)) & mask
            k_lo = (k_lo + np.uint64(0xBB67AE85)) & mask
    return hi0.astype(np.uint32), lo0.astype(np.uint32)


KEY = np.array([7, 2**31 + 5], np.uint32)


def test_ragged_paged_attention(results):
    """ragged_paged_attention/kernel.py (its KV pages DMA'd into a double buffer, read
    through a reshaped view with strided loads: tpu.memref_reshape, tpu.strided_load):
    the Mosaic module JAX's. JAX's TPU interpreter cannot run it (its ReshapeTransform
    has no `indices`); mjax's interpreted kernel gives the kernel's own jnp reference
    (run by both libraries: the same values), and that NumPy's causal attention."""
    names = ["ragged_paged_attention", "ragged_paged_attention_options"]
    _check_modules(results, names + ["ragged_paged_attention_bench_lowering"])
    _check_values(results, ["ragged_paged_attention_ref",
                            "ragged_paged_attention_options_ref"], exact=False)
    got = results["mjax"][1]
    for name in names:
        np.testing.assert_allclose(got[name], got[name + "_ref"], rtol=2e-5, atol=2e-5,
                                   err_msg=name)
    q, kv, kv_lens, pages, cu, _ = rpa_inputs()
    r = RPA
    for s, (q0, q1) in enumerate(zip(cu[:3], cu[1:4])):
        rows = np.concatenate([kv[p] for p in pages[s]])[:kv_lens[s]]   # (kv_len, 4, d)
        k, v = (np.repeat(rows[:, j::2], r["heads"] // r["kv_heads"], axis=1) for j in (0, 1))
        logits = np.einsum("qhd,khd->hqk", q[q0:q1], k) * 0.125
        causal = (kv_lens[s] - (q1 - q0) + np.arange(q1 - q0))[:, None] < np.arange(
            kv_lens[s])[None, :]
        logits = np.where(causal, -np.inf, logits)
        p = np.exp(logits - logits.max(-1, keepdims=True))
        want = np.einsum("hqk,khd->qhd", p / p.sum(-1, keepdims=True), v)
        np.testing.assert_allclose(got["ragged_paged_attention"][q0:q1], want, rtol=1e-4,
                                   atol=1e-4)


def test_ragged_paged_attention_bf16_kv_cache(results):
    """The kernel with a bf16 KV cache: strided_load_kv reads two packed K/V heads a
    32-bit word through `kv_ref.bitcast(jnp.uint32)` (tpu.memref_bitcast, then
    tpu.strided_load of uint32) and splits them with shifts. The Mosaic module is JAX's
    exactly, as the f32 case's; mjax's interpreted kernel gives the kernel's own
    reference within bf16's precision."""
    name = "ragged_paged_attention_bf16"
    assert any("tpu.memref_bitcast" in k for k in results["jax"][0][name])
    _check_modules(results, [name])
    _check_values(results, [name + "_ref"], exact=False)
    got = results["mjax"][1]
    assert got[name].shape == got[name + "_ref"].shape == rpa_inputs()[0].shape
    assert np.all(np.isfinite(got[name]))
    # (bf16 keeps 8 bits: the kernel's online softmax and the reference's differ by
    # a few of its ulps; the outputs are of order 1)
    np.testing.assert_allclose(got[name], got[name + "_ref"], rtol=2e-2, atol=2e-2)


def test_threefry_kernels_lower_and_run_as_jax(results):
    """random/threefry.py: the kernel on whole blocks and on padded 2-d and 3-d shapes, and as
    jax.random's implementation (plthreefry_prng_impl, made with jax._src.random.prng)."""
    import jax
    names = ("threefry_kernel", "threefry_padded", "threefry_padded_3d", "threefry_prng_impl")
    _check_modules(results, names)
    _check_values(results, names[:3])
    got = results["mjax"][1]
    # the kernel hashes the flat counters (hi words 0) as jax.random's threefry2x32 does
    # (partitionable), so its bits are JAX's default implementation's
    with jax.threefry_partitionable(True):
        # (2-d shapes: for more dims the kernel's blocked iota strides rows by the wrong
        # dim of the unpadded shape, and its bits are its own; threefry_padded_3d is
        # compared with JAX's interpreter only)
        for name, shape in (("threefry_kernel", (256, 512)), ("threefry_padded", (100, 300))):
            want = jax.random.bits(jax.random.wrap_key_data(KEY), shape)
            np.testing.assert_array_equal(got[name], np.asarray(want), err_msg=name)
        # (JAX's TPU interpreter fails on the implementation's jits: a KeyError for
        # OrderedIOEffect; the same uniform from JAX's threefry2x32 keys instead)
        want = jax.random.uniform(jax.random.wrap_key_data(KEY), (64, 256))
    np.testing.assert_array_equal(got["threefry_prng_impl"], np.asarray(want))


def test_philox_kernels_lower_and_run_as_jax(results):
    """random/philox.py: fused bits with an offset, a split (unfused words), and the
    implementation's fold_in then bits, against NumPy's Philox."""
    names = ("philox_kernel", "philox_split", "philox_prng_impl")
    _check_modules(results, names)
    _check_values(results, names[:2])
    got = results["mjax"][1]
    hi, lo = _philox(KEY, np.arange(256 * 512, dtype=np.uint64).reshape(256, 512) + 1000)
    np.testing.assert_array_equal(got["philox_kernel"], hi ^ lo)
    hi, lo = _philox(KEY, np.arange(12, dtype=np.uint64).reshape(3, 4))
    np.testing.assert_array_equal(got["philox_split"], np.stack([hi, lo], axis=-1))
    folded = np.array([w[()] for w in _philox(KEY, np.array(3, np.uint64))], np.uint32)
    hi, lo = _philox(folded, np.arange(8 * 128, dtype=np.uint64).reshape(8, 128))
    np.testing.assert_array_equal(got["philox_prng_impl"], hi ^ lo)


def test_example_kernel_lowers_and_runs_as_jax(results):
    _check_modules(results, ["example_double"])
    _check_values(results, ["example_double"])
    np.testing.assert_array_equal(results["mjax"][1]["example_double"],
                                  2 * _rnd(30, (16, 256)))


def _reads_kernel(J, P):
    """Reads as ragged paged attention makes them: strided rows of a reshaped view of a
    buffer's slice, a reshaped whole ref, a strided pl.ds on a plain ref."""
    def kernel(x_ref, o_ref):
        kv = x_ref.at[1].reshape(64, 128)                    # (2, 32, 128) -> (64, 128)
        o_ref[0] = kv[1::4, :] + kv[P.ds(2, 16, stride=4), :]
        o_ref[1] = x_ref.reshape(2, 4, 16, 128)[1, 2, :, :]
        o_ref[2] = x_ref[0, 1, P.ds(0, 16, stride=2), :]
    return P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((3, 16, 128), np.float32))


def test_reshaped_and_strided_ref_reads_lower_and_run_as_jax():
    """The reads above: mjax's Mosaic module is JAX's (tpu.memref_slice/squeeze,
    tpu.memref_reshape, tpu.strided_load), and TPU interpret mode gives NumPy's values."""
    import jax
    from jax.experimental import pallas as jpl
    import mjax
    from mjax.dialect.context import context
    from mjax.experimental import pallas as pl
    from mjax.experimental.pallas import tpu as pltpu
    from jaxlib.mlir import ir
    from test_mosaic_differential import _diff, custom_calls, decode, jax_tpu_text, normalize
    x = np.arange(2 * 64 * 128, dtype=np.float32).reshape(2, 2, 32, 128)
    want_text = jax_tpu_text(_reads_kernel(jax, jpl), [jax.ShapeDtypeStruct(x.shape, x.dtype)])
    got_text = mjax.jit(_reads_kernel(mjax, pl)).trace(
        mjax.ShapeDtypeStruct(x.shape, x.dtype)).lower(lowering_platforms=("tpu",)).as_text()
    with context(), ir.Location.unknown():
        texts = []
        for t in (want_text, got_text):
            module = ir.Module.parse(t)     # (held: its ops die with it)
            (call,) = custom_calls(module)
            texts.append(normalize(decode(call)[1]))
    assert "tpu.strided_load" in texts[0] and "tpu.memref_reshape" in texts[0]
    assert texts[1] == texts[0], _diff(*texts)
    with pltpu.force_tpu_interpret_mode():
        got = np.asarray(_reads_kernel(mjax, pl)(x))
    kv = x[1].reshape(64, 128)
    np.testing.assert_array_equal(got[0], kv[1::4] + kv[2:2 + 16 * 4:4])
    np.testing.assert_array_equal(got[1], x.reshape(2, 4, 16, 128)[1, 2])
    np.testing.assert_array_equal(got[2], x[0, 1, 0:32:2])


def test_kernel_helpers_trace_as_jax():
    """What ragged paged attention's Mosaic needed of the frontend: jnp.where keeps a
    scalar condition unbroadcast (select_n takes it, as JAX's), pl.cdiv of a traced
    value adds the static b - 1 (one add, as JAX's); and Philox's: a NumPy scalar
    broadcast to (1, 1) against a traced value is a literal, not a captured constant."""
    import mjax
    import mjax.numpy as jnp
    from mjax.experimental import pallas as pl
    text = str(mjax.make_jaxpr(lambda i, x: (jnp.where(i == 0, x, 0.0), pl.cdiv(i, 16)))(
        1, np.ones((2, 4), np.float32)))
    assert "select_n c " in text and "bool[2,4]" not in text, text
    assert "add a 15:i32[]" in text, text

    def kernel(k_ref, o_ref):
        o_ref[...] = jnp.broadcast_to(k_ref[...] + np.uint32(0x9E3779B9), (8, 128))

    f = pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct((8, 128), np.uint32))
    assert "captured" not in str(mjax.make_jaxpr(f)(np.ones((1, 1), np.uint32)))


def test_strided_and_reshaped_ref_writes():
    """mjax writes through reshaped views and with strides too (JAX lowers them:
    tpu.memref_reshape then tpu.vector_store, tpu.strided_store; test_mosaic_differential
    compares the Mosaic), here run interpreted against NumPy, through a window (.at)
    of a reshaped view too."""
    import mjax
    from mjax.experimental import pallas as pl

    def kernel(x_ref, o_ref):
        o_ref.reshape(16, 64)[...] = x_ref[...].reshape(16, 64)
        o_ref[::2, :] = x_ref[::2, :] * 2.0
        o_ref.reshape(16, 64)[pl.ds(1, 4, stride=3), :] += 1.0

    x = np.arange(8 * 128, dtype=np.float32).reshape(8, 128)
    f = pl.pallas_call(kernel, out_shape=mjax.ShapeDtypeStruct((8, 128), np.float32),
                       interpret=True)
    want = x.copy()
    want[::2] *= 2.0
    want.reshape(16, 64)[1:11:3] += 1.0
    np.testing.assert_array_equal(np.asarray(mjax.jit(f)(x)), want)

    def window(x_ref, o_ref):
        o_ref.reshape(16, 64).at[pl.ds(0, 8)][...] = x_ref[...].reshape(16, 64)[:8]

    g = pl.pallas_call(window, out_shape=mjax.ShapeDtypeStruct((8, 128), np.float32),
                       interpret=True)
    got = np.asarray(mjax.jit(g)(x))
    np.testing.assert_array_equal(got.reshape(16, 64)[:8], x.reshape(16, 64)[:8])


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    child(sys.argv[1], sys.argv[2])
