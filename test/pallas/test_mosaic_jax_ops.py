"""JAX's own Pallas TPU kernels (jax.experimental.pallas.ops.tpu: matmul, flash attention,
megablox gmm, paged attention) lowered for the TPU by each library, as user code: the
decoded Mosaic modules of mjax's --jaxpr-pallas-to-mosaic must equal JAX's exactly (names
and locations aside).

Run as a script, this file is the child: with `import jax` being real jax or, under
`python -m mjax`, mjax, it lowers each kernel with `lowering_platforms=("tpu",)` and
writes {kernel: [Mosaic module texts] or "error: ..."} to OUT.json:

    python [-m mjax] test/pallas/test_mosaic_jax_ops.py OPS_DIR OUT.json [kernel,...]
"""
from __future__ import annotations

import base64
import json
import os
import subprocess
import sys

import numpy as np

from jax_tpu_kernels import PKG, load, load_ops  # (JAX's kernel files, by path)

KERNELS = ("matmul", "flash_attention", "flash_attention_grad", "gmm", "paged_attention")


# ---- the child ---------------------------------------------------------------------------
def _cases(ops_dir: str):
    """kernel name -> (function, arguments)."""
    import jax.numpy as jnp
    rnd = lambda k, s: np.random.default_rng(k).standard_normal(s).astype(np.float32)  # noqa
    if True:
        mm = load(f"{PKG}.matmul", os.path.join(ops_dir, "matmul.py"))
        yield "matmul", (lambda x, y: mm.matmul(x, y, block_shape=(128, 128), block_k=128),
                         (rnd(0, (256, 256)), rnd(1, (256, 256))))
        fa = load(f"{PKG}.flash_attention", os.path.join(ops_dir, "flash_attention.py"))
        bs = fa.BlockSizes(block_q=128, block_k_major=128, block_k=128, block_b=1)
        yield "flash_attention", (
            lambda q, k, v: fa.flash_attention(q, k, v, causal=True, sm_scale=0.125,
                                               block_sizes=bs),
            tuple(rnd(i, (1, 2, 128, 64)) for i in range(3)))
        import jax
        bs_grad = fa.BlockSizes(block_q=128, block_k_major=128, block_k=128, block_b=1,
                                block_q_major_dkv=128, block_k_major_dkv=128,
                                block_k_dkv=128, block_q_dkv=128, block_k_major_dq=128,
                                block_k_dq=128, block_q_dq=128)
        yield "flash_attention_grad", (
            jax.grad(lambda q, k, v: fa.flash_attention(
                q, k, v, causal=True, sm_scale=0.125, block_sizes=bs_grad).sum(),
                argnums=(0, 1, 2)),
            tuple(rnd(i, (1, 2, 128, 64)) for i in range(3)))
        load(f"{PKG}.megablox.common", os.path.join(ops_dir, "megablox", "common.py"))
        gmm = load(f"{PKG}.megablox.gmm", os.path.join(ops_dir, "megablox", "gmm.py"))
        yield "gmm", (lambda lhs, rhs, sizes: gmm.gmm(lhs, rhs, sizes, tiling=(128, 128, 128)),
                      (rnd(3, (256, 128)), rnd(4, (2, 128, 128)),
                       jnp.asarray(np.array([96, 160], np.int32))))
        pa_dir = os.path.join(ops_dir, "paged_attention")
        load(f"{PKG}.paged_attention.quantization_utils",
              os.path.join(pa_dir, "quantization_utils.py"))
        pa = load(f"{PKG}.paged_attention.paged_attention_kernel",
                   os.path.join(pa_dir, "paged_attention_kernel.py"))
        yield "paged_attention", (
            lambda q, kp, vp, lengths, idx: pa.paged_attention(
                q, kp, vp, lengths, idx, pages_per_compute_block=2),
            (rnd(5, (2, 2, 128)), rnd(6, (1, 8, 16, 128)), rnd(7, (1, 8, 16, 128)),
             jnp.asarray(np.array([40, 64], np.int32)),
             jnp.asarray(np.array([[0, 3, 5, 1], [2, 4, 6, 7]], np.int32))))


def _decode(text: str) -> list[str]:
    from jaxlib.mlir import ir, passmanager
    from jaxlib.mlir.dialects import stablehlo
    from jaxlib.mlir._mlir_libs import _jax_mlir_ext
    from jaxlib.mosaic.python import tpu
    ctx = ir.Context()
    registry = ir.DialectRegistry()
    _jax_mlir_ext.register_dialects(registry)
    ctx.append_dialect_registry(registry)
    ctx.load_all_available_dialects()
    stablehlo.register_dialect(ctx)
    tpu.register_dialect(ctx)
    ctx.allow_unregistered_dialects = True
    out = []
    with ctx:
        module = ir.Module.parse(text)

        def walk(op):
            for region in op.regions:
                for block in region.blocks:
                    for o in block.operations:
                        o = o.operation
                        if o.name == "stablehlo.custom_call" and "tpu_custom_call" in str(
                                o.attributes["call_target_name"]):
                            config = json.loads(ir.StringAttr(
                                o.attributes["backend_config"]).value)
                            kmod = ir.Module.parse(base64.b64decode(
                                config["custom_call_config"]["body"]))
                            passmanager.PassManager.parse(
                                "builtin.module(mosaic-serde{serialize=false})").run(
                                    kmod.operation)
                            out.append(kmod.operation.get_asm(enable_debug_info=False))
                        walk(o)
        walk(module.operation)
    return out


def child(ops_dir: str, out: str, which) -> None:
    import jax
    load_ops(ops_dir)
    results = {}
    for name, (f, args) in _cases(ops_dir):
        if name not in which:
            continue
        try:
            text = jax.jit(f).trace(*args).lower(lowering_platforms=("tpu",)).as_text()
            results[name] = _decode(text)
        except Exception as e:     # noqa: BLE001  (the parent reports it)
            results[name] = f"error: {type(e).__name__}: {e}"
    with open(out, "w") as f:
        json.dump(results, f)


# ---- the test ----------------------------------------------------------------------------
# kernel -> why mjax's Mosaic differs from JAX's (names and locations aside)
DIFFERS: dict = {}


def _run(prefix: list, out: str) -> dict:
    import jax.experimental.pallas.ops.tpu as ops
    ops_dir = os.path.dirname(ops.__file__)
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    subprocess.run([sys.executable, *prefix, __file__, ops_dir, out], check=True, env=env,
                   timeout=900)
    with open(out) as f:
        return json.load(f)


def test_jax_tpu_kernels_lower_to_jax_mosaic(tmp_path):
    import jax.experimental.pallas.ops.tpu  # noqa: F401  (a test dependency: fails if missing)
    from test_mosaic_differential import _diff, normalize
    from mjax.dialect.context import context
    want = _run([], str(tmp_path / "jax.json"))
    got = _run(["-m", "mjax"], str(tmp_path / "mjax.json"))
    assert set(want) == set(got) == set(KERNELS)
    for name in KERNELS:
        assert not isinstance(want[name], str), want[name]
        assert not isinstance(got[name], str), f"{name}: {got[name]}"
        assert len(got[name]) == len(want[name]) >= 1
        with context():
            a = [normalize(m) for m in want[name]]
            b = [normalize(m) for m in got[name]]
        if name in DIFFERS:
            assert a != b, f"{name} now matches JAX: drop it from DIFFERS"
        else:
            for k, (x, y) in enumerate(zip(a, b)):
                assert x == y, f"{name} kernel {k}:\n{_diff(x, y)}"


if __name__ == "__main__":
    child(sys.argv[1], sys.argv[2], sys.argv[3].split(",") if len(sys.argv) > 3 else KERNELS)
