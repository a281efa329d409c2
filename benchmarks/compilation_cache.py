"""The persistent compilation cache, timed: a first process compiles, a second process
with the same `jax_compilation_cache_dir` loads the executables instead.

    python benchmarks/compilation_cache.py                   # XLA and IREE
    python benchmarks/compilation_cache.py --backend xla     # one backend

Each process (a fresh interpreter, so nothing is cached in memory) makes the first call
of three workloads (an MLP train step, an RNN train step through `lax.scan`, a chain of
200 elementwise ops) and reports, per workload, the first-call wall time and the
backend's compile and cache-hit counts. Rounds: cold (empty cache dir), warm (same dir),
and a reference run with the cache off. The table prints cold/warm per backend.
"""
from __future__ import annotations

import argparse
import json
import os
import pathlib
import shutil
import subprocess
import sys
import tempfile
import textwrap

ROOT = pathlib.Path(__file__).resolve().parents[1]

CHILD = textwrap.dedent("""
    import json, sys, time
    import numpy as np
    t_import = time.perf_counter()
    import mjax, mjax.numpy as jnp
    from mjax.runtime import get_backend
    backend, cache_dir = sys.argv[1], sys.argv[2]
    mjax.config.update("mjax_backend", backend)
    if cache_dir != "-":
        mjax.config.update("jax_compilation_cache_dir", cache_dir)
        mjax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    rng = np.random.default_rng(0)
    sizes = (784, 512, 512, 10)
    params = [(rng.standard_normal((m, n)).astype(np.float32) / np.sqrt(m),
               np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]
    x = rng.standard_normal((128, 784)).astype(np.float32)
    t = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]

    def forward(p, x):
        for w, b in p[:-1]:
            x = jnp.tanh(x @ w + b)
        return x @ p[-1][0] + p[-1][1]

    def step(p, x, t):
        g = mjax.grad(lambda p: jnp.mean((forward(p, x) - t) ** 2))(p)
        return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(p, g)]

    wh = rng.standard_normal((256, 256)).astype(np.float32) / 16
    wx = rng.standard_normal((64, 256)).astype(np.float32) / 8
    seq = rng.standard_normal((100, 32, 64)).astype(np.float32)

    def rnn_step(wh, wx, xs):
        def loss(wh, wx):
            h, _ = mjax.lax.scan(lambda h, x: (jnp.tanh(h @ wh + x @ wx), None),
                                 jnp.zeros((32, 256), jnp.float32), xs)
            return jnp.mean(h ** 2)
        gh, gx = mjax.grad(loss, argnums=(0, 1))(wh, wx)
        return wh - 0.01 * gh, wx - 0.01 * gx

    def chain(v):
        for _ in range(50):
            v = jnp.sin(v) * 1.01 + 0.5 - v
        return v

    work = {"MLP train step": (step, (params, x, t)),
            "RNN scan train step": (rnn_step, (wh, wx, seq)),
            "200-op elementwise chain": (chain, (np.ones(1024, np.float32),))}
    out = {}
    st = get_backend().stats
    for name, (fn, args) in work.items():
        c0, h0 = st["compiles"], st["cache_hits"]
        t0 = time.perf_counter()
        mjax.block_until_ready(mjax.jit(fn)(*args))
        out[name] = {"seconds": time.perf_counter() - t0,
                     "compiles": st["compiles"] - c0, "hits": st["cache_hits"] - h0}
    print(json.dumps(out))
""")


def child(backend: str, cache_dir: str) -> dict:
    env = dict(os.environ)
    env.pop("JAX_COMPILATION_CACHE_DIR", None)
    env.pop("MJAX_COMPILATION_CACHE_DIR", None)
    env.pop("MJAX_BACKEND", None)
    out = subprocess.run([sys.executable, "-c", CHILD, backend, cache_dir], env=env,
                         cwd=ROOT, capture_output=True, text=True, timeout=900)
    if out.returncode:
        raise RuntimeError(out.stderr[-3000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(backend: str) -> dict:
    cache_dir = tempfile.mkdtemp(prefix=f"mjax-cache-{backend}-")
    try:
        off = child(backend, "-")
        cold = child(backend, cache_dir)
        warm = child(backend, cache_dir)
        size = sum(p.stat().st_size for p in pathlib.Path(cache_dir).iterdir())
        entries = len(list(pathlib.Path(cache_dir).iterdir()))
    finally:
        shutil.rmtree(cache_dir, ignore_errors=True)
    return {"off": off, "cold": cold, "warm": warm, "entries": entries, "bytes": size}


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", choices=["xla", "iree", "both"], default="both")
    args = parser.parse_args()
    backends = ["xla", "iree"] if args.backend == "both" else [args.backend]
    print(f"{'backend':8s} {'workload':26s} {'cache off':>10s} {'cold':>10s} "
          f"{'warm':>10s} {'warm/cold':>9s}  compiles cold/warm, hits warm")
    for backend in backends:
        r = measure(backend)
        for name in r["cold"]:
            off, cold, warm = (r[k][name] for k in ("off", "cold", "warm"))
            print(f"{backend:8s} {name:26s} {off['seconds'] * 1e3:8.1f}ms "
                  f"{cold['seconds'] * 1e3:8.1f}ms {warm['seconds'] * 1e3:8.1f}ms "
                  f"{warm['seconds'] / cold['seconds']:9.2f}  "
                  f"{cold['compiles']}/{warm['compiles']}, {warm['hits']}")
        print(f"{backend:8s} cache: {r['entries']} entries, {r['bytes'] / 1e6:.2f} MB")


if __name__ == "__main__":
    main()
