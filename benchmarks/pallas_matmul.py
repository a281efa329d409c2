"""The Pallas blocked matmul in interpret mode: mjax vs `jnp.dot` vs JAX's Pallas
interpreter, in one process.

    python benchmarks/pallas_matmul.py [--size 512] [--block 128] [--rounds 7]

The kernel (from the Pallas documentation) gives each (i, j) output block a fori_loop
over K that accumulates `pl.dot` of (bm, bk) x (bk, bn) blocks in f32. Interpret mode
runs the grid as a while loop of dynamic slices around the kernel's body, so it is
slower than one XLA dot; the ratios say by how much, and how mjax's interpreter (one
XLA while loop) compares with JAX's (also a while loop, built by JAX's tracer). Steady
state is timed in interleaved rounds (best round), compile time once each.
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from run import Steady, time_interleaved  # benchmarks/run.py (this folder is on sys.path)


def matmul(pl, jnp, lax, lib, size, block, bk):
    nk = size // bk

    def kernel(x_ref, y_ref, o_ref):
        def body(k, acc):
            a = x_ref[:, pl.ds(k * bk, bk)]
            b = y_ref[pl.ds(k * bk, bk), :]
            return acc + jnp.dot(a, b, preferred_element_type=jnp.float32)
        acc = lax.fori_loop(0, nk, body, jnp.zeros((block, block), jnp.float32))
        o_ref[...] = acc.astype(o_ref.dtype)

    return lib.jit(pl.pallas_call(
        kernel, out_shape=lib.ShapeDtypeStruct((size, size), jnp.float32),
        grid=(size // block, size // block),
        in_specs=[pl.BlockSpec((block, size), lambda i, j: (i, 0)),
                  pl.BlockSpec((size, block), lambda i, j: (0, j))],
        out_specs=pl.BlockSpec((block, block), lambda i, j: (i, j)), interpret=True))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=512)
    parser.add_argument("--block", type=int, default=128)
    parser.add_argument("--bk", type=int, default=128)
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    import jax
    import jax.numpy as jjnp
    from jax.experimental import pallas as jpl

    import mjax
    import mjax.numpy as mjnp
    from mjax.experimental import pallas as mpl
    jax.config.update("jax_platforms", "cpu")

    rng = np.random.default_rng(0)
    x = rng.standard_normal((args.size, args.size)).astype(np.float32)
    y = rng.standard_normal((args.size, args.size)).astype(np.float32)
    want = x @ y
    runs, compile_s = {}, {}
    for label, (lib, jnp, lax, pl) in {
            "mjax pallas": (mjax, mjnp, mjax.lax, mpl),
            "jax pallas": (jax, jjnp, jax.lax, jpl)}.items():
        f = matmul(pl, jnp, lax, lib, args.size, args.block, args.bk)
        xd, yd = lib.device_put(x), lib.device_put(y)
        t0 = time.perf_counter()
        out = lib.block_until_ready(f(xd, yd))
        compile_s[label] = time.perf_counter() - t0
        np.testing.assert_allclose(np.asarray(out), want, rtol=2e-3, atol=2e-3)
        runs[label] = Steady(lambda f=f, xd=xd, yd=yd, lib=lib: lib.block_until_ready(f(xd, yd)),
                             5)
    for label, (lib, jnp) in {"mjax jnp.dot": (mjax, mjnp), "jax jnp.dot": (jax, jjnp)}.items():
        f = lib.jit(jnp.dot)
        xd, yd = lib.device_put(x), lib.device_put(y)
        np.testing.assert_allclose(np.asarray(f(xd, yd)), want, rtol=2e-3, atol=2e-3)
        runs[label] = Steady(lambda f=f, xd=xd, yd=yd, lib=lib: lib.block_until_ready(f(xd, yd)),
                             5)
    best = time_interleaved(runs, repeat=args.rounds)
    print(f"blocked matmul {args.size}x{args.size} @ {args.size}x{args.size}, blocks "
          f"{args.block}x{args.block}, bk {args.bk} (grid {args.size // args.block}x"
          f"{args.size // args.block}, {args.size // args.bk} K steps), f32, CPU")
    for label, t in best.items():
        extra = (f"   (first call incl. compile {compile_s[label]:.2f}s)"
                 if label in compile_s else "")
        print(f"  {label:14s} {t * 1e3:9.2f} ms{extra}")
    print(f"  mjax pallas / mjax jnp.dot   {best['mjax pallas'] / best['mjax jnp.dot']:6.2f}")
    print(f"  mjax pallas / jax pallas     {best['mjax pallas'] / best['jax pallas']:6.2f}")
    print(f"  jax pallas  / jax jnp.dot    {best['jax pallas'] / best['jax jnp.dot']:6.2f}")


if __name__ == "__main__":
    main()
