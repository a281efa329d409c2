"""JAX's splash attention (jax.experimental.pallas.ops.tpu.splash_attention) as user code
on mjax: make_splash_mha's forward kernel and its gradient's dq and dkv kernels, lowered
for the TPU by each library, must give JAX's Mosaic modules and tpu_custom_call
attributes; interpreted, JAX's values.

Run as a script, this file is the child (`python [-m mjax] test_splash_mosaic.py OPS_DIR
OUT CASES`, so `import jax` in JAX's kernel files is real jax or mjax): for each case it
writes the module lowered with `jit(f).trace(*avals).lower(lowering_platforms=("tpu",))`
to OUT.json and, for the value cases, the TPU interpret mode's outputs to OUT.npz. The
parent decodes every tpu_custom_call (test_mosaic_differential.decode) and compares
them by kernel name; the values against each other and a NumPy attention.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
PKG = "jax.experimental.pallas.ops.tpu"
SPLASH = f"{PKG}.splash_attention"

# The benchmark's shape (benchmarks/pallas_tpu_kernels.py): heads, seq, head_dim, bf16
BENCH = (8, 2048, 128)
SMALL = (2, 256, 128)       # (value cases, interpreted)


# ---- the child ---------------------------------------------------------------------------
def _splash(ops_dir: str):
    """(mask module, kernel module), loaded by path under their own names."""
    sys.path.insert(0, HERE)
    from jax_tpu_kernels import load, load_ops
    load_ops(ops_dir)
    sd = os.path.join(ops_dir, "splash_attention")
    if f"{SPLASH}.splash_attention_kernel" not in sys.modules:
        load(f"{SPLASH}.splash_attention_mask", os.path.join(sd, "splash_attention_mask.py"))
        load(f"{SPLASH}.splash_attention_mask_info",
             os.path.join(sd, "splash_attention_mask_info.py"))
        load(f"{SPLASH}.splash_attention_kernel",
             os.path.join(sd, "splash_attention_kernel.py"))
    return (sys.modules[f"{SPLASH}.splash_attention_mask"],
            sys.modules[f"{SPLASH}.splash_attention_kernel"])


def _mask(m, kind: str, heads: int, seq: int):
    shape = (seq, seq)
    if kind == "causal":
        one = [m.CausalMask(shape)] * heads
    elif kind == "local":       # (a window of 256 back, 0 ahead)
        one = [m.LocalMask(shape, window_size=(256, 0), offset=0)] * heads
    elif kind == "full":
        one = [m.FullMask(shape)] * heads
    elif kind == "mixed":       # (each head its own mask)
        kinds = [m.CausalMask(shape), m.LocalMask(shape, window_size=(128, 128), offset=0),
                 m.FullMask(shape), m.CausalMask(shape, offset=64)]
        one = [kinds[i % len(kinds)] for i in range(heads)]
    else:
        raise ValueError(kind)
    return m.MultiHeadMask(one)


def _block_sizes(sk, blocks):
    if blocks == "default":
        return sk.BlockSizes.get_default()
    if blocks == "fused":       # (the fused backward kernel: dq from the dkv kernel)
        return sk.BlockSizes(block_q=128, block_kv=128, block_kv_compute=128,
                             block_q_dkv=128, block_kv_dkv=128, block_kv_dkv_compute=128,
                             use_fused_bwd_kernel=True)
    bq, bkv, bkvc = blocks
    return sk.BlockSizes(block_q=bq, block_kv=bkv, block_kv_compute=bkvc,
                         block_q_dkv=bq, block_kv_dkv=bkv, block_kv_dkv_compute=bkvc,
                         block_q_dq=bq, block_kv_dq=bkv)


# case -> (mask kind, block sizes, gradient?, shape (heads, seq, head_dim), dtype)
CASES = {
    "fwd_causal": ("causal", "default", False, BENCH, "bfloat16"),
    "grad_causal": ("causal", "default", True, BENCH, "bfloat16"),
    "fwd_local": ("local", (256, 512, 256), False, BENCH, "bfloat16"),
    "grad_local": ("local", "default", True, BENCH, "bfloat16"),
    "fwd_full": ("full", (512, 1024, 512), False, BENCH, "bfloat16"),
    "grad_full": ("full", (256, 256, 128), True, BENCH, "bfloat16"),
    "fwd_mixed": ("mixed", "default", False, (4, 1024, 128), "float32"),
    "grad_mixed": ("mixed", (256, 256, 128), True, (4, 1024, 128), "float32"),
    "grad_causal_fused": ("causal", "fused", True, BENCH, "bfloat16"),
    "grad_causal_f32_small": ("causal", "default", True, SMALL, "float32"),
    "fwd_causal_batched": ("causal", "default", False, (2,) + BENCH, "bfloat16"),
    "grad_causal_batched": ("causal", "default", True, (2,) + BENCH, "bfloat16"),
    "grad_local_batched": ("local", "default", True, (2,) + SMALL, "float32"),
    "grad_options": ("causal", "default", True, SMALL, "float32"),
    "grad_mqa": ("local", "default", True, BENCH, "bfloat16"),
}
FAST = ("fwd_causal", "grad_causal_batched")
# value cases (small, interpreted in both libraries): mask kind; "_batched": a batch of
# 2 in front, the kernel vmapped (JAX's TPU interpreter cannot run a vmapped kernel: its
# randomized grid zips the batched grid with the unbatched dimension_semantics, a
# ValueError; its side maps the kernel over the batch with lax.map instead)
VALUES = {"v_causal": "causal", "v_local": "local", "v_mixed": "mixed",
          "v_local_batched": "local", "v_options": "local"}
FAST_VALUES = ("v_causal", "v_local_batched")
# cases with options: logits soft cap, segment ids (two segments of half the sequence),
# MQA (make_splash_mqa: one K and V head for all query heads)
OPTIONS = {"grad_options": dict(soft_cap=20.0, segments=True),
           "v_options": dict(soft_cap=20.0, segments=True), "grad_mqa": dict(mqa=True)}


def _kernel(ops_dir, kind, blocks, shape, interpret=False, soft_cap=None, mqa=False,
            segments=False):
    m, sk = _splash(ops_dir)
    heads, seq, _ = shape[-3:]
    make = sk.make_splash_mqa if mqa else sk.make_splash_mha
    kern = make(_mask(m, kind, heads, seq), head_shards=1, q_seq_shards=1,
                block_sizes=_block_sizes(sk, blocks), interpret=interpret,
                attn_logits_soft_cap=soft_cap)
    if not segments:
        return kern
    import jax.numpy as jnp
    ids = jnp.asarray(_segments(seq))
    return lambda q, k, v: kern(q, k, v, segment_ids=sk.SegmentIds(q=ids, kv=ids))


def _segments(seq):
    return (np.arange(seq) >= seq // 2).astype(np.int32)


def _function(jax, kern, grad, batched=False):
    if batched:             # (a batch dim in front: the kernel vmapped, as models call it)
        kern = jax.vmap(kern)
    if not grad:
        return kern
    return jax.grad(lambda q, k, v: kern(q, k, v).astype(np.float32).sum(),
                    argnums=(0, 1, 2))


def _rnd(seed, shape, scale=1.0):
    return (np.random.default_rng(seed).standard_normal(shape) * scale).astype(np.float32)


def _inputs(shape):
    return _rnd(0, shape, 0.5), _rnd(1, shape, 0.5), _rnd(2, shape)


def _for_the_tpu():
    """Real jax's Pallas lowering may ask tpu_info about the chip: on a CPU it is told
    the chip is a v5e (test_mosaic_differential's cpu_as_v5e); mjax's asks nothing."""
    import contextlib
    import jax
    if jax.__name__ != "jax":
        return contextlib.nullcontext()
    from test_mosaic_differential import _cpu_as_v5e
    return _cpu_as_v5e()


def child(ops_dir: str, out: str, names: list[str]) -> None:
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas import tpu as pltpu
    modules, values = {}, {}
    for name in names:
        if name in CASES:
            kind, blocks, grad, shape, dtype = CASES[name]
            opts = OPTIONS.get(name, {})
            f = _function(jax, _kernel(ops_dir, kind, blocks, shape, **opts), grad,
                          len(shape) == 4)
            aval = jax.ShapeDtypeStruct(shape, jnp.dtype(dtype))
            kv = jax.ShapeDtypeStruct(shape[1:], aval.dtype) if opts.get("mqa") else aval
            try:
                with _for_the_tpu():
                    modules[name] = jax.jit(f).trace(aval, kv, kv).lower(
                        lowering_platforms=("tpu",)).as_text()
            except Exception as e:     # noqa: BLE001  (the parent reports it)
                modules[name] = f"error: {type(e).__name__}: {e}"
            continue
        kern = _kernel(ops_dir, VALUES[name], "default", SMALL, interpret=True,
                       **OPTIONS.get(name, {}))
        batched = name.endswith("_batched")
        if batched:
            kern = jax.vmap(kern) if jax.__name__ != "jax" else (
                lambda q, k, v, f=kern: jax.lax.map(lambda a: f(*a), (q, k, v)))
        args = _inputs((2,) + SMALL if batched else SMALL)
        try:
            with pltpu.force_tpu_interpret_mode():
                fwd = jax.jit(kern)(*args)
                grads = jax.jit(_function(jax, kern, True))(*args)
            values[name] = np.stack([np.asarray(fwd)] + [np.asarray(g) for g in grads])
        except Exception as e:     # noqa: BLE001
            modules[name] = f"error: {type(e).__name__}: {e}"
    with open(out + ".json", "w") as f:
        json.dump(modules, f)
    np.savez(out + ".npz", **values)


# ---- the tests ----------------------------------------------------------------------------
FULL = os.environ.get("MJAX_TEST_TIER", "").lower() == "full"   # (conftest.py's tier)
MODULE_CASES = sorted(CASES) if FULL else list(FAST)
VALUE_CASES = sorted(VALUES) if FULL else list(FAST_VALUES)


def _ops_dir() -> str:
    import jax.experimental.pallas.ops.tpu as ops
    return os.path.dirname(ops.__file__)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    """{"jax"|"mjax": (module text or error by case, values by case)}: both children
    side by side, over this tier's cases."""
    tmp = tmp_path_factory.mktemp("splash")
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env.pop("MJAX_ALIAS_JAX", None)
    names = ",".join(MODULE_CASES + VALUE_CASES)
    procs = {lib: subprocess.Popen(
        [sys.executable, *prefix, __file__, _ops_dir(), str(tmp / lib), names], env=env,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        for lib, prefix in (("jax", []), ("mjax", ["-m", "mjax"]))}
    out = {}
    for lib, proc in procs.items():
        log, _ = proc.communicate(timeout=1200)
        assert proc.returncode == 0, f"{lib} child:\n{log[-5000:]}"
        with open(tmp / f"{lib}.json") as f:
            modules = json.load(f)
        out[lib] = (modules, dict(np.load(tmp / f"{lib}.npz")))
    return out


def _kernels(text: str) -> dict:
    """kernel_name -> (custom call attributes and backend_config, Mosaic text)."""
    from jaxlib.mlir import ir
    from mjax.dialect.context import context
    from test_mosaic_differential import custom_calls, decode
    out = {}
    with context(), ir.Location.unknown():
        module = ir.Module.parse(text)      # (held: its ops die with it)
        for call in custom_calls(module):
            if str(call.attributes["call_target_name"]) == '"tpu_custom_call"':
                name = str(call.attributes["kernel_name"])
                assert name not in out, name
                out[name] = decode(call)
    return out


@pytest.mark.parametrize("name", MODULE_CASES)
def test_splash_mosaic_matches_jax(results, name):
    """Every tpu_custom_call of the case (the forward; with the gradient, the forward
    saving residuals, dq and dkv): the same kernel names, custom call attributes and
    backend_config (the body aside), and the same Mosaic module, names aside."""
    from mjax.dialect.context import context
    from test_mosaic_differential import _diff, normalize
    want, got = results["jax"][0][name], results["mjax"][0][name]
    assert not want.startswith("error:"), want
    assert not got.startswith("error:"), got
    want, got = _kernels(want), _kernels(got)
    grad, fused = CASES[name][2], CASES[name][1] == "fused"
    assert len(want) == (1 if not grad else 2 if fused else 3), sorted(want)
    assert sorted(got) == sorted(want)
    for kernel, (config, text) in want.items():
        assert got[kernel][0] == config, kernel
        with context():
            a, b = normalize(text), normalize(got[kernel][1])
        assert a == b, f"{kernel}:\n{_diff(a, b)}"


def _reference(kind, q, k, v, soft_cap=None, segments=False):
    """NumPy attention under the mask (float64; logits capped to soft_cap * tanh(s /
    soft_cap), tokens of two segments kept apart), its output and its gradients of
    out.sum() in q, k, v."""
    heads, seq, _ = q.shape
    from jax.experimental.pallas.ops.tpu.splash_attention import (
        splash_attention_mask as m)
    mask = np.stack([np.asarray(_mask(m, kind, heads, seq)[h, :, :]) for h in range(heads)])
    if segments:
        ids = _segments(seq)
        mask = mask & (ids[:, None] == ids[None, :])
    q, k, v = (a.astype(np.float64) for a in (q, k, v))
    raw = np.einsum("hqd,hkd->hqk", q, k)
    capped = raw if soft_cap is None else soft_cap * np.tanh(raw / soft_cap)
    s = np.where(mask, capped, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    p /= p.sum(-1, keepdims=True)
    out = np.einsum("hqk,hkd->hqd", p, v)
    do = np.ones_like(out)
    dv = np.einsum("hqk,hqd->hkd", p, do)
    dp = np.einsum("hqd,hkd->hqk", do, v)
    ds = p * (dp - (dp * p).sum(-1, keepdims=True))
    if soft_cap is not None:
        ds = ds * (1 - np.tanh(raw / soft_cap) ** 2)
    dq = np.einsum("hqk,hkd->hqd", ds, k)
    dk = np.einsum("hqk,hqd->hkd", ds, q)
    return np.stack([out, dq, dk, dv])


@pytest.mark.parametrize("name", VALUE_CASES)
def test_splash_values_match_jax(results, name):
    """The forward and the gradient in TPU interpret mode: mjax's values are JAX's
    interpreter's (to float32 rounding: the two interpreters' XLA programs differ) and
    NumPy's masked attention's."""
    for lib in ("jax", "mjax"):
        assert name in results[lib][1], results[lib][0].get(name)
    want, got = results["jax"][1][name], results["mjax"][1][name]
    batched = name.endswith("_batched")
    shape = (2,) + SMALL if batched else SMALL
    assert got.shape == want.shape == (4,) + shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    args = _inputs(shape)
    opts = OPTIONS.get(name, {})
    ref = (np.stack([_reference(VALUES[name], *(a[i] for a in args)) for i in range(2)],
                    axis=1) if batched else _reference(VALUES[name], *args, **opts))
    np.testing.assert_allclose(got, ref, rtol=2e-4, atol=2e-4)


if __name__ == "__main__":
    sys.path.insert(0, HERE)
    child(sys.argv[1], sys.argv[2], sys.argv[3].split(","))
