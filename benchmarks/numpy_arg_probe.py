"""Where mjax's `f(NumPy array)` spends what JAX's does not: interleaved rounds, one process
(jax imported first, so the C++ jit reads JAX's states in every row).

    python benchmarks/numpy_arg_probe.py [--rounds 9] [--calls 2000]

Rows: JAX's jitted call; mjax's; mjax's program in jaxlib's C++ jit called directly
(runtime/host_call.py: what mjax's fast path calls); mjax's fast path with that call
replaced by a Python function returning a kept result (what the fast path alone costs on
this host); the same Python function alone; device-array calls in both libraries. Each
row: median microseconds a call, wall and process CPU time, and the wall time to issue the
round's calls (before waiting for the last result). Rounds rotate the rows' order.
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


def spin(n):
    for _ in range(n):
        pass


def spin_count(us):
    """The loop count of `spin` that takes `us` microseconds here (a median of tries)."""
    n = 1000
    times = []
    for _ in range(9):
        start = time.perf_counter()
        for _ in range(200):
            spin(n)
        times.append((time.perf_counter() - start) / 200 * 1e6)
    return max(0, round(n * us / statistics.median(times)))


def scattered(k, pool=200_000, seed=0):
    """`k` objects of a pool of `pool` made one after another, picked far apart."""
    made = [Box(i) for i in range(pool)]
    rng = np.random.default_rng(seed)
    return [made[i] for i in sorted(rng.choice(pool, k, replace=False))]


def touch(objs):
    for o in objs:
        o.x


class Box:
    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def block_until_ready(self):
        return self.x.block_until_ready()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--spin", action="store_true",
                        help="also rows of the C++ jit call followed by 0.25 to 4 us of "
                             "busy Python work (measured on this host before the rounds)")
    parser.add_argument("--touch", action="store_true",
                        help="also rows of the C++ jit call followed by reading 8 to 128 "
                             "fixed objects scattered over memory (the same ones each call)")
    parser.add_argument("--no-gc", action="store_true",
                        help="the cyclic garbage collector off (gc.freeze(), gc.disable())")
    parser.add_argument("--pin", type=int, default=None, metavar="CORE",
                        help="pin the calling thread (only it) to this host core")
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
    f3 = mjax.jit(lambda x: x * 2.0)
    f3(host), f3(host)
    run3 = f3._memo.entry.host_run
    f3._memo.entry.host_run = lambda *args: run3(*args)
    from mjax.arrays.array import Array
    aval = f._memo.entry.out_avals[0]
    dev, jdev = mjax.device_put(host), jax.device_put(host)
    rows = {
        "jax f(NumPy)": lambda: g(host),
        "mjax f(NumPy)": lambda: f(host),
        "C++ jit of mjax's program (NumPy)": lambda: host_run(host),
        "mjax fast path around a Python stub": lambda: f2(host),
        "the Python stub alone": lambda: fake(host),
        "mjax fast path, its C++ jit called in Python": lambda: f3(host),
        "C++ jit, its result wrapped in Python": lambda: Array(host_run(host)[0], aval),
        "C++ jit, its result in a Python object": lambda: Box(host_run(host)[0]),
        "C++ jit after reading the array's shape, dtype": lambda: (
            host.shape, host.dtype, Array(host_run(host)[0], aval))[2],
        "C++ jit, then the fast path around the stub": lambda: (host_run(host), f2(host))[0],
        "jax f(device array)": lambda: g(jdev),
        "mjax f(device array)": lambda: f(dev),
    }
    if a.spin:
        for us in (0.25, 0.5, 1.0, 2.0, 4.0):
            n = spin_count(us)
            rows[f"C++ jit, then {us} us of Python work"] = (
                lambda n=n: (host_run(host), spin(n))[0])
    if a.pin is not None:   # (after the runtimes' threads started: they keep their cores)
        import os
        os.sched_setaffinity(0, {a.pin})   # (pid 0: the calling thread only)
    if a.touch:
        for k in (8, 32, 128):
            objs = scattered(k)
            rows[f"C++ jit, then reading {k} scattered objects"] = (
                lambda objs=objs: (host_run(host), touch(objs))[0])
            rows[f"reading {k} scattered objects alone"] = lambda objs=objs: touch(objs)
    for fn in rows.values():
        per_round(fn, 200)
    if a.no_gc:
        import gc
        gc.collect(), gc.freeze(), gc.disable()
    got = {k: [] for k in rows}
    keys = list(rows)
    for r in range(a.rounds):
        # (each round starts at another row, every other one in reverse: no row always
        # follows the same one)
        order = keys[r % len(keys):] + keys[:r % len(keys)]
        for k in (order[::-1] if r % 2 else order):
            got[k].append(per_round(rows[k], a.calls))
    same = (g.lower(host).compile().runtime_executable().fingerprint ==
            f._memo.entry.executable.loaded.fingerprint)
    print("device:", mjax.devices()[0], " rounds:", a.rounds, " calls:", a.calls,
          " the same executable as JAX's (fingerprint):", same)
    print(f"{'':40s} {'wall':>8s} {'CPU':>8s} {'issue':>8s}  (us a call, medians)")
    for k, v in got.items():
        w, c, i = (statistics.median(x) for x in zip(*v))
        print(f"{k:40s} {w:8.2f} {c:8.2f} {i:8.2f}")


if __name__ == "__main__":
    main()
