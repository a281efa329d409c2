"""The data-parallel MLP train step on 8 CPU devices, mjax vs JAX side by side.

    XLA_FLAGS=--xla_force_host_platform_device_count=8 python benchmarks/data_parallel.py
    ... --profile steady|lower      # cProfile of mjax's steady-state call or trace+lower

jit with NamedShardings: the batch split over a "data" mesh axis, parameters replicated
(MLP 784-512-512-10, batch 128, grad + SGD). Steady state is timed in rounds interleaved
between the libraries (best round); trace+transform+lower (`jit(...).lower` of a fresh
function each time, so nothing is reused; after one untimed lower, so first-use costs of
either library are left out) in interleaved rounds too, reported as min and median of
wall time and median of the process's CPU time (steadier on a loaded machine). A
small sharded jit call shows the per-call cost of sharded dispatch.
"""
from __future__ import annotations

import argparse
import os
import statistics
import time

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=8")

import numpy as np  # noqa: E402

from run import Steady, mlp_model, mlp_params, time_interleaved  # noqa: E402


def setup(lib, jnp, rng):
    """(step, arguments, shardings) of the data-parallel train step for `lib`."""
    _, _, step = mlp_model(lib, jnp)
    mesh = lib.sharding.Mesh(np.array(lib.devices()[:8]), ("data",))
    rep = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec())
    split = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec("data"))
    params = lib.device_put(mlp_params(rng), rep)
    x = lib.device_put(rng.standard_normal((128, 784)).astype(np.float32), split)
    t = lib.device_put(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)], split)
    return step, (params, x, t), dict(in_shardings=(rep, split, split), out_shardings=rep)


def lowering(lib, jnp):
    """(a function timing one fresh trace+transform+lower, a Steady of the jitted step)."""
    step, args, shardings = setup(lib, jnp, np.random.default_rng(0))

    def lower_once():
        t0, c0 = time.perf_counter(), time.process_time()
        lib.jit(lambda p, x, t: step(p, x, t), **shardings).lower(*args)
        return time.perf_counter() - t0, time.process_time() - c0
    lower_once()   # (first-use costs of either library are not what is compared)
    dp = lib.jit(step, **shardings)
    lib.block_until_ready(dp(*args))
    return lower_once, Steady(lambda: lib.block_until_ready(dp(*args)), 20)


def small_call(lib):
    """A Steady of a small sharded jit (three split arguments, one replicated): the
    per-call cost of sharded dispatch, which the train step's XLA time hides."""
    mesh = lib.sharding.Mesh(np.array(lib.devices()[:8]), ("data",))
    split = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec("data"))
    rep = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec())
    xs = [lib.device_put(np.ones((64, 4), np.float32), split) for _ in range(3)]
    w = lib.device_put(np.ones((4, 4), np.float32), rep)
    f = lib.jit(lambda a, b, c, w: (a @ w + b * c).sum(0),
                in_shardings=(split, split, split, rep))
    f(*xs, w).block_until_ready()
    return Steady(lambda: f(*xs, w).block_until_ready(), 200)


def profile(which):
    import cProfile
    import pstats

    import mjax
    import mjax.numpy as mnp
    step, args, shardings = setup(mjax, mnp, np.random.default_rng(0))
    dp = mjax.jit(step, **shardings)
    mjax.block_until_ready(dp(*args))
    prof = cProfile.Profile()
    if which == "steady":
        prof.enable()
        for _ in range(200):
            mjax.block_until_ready(dp(*args))
    else:
        prof.enable()
        for _ in range(5):
            mjax.jit(lambda p, x, t: step(p, x, t), **shardings).lower(*args)
    prof.disable()
    pstats.Stats(prof).sort_stats("cumulative").print_stats(40)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--profile", choices=["steady", "lower"])
    parser.add_argument("--rounds", type=int, default=9)
    args = parser.parse_args()
    if args.profile:
        return profile(args.profile)
    import jax
    import jax.numpy as jnp

    import mjax
    import mjax.numpy as mnp
    jax.config.update("jax_platforms", "cpu")
    lower_m, steady_m = lowering(mjax, mnp)
    lower_j, steady_j = lowering(jax, jnp)
    lowers = {"mjax": [], "jax": []}
    for _ in range(args.rounds):      # interleaved, so machine load hits both alike
        lowers["mjax"].append(lower_m())
        lowers["jax"].append(lower_j())
    cpu = {k: [c for _, c in v] for k, v in lowers.items()}
    lowers = {k: [w for w, _ in v] for k, v in lowers.items()}
    best = time_interleaved({"mjax": steady_m, "jax": steady_j}, repeat=args.rounds)
    small = time_interleaved({"mjax": small_call(mjax), "jax": small_call(jax)},
                             repeat=args.rounds)
    print(f"{'':28s} {'mjax':>10s} {'jax':>10s} {'mjax/jax':>9s}")
    print(f"{'small sharded call':28s} {small['mjax'] * 1e3:8.3f}ms "
          f"{small['jax'] * 1e3:8.3f}ms {small['mjax'] / small['jax']:9.2f}")
    print(f"{'steady state (best round)':28s} {best['mjax'] * 1e3:8.2f}ms "
          f"{best['jax'] * 1e3:8.2f}ms {best['mjax'] / best['jax']:9.2f}")
    for name, pick in (("min", min), ("median", statistics.median)):
        m, j = pick(lowers["mjax"]), pick(lowers["jax"])
        print(f"{'trace+transform+lower ' + name:28s} {m * 1e3:8.1f}ms {j * 1e3:8.1f}ms "
              f"{m / j:9.2f}")
    # CPU time of this process: what another process's load takes away is not counted.
    m, j = statistics.median(cpu["mjax"]), statistics.median(cpu["jax"])
    print(f"{'  same, CPU time median':28s} {m * 1e3:8.1f}ms {j * 1e3:8.1f}ms {m / j:9.2f}")


if __name__ == "__main__":
    main()
