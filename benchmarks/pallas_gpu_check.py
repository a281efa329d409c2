"""Pallas on a GPU: mjax's Triton lowering against JAX's Pallas (Triton backend).

Two kernels from the Pallas documentation, written once and run by both libraries:
a blocked matmul (a fori_loop over K accumulating `jnp.dot` in f32) and a fused row
softmax. mjax must lower them to the `__gpu$xla.gpu.triton` custom call (not the
interpret loop), match NumPy (TF32 tolerance for the matmul) and JAX's results; the
script prints times against JAX's Pallas and against XLA's own `dot`/softmax.

    MJAX_PLATFORM=cuda python benchmarks/pallas_gpu_check.py     # via gpu_check.sh
    PALLAS_CHECK_INTERPRET=1 python benchmarks/pallas_gpu_check.py   # CPU dry run

Each library runs in its own process (one process loads a PJRT plugin only once).
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

from run import print_times, timeit  # benchmarks/run.py (this script's folder is on sys.path)

INTERPRET = os.environ.get("PALLAS_CHECK_INTERPRET", "") not in ("", "0")
M = N = K = 256 if INTERPRET else 2048
ROWS, COLS = (64, 256) if INTERPRET else (8192, 1024)
BM = BN = 64
BK = 32


def kernels(lib, jnp, lax, pl, compiler_params):
    """(matmul, softmax) built with library `lib`'s Pallas API `pl`."""

    def matmul(x, y):
        m, k = x.shape
        n = y.shape[1]

        def kernel(x_ref, y_ref, o_ref):
            def body(i, acc):
                a = x_ref[:, pl.ds(i * BK, BK)]
                b = y_ref[pl.ds(i * BK, BK), :]
                return acc + jnp.dot(a, b, preferred_element_type=jnp.float32)
            acc = lax.fori_loop(0, k // BK, body, jnp.zeros((BM, BN), jnp.float32))
            o_ref[...] = acc.astype(o_ref.dtype)

        return pl.pallas_call(
            kernel, out_shape=lib.ShapeDtypeStruct((m, n), x.dtype), grid=(m // BM, n // BN),
            in_specs=[pl.BlockSpec((BM, k), lambda i, j: (i, 0)),
                      pl.BlockSpec((k, BN), lambda i, j: (0, j))],
            out_specs=pl.BlockSpec((BM, BN), lambda i, j: (i, j)),
            compiler_params=compiler_params(num_warps=4, num_stages=3),
            interpret=INTERPRET)(x, y)

    def softmax(x):
        rows, cols = x.shape

        def kernel(x_ref, o_ref):
            v = x_ref[...]
            e = jnp.exp(v - jnp.max(v))
            o_ref[...] = e / jnp.sum(e)

        spec = pl.BlockSpec((None, cols), lambda i: (i, 0))
        return pl.pallas_call(
            kernel, out_shape=lib.ShapeDtypeStruct((rows, cols), x.dtype), grid=(rows,),
            in_specs=[spec], out_specs=spec,
            compiler_params=compiler_params(num_warps=4, num_stages=1),
            interpret=INTERPRET)(x)

    return lib.jit(matmul), lib.jit(softmax)


def problem():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((M, K)).astype(np.float32)
    y = rng.standard_normal((K, N)).astype(np.float32)
    s = (rng.standard_normal((ROWS, COLS)) * 4).astype(np.float32)
    return x, y, s


def measure(lib, jnp, lax, pl, compiler_params):
    """Results and times of the two kernels and of XLA's own versions."""
    matmul, softmax = kernels(lib, jnp, lax, pl, compiler_params)
    xla_matmul = lib.jit(lambda a, b: jnp.dot(a, b))
    xla_softmax = lib.jit(lambda v: lib.nn.softmax(v, axis=-1))
    x, y, s = (lib.device_put(a) for a in problem())
    outs = {"matmul": np.asarray(matmul(x, y)), "softmax": np.asarray(softmax(s))}
    times = {
        "pallas matmul": timeit(lambda: matmul(x, y).block_until_ready(), number=20),
        "xla dot": timeit(lambda: xla_matmul(x, y).block_until_ready(), number=20),
        "pallas softmax": timeit(lambda: softmax(s).block_until_ready(), number=20),
        "xla softmax": timeit(lambda: xla_softmax(s).block_until_ready(), number=20),
    }
    return outs, times, (matmul, softmax, x, y, s)


def run_jax(out_path):
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import triton as plgpu
    print("jax devices:", jax.devices())
    outs, times, _ = measure(jax, jnp, jax.lax, pl, plgpu.CompilerParams)
    np.savez(out_path, **outs, **{"time " + k: v for k, v in times.items()})


def _mjax_compiler_params():
    try:
        from mjax.experimental.pallas import triton as plgpu
        return plgpu.CompilerParams
    except ImportError:          # the dictionary form pallas_call also takes
        return dict


def main():
    import mjax
    import mjax.numpy as mnp
    from mjax.experimental import pallas as pl
    print("mjax devices:", mjax.devices(), "interpret" if INTERPRET else "")
    outs, times, (matmul, softmax, x, y, s) = measure(mjax, mnp, mjax.lax, pl,
                                                      _mjax_compiler_params())
    if not INTERPRET:   # the kernels must have become Triton custom calls
        for f, args in ((matmul, (x, y)), (softmax, (s,))):
            text = f.lower(*args).as_text()
            assert "__gpu$xla.gpu.triton" in text, "pallas_call was not lowered to Triton"
    xn, yn, sn = problem()
    ref_mm = xn.astype(np.float64) @ yn
    err = np.max(np.abs(outs["matmul"] - ref_mm)) / np.max(np.abs(ref_mm))
    print(f"mjax Pallas matmul: max error vs NumPy float64 (relative to max) {err:.2e}")
    assert err < 1e-2, err       # TF32 tensor cores, as JAX on GPU
    e = np.exp(sn - sn.max(axis=1, keepdims=True))
    np.testing.assert_allclose(outs["softmax"], e / e.sum(axis=1, keepdims=True),
                               rtol=1e-4, atol=1e-6)
    print("mjax Pallas softmax matches NumPy")
    path = os.path.join(tempfile.mkdtemp(), "jax_pallas.npz")
    proc = subprocess.run([sys.executable, __file__, "--jax", path])
    j_times = {}
    if proc.returncode == 0:
        got = np.load(path)
        np.testing.assert_allclose(outs["matmul"], got["matmul"], rtol=2e-2,
                                   atol=2e-2 * np.abs(ref_mm).max())
        np.testing.assert_allclose(outs["softmax"], got["softmax"], rtol=1e-4, atol=1e-6)
        print("mjax and JAX Pallas results agree")
        j_times = {k: float(got["time " + k]) for k in times}
    else:
        print("JAX's side failed; times below are mjax's only")
    print_times(times, j_times, width=15)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--jax":
        run_jax(sys.argv[2])
    else:
        main()
