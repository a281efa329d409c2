"""GPU ops check: mjax's results on a GPU against its own results on the CPU, case by case.

    MJAX_PLATFORM=cuda python benchmarks/gpu_ops_check.py     # via gpu_check.sh

Each case (eager ops, dtypes, reductions, matmul, conv, sorting, gathers and scatters,
FFT, linalg, grad, vmap, control flow, random, host callbacks, checkpoint, custom rules,
donation, memory kinds, DLPack, 64-bit types) runs on the GPU in this process and on the CPU in
a child process (MJAX_PLATFORM=cpu; the CPU results are the ones the test suite checks
against NumPy and JAX). A case fails when either side raises or the results differ
beyond a tolerance (matmuls at HIGHEST precision; integer results, random bits among
them, must match exactly). One line per case, then a count; the exit status is the
number of failed cases.
"""
from __future__ import annotations

import inspect
import os
import subprocess
import sys
import tempfile
import time
import traceback

import numpy as np

# Bit-for-bit across backends. (Integer results always are: random bits and keys among
# them; random floats go through transcendental functions, which may differ by an ulp.)
EXACT = {"sort", "int_ops", "donation"}


def cases(jax, jnp, lax):
    """{name: function returning a list of arrays}, written against JAX's API."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    y = rng.standard_normal((8, 16)).astype(np.float32)
    a = rng.standard_normal((3, 5, 5)).astype(np.float32)
    spd = a @ np.swapaxes(a, -1, -2) + 5 * np.eye(5, dtype=np.float32)
    hi = lax.Precision.HIGHEST

    def eager():
        xd, yd = jnp.asarray(x), jnp.asarray(y)
        return [xd * yd, jnp.sin(xd), xd + 1.0, jnp.sum(xd, axis=1), xd[1], xd[:, 1],
                xd.at[0].set(5.0), xd.at[1, 2].add(3.0), jnp.where(xd > 0, xd, 0.0)]

    def dtypes():
        b = jnp.asarray(x).astype(jnp.bfloat16)
        h = jnp.asarray(y).astype(jnp.float16)
        c = jnp.asarray(x) + 1j * jnp.asarray(y)
        return [(b + b * b).astype(jnp.float32), (h * h - h).astype(jnp.float32),
                c * c, jnp.exp(c), jnp.abs(c)]

    def int_ops():
        i = jnp.arange(-20, 20, dtype=jnp.int32)
        u = jnp.arange(0, 250, 7, dtype=jnp.uint8)
        return [i // 3, i % 7, i >> 2, i ** 2, u + u, u * 3, jnp.bitwise_xor(i, 5),
                jnp.logical_and(i > 0, i % 2 == 0), jnp.clip(i, -5, 5)]

    def reductions():
        xd = jnp.asarray(x)
        return [jnp.max(xd, axis=0), jnp.argmax(xd, axis=1), jnp.cumsum(xd, axis=1),
                jnp.cumprod(xd[:, :4], axis=0), jax.nn.logsumexp(xd, axis=1),
                jnp.var(xd), jnp.std(xd, axis=0), jnp.prod(xd[:2], axis=1),
                jnp.mean(xd), jax.nn.softmax(xd, axis=-1)]

    def matmul():
        xd = jnp.asarray(x)
        w = jnp.asarray(rng.standard_normal((16, 4)).astype(np.float32))
        with jax.default_matmul_precision("highest"):
            return [xd @ w, jnp.einsum("ij,kj->ik", xd, xd), jnp.tensordot(xd, w, 1),
                    jnp.matmul(jnp.stack([xd, xd]), w), jnp.vdot(xd, xd),
                    jnp.inner(xd[0], xd[1])]

    def conv():
        img = jnp.asarray(rng.standard_normal((2, 3, 9, 9)).astype(np.float32))
        ker = jnp.asarray(rng.standard_normal((4, 3, 3, 3)).astype(np.float32))
        return [lax.conv_general_dilated(img, ker, (1, 1), "SAME", precision=hi),
                lax.conv_general_dilated(img, ker, (2, 2), "VALID", rhs_dilation=(2, 1),
                                         precision=hi),
                lax.reduce_window(img, -np.inf, lax.max, (1, 1, 2, 2), (1, 1, 2, 2),
                                  "VALID")]

    def sort():
        xd = jnp.asarray(x)
        vals, idx = lax.top_k(xd, 3)
        return [jnp.sort(xd, axis=1), jnp.argsort(xd, axis=0), vals, idx,
                jnp.unique(jnp.asarray([3, 1, 3, 2, 1]), size=4),
                jnp.searchsorted(jnp.sort(xd[0]), xd[1])]

    def gather_scatter():
        xd = jnp.asarray(x)
        idx = jnp.asarray([0, 3, 3, 7])
        return [xd[idx], xd.at[idx].add(1.0), xd.at[idx].max(0.5),
                jax.ops.segment_sum(xd, jnp.asarray([0, 0, 1, 1, 2, 2, 3, 3]), 4),
                jnp.take_along_axis(xd, jnp.argsort(xd, axis=1), axis=1),
                lax.dynamic_slice(xd, (2, 3), (3, 4)),
                lax.dynamic_update_slice(xd, jnp.ones((2, 2)), (5, 5))]

    def fft():
        xd = jnp.asarray(x)
        return [jnp.fft.fft(xd), jnp.fft.rfft(xd, axis=0), jnp.fft.ifft2(xd + 0j),
                jnp.fft.irfft(jnp.fft.rfft(xd))]

    def linalg():
        s = jnp.asarray(spd)
        m = jnp.asarray(a)
        q, r = jnp.linalg.qr(m)
        u, sv, vt = jnp.linalg.svd(m, full_matrices=False)
        w, v = jnp.linalg.eigh(s)
        ew, ev = jnp.linalg.eig(m)       # (residuals: the order may differ by backend)
        band = [jnp.asarray(rng.standard_normal((2, n)).astype(np.float32)) + k
                for n in (6, 2) for k in (0.0, 4.0, 0.0)]
        solves = [lax.linalg.tridiagonal_solve(*band[i:i + 3], jnp.ones((2, band[i].shape[1], 3)))
                  for i in (0, 3)]
        _, td, te, _ = lax.linalg.tridiagonal(s, lower=True)
        tri_w = jnp.linalg.eigvalsh(jax.vmap(lambda dd, ee: jnp.diag(dd) + jnp.diag(ee, 1)
                                             + jnp.diag(ee, -1))(td, te))
        packed, taus = lax.linalg.geqrf(m)
        c = jnp.ones((3, 5, 2))
        qc = lax.linalg.ormqr(packed, taus, c, left=True, transpose=False)
        orm = [lax.linalg.ormqr(packed, taus, qc, left=True, transpose=True),
               jnp.max(jnp.abs(qc - lax.linalg.householder_product(packed, taus) @ c))]
        lw, vl, vr = lax.linalg.eig(m, compute_left_eigenvectors=True)
        with jax.default_matmul_precision("highest"):
            m = m.astype(jnp.complex64)
            residuals = [jnp.max(jnp.abs(m @ ev - ev * ew[..., None, :])),
                         jnp.max(jnp.abs(m @ vr - vr * lw[..., None, :])),
                         jnp.max(jnp.abs(jnp.conj(jnp.swapaxes(vl, -1, -2)) @ m
                                         - lw[..., :, None] * jnp.conj(jnp.swapaxes(vl, -1, -2))))]
            m = jnp.asarray(a)
            return [jnp.linalg.cholesky(s), q @ r, jnp.abs(r), sv,
                    (u * sv[..., None, :]) @ vt, jnp.linalg.svd(m, compute_uv=False), w,
                    (v * w[..., None, :]) @ jnp.swapaxes(v, -1, -2), jnp.linalg.inv(s),
                    jnp.linalg.det(m), jnp.linalg.slogdet(m)[1],
                    jnp.linalg.solve(m, jnp.ones((3, 5, 1))), jnp.linalg.pinv(m[0]),
                    lax.linalg.triangular_solve(jnp.linalg.cholesky(s), jnp.ones((3, 5, 2)),
                                                left_side=True, lower=True),
                    jnp.linalg.svd(jnp.ones((40, 50)) + jnp.eye(40, 50))[1], *residuals,
                    jnp.sort(jnp.abs(ew), axis=-1), *solves, tri_w, *orm]

    def grad():
        w = jnp.asarray(rng.standard_normal((16, 4)).astype(np.float32))

        def loss(w, x):
            return jnp.sum(jnp.tanh(jnp.dot(x, w, precision=hi)) ** 2)
        f = lambda v: jnp.sin(v) * v ** 2  # noqa: E731
        v = jnp.asarray([0.3, 1.2, -0.7])
        return [jax.grad(loss)(w, jnp.asarray(x)), *jax.value_and_grad(loss)(w, x),
                jax.jacfwd(f)(v), jax.jacrev(f)(v), jax.hessian(lambda u: jnp.sum(f(u)))(v),
                jax.jit(jax.grad(loss))(w, x)]

    def vmap():
        w = jnp.asarray(rng.standard_normal((16, 4)).astype(np.float32))

        def loss(w, xi):
            return jnp.sum(jnp.tanh(jnp.dot(xi, w, precision=hi)))
        return [jax.vmap(jax.grad(loss), in_axes=(None, 0))(w, jnp.asarray(x)),
                jax.vmap(jnp.outer)(jnp.asarray(x[:, :3]), jnp.asarray(y[:, :2]))]

    def control_flow():
        xd = jnp.asarray(x)

        def step(c, r):
            c = c * 0.9 + r
            return c, jnp.sum(c)
        carry, ys = lax.scan(step, jnp.zeros(16), xd)
        n = lax.while_loop(lambda s: s[0] < 10, lambda s: (s[0] + 1, s[1] * 1.5),
                           (0, jnp.float32(1)))
        return [carry, ys, n[1], lax.fori_loop(0, 5, lambda i, v: v + i * v, xd[0]),
                lax.cond(xd[0, 0] > 0, jnp.sin, jnp.cos, xd[1]),
                lax.switch(2, [jnp.sin, jnp.cos, jnp.tanh], xd[2]),
                lax.associative_scan(jnp.add, xd, axis=1),
                lax.map(lambda r: r @ r, xd)]

    def random():
        key = jax.random.PRNGKey(0)
        k1, k2 = jax.random.split(key)
        return [jax.random.key_data(jax.random.split(key, 3)), jax.random.normal(k1, (5, 3)),
                jax.random.uniform(k2, (7,)), jax.random.randint(k1, (6,), 0, 100),
                jax.random.permutation(k2, 10), jax.random.bernoulli(k1, 0.3, (9,)),
                jax.random.categorical(k2, jnp.log(jnp.asarray([0.2, 0.3, 0.5])),
                                       shape=(8,)),
                jax.random.bits(jax.random.key(7), (4,))]

    def callbacks():
        seen = []

        def host(v):
            seen.append(np.asarray(v))
            return np.asarray(v) * 2

        @jax.jit
        def f(v):
            u = jax.pure_callback(host, jax.ShapeDtypeStruct(v.shape, v.dtype), v)
            jax.experimental.io_callback(lambda w: seen.append(np.asarray(w)), None, u)
            jax.debug.print("debug.print on device: {}", u[0])
            return u + 1
        out = f(jnp.asarray(x[0]))
        out.block_until_ready()
        return [out, np.asarray(len(seen))]

    def checkpoint():
        def g(v):
            return jnp.sum(jax.checkpoint(lambda u: jnp.sin(jnp.sin(u)))(v) ** 2)
        return [jax.grad(g)(jnp.asarray(x[0]))]

    def custom_rules():
        @jax.custom_jvp
        def f(v):
            return jnp.sin(v)
        f.defjvp(lambda p, t: (jnp.sin(p[0]), 2.0 * t[0]))

        @jax.custom_vjp
        def g(v):
            return v ** 2
        g.defvjp(lambda v: (v ** 2, v), lambda r, c: (3.0 * c * r,))
        v = jnp.asarray(x[0])
        return [jax.grad(lambda u: jnp.sum(f(u)))(v), jax.grad(lambda u: jnp.sum(g(u)))(v)]

    def donation():
        f = jax.jit(lambda v: v * 2, donate_argnums=0)
        v = jnp.asarray(x)
        out = f(v)
        return [out, np.asarray(v.is_deleted())]

    def memory_kinds():
        dev = jax.devices()[0]
        host = jax.sharding.SingleDeviceSharding(dev, memory_kind="pinned_host")
        on_host = jax.device_put(jnp.asarray(x), host)
        back = jax.device_put(on_host, jax.sharding.SingleDeviceSharding(dev))
        f = jax.jit(lambda v: v * 2, out_shardings=host)
        out = f(back)
        return [back + 1, out, np.asarray([on_host.sharding.memory_kind == "pinned_host",
                                           out.sharding.memory_kind == "pinned_host"])]

    def dlpack():
        xd = jnp.asarray(x)
        out = [jnp.from_dlpack(xd) * 2, jax.dlpack.from_dlpack(xd[1:])]
        try:     # (torch, where installed: a device-to-device exchange both ways)
            import torch
        except ImportError:
            return out
        t = torch.from_dlpack(xd)
        return out + [jnp.from_dlpack(t * 3)]

    def x64():
        with jax.enable_x64(True):
            v = jnp.arange(5, dtype=jnp.float64) / 3
            i = jnp.arange(5, dtype=jnp.int64) * (2 ** 40)
            return [v, jnp.sin(v), i, i // 7, jnp.linalg.inv(jnp.eye(3) * v[1] + 1.0)]

    return {name: fn for name, fn in locals().items() if inspect.isfunction(fn)}


def run_all(platform_name):
    import mjax
    import mjax.numpy as jnp
    from mjax import lax
    import mjax.experimental  # noqa: F401  (io_callback)
    print(f"[{platform_name}] devices: {mjax.devices()}", flush=True)
    results, errors, times = {}, {}, {}
    for name, fn in cases(mjax, jnp, lax).items():
        t0 = time.perf_counter()
        try:
            results[name] = [np.asarray(v) for v in fn()]
        except Exception as e:  # report and go on: one failing case must not hide others
            errors[name] = f"{type(e).__name__}: {e}"[:600]
            traceback.print_exc(limit=4)
        times[name] = time.perf_counter() - t0
    return results, errors, times


def main():
    gpu, gpu_errors, times = run_all(os.environ.get("MJAX_PLATFORM", "default"))
    path = os.path.join(tempfile.mkdtemp(), "cpu.npz")
    env = {**os.environ, "MJAX_PLATFORM": "cpu", "JAX_PLATFORMS": "cpu"}
    subprocess.run([sys.executable, __file__, "--cpu", path], env=env, check=True)
    got = dict(np.load(path, allow_pickle=True))
    cpu_errors = got.pop("__errors__").item()
    failed = 0
    for name in list(gpu) + list(gpu_errors):
        why = gpu_errors.get(name) or cpu_errors.get(name)
        if why is None:
            cpu = [got[f"{name}/{i}"] for i in range(len(gpu[name]))
                   if f"{name}/{i}" in got]
            why = _compare(name, gpu[name], cpu)
        failed += why is not None
        print(f"{'ok  ' if why is None else 'FAIL'} {name:15s} {times[name]:6.2f}s"
              + ("" if why is None else f"  {why}"), flush=True)
    print(f"{len(gpu) + len(gpu_errors) - failed} of {len(gpu) + len(gpu_errors)} cases "
          "agree with mjax on the CPU")
    sys.exit(failed)


def _compare(name, gpu, cpu):
    if len(gpu) != len(cpu):
        return f"{len(gpu)} results on the GPU, {len(cpu)} on the CPU"
    for i, (g, c) in enumerate(zip(gpu, cpu)):
        if g.shape != c.shape or g.dtype != c.dtype:
            return f"result {i}: {g.dtype}{g.shape} on the GPU, {c.dtype}{c.shape} on the CPU"
        try:
            if name in EXACT or g.dtype.kind in "biu":
                np.testing.assert_array_equal(g, c)
            else:
                low = g.dtype in (np.float16,) or "bfloat16" in str(g.dtype)
                tol = 2e-2 if low or name in ("linalg",) else 1e-4
                np.testing.assert_allclose(g.astype(c.dtype), c, rtol=tol, atol=tol)
        except AssertionError as e:
            return f"result {i}: " + " ".join(str(e).split())[:400]
    return None


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--cpu":
        res, errs, _ = run_all("cpu")
        np.savez(sys.argv[2], __errors__=np.asarray(errs, dtype=object),
                 **{f"{k}/{i}": v for k, vs in res.items() for i, v in enumerate(vs)})
    else:
        main()
