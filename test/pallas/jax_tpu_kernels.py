"""JAX's own Pallas TPU kernels (jax.experimental.pallas.ops.tpu) run as user code in
TPU interpret mode, on whichever library `import jax` gives.

    python test/pallas/jax_tpu_kernels.py OPS_DIR OUT.npz           # real jax
    python -m mjax test/pallas/jax_tpu_kernels.py OPS_DIR OUT.npz   # jax is mjax

OPS_DIR is the installed jax's `experimental/pallas/ops/tpu` folder. Its files are
loaded by path under their own module names (mjax has no `jax.experimental.pallas.ops`:
the kernels are user code here), and each kernel runs under
pltpu.force_tpu_interpret_mode() on small shapes. The results go to OUT.npz;
test_jax_tpu_kernels.py compares the two libraries' files.
"""
import importlib.util
import os
import sys
import time
import types

import numpy as np

import jax
import jax.numpy as jnp
from jax.experimental.pallas import tpu as pltpu

PKG = "jax.experimental.pallas.ops.tpu"


def load_ops(ops_dir: str) -> None:
    """Registers JAX's kernel files as modules (their packages as empty stand-ins)."""
    for pkg, path in (("jax.experimental.pallas.ops", os.path.dirname(ops_dir)),
                      (PKG, ops_dir)):
        if pkg not in sys.modules:
            mod = types.ModuleType(pkg)
            mod.__path__ = [path]
            sys.modules[pkg] = mod
    for sub in ("megablox", "paged_attention", "splash_attention"):  # (package stand-ins)
        name = f"{PKG}.{sub}"
        mod = types.ModuleType(name)
        mod.__path__ = [os.path.join(ops_dir, sub)]
        sys.modules[name] = mod


def load(name: str, path: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


def rnd(key, shape, dtype=np.float32):
    return np.random.default_rng(key).standard_normal(shape).astype(dtype)


def main(ops_dir: str, out: str, which: list[str]) -> None:
    load_ops(ops_dir)
    results, times = {}, {}
    with pltpu.force_tpu_interpret_mode():
        if "matmul" in which:
            t = time.perf_counter()
            mm = load(f"{PKG}.matmul", os.path.join(ops_dir, "matmul.py"))
            x, y = rnd(0, (256, 256)), rnd(1, (256, 256))
            results["matmul"] = np.asarray(mm.matmul(x, y, block_shape=(128, 128),
                                                     block_k=128))
            times["matmul"] = time.perf_counter() - t
        if "flash_attention" in which:
            t = time.perf_counter()
            fa = load(f"{PKG}.flash_attention", os.path.join(ops_dir, "flash_attention.py"))
            q, k, v = (rnd(i, (1, 2, 128, 64)) for i in range(3))
            bs = fa.BlockSizes(block_q=128, block_k_major=128, block_k=128, block_b=1)
            results["flash_attention"] = np.asarray(fa.flash_attention(
                q, k, v, causal=True, sm_scale=0.125, block_sizes=bs))
            times["flash_attention"] = time.perf_counter() - t
        if "flash_attention_grad" in which:
            t = time.perf_counter()
            fa = load(f"{PKG}.flash_attention", os.path.join(ops_dir, "flash_attention.py"))
            q, k, v = (rnd(i, (1, 2, 128, 64)) for i in range(3))
            bs = fa.BlockSizes(block_q=128, block_k_major=128, block_k=128, block_b=1,
                               block_q_major_dkv=128, block_k_major_dkv=128,
                               block_k_dkv=128, block_q_dkv=128, block_k_major_dq=128,
                               block_k_dq=128, block_q_dq=128)
            grads = jax.grad(lambda q, k, v: fa.flash_attention(
                q, k, v, causal=True, sm_scale=0.125, block_sizes=bs).sum(),
                argnums=(0, 1, 2))(q, k, v)
            results["flash_attention_grad"] = np.stack([np.asarray(g) for g in grads])
            times["flash_attention_grad"] = time.perf_counter() - t
        if "gmm" in which:
            t = time.perf_counter()
            load(f"{PKG}.megablox.common", os.path.join(ops_dir, "megablox", "common.py"))
            gmm = load(f"{PKG}.megablox.gmm", os.path.join(ops_dir, "megablox", "gmm.py"))
            lhs, rhs = rnd(3, (256, 128)), rnd(4, (2, 128, 128))
            sizes = np.array([96, 160], np.int32)
            results["gmm"] = np.asarray(gmm.gmm(lhs, rhs, jnp.asarray(sizes),
                                                tiling=(128, 128, 128), interpret=True))
            times["gmm"] = time.perf_counter() - t
        if "gmm_grad" in which:
            t = time.perf_counter()
            load(f"{PKG}.megablox.common", os.path.join(ops_dir, "megablox", "common.py"))
            load(f"{PKG}.megablox.gmm", os.path.join(ops_dir, "megablox", "gmm.py"))
            ops = load(f"{PKG}.megablox.ops", os.path.join(ops_dir, "megablox", "ops.py"))
            lhs, rhs = rnd(3, (256, 128)), rnd(4, (2, 128, 128))
            sizes = jnp.asarray(np.array([96, 160], np.int32))
            dl, dr = jax.grad(lambda a, w: ops.gmm(a, w, sizes, tiling=(128, 128, 128),
                                                   interpret=True).sum(),
                              argnums=(0, 1))(lhs, rhs)
            results["gmm_grad"] = np.concatenate([np.asarray(dl).ravel(),
                                                  np.asarray(dr).ravel()])
            times["gmm_grad"] = time.perf_counter() - t
        if "splash_attention" in which:    # (forward and gradient, causal mask)
            t = time.perf_counter()
            sd = os.path.join(ops_dir, "splash_attention")
            mask = load(f"{PKG}.splash_attention.splash_attention_mask",
                        os.path.join(sd, "splash_attention_mask.py"))
            load(f"{PKG}.splash_attention.splash_attention_mask_info",
                 os.path.join(sd, "splash_attention_mask_info.py"))
            sk = load(f"{PKG}.splash_attention.splash_attention_kernel",
                      os.path.join(sd, "splash_attention_kernel.py"))
            h, s, d = 2, 256, 128
            q, k, v = (rnd(10 + i, (h, s, d)) for i in range(3))
            heads = mask.MultiHeadMask([mask.CausalMask((s, s)) for _ in range(h)])
            bs = sk.BlockSizes(block_q=128, block_kv=128, block_kv_compute=128,
                               block_q_dkv=128, block_kv_dkv=128, block_kv_dkv_compute=128,
                               block_q_dq=128, block_kv_dq=128)
            kern = sk.make_splash_mha(heads, head_shards=1, q_seq_shards=1, block_sizes=bs,
                                      interpret=True)
            fwd = jax.jit(kern)(q, k, v)
            grads = jax.grad(lambda q, k, v: kern(q, k, v).sum(), argnums=(0, 1, 2))(q, k, v)
            results["splash_attention"] = np.stack([np.asarray(fwd)]
                                                   + [np.asarray(g) for g in grads])
            times["splash_attention"] = time.perf_counter() - t
        if "paged_attention" in which:
            t = time.perf_counter()
            pa_dir = os.path.join(ops_dir, "paged_attention")
            load(f"{PKG}.paged_attention.quantization_utils",
                 os.path.join(pa_dir, "quantization_utils.py"))
            pa = load(f"{PKG}.paged_attention.paged_attention_kernel",
                      os.path.join(pa_dir, "paged_attention_kernel.py"))
            batch, heads, kv_heads, dim = 2, 2, 1, 128
            pages, page_size, pages_per_seq = 8, 16, 4
            q = rnd(5, (batch, heads, dim))
            k_pages = rnd(6, (kv_heads, pages, page_size, dim))
            v_pages = rnd(7, (kv_heads, pages, page_size, dim))
            lengths = np.array([40, 64], np.int32)
            page_indices = np.array([[0, 3, 5, 1], [2, 4, 6, 7]], np.int32)
            results["paged_attention"] = np.asarray(pa.paged_attention(
                q, k_pages, v_pages, jnp.asarray(lengths), jnp.asarray(page_indices),
                pages_per_compute_block=2))
            times["paged_attention"] = time.perf_counter() - t
    np.savez(out, **results)
    print({k: round(v, 2) for k, v in times.items()})


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3].split(",") if len(sys.argv) > 3 else
         ["matmul", "flash_attention", "flash_attention_grad", "gmm", "gmm_grad",
          "paged_attention", "splash_attention"])
