"""What a new user sees of mjax on an accelerator, and whether its numbers are JAX's there.

    python benchmarks/tpu_probe.py

First, in a process where jax was never imported: the platform mjax picked with nothing
set, its devices (kind, memory stats, memory kinds), the CPU devices beside them. Then,
with jax imported in the same process on the same chip: a corpus of programs (matmuls at
each precision, bf16, dot algorithms, a gradient, the PRNG, scan, sort, FFT, linear
algebra, x64) run by both; each line says whether the results are bit-identical, else
the largest difference.
"""
from __future__ import annotations

import sys

import numpy as np


def describe(lib) -> None:
    dev = lib.devices()[0]
    print(f"default_backend: {lib.default_backend()}; devices: {lib.devices()}")
    print(f"device_kind: {dev.device_kind!r}; platform: {dev.platform}")
    stats = dev.memory_stats() or {}
    print(f"memory_stats: bytes_limit={stats.get('bytes_limit')} "
          f"bytes_in_use={stats.get('bytes_in_use')}")
    print(f"memory kinds: {[m.kind for m in dev.addressable_memories()]}")
    print(f"cpu devices beside: {lib.devices('cpu')[:2]}...")


def corpus(lib, jnp):
    rng = np.random.default_rng(0)
    a = rng.standard_normal((256, 256)).astype(np.float32)
    b = rng.standard_normal((256, 256)).astype(np.float32)
    spd = a @ a.T / 256 + np.eye(256, dtype=np.float32)
    lax = lib.lax
    progs = {
        "matmul default": (lambda x, y: x @ y, (a, b)),
        "matmul highest": (lambda x, y: jnp.matmul(x, y, precision=lax.Precision.HIGHEST),
                           (a, b)),
        "matmul high": (lambda x, y: jnp.matmul(x, y, precision="high"), (a, b)),
        "matmul bf16": (lambda x, y: (x.astype(jnp.bfloat16) @ y.astype(jnp.bfloat16))
                        .astype(jnp.float32), (a, b)),
        "dot preferred f32": (lambda x, y: lax.dot(x.astype(jnp.bfloat16),
                                                   y.astype(jnp.bfloat16),
                                                   preferred_element_type=jnp.float32),
                              (a, b)),
        "grad tanh mlp": (lib.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2)), (a, b)),
        "exp log tanh erf": (lambda x: jnp.exp(x) + jnp.log1p(x * x) + jnp.tanh(x)
                             + lib.scipy.special.erf(x), (a,)),
        "softmax": (lambda x: lib.nn.softmax(x, axis=-1), (a,)),
        "normal": (lambda k: lib.random.normal(lib.random.key(0), (1024,)), (0,)),
        "uniform bits": (lambda k: lib.random.bits(lib.random.key(7), (1024,)), (0,)),
        "scan": (lambda x: lax.scan(lambda c, r: (c * 0.9 + r, c), jnp.zeros(256), x), (a,)),
        "sort": (lambda x: jnp.sort(x, axis=0), (a,)),
        "argsort": (lambda x: jnp.argsort(x[0]), (a,)),
        "fft": (lambda x: jnp.fft.fft(x).real, (a,)),
        "cholesky": (lambda x: jnp.linalg.cholesky(x), (spd,)),
        "qr": (lambda x: jnp.linalg.qr(x), (a,)),
        "eigh": (lambda x: jnp.linalg.eigh(x), (spd,)),
        "svd": (lambda x: jnp.linalg.svd(x, compute_uv=False), (a[:64, :64],)),
        "lu": (lambda x: lib.scipy.linalg.lu_factor(x), (a,)),
        "solve_triangular": (lambda x, y: lib.scipy.linalg.solve_triangular(
            jnp.linalg.cholesky(x), y, lower=True), (spd, b)),
        "solve": (lambda x, y: jnp.linalg.solve(x, y), (spd, b)),
        "conv": (lambda x: lax.conv(x[None, None, :64, :64], x[None, None, :3, :3],
                                    (1, 1), "SAME"), (a,)),
        "reduce_window": (lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (2, 2),
                                                      "VALID"), (a,)),
        "cumsum": (lambda x: jnp.cumsum(x, axis=1), (a,)),
    }
    return progs


def compare(m, j, name, args) -> str:
    import jax
    import mjax
    try:
        mine = mjax.tree_util.tree_leaves(mjax.jit(m)(*args))
    except Exception as e:   # noqa: BLE001  (reported, the run goes on)
        return f"{name:20s} mjax raised {type(e).__name__}: {str(e)[:200]}"
    theirs = jax.tree_util.tree_leaves(jax.jit(j)(*args))
    worst, same = 0.0, True
    for x, y in zip(mine, theirs):
        x, y = np.asarray(x), np.asarray(y)
        if x.shape != y.shape or x.dtype != y.dtype:
            return f"{name:20s} DIFFERENT TYPES {x.shape}{x.dtype} vs {y.shape}{y.dtype}"
        if x.tobytes() != y.tobytes():
            same = False
            if np.issubdtype(x.dtype, np.inexact):
                worst = max(worst, float(np.nanmax(np.abs(x.astype(np.float64)
                                                            - y.astype(np.float64)))))
            else:
                worst = max(worst, float(np.sum(x != y)))
    return f"{name:20s} " + ("bit-identical" if same else f"differs, max |d| = {worst:.3g}")


def callbacks(lib) -> None:
    """Python callbacks on the chip (host transfers there): each line says what ran."""
    seen = []

    def f(x):
        y = lib.pure_callback(lambda a: np.asarray(a) * 2, lib.ShapeDtypeStruct(x.shape,
                                                                               x.dtype), x)
        lib.debug.callback(lambda a: seen.append(float(a)), x[0], ordered=True)
        z = lib.pure_callback(lambda: np.arange(3, dtype=np.float32),
                              lib.ShapeDtypeStruct((3,), np.float32))
        e = lib.pure_callback(lambda a: np.zeros((0,), np.float32),
                              lib.ShapeDtypeStruct((0,), np.float32), x)
        lib.debug.print("debug.print on the chip: x[1] = {}", x[1])
        return y + 1, z, e
    x = np.arange(4, dtype=np.float32)
    try:
        y, z, e = lib.jit(f)(x)
        lib.block_until_ready((y, z, e))
        ok = (np.array_equal(np.asarray(y), x * 2 + 1) and np.array_equal(
            np.asarray(z), np.arange(3)) and np.asarray(e).shape == (0,) and seen == [0.0])
        print(f"callbacks: {'right' if ok else 'WRONG'} (y={np.asarray(y)}, z={np.asarray(z)}, "
              f"seen={seen})")
    except Exception as err:   # noqa: BLE001  (reported)
        print(f"callbacks raised {type(err).__name__}: {str(err)[:300]}")


def main():
    import mjax
    import mjax.numpy as mnp
    describe(mjax)
    callbacks(mjax)
    assert "jax" not in sys.modules, "jax was imported before mjax described its devices"
    import jax
    import jax.numpy as jnp
    print(f"jax: {jax.default_backend()} {jax.devices()}")
    mine, theirs = corpus(mjax, mnp), corpus(jax, jnp)
    same = 0
    for name, (m, args) in mine.items():
        line = compare(m, theirs[name][0], name, args)
        same += "bit-identical" in line
        print(line, flush=True)
    print(f"{same} of {len(mine)} programs bit-identical to JAX's on "
          f"{mjax.devices()[0].device_kind}")


if __name__ == "__main__":
    main()
