"""Compiled programs of single NumPy/lax operations, mjax vs JAX side by side in one run:
steady-state time per call of each jitted program (arguments already on the device),
medians over interleaved rounds, as ratios (mjax / JAX). A ratio well above 1 points at
a lowering that makes XLA's job harder than JAX's does (docs/performance.md, issue #25
item 4: indexed updates, LAPACK factorizations, searchsorted were found so).

    python benchmarks/compiled_ops.py                  # every program
    python benchmarks/compiled_ops.py --only at_,sort  # names containing a substring
"""
from __future__ import annotations

import argparse
import time

import numpy as np


def programs(J, jnp):
    """name -> (function, arguments) written once for both libraries (J: jax or mjax)."""
    lax = J.lax
    r = np.random.RandomState(0)
    x = jnp.asarray(r.rand(512, 512).astype(np.float32))
    y = jnp.asarray(r.rand(512, 256).astype(np.float32))
    v = jnp.asarray(r.rand(1 << 16).astype(np.float32))
    idx = jnp.asarray(r.randint(0, 512, 4096))
    spd = jnp.asarray((lambda a: a @ a.T + 256 * np.eye(256, dtype=np.float32))(
        r.rand(256, 256).astype(np.float32)))
    img = jnp.asarray(r.rand(8, 32, 32, 16).astype(np.float32))
    ker = jnp.asarray(r.rand(3, 3, 16, 32).astype(np.float32))
    conv = lambda a, k: lax.conv_general_dilated(  # noqa: E731
        a, k, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return {
        "at_set_rows_loop": (lambda x: lax.fori_loop(
            0, 64, lambda k, x: x.at[k].set(x[k - 1] + 1.0), x), (x,)),
        "at_add_gathered_rows": (lambda x, i: x.at[i].add(1.0), (x, idx)),
        "at_mul_column": (lambda x, k: x.at[:, k].multiply(3.0), (x, 7)),
        "take_rows": (lambda x, i: jnp.take(x, i, axis=0), (x, idx)),
        "grad_of_gather": (lambda x, i: J.grad(lambda x: jnp.sum(x[i] ** 2))(x), (x, idx)),
        "searchsorted": (lambda v: jnp.searchsorted(jnp.sort(v[:1024]), v), (v,)),
        "interp": (lambda v: jnp.interp(v, jnp.linspace(0, 1, 100), jnp.arange(100.0)),
                   (v,)),
        "sort_axis0": (lambda x: jnp.sort(x, axis=0), (x,)),
        "argsort": (lambda v: jnp.argsort(v), (v,)),
        "top_k": (lambda x: lax.top_k(x, 8), (x,)),
        "cumsum": (lambda x: jnp.cumsum(x, axis=0), (x,)),
        "cholesky": (jnp.linalg.cholesky, (spd,)),
        "solve_triangular": (lambda a, b: J.scipy.linalg.solve_triangular(a, b, lower=True),
                             (spd, y[:256])),
        "solve": (jnp.linalg.solve, (spd, y[:256])),
        "eigh": (jnp.linalg.eigh, (spd,)),
        "qr": (jnp.linalg.qr, (spd,)),
        "svd": (lambda a: jnp.linalg.svd(a, compute_uv=False), (spd,)),
        "matmul": (lambda x, y: x @ y, (x, y)),
        "batched_matmul": (lambda x: jnp.einsum("bij,bjk->bik", x.reshape(8, 64, 512),
                                                x.reshape(8, 512, 64)), (x,)),
        "conv": (conv, (img, ker)),
        "conv_grad": (lambda a, k: J.grad(lambda k: jnp.sum(conv(a, k) ** 2))(k),
                      (img, ker)),
        "softmax": (lambda x: J.nn.softmax(x, axis=-1), (x,)),
        "layernorm": (lambda x: (x - x.mean(-1, keepdims=True))
                      / jnp.sqrt(x.var(-1, keepdims=True) + 1e-5), (x,)),
        "random_normal": (lambda: J.random.normal(J.random.key(0), (512, 512)), ()),
        "unique_size": (lambda v: jnp.unique(jnp.round(v * 64), size=64), (v,)),
        "median": (lambda x: jnp.median(x, axis=0), (x,)),
        "scan_rnn": (lambda s, w: lax.scan(lambda h, t: (jnp.tanh(h @ w + t), h),
                                           jnp.zeros(64), s)[0], (x[:128, :64], x[:64, :64])),
    }


def _time(fn, args, number):
    out = fn(*args)
    for leaf in (out if isinstance(out, (tuple, list)) else (out,)):
        leaf.block_until_ready()
    t0 = time.perf_counter()
    for _ in range(number):
        out = fn(*args)
    for leaf in (out if isinstance(out, (tuple, list)) else (out,)):
        leaf.block_until_ready()
    return (time.perf_counter() - t0) / number


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=9)
    parser.add_argument("--only", help="substrings of the program names, comma-separated")
    args = parser.parse_args()
    import mjax
    import mjax.numpy as mjnp
    import jax
    import jax.numpy as jjnp
    libs = {"mjax": programs(mjax, mjnp), "jax": programs(jax, jjnp)}
    names = [n for n in libs["mjax"]
             if not args.only or any(s in n for s in args.only.split(","))]
    jitted = {lib: {n: (lib_mod.jit(progs[n][0]), progs[n][1]) for n in names}
              for lib, progs, lib_mod in (("mjax", libs["mjax"], mjax),
                                          ("jax", libs["jax"], jax))}
    number = {}
    for n in names:       # (about 20 ms of calls per round, from JAX's time)
        fn, a = jitted["jax"][n]
        number[n] = max(1, int(0.02 / max(_time(fn, a, 1), 1e-6)))
    times = {lib: {n: [] for n in names} for lib in jitted}
    for _ in range(args.rounds):      # (interleaved: drift hits both columns alike)
        for n in names:
            for lib in ("mjax", "jax"):
                fn, a = jitted[lib][n]
                times[lib][n].append(_time(fn, a, number[n]))
    print(f"{'program':24s} {'mjax':>10s} {'jax':>10s}  ratio  "
          f"(medians of {args.rounds} interleaved rounds)")
    for n in names:
        m, j = (float(np.median(times[lib][n])) for lib in ("mjax", "jax"))
        print(f"{n:24s} {m * 1e3:8.3f}ms {j * 1e3:8.3f}ms  {m / j:5.2f}")


if __name__ == "__main__":
    main()
