"""Where mjax's `f(NumPy array)` spends what JAX's does not: interleaved rounds, one process
(jax imported first, so the C++ jit reads JAX's states in every row).

    python benchmarks/numpy_arg_probe.py [--rounds 9] [--calls 2000]

Rows: JAX's jitted call; mjax's; mjax's program in jaxlib's C++ jit called directly
(runtime/host_call.py: what mjax's fast path calls); mjax's fast path with that call
replaced by a Python function returning a kept result (what the fast path alone costs on
this host); the same Python function alone; device-array calls in both libraries. Each
row: median microseconds a call, wall and process CPU time, and the wall time to issue the
round's calls (before waiting for the last result).
"""
import argparse
import statistics
import time

import numpy as np


def per_round(fn, n):
    start, cpu = time.perf_counter(), time.process_time()
    for _ in range(n):
        out = fn()
    issued = time.perf_counter()
    for o in (out if isinstance(out, tuple) else (out,)):
        getattr(o, "block_until_ready", lambda: None)()
    end = time.perf_counter()
    return ((end - start) / n * 1e6, (time.process_time() - cpu) / n * 1e6,
            (issued - start) / n * 1e6)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=2000)
    a = parser.parse_args()
    import jax
    import mjax

    host = np.ones((4,), np.float32)
    g = jax.jit(lambda x: x * 2.0)
    f = mjax.jit(lambda x: x * 2.0)
    f2 = mjax.jit(lambda x: x * 2.0)
    f(host), f(host), f2(host), f2(host), g(host)
    host_run = f._memo.entry.host_run
    kept = host_run(host)

    def fake(*args):
        return kept
    f2._memo.entry.host_run = fake
    dev, jdev = mjax.device_put(host), jax.device_put(host)
    rows = {
        "jax f(NumPy)": lambda: g(host),
        "mjax f(NumPy)": lambda: f(host),
        "C++ jit of mjax's program (NumPy)": lambda: host_run(host),
        "mjax fast path around a Python stub": lambda: f2(host),
        "the Python stub alone": lambda: fake(host),
        "jax f(device array)": lambda: g(jdev),
        "mjax f(device array)": lambda: f(dev),
    }
    for fn in rows.values():
        per_round(fn, 200)
    got = {k: [] for k in rows}
    for _ in range(a.rounds):
        for k, fn in rows.items():
            got[k].append(per_round(fn, a.calls))
    print("device:", mjax.devices()[0], " rounds:", a.rounds, " calls:", a.calls)
    print(f"{'':40s} {'wall':>8s} {'CPU':>8s} {'issue':>8s}  (us a call, medians)")
    for k, v in got.items():
        w, c, i = (statistics.median(x) for x in zip(*v))
        print(f"{k:40s} {w:8.2f} {c:8.2f} {i:8.2f}")


if __name__ == "__main__":
    main()
