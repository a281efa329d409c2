"""JAX's own Pallas TPU kernels (jax.experimental.pallas.ops.tpu) as user code: mjax
(`python -m mjax`, so `import jax` is mjax) against JAX, on a TPU: values and times.

    python benchmarks/pallas_tpu_kernels.py                 # on the TPU: compiled kernels
    python benchmarks/pallas_tpu_kernels.py --interpret     # anywhere: TPU interpret mode,
                                                             # small shapes (a dry run)
    python benchmarks/pallas_tpu_kernels.py matmul gmm_grad  # some kernels only
    python benchmarks/pallas_tpu_kernels.py --rounds 3       # 3 processes per library,
                                                             # alternating; medians

Kernels: the ops matmul, flash attention forward and its gradient, megablox gmm and
its gradient (megablox.ops.gmm, a custom_vjp of two kernels), paged attention, splash
attention (make_splash_mha, vmapped over the batch: the forward and the gradient under a
causal mask, both under a local window of 256 back), ragged paged attention (vLLM's: six
decodes and two prefills in one batch of 1024 tokens over a bf16 paged KV cache), the Pallas
PRNGs (random/threefry.py and random/philox.py: 32-bit words of a 4096x4096 block), and
the Pallas TPU guide's matmul (a VMEM accumulator over an "arbitrary" K axis) against
XLA's dot. JAX's TPU interpreter cannot run ragged paged attention (its reshaped ref)
nor a vmapped splash kernel (its randomized grid zips the batched grid with the unbatched
dimension_semantics): in the --interpret dry run JAX's side runs the former's own jnp
reference (ref_ragged_paged_attention; that row compares mjax's interpreted kernel with
it, bf16: a few ulps) and maps the latter over the batch with lax.map.
Each library runs in its own process (the worker: `--worker OUT.npz`); the files of
JAX's kernels are loaded by path under their own module names, as
test/pallas/jax_tpu_kernels.py does. The script prints, per kernel, the largest
difference between the libraries' outputs and each library's median time (and mjax/JAX).
A process's times drift by 2-4% from another's of the same program: `--rounds N` runs N
processes per library, alternating, and takes the median of their medians.
On the chip mjax must compile through --jaxpr-pallas-to-mosaic: a kernel it cannot
lower fails (it is never interpreted silently).
"""
from __future__ import annotations

import functools
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
import types

import numpy as np

ALL = ["matmul", "flash_attention", "flash_attention_grad", "gmm", "gmm_grad",
       "paged_attention", "splash_attention", "splash_attention_grad",
       "splash_attention_local", "ragged_paged_attention", "threefry", "philox",
       "guide_matmul", "xla_dot"]
PKG = "jax.experimental.pallas.ops.tpu"


def _ops_dir() -> str:
    spec = importlib.util.find_spec("jax")       # (the driver never imports jax)
    return os.path.join(list(spec.submodule_search_locations)[0], "experimental", "pallas",
                        "ops", "tpu")


# ---- the worker: runs in each library's process --------------------------------------------
def _load(name, path):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def _load_ops(ops_dir):
    for pkg, path in (("jax.experimental.pallas.ops", os.path.dirname(ops_dir)),
                      (PKG, ops_dir), (f"{PKG}.megablox", os.path.join(ops_dir, "megablox")),
                      (f"{PKG}.paged_attention", os.path.join(ops_dir, "paged_attention")),
                      *((f"{PKG}.{sub}", os.path.join(ops_dir, sub)) for sub in (
                          "splash_attention", "ragged_paged_attention", "random"))):
        if pkg not in sys.modules:
            mod = types.ModuleType(pkg)
            mod.__path__ = [path]
            sys.modules[pkg] = mod
    mods = {"matmul": _load(f"{PKG}.matmul", os.path.join(ops_dir, "matmul.py")),
            "fa": _load(f"{PKG}.flash_attention", os.path.join(ops_dir, "flash_attention.py"))}
    _load(f"{PKG}.megablox.common", os.path.join(ops_dir, "megablox", "common.py"))
    mods["gmm"] = _load(f"{PKG}.megablox.gmm", os.path.join(ops_dir, "megablox", "gmm.py"))
    mods["gmm_ops"] = _load(f"{PKG}.megablox.ops", os.path.join(ops_dir, "megablox", "ops.py"))
    pa_dir = os.path.join(ops_dir, "paged_attention")
    _load(f"{PKG}.paged_attention.quantization_utils",
          os.path.join(pa_dir, "quantization_utils.py"))
    mods["pa"] = _load(f"{PKG}.paged_attention.paged_attention_kernel",
                       os.path.join(pa_dir, "paged_attention_kernel.py"))
    for rel in ("splash_attention/splash_attention_mask.py",
                "splash_attention/splash_attention_mask_info.py",
                "splash_attention/splash_attention_kernel.py",
                "ragged_paged_attention/tuned_block_sizes.py",
                "ragged_paged_attention/kernel.py", "random/prng_utils.py",
                "random/threefry.py", "random/philox.py"):
        mods[rel[:-3]] = _load(f"{PKG}.{rel[:-3].replace('/', '.')}",
                               os.path.join(ops_dir, rel))
    return mods


def _guide_matmul(jax, jnp, pl, pltpu, x, y, bm, bk, bn):
    def kernel(x_ref, y_ref, z_ref, acc_ref, *, nsteps):
        @pl.when(pl.program_id(2) == 0)
        def _():
            acc_ref[...] = jnp.zeros_like(acc_ref)
        acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)

        @pl.when(pl.program_id(2) == nsteps - 1)
        def _():
            z_ref[...] = acc_ref[...].astype(z_ref.dtype)
    m, k = x.shape
    n = y.shape[1]
    return pl.pallas_call(
        functools.partial(kernel, nsteps=k // bk),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=0,
            in_specs=[pl.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                      pl.BlockSpec((bk, bn), lambda i, j, k: (k, j))],
            out_specs=pl.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
            scratch_shapes=[pltpu.VMEM((bm, bn), jnp.float32)],
            grid=(m // bm, n // bn, k // bk)),
        out_shape=jax.ShapeDtypeStruct((m, n), x.dtype),
        compiler_params=pltpu.CompilerParams(
            dimension_semantics=("parallel", "parallel", "arbitrary")))(x, y)


def _splash_cases(cases, jax, jnp, mods, arr, small):
    """make_splash_mha (JAX's default block sizes: 128 everywhere) over (heads, seq,
    head_dim) in bf16, vmapped over the batch: causal, and a local window."""
    masks, sk = mods["splash_attention/splash_attention_mask"], \
        mods["splash_attention/splash_attention_kernel"]
    b, h, s, d = (2, 2, 256, 128) if small else (2, 8, 2048, 128)
    q, k, v = (arr((b, h, s, d), jnp.bfloat16, scale) for scale in (0.5, 0.5, 1.0))
    q = q * d ** -0.5        # (the kernel takes the softmax scale folded into q)

    def kernel(mask):
        f = sk.make_splash_mha(masks.MultiHeadMask([mask] * h), head_shards=1,
                               q_seq_shards=1)
        if small and jax.__name__ == "jax":     # (see the module's docstring)
            return lambda q, k, v: jax.lax.map(lambda a: f(*a), (q, k, v))
        return jax.vmap(f)

    causal = kernel(masks.CausalMask((s, s)))
    local = kernel(masks.LocalMask((s, s), window_size=(64 if small else 256, 0), offset=0))

    def grad(f):
        return jax.grad(lambda q, k, v: f(q, k, v).astype(jnp.float32).sum(),
                        argnums=(0, 1, 2))
    cases["splash_attention"] = (jax.jit(causal), (q, k, v))
    cases["splash_attention_grad"] = (jax.jit(grad(causal)), (q, k, v))
    cases["splash_attention_local"] = (
        jax.jit(lambda q, k, v: (local(q, k, v), grad(local)(q, k, v))), (q, k, v))


def _ragged_case(cases, jax, jnp, mods, rng, small):
    """Ragged paged attention over a bf16 KV cache: decodes (one token each) and
    prefills in one batch of 1024 tokens, 32 query heads over 8 KV heads, sequences of up
    to 1024 tokens (64 pages of 16). Block sizes on the chip: 16 KV pages and 32 queries
    a block, with a 64 MiB VMEM limit. (JAX's defaults, 64 pages a block under the
    default scoped limit, ran out of VMEM on a v5e in both libraries in the eleventh
    session: the kernel also keeps its 1024x32x128 bf16 output there.)"""
    rpa = mods["ragged_paged_attention/kernel"]
    if small:
        q_lens, kv_lens, pages, per_seq, heads, kv_heads, seqs = (
            [1, 5, 10], [9, 21, 40], 16, 4, 8, 2, 4)
        blocks = dict(num_kv_pages_per_block=2, num_queries_per_block=8)
    else:
        q_lens = [1] * 6 + [509, 509]
        kv_lens = [1000, 700, 1024, 33, 512, 999, 1021, 1024]
        pages, per_seq, heads, kv_heads, seqs = 2048, 64, 32, 8, 16
        blocks = dict(num_kv_pages_per_block=16, num_queries_per_block=32,
                      vmem_limit_bytes=64 * 1024 * 1024)
    page_size, dim = 16, 128
    tokens = sum(q_lens)
    q = jnp.asarray(rng.standard_normal((tokens, heads, dim)).astype(np.float32),
                    jnp.bfloat16)
    kv = jnp.asarray(rng.standard_normal((pages, page_size, 2 * kv_heads, dim)).astype(
        np.float32), jnp.bfloat16)
    n = len(q_lens)
    lens = jnp.asarray(np.array(kv_lens + [0] * (seqs - n), np.int32))
    idx = jnp.asarray(rng.permutation(pages)[:seqs * per_seq].astype(np.int32).reshape(
        seqs, per_seq))
    cu = jnp.asarray(np.concatenate([[0], np.cumsum(q_lens), [tokens] * (seqs - n)]).astype(
        np.int32))
    num = jnp.asarray(np.array([n], np.int32))
    args = (q, kv, lens, idx, cu, num)
    if small and jax.__name__ == "jax":      # (see the module's docstring; its loop over
        cases["ragged_paged_attention"] = (  # the sequences needs a concrete num_seqs)
            functools.partial(rpa.ref_ragged_paged_attention, sm_scale=dim ** -0.5), args)
        return
    cases["ragged_paged_attention"] = (jax.jit(functools.partial(
        rpa.ragged_paged_attention, sm_scale=dim ** -0.5, **blocks)), args)


def worker(out: str, which: list[str], interpret: bool, ops_dir: str) -> None:
    import contextlib
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu
    mods = _load_ops(ops_dir)
    small = interpret
    rng = np.random.default_rng(0)
    bf16 = jnp.bfloat16

    def arr(shape, dtype=np.float32, scale=1.0):
        return jnp.asarray((rng.standard_normal(shape) * scale).astype(np.float32), dtype)

    cases = {}
    n = 256 if small else 2048
    x, y = arr((n, n), bf16), arr((n, n), bf16)
    blk = 128 if small else 512
    cases["matmul"] = (jax.jit(functools.partial(mods["matmul"].matmul,
                                                 block_shape=(blk, blk), block_k=blk)), (x, y))
    b, h, s, d = (1, 2, 128, 64) if small else (2, 8, 2048, 128)
    q, k, v = arr((b, h, s, d), scale=0.5), arr((b, h, s, d), scale=0.5), arr((b, h, s, d))
    if small:
        bs = mods["fa"].BlockSizes(
            block_q=128, block_k_major=128, block_k=128, block_b=1, block_q_major_dkv=128,
            block_k_major_dkv=128, block_k_dkv=128, block_q_dkv=128, block_k_major_dq=128,
            block_k_dq=128, block_q_dq=128)
    else:
        bs = mods["fa"].BlockSizes.get_default(b, h, s, s, d)
    fa = functools.partial(mods["fa"].flash_attention, causal=True, sm_scale=d ** -0.5,
                           block_sizes=bs)
    cases["flash_attention"] = (jax.jit(fa), (q, k, v))
    cases["flash_attention_grad"] = (
        jax.jit(jax.grad(lambda q, k, v: fa(q, k, v).sum(), argnums=(0, 1, 2))), (q, k, v))
    m, kk, nn, groups = (256, 128, 128, 2) if small else (4096, 2048, 2048, 8)
    lhs, rhs = arr((m, kk), bf16), arr((groups, kk, nn), bf16)
    sizes = jnp.asarray(np.full(groups, m // groups, np.int32))
    tiling = (128, 128, 128) if small else (512, 1024, 1024)
    cases["gmm"] = (jax.jit(functools.partial(mods["gmm"].gmm, tiling=tiling,
                                              interpret=interpret)), (lhs, rhs, sizes))
    # (the gradient's transposed kernel holds a (tm, tk) x (tm, tn) pair per step: the
    # forward's (512, 1024, 1024) runs out of VMEM there, in JAX too)
    grad_tiling = (128, 128, 128) if small else (512, 512, 512)
    gmm_op = functools.partial(mods["gmm_ops"].gmm, tiling=grad_tiling, interpret=interpret)
    cases["gmm_grad"] = (jax.jit(jax.grad(
        lambda a, w, g: gmm_op(a, w, g).astype(jnp.float32).sum(), argnums=(0, 1))),
        (lhs, rhs, sizes))
    batch, heads, kv_heads, dim = (2, 2, 1, 128) if small else (8, 32, 8, 128)
    pages, page_size, per_seq = (8, 16, 4) if small else (1024, 16, 64)
    qp = arr((batch, heads, dim))
    kp = arr((kv_heads, pages, page_size, dim))
    vp = arr((kv_heads, pages, page_size, dim))
    lengths = jnp.asarray(np.full(batch, page_size * per_seq - 3, np.int32))
    idx = jnp.asarray(rng.integers(0, pages, (batch, per_seq)).astype(np.int32))
    cases["paged_attention"] = (jax.jit(functools.partial(
        mods["pa"].paged_attention, pages_per_compute_block=2 if small else 8)),
        (qp, kp, vp, lengths, idx))
    _splash_cases(cases, jax, jnp, mods, arr, small)
    _ragged_case(cases, jax, jnp, mods, rng, small)
    key = jnp.asarray(np.array([7, 2**31 + 5], np.uint32))
    shape = (256, 512) if small else (4096, 4096)
    cases["threefry"] = (jax.jit(functools.partial(
        mods["random/threefry"].plthreefry_random_bits, bit_width=32, shape=shape)), (key,))
    philox = mods["random/philox"].philox_4x32_count
    cases["philox"] = (jax.jit(lambda k, o: philox(k, shape, offset=o)),
                       (key, jnp.asarray(np.uint32(1000))))
    g = 256 if small else 8192
    gx, gy = arr((g, g), bf16), arr((g, g), bf16)
    gb = 128 if small else 512
    cases["guide_matmul"] = (jax.jit(functools.partial(
        _guide_matmul, jax, jnp, pl, pltpu, bm=gb, bk=gb if small else 1024, bn=gb)),
        (gx, gy))
    cases["xla_dot"] = (jax.jit(lambda a, b: jnp.dot(a, b, preferred_element_type=bf16)),
                        (gx, gy))

    ctx = pltpu.force_tpu_interpret_mode() if interpret else contextlib.nullcontext()
    results, times = {}, {}
    with ctx:
        for name in which:
            fn, args = cases[name]
            try:
                outs = jax.block_until_ready(fn(*args))
            except Exception as e:      # (reported, the other kernels still run)
                times[name] = f"{type(e).__name__}: {str(e)[:300]}"
                continue
            ts = []
            for _ in range(3 if interpret else 20):
                t = time.perf_counter()
                jax.block_until_ready(fn(*args))
                ts.append(time.perf_counter() - t)
            times[name] = statistics.median(ts)
            for i, o in enumerate(jax.tree_util.tree_leaves(outs)):
                results[f"{name}:{i}"] = np.asarray(o.astype(jnp.float32))
    np.savez(out, **results)
    print("TIMES " + json.dumps(times))


# ---- the driver ----------------------------------------------------------------------------
def _run(lib: str, out: str, which, interpret) -> dict:
    cmd = [sys.executable] + (["-m", "mjax"] if lib == "mjax" else []) + [
        os.path.abspath(__file__), "--worker", out, ",".join(which), _ops_dir()] + (
        ["--interpret"] if interpret else [])
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode:
        print(f"{lib} failed:\n{proc.stderr[-4000:]}")
        return {}
    line = [ln for ln in proc.stdout.splitlines() if ln.startswith("TIMES ")][-1]
    return json.loads(line[6:])


def _median_times(runs: list[dict]) -> dict:
    """Per kernel, the median of the processes' times (an error string if one failed)."""
    runs = [r for r in runs if r]
    out = {}
    for name in (runs[0] if runs else {}):
        ts = [r.get(name) for r in runs]
        bad = [t for t in ts if not isinstance(t, float)]
        out[name] = bad[0] if bad else statistics.median(ts)
    return out


def main(argv) -> int:
    if "--worker" in argv:
        i = argv.index("--worker")
        worker(argv[i + 1], argv[i + 2].split(","), "--interpret" in argv, argv[i + 3])
        return 0
    interpret = "--interpret" in argv
    rounds = 1
    if "--rounds" in argv:
        i = argv.index("--rounds")
        rounds = int(argv[i + 1])
        argv = argv[:i] + argv[i + 2:]
    which = [a for a in argv if not a.startswith("--")] or ALL
    runs: dict = {"jax": [], "mjax": []}
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(rounds):
            for lib in runs:
                runs[lib].append(_run(lib, os.path.join(tmp, f"{lib}.npz"), which, interpret))
        t_jax, t_mjax = (_median_times(runs[lib]) for lib in ("jax", "mjax"))
        r_jax = dict(np.load(os.path.join(tmp, "jax.npz"))) if t_jax else {}
        r_mjax = dict(np.load(os.path.join(tmp, "mjax.npz"))) if t_mjax else {}
    print(f"{'kernel':<22} {'max |mjax - jax|':>18} {'jax ms':>9} {'mjax ms':>9} "
          f"{'mjax/jax':>9}")
    for name in which:
        keys = [k for k in r_jax if k.split(":")[0] == name]
        diff = max((float(np.max(np.abs(r_jax[k] - r_mjax[k]))) for k in keys
                    if k in r_mjax), default=float("nan"))
        tj, tm = t_jax.get(name), t_mjax.get(name)
        if isinstance(tj, str) or isinstance(tm, str):
            print(f"{name:<22} jax: {tj}\n{'':<22} mjax: {tm}")
            continue
        ratio = tm / tj if tj and tm else float("nan")
        print(f"{name:<22} {diff:>18.3g} {1e3 * (tj or float('nan')):>9.3f} "
              f"{1e3 * (tm or float('nan')):>9.3f} {ratio:>9.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
