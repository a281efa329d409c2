"""mjax on IREE vs mjax on XLA: the workloads of benchmarks/run.py on both backends, in
one process, with compile time and steady state side by side and IREE/XLA ratios.

    python benchmarks/backends.py            # --quick: fewer repetitions

Compile time is the backend's alone (StableHLO in, executable out), measured by the
backend's compile listeners on a fresh program; tracing and lowering are shared and not
counted. Steady state alternates rounds between the backends (benchmarks/run.py's
`time_interleaved`). Both columns check their outputs against each other first.
"""
from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import Steady, mlp_model, mlp_params, rnn_params, time_interleaved  # noqa: E402


def workloads(lib, jnp, rng):
    """{name: (function, args)}: the jit-compiled workloads of benchmarks/run.py."""
    params = mlp_params(rng)
    batch = rng.standard_normal((128, 784)).astype(np.float32)
    labels = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 128)]

    forward, loss, step = mlp_model(lib, jnp)

    def per_example(params, x, t):
        return lib.vmap(lib.grad(lambda p, x, t: loss(p, x[None], t[None])),
                        in_axes=(None, 0, 0))(params, x, t)

    def chain(v):
        for _ in range(250):
            v = jnp.sin(v) * 1.01 + 0.5 - v
        return v

    rnn = rnn_params(rng)
    seq = rng.standard_normal((100, 32, 64)).astype(np.float32)
    rnn_t = rng.standard_normal((32, 10)).astype(np.float32)

    def rnn_step(p, xs, t):
        def rnn_loss(p):
            wh, wx, b, wo = p
            h, _ = lib.lax.scan(lambda h, x: (jnp.tanh(h @ wh + x @ wx + b), None),
                                jnp.zeros((xs.shape[1], wh.shape[0]), jnp.float32), xs)
            return jnp.mean((h @ wo - t) ** 2)
        g = lib.grad(rnn_loss)(p)
        return [w - 0.01 * gw for w, gw in zip(p, g)]

    return {
        "tiny fn (x + 1)": (lambda x: x + 1.0, (np.ones(4, np.float32),)),
        "1000-op elementwise chain": (chain, (np.ones(8, np.float32),)),
        "MLP forward": (forward, (params, batch)),
        "MLP train step": (step, (params, batch, labels)),
        "per-example grads (vmap grad)": (per_example, (params, batch, labels)),
        "RNN scan train step": (rnn_step, (rnn, seq, rnn_t)),
        "1e7 normals": (lambda k: lib.random.normal(k, (10_000_000,)), None),
    }


def on_backend(mjax, tree, platform):
    """`tree` with its NumPy leaves made arrays of the backend `platform` (the output of
    a copy jitted there)."""
    copy = mjax.jit(lambda a: a * 1, backend=platform)
    return mjax.tree_util.tree_map(
        lambda a: copy(a) if isinstance(a, np.ndarray) else a, tree)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    import mjax
    import mjax.numpy as jnp
    from mjax.runtime import get_backend

    backends = {"xla": "cpu", "iree": "iree"}
    compile_s = {name: [] for name in backends}
    for name, platform in backends.items():
        get_backend(platform).compile_listeners.append(
            lambda text, secs, name=name: compile_s[name].append(secs))

    rows = []
    work = workloads(mjax, jnp, np.random.default_rng(0))
    for wname, (fn, fargs) in work.items():
        if fargs is None:
            fargs = (mjax.random.key(0),)
        steadies, compiled, first, outs = {}, {}, {}, {}
        for bname, platform in backends.items():
            f = mjax.jit(fn, backend=platform)
            before = len(compile_s[bname])
            t0 = time.perf_counter()
            out = mjax.block_until_ready(f(*fargs))
            first[bname] = time.perf_counter() - t0
            compiled[bname] = sum(compile_s[bname][before:])
            outs[bname] = [np.asarray(leaf) for leaf in mjax.tree_util.tree_leaves(out)]
            # Inputs on the backend's device, as in a training loop (a host array would
            # add a copy per call).
            dargs = on_backend(mjax, fargs, platform)
            steadies[bname] = Steady(lambda f=f, a=dargs: mjax.block_until_ready(f(*a)),
                                     5 if args.quick else 20)
        for a, b in zip(outs["xla"], outs["iree"]):
            if a.dtype.kind == "f":
                np.testing.assert_allclose(b, a, rtol=2e-3, atol=2e-4, err_msg=wname)
            elif a.dtype.kind in "iub":
                np.testing.assert_array_equal(b, a, err_msg=wname)
        best = time_interleaved(steadies, repeat=3 if args.quick else 7)
        rows.append((wname, compiled, first, best))

    print(f"{'workload':32s} {'compile XLA':>12s} {'compile IREE':>13s} {'ratio':>6s} "
          f"{'steady XLA':>12s} {'steady IREE':>12s} {'ratio':>6s}")
    for wname, comp, first, best in rows:
        print(f"{wname:32s} {comp['xla'] * 1e3:10.1f}ms {comp['iree'] * 1e3:11.1f}ms "
              f"{comp['iree'] / comp['xla']:6.2f} {best['xla'] * 1e3:10.3f}ms "
              f"{best['iree'] * 1e3:10.3f}ms {best['iree'] / best['xla']:6.2f}")


if __name__ == "__main__":
    main()
