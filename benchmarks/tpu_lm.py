"""A large decoder-only LM training step on an accelerator, mjax and JAX each in a process
of its own (the ratio mjax/JAX), with model FLOP utilization and XLA's optimized-HLO
counts.

    python benchmarks/tpu_lm.py [--layers 8] [--d 1024] [--seq 512] [--batch 16]
                                [--vocab 8192] [--steps 20]
    python benchmarks/tpu_lm.py --interleaved [--rounds 8]   # steady state only, one
                                                            # process, alternating rounds

The model and step are benchmarks/transformer.py's (float32 parameters, default matmul
precision, Adam), at the size of issue 54's measurement. Each framework runs in a child
process that picks its platform as a user's program would (nothing set: the TPU where
libtpu is installed). Reported per framework: trace+lower and XLA compile of the step,
the first call, the steady state (median of `steps` calls after warm-up), the model's
FLOPs per step as XLA counts them and the utilization of the chip's bf16 peak, the first
losses, and the counts of custom-calls, async starts and fusions in the optimized HLO.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time

# Peak dense bf16 FLOP/s per chip, by the device_kind JAX reports.
PEAK = {"TPU v5 lite": 197e12, "TPU v5e": 197e12, "TPU v5": 459e12, "TPU v4": 275e12,
        "TPU v6 lite": 918e12}


def _libraries(lib_name: str):
    if lib_name == "mjax":
        import mjax as lib
        import mjax.numpy as jnp
    else:
        import jax as lib
        import jax.numpy as jnp
    return lib, jnp


def _inputs(lib, jnp, args):
    """transformer.py at the sizes asked for: (its module, the step, (params, optimizer
    state, tokens) on the default device)."""
    import numpy as np
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import transformer as T
    T.D, T.HEADS, T.SEQ, T.VOCAB = args.d, args.heads, args.seq, args.vocab
    rng = np.random.default_rng(0)
    params = lib.device_put(T.lm_params(rng, args.layers))
    zeros = lib.tree_util.tree_map(jnp.zeros_like, params)
    opt = (jnp.zeros((), jnp.float32), zeros, zeros)
    tokens = lib.device_put(rng.integers(0, T.VOCAB, (args.batch, T.SEQ + 1)).astype(np.int32))
    return T, T.make_step(lib, jnp), (params, opt, tokens)


def child(lib_name: str, args) -> dict:
    lib, jnp = _libraries(lib_name)
    T, step, (params, opt, tokens) = _inputs(lib, jnp, args)
    out = {"device": str(lib.devices()[0]), "kind": lib.devices()[0].device_kind}
    t0 = time.perf_counter()
    lowered = lib.jit(lambda *a: step(*a)).lower(params, opt, tokens)
    t1 = time.perf_counter()
    compiled = lowered.compile()
    t2 = time.perf_counter()
    out["trace+lower s"], out["compile s"] = t1 - t0, t2 - t1
    hlo = compiled.as_text()
    out["custom-calls"] = len(re.findall(r" custom-call\(", hlo))
    out["async starts"] = len(re.findall(r"-start\(", hlo))
    out["fusions"] = len(re.findall(r" fusion\(", hlo))
    cost = compiled.cost_analysis()
    cost = cost[0] if isinstance(cost, (list, tuple)) else cost
    out["flops"] = float(cost.get("flops", 0.0))
    train = lib.jit(step)
    out["first call s"], out["losses"] = T.first_call_and_losses(lib, train, params, opt,
                                                                 tokens, 3)
    times = []
    for _ in range(args.steps):
        t0 = time.perf_counter()
        lib.block_until_ready(train(params, opt, tokens))
        times.append(time.perf_counter() - t0)
    out["steady ms"] = 1e3 * sorted(times)[len(times) // 2]
    peak = PEAK.get(out["kind"])
    if peak and out["flops"]:
        out["MFU %"] = 100 * out["flops"] / (out["steady ms"] / 1e3) / peak
    return out


def interleaved(args) -> None:
    """Both libraries in this one process (they can share the chip), each step compiled
    once, then timed in alternating rounds: the chip's clocks and memory are the same for
    both, which separate processes do not promise (their medians drift by 1-2% from run to
    run)."""
    runs = {}
    for name in ("mjax", "jax"):
        lib, jnp = _libraries(name)
        _, step, inputs = _inputs(lib, jnp, args)
        train = lib.jit(step)
        loss = float(train(*inputs)[0])
        runs[name] = (lib, train, inputs, loss)
    times = {name: [] for name in runs}
    for _ in range(args.rounds):
        for name, (lib, train, inputs, _) in runs.items():
            for _ in range(5):
                t0 = time.perf_counter()
                lib.block_until_ready(train(*inputs))
                times[name].append(time.perf_counter() - t0)
    med = {name: 1e3 * sorted(ts)[len(ts) // 2] for name, ts in times.items()}
    print(f"LM step, both libraries in one process ({args.rounds} alternating rounds of 5): "
          f"mjax {med['mjax']:.2f} ms, jax {med['jax']:.2f} ms, ratio "
          f"{med['mjax'] / med['jax']:.3f}; first losses mjax {runs['mjax'][3]:.6f}, "
          f"jax {runs['jax'][3]:.6f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=8)
    parser.add_argument("--d", type=int, default=1024)
    parser.add_argument("--heads", type=int, default=8)
    parser.add_argument("--seq", type=int, default=512)
    parser.add_argument("--batch", type=int, default=16)
    parser.add_argument("--vocab", type=int, default=8192)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--child", choices=["mjax", "jax"])
    parser.add_argument("--interleaved", action="store_true",
                        help="time both libraries' steps in one process, alternating")
    parser.add_argument("--rounds", type=int, default=8)
    args = parser.parse_args()
    if args.interleaved:
        interleaved(args)
        return
    if args.child:
        print(json.dumps(child(args.child, args)))
        return
    results = {}
    for lib in ("mjax", "jax"):
        cmd = [sys.executable, __file__, "--child", lib] + [
            f"--{k}={v}" for k, v in vars(args).items()
            if k not in ("child", "interleaved", "rounds")]
        run = subprocess.run(cmd, capture_output=True, text=True)
        if run.returncode:
            print(f"{lib} failed:\n{run.stderr[-3000:]}")
            continue
        results[lib] = json.loads(run.stdout.strip().splitlines()[-1])
    print(f"LM step: {args.layers} layers, d {args.d}, seq {args.seq}, batch {args.batch}, "
          f"vocab {args.vocab}")
    keys = [k for k in next(iter(results.values()), {}) if k not in ("losses",)]
    for k in keys:
        row = {lib: r.get(k) for lib, r in results.items()}
        ratio = ""
        if all(isinstance(v, float) for v in row.values()) and len(row) == 2 and row["jax"]:
            ratio = f"  ratio {row['mjax'] / row['jax']:.3f}"
        print(f"  {k:16s} " + "  ".join(f"{lib}={v:.4g}" if isinstance(v, float)
                                        else f"{lib}={v}" for lib, v in row.items()) + ratio)
    for lib, r in results.items():
        print(f"  losses {lib}: {[round(v, 6) for v in r['losses']]}")


if __name__ == "__main__":
    main()
