"""GPU check: mjax on a CUDA PJRT plugin, numbers vs NumPy, speed vs JAX on the same GPU.

Run where jaxlib, a jax-cuda PJRT plugin and a GPU are installed:
    MJAX_PLATFORM=cuda python benchmarks/gpu_check.py
(gpu_check.sh runs it from a copy of the package on PYTHONPATH, for a machine whose
jaxlib differs from the pinned one.) Rows: an MLP's forward pass and train step, a cached
jit call and an eager op, and benchmarks/transformer.py's LM train step (trace+lower of a
fresh jit, XLA compile, steady state); JAX runs the same in a child process, and the MLP's
new parameters and the LM's five losses must agree with its.
"""
import os
import subprocess
import sys
import tempfile

import numpy as np

from run import lower_and_compile, mlp_model, print_times, timeit  # (benchmarks/: on sys.path)
from transformer import SEQ, VOCAB, lm_params, make_step


def workload(lib, jnp, params, x, t):
    forward, _, step = mlp_model(lib, jnp)
    step = lib.jit(step)
    fwd = lib.jit(forward)
    p = lib.device_put(params)
    xd, td = lib.device_put(x), lib.device_put(t)
    out = np.asarray(fwd(p, xd))
    new = step(p, xd, td)
    tiny = lib.jit(lambda a: a + 1)
    small = lib.device_put(np.ones(4, np.float32))
    times = {
        "forward": timeit(lambda: fwd(p, xd).block_until_ready()),
        "train step": timeit(lambda: lib.block_until_ready(step(p, xd, td)), number=20),
        "jit dispatch": timeit(lambda: tiny(small), number=1000),
        "eager x * y": timeit(lambda: small * small, number=1000),
    }
    lm_losses, lm_times = lm_workload(lib, jnp)
    times.update(lm_times)
    return out, [np.asarray(a) for pair in new for a in pair] + [lm_losses], times


def lm_workload(lib, jnp, layers=4, batch=16):
    """benchmarks/transformer.py's LM train step (Adam): 5 steps' losses, the trace+lower
    time of a fresh jit, and the steady-state step time."""
    rng = np.random.default_rng(0)
    params = lib.device_put(lm_params(rng, layers))
    zeros = lib.tree_util.tree_map(jnp.zeros_like, params)
    opt = (jnp.zeros((), jnp.float32), zeros, zeros)
    tokens = lib.device_put(rng.integers(0, VOCAB, (batch, SEQ + 1)).astype(np.int32))
    step = make_step(lib, jnp)
    lowered = lower_and_compile(lib, step, (params, opt, tokens), "LM step")
    train = lib.jit(step)
    losses, p, o = [], params, opt
    for _ in range(5):
        value, p, o = train(p, o, tokens)
        losses.append(float(value))
    times = {**lowered, "LM step steady": timeit(
        lambda: lib.block_until_ready(train(params, opt, tokens)), number=20)}
    dump = os.environ.get("GPU_CHECK_DUMP")
    if dump:   # the programs both libraries hand XLA, and what XLA made of them
        low = train.lower(params, opt, tokens)
        name = lib.__name__
        with open(os.path.join(dump, f"{name}_lm_step.stablehlo"), "w") as f:
            f.write(low.as_text())
        with open(os.path.join(dump, f"{name}_lm_step.hlo"), "w") as f:
            f.write(low.compile().as_text())
    return np.asarray(losses), times


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
        print("train-step parameters and LM losses agree with JAX:", np.round(m_new[-1], 5))
        j_times = {k: float(got[f"time_{k.replace(' ', '_')}"]) for k in m_times}
    print_times(m_times, j_times, width=30)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--jax":
        run_jax(sys.argv[2])
    else:
        main()
