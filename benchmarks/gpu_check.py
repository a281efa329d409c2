"""GPU check: mjax on a CUDA PJRT plugin, numbers vs NumPy, speed vs JAX on the same GPU.

Run where jaxlib, a jax-cuda PJRT plugin and a GPU are installed:
    MJAX_PLATFORM=cuda python benchmarks/gpu_check.py
(On a machine whose jaxlib differs from the pinned one, put a copy of the package on
PYTHONPATH instead of installing; see the docstring of `main`.)
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

from run import mlp_model, print_times, timeit  # benchmarks/run.py (on sys.path: same folder)


def workload(lib, jnp, params, x, t):
    forward, _, step = mlp_model(lib, jnp)
    step = lib.jit(step)
    fwd = lib.jit(forward)
    p = lib.device_put(params)
    xd, td = lib.device_put(x), lib.device_put(t)
    out = np.asarray(fwd(p, xd))
    new = step(p, xd, td)
    times = {
        "forward": timeit(lambda: fwd(p, xd).block_until_ready()),
        "train step": timeit(lambda: lib.block_until_ready(step(p, xd, td)), number=20),
    }
    return out, [np.asarray(a) for pair in new for a in pair], times


def problem():
    rng = np.random.default_rng(0)
    sizes = (784, 2048, 2048, 10)
    params = [(rng.standard_normal((m, n)).astype(np.float32) / np.sqrt(m),
               np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((512, 784)).astype(np.float32)
    t = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 512)]
    return params, x, t


def run_jax(out_path):
    """JAX's side, in its own process (one process can load a PJRT plugin only once)."""
    import jax
    import jax.numpy as jnp
    print("jax devices:", jax.devices())
    _, new, times = workload(jax, jnp, *problem())
    np.savez(out_path, *new, **{f"time_{k.replace(' ', '_')}": v for k, v in times.items()})


def main():
    import mjax
    import mjax.numpy as mnp
    print("mjax devices:", mjax.devices())
    params, x, t = problem()
    y = np.asarray(mnp.sin(mnp.asarray(x[:4, :4])) * 2)
    np.testing.assert_allclose(y, np.sin(x[:4, :4]) * 2, rtol=1e-5)
    m_out, m_new, m_times = workload(mjax, mnp, params, x, t)
    ref = x.astype(np.float64)
    for w, b in params[:-1]:
        ref = np.tanh(ref @ w + b)
    ref = ref @ params[-1][0] + params[-1][1]
    err = np.max(np.abs(m_out - ref))
    print(f"mjax forward max abs error vs NumPy float64: {err:.2e}")
    assert err < 5e-2, err  # TF32 matmuls on GPU
    path = os.path.join(tempfile.mkdtemp(), "jax.npz")
    proc = subprocess.run([sys.executable, __file__, "--jax", path])
    j_times = {}
    if proc.returncode == 0:
        got = np.load(path)
        for i, a in enumerate(m_new):
            np.testing.assert_allclose(a, got[f"arr_{i}"], rtol=2e-2, atol=2e-3)
        print("train-step parameters agree with JAX")
        j_times = {k: float(got[f"time_{k.replace(' ', '_')}"]) for k in m_times}
    print_times(m_times, j_times)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--jax":
        run_jax(sys.argv[2])
    else:
        main()
