"""mjax vs JAX, side by side in one run; prints times and ratios (mjax / JAX).

    python benchmarks/run.py            # JAX columns appear when jax is installed

Measured: cached jit dispatch of a tiny function, one eager op, trace+lower of a
function of 1,000 ops, first-call latency and steady state of an MLP forward pass
(batch 128, 784-512-512-10), of an MLP training step (grad + SGD under jit) and of
per-example gradients of that MLP (vmap of grad, batch 128), of an RNN training step
through lax.scan (hidden 256, 100 steps), with trace+transform+lower time reported apart
from XLA compile time, generating 10^7 normals under jit, and, with 8
devices (XLA_FLAGS=--xla_force_host_platform_device_count=8), a data-parallel training
step (jit with NamedShardings: batch split over the devices, parameters replicated).
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def timeit(fn, *, repeat=5, number=100):
    """Best (minimum) seconds per call over `repeat` rounds of `number` calls: on a shared
    2-core machine the minimum is the least noisy estimate."""
    fn()
    rounds = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        rounds.append((time.perf_counter() - t0) / number)
    return min(rounds)


class Steady:
    """A steady-state measurement, timed later in rounds interleaved across libraries (so
    slow drift of a shared machine hits both columns alike)."""

    def __init__(self, fn, number):
        self.fn, self.number = fn, number


def time_interleaved(steadies: dict, repeat=7) -> dict:
    """{lib: Steady} -> {lib: best seconds per call}, rounds alternating between libs."""
    best = {lib: float("inf") for lib in steadies}
    for s in steadies.values():
        s.fn()
    for _ in range(repeat):
        for lib, s in steadies.items():
            t0 = time.perf_counter()
            for _ in range(s.number):
                s.fn()
            best[lib] = min(best[lib], (time.perf_counter() - t0) / s.number)
    return best


def lower_and_compile(lib, step, args, label) -> dict:
    """{"<label> trace+transform+lower": s, "<label> XLA compile": s} for a fresh jit of
    `step` (a new function object: both libraries cache traces by function identity)."""
    t0 = time.perf_counter()
    lowered = lib.jit(lambda *a: step(*a)).lower(*args)
    t1 = time.perf_counter()
    lowered.compile()
    return {f"{label} trace+transform+lower": t1 - t0,
            f"{label} XLA compile": time.perf_counter() - t1}


def side_by_side(suite, title: str, steps: str, quick: bool) -> None:
    """Runs `suite(lib, jnp, rng)` -> {row: seconds or Steady, "losses": [...]} for mjax
    and (when installed) JAX, checks their losses agree step for step, times the Steady
    rows in interleaved rounds and prints the table with ratios."""
    import mjax
    import mjax.numpy as mnp
    results = {"mjax": suite(mjax, mnp, np.random.default_rng(0))}
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_platforms", mjax.default_backend())  # (the same platform)
        results["jax"] = suite(jax, jnp, np.random.default_rng(0))
    except ImportError:
        print("(jax is not installed: mjax column only)")
    losses = {lib: r.pop("losses") for lib, r in results.items()}
    print(f"losses, {steps}:", {lib: [round(v, 5) for v in ls] for lib, ls in losses.items()})
    if "jax" in losses:
        np.testing.assert_allclose(losses["mjax"], losses["jax"], rtol=1e-4)
        print("  mjax and JAX agree step for step (rtol 1e-4)")
    names = list(results["mjax"])
    for name in [n for n in names if isinstance(results["mjax"][n], Steady)]:
        timed = time_interleaved({lib: r[name] for lib, r in results.items()},
                                 repeat=3 if quick else 7)
        for lib in results:
            results[lib][name] = timed[lib]
    print_table(results, names, title)


def once(fn):
    t0 = time.perf_counter()
    fn()
    return time.perf_counter() - t0


def mlp_params(rng, sizes=(784, 512, 512, 10)):
    return [(rng.standard_normal((m, n)).astype(np.float32) / np.sqrt(m),
             np.zeros(n, np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]


def mlp_model(lib, jnp):
    """(forward, loss, step) of the tanh MLP every benchmark trains: squared error, SGD 0.01."""
    def forward(params, x):
        for w, b in params[:-1]:
            x = jnp.tanh(x @ w + b)
        w, b = params[-1]
        return x @ w + b

    def loss(params, x, t):
        return jnp.mean((forward(params, x) - t) ** 2)

    def step(params, x, t):
        g = lib.grad(loss)(params, x, t)
        return [(w - 0.01 * gw, b - 0.01 * gb) for (w, b), (gw, gb) in zip(params, g)]

    return forward, loss, step


def print_table(results: dict, names, title="benchmark"):
    """One row per benchmark: mjax's and JAX's seconds (as ms) and their ratio."""
    print(f"{title:36s} {'mjax':>12s} {'jax':>12s} {'mjax/jax':>9s}")
    for name in names:
        m = results["mjax"][name]
        j = results.get("jax", {}).get(name)
        ratio = f"{m / j:9.2f}" if j else "        -"
        jtxt = f"{j * 1e3:10.3f}ms" if j else "           -"
        print(f"{name:36s} {m * 1e3:10.3f}ms {jtxt} {ratio}")


def print_times(m_times: dict, j_times: dict, width=12):
    """mjax's and JAX's times (seconds) per name, with their ratio; nan where JAX's is missing."""
    for k, v in m_times.items():
        j = j_times.get(k)
        print(f"{k:{width}s} mjax {v * 1e3:8.3f} ms   jax {j * 1e3 if j else float('nan'):8.3f} ms"
              f"   ratio {v / j if j else float('nan'):5.2f}")


def rnn_params(rng, hidden=256, inputs=64, outputs=10):
    return [rng.standard_normal((hidden, hidden)).astype(np.float32) / np.sqrt(hidden),
            rng.standard_normal((inputs, hidden)).astype(np.float32) / np.sqrt(inputs),
            np.zeros(hidden, np.float32),
            rng.standard_normal((hidden, outputs)).astype(np.float32) / np.sqrt(hidden)]


def suite(lib, jnp, rng, quick):
    """Runs every benchmark with one library (mjax or jax); returns {name: seconds}."""
    out = {}
    n = 20 if quick else 200

    # 1. cached jit dispatch of a tiny function
    f = lib.jit(lambda x: x + 1.0)
    x = jnp.ones((4,), jnp.float32)
    f(x).block_until_ready()
    out["jit dispatch (tiny fn)"] = Steady(lambda: f(x).block_until_ready(), n)

    # 2. one eager op
    y = jnp.ones((4,), jnp.float32)
    (x * y).block_until_ready()
    out["eager op (mul)"] = Steady(lambda: (x * y).block_until_ready(), n)

    # 3. trace + lower of a function of 1,000 ops
    def chain(v):
        for i in range(250):
            v = jnp.sin(v) * 1.01 + 0.5 - v
        return v
    xs = jnp.ones((8,), jnp.float32)

    def fresh_lower():
        # A new function object each time, so neither library can reuse a trace.
        return lib.jit(lambda v: chain(v)).lower(xs)
    out["trace+lower 1000 ops"] = timeit(fresh_lower, repeat=3, number=1)

    # 4. MLP forward: first call and steady state
    # Inputs live on the device, as in a training loop (host arrays would add a copy per
    # call to both columns).
    params = lib.device_put(mlp_params(rng))
    batch = lib.device_put(rng.standard_normal((128, 784)).astype(np.float32))
    labels = lib.device_put(np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)])

    forward, loss, step = mlp_model(lib, jnp)
    fwd = lib.jit(forward)
    out["MLP forward first call"] = once(lambda: fwd(params, batch).block_until_ready())
    out["MLP forward steady"] = Steady(lambda: fwd(params, batch).block_until_ready(),
                                       max(n // 4, 5))

    # 5. MLP training step: grad + SGD under jit
    out.update(lower_and_compile(lib, step, (params, batch, labels), "train step"))
    # First call (trace, transform, lower, compile, run) at a batch size not compiled yet.
    train = lib.jit(step)
    out["train step first call"] = once(lambda: lib.block_until_ready(
        train(params, batch[:64], labels[:64])))
    out["train step steady"] = Steady(lambda: lib.block_until_ready(
        train(params, batch, labels)), max(n // 10, 5))

    # 6. per-example gradients: vmap of grad over the batch (one example per row)
    def example_loss(params, x, t):
        return loss(params, x[None], t[None])

    per_example = lib.vmap(lib.grad(example_loss), in_axes=(None, 0, 0))
    t0 = time.perf_counter()
    lowered = lib.jit(lambda p, x, t: per_example(p, x, t)).lower(params, batch, labels)
    t1 = time.perf_counter()
    lowered.compile()
    t2 = time.perf_counter()
    out["per-example trace+transform+lower"] = t1 - t0
    out["per-example XLA compile"] = t2 - t1
    pex = lib.jit(per_example)
    out["per-example grads steady"] = Steady(lambda: lib.block_until_ready(
        pex(params, batch, labels)), max(n // 20, 3))

    # 7. 10^7 normals under jit (threefry bits + erf_inv), one key per call
    normals = lib.jit(lambda k: lib.random.normal(k, (10_000_000,)))
    key = lib.random.key(0)
    normals(key).block_until_ready()
    out["1e7 normals under jit"] = Steady(lambda: normals(key).block_until_ready(),
                                          max(n // 40, 3))
    # 8. RNN training step: a tanh RNN (hidden 256, 100 steps, batch 32, inputs 64) via
    # lax.scan, loss on the last state; grad (reverse mode through the scan) + SGD.
    rnn = lib.device_put(rnn_params(rng))
    seq = lib.device_put(rng.standard_normal((100, 32, 64)).astype(np.float32))
    rnn_t = lib.device_put(rng.standard_normal((32, 10)).astype(np.float32))

    def rnn_loss(p, xs, t):
        wh, wx, b, wo = p

        def cell(h, x):
            return jnp.tanh(h @ wh + x @ wx + b), None
        h, _ = lib.lax.scan(cell, jnp.zeros((xs.shape[1], wh.shape[0]), jnp.float32), xs)
        return jnp.mean((h @ wo - t) ** 2)

    def rnn_step(p, xs, t):
        g = lib.grad(rnn_loss)(p, xs, t)
        return [w - 0.01 * gw for w, gw in zip(p, g)]

    out.update(lower_and_compile(lib, rnn_step, (rnn, seq, rnn_t), "RNN scan step"))
    rnn_train = lib.jit(rnn_step)
    out["RNN scan step steady"] = Steady(lambda: lib.block_until_ready(
        rnn_train(rnn, seq, rnn_t)), max(n // 20, 3))

    # 9. data-parallel training step on 8 devices: jit with NamedShardings (batch split
    # over a "data" mesh axis, parameters replicated). Needs 8 devices: run with
    # XLA_FLAGS=--xla_force_host_platform_device_count=8 (skipped otherwise).
    if len(lib.devices()) >= 8:
        mesh = lib.sharding.Mesh(np.array(lib.devices()[:8]), ("data",))
        rep = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec())
        split = lib.sharding.NamedSharding(mesh, lib.sharding.PartitionSpec("data"))
        dp_params = lib.device_put(mlp_params(rng), rep)
        dp_x, dp_t = lib.device_put(batch, split), lib.device_put(labels, split)
        t0 = time.perf_counter()
        lowered = lib.jit(lambda p, x, t: step(p, x, t), in_shardings=(rep, split, split),
                          out_shardings=rep).lower(dp_params, dp_x, dp_t)
        t1 = time.perf_counter()
        lowered.compile()
        out["DP step 8dev trace+transform+lower"] = t1 - t0
        out["DP step 8dev XLA compile"] = time.perf_counter() - t1
        dp = lib.jit(step, in_shardings=(rep, split, split), out_shardings=rep)
        out["DP step 8dev steady"] = Steady(lambda: lib.block_until_ready(
            dp(dp_params, dp_x, dp_t)), max(n // 10, 5))
    return out


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    import mjax
    import mjax.numpy as mnp
    results = {"mjax": suite(mjax, mnp, np.random.default_rng(0), args.quick)}
    try:
        import jax
        import jax.numpy as jnp
        jax.config.update("jax_platforms", mjax.default_backend())  # (the same platform)
        results["jax"] = suite(jax, jnp, np.random.default_rng(0), args.quick)
    except ImportError:
        print("(jax is not installed: mjax column only)")
    names = list(results["mjax"])
    for name in names:
        if isinstance(results["mjax"][name], Steady):
            timed = time_interleaved({lib: r[name] for lib, r in results.items()})
            for lib in results:
                results[lib][name] = timed[lib]
    print_table(results, names)


if __name__ == "__main__":
    main()
