"""Pallas TPU kernels through mjax's Mosaic path and JAX's, on a TPU: values, times, and
the Mosaic modules each library hands libtpu.

    python benchmarks/mosaic_on_tpu.py            # every kernel
    python benchmarks/mosaic_on_tpu.py guide_matmul_2048 softmax
    python benchmarks/mosaic_on_tpu.py --jax-ops  # JAX's own kernels, run as user code

For each kernel: both libraries jit it on the chip; the outputs must agree; each is timed
(median of repeated calls after a warm-up); and the `tpu_custom_call` bodies of both
lowerings are decoded (base64, bytecode, mosaic-serde{serialize=false}) and printed, with
a diff when they differ (names and locations aside). Without a TPU the script only
lowers both for the TPU (`lowering_platforms=("tpu",)`) and compares the modules (a dry
run of the script itself). mjax lowers kernels through
`--jaxpr-pallas-to-mosaic` where the TPU platform record names it; where it does not, the
script says so (the kernel would then fail or be interpreted).
"""
from __future__ import annotations

import base64
import difflib
import functools
import json
import os
import re
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "test", "pallas"))

import jax  # noqa: E402  (the reference)
from jax.experimental import pallas as jpl  # noqa: E402
from jax.experimental.pallas import tpu as jpltpu  # noqa: E402

import mjax  # noqa: E402
from jaxlib.mlir import ir, passmanager  # noqa: E402
from mjax.dialect.context import context  # noqa: E402
from mjax.experimental import pallas as pl  # noqa: E402
from mjax.experimental.pallas import tpu as pltpu  # noqa: E402
from mjax.passes.mosaic import kernel as _kernel  # noqa: E402,F401  (the tpu dialect)

from mosaic_corpus import corpus  # noqa: E402


def guide_matmul(J, pl_, pltpu_, n, bm=512, bk=1024, bn=1024):
    """The Pallas TPU guide's matmul at n x n x n (bf16 in, f32 accumulator)."""
    jnp = J.numpy

    def kernel(x_ref, y_ref, z_ref, acc_ref, *, nsteps):
        @pl_.when(pl_.program_id(2) == 0)
        def _():
            acc_ref[...] = jnp.zeros_like(acc_ref)
        acc_ref[...] += jnp.dot(x_ref[...], y_ref[...], preferred_element_type=jnp.float32)

        @pl_.when(pl_.program_id(2) == nsteps - 1)
        def _():
            z_ref[...] = acc_ref[...].astype(z_ref.dtype)

    bm, bk, bn = min(bm, n), min(bk, n), min(bn, n)

    def f(x, y):
        return pl_.pallas_call(
            functools.partial(kernel, nsteps=n // bk),
            grid_spec=pltpu_.PrefetchScalarGridSpec(
                num_scalar_prefetch=0, grid=(n // bm, n // bn, n // bk),
                in_specs=[pl_.BlockSpec((bm, bk), lambda i, j, k: (i, k)),
                          pl_.BlockSpec((bk, bn), lambda i, j, k: (k, j))],
                out_specs=pl_.BlockSpec((bm, bn), lambda i, j, k: (i, j)),
                scratch_shapes=[pltpu_.VMEM((bm, bn), jnp.float32)]),
            out_shape=J.ShapeDtypeStruct((n, n), x.dtype),
            compiler_params=pltpu_.CompilerParams(
                dimension_semantics=("parallel", "parallel", "arbitrary")))(x, y)
    return f, [((n, n), "bfloat16")] * 2


def kernels(J, pl_, pltpu_) -> dict:
    out = dict(corpus(J, pl_, pltpu_))
    for n in (1024, 2048, 8192):
        out[f"guide_matmul_{n}"] = guide_matmul(J, pl_, pltpu_, n)
    return out


def decode_all(stablehlo_text: str) -> list[str]:
    """The Mosaic module of each tpu_custom_call in a StableHLO module."""
    out = []
    with context():
        module = ir.Module.parse(stablehlo_text)

        def walk(op):
            for region in op.regions:
                for block in region.blocks:
                    for o in block.operations:
                        o = o.operation
                        if o.name == "stablehlo.custom_call" and "tpu_custom_call" in str(
                                o.attributes["call_target_name"]):
                            config = json.loads(ir.StringAttr(
                                o.attributes["backend_config"]).value)
                            body = base64.b64decode(config["custom_call_config"]["body"])
                            kmod = ir.Module.parse(body)
                            passmanager.PassManager.parse(
                                "builtin.module(mosaic-serde{serialize=false})").run(
                                    kmod.operation)
                            out.append(kmod.operation.get_asm(enable_debug_info=False))
                        walk(o)
        walk(module.operation)
    return out


def normalize(text: str, passes: str = "") -> str:
    with context():
        m = ir.Module.parse(text)
        if passes:
            passmanager.PassManager.parse(f"builtin.module({passes})").run(m.operation)
        text = m.operation.get_asm(enable_debug_info=False)
    return re.sub(r"func\.func @(?!transform_)\w+\(", "func.func @kernel(", text)


def _version(text: str) -> str:
    m = re.search(r"stable_mosaic.version = (\d+)", text)
    return m.group(1) if m else "?"


def compare(a: str, b: str) -> str:
    """How two Mosaic modules compare: equal, equal after canonicalize,cse, or a diff (the
    serde versions they were serialized at said apart)."""
    versions = f" [serde version: jax {_version(a)}, mjax {_version(b)}]"
    if _version(a) != _version(b):
        b = b.replace(f"stable_mosaic.version = {_version(b)}",
                      f"stable_mosaic.version = {_version(a)}")
    return _compare(a, b) + versions


def _compare(a: str, b: str) -> str:
    if normalize(a) == normalize(b):
        return "equal"
    x, y = normalize(a, "canonicalize,cse"), normalize(b, "canonicalize,cse")
    if x == y:
        return "equal after canonicalize,cse"
    return "differ (after canonicalize,cse):\n" + "".join(difflib.unified_diff(
        x.splitlines(True), y.splitlines(True), "jax", "mjax", n=1))


def timed(f, args, reps=20) -> float:
    out = f(*args)
    jax.block_until_ready(out) if not isinstance(out, mjax.Array) else out.block_until_ready()
    times = []
    for _ in range(reps):
        t = time.perf_counter()
        out = f(*args)
        if isinstance(out, mjax.Array):
            out.block_until_ready()
        else:
            jax.block_until_ready(out)
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def inputs(shapes, seed=0):
    rng = np.random.default_rng(seed)
    out = []
    for shape, dtype in shapes:
        dt = np.dtype(jax.numpy.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
        if dt.kind in "iu":
            out.append(rng.integers(0, 4, shape).astype(dt))
        else:
            out.append(rng.standard_normal(shape).astype(np.float32).astype(dt))
    return out


def main(names) -> int:
    on_tpu = jax.devices()[0].platform == "tpu"
    print(f"jax {jax.__version__} on {jax.devices()[0].device_kind}; "
          f"mjax on {mjax.devices()[0]}" + ("" if on_tpu else
                                            " (no TPU: lowering for the TPU only)"))
    where = {} if on_tpu else {"lowering_platforms": ("tpu",)}
    J, M = kernels(jax, jpl, jpltpu), kernels(mjax, pl, pltpu)
    failures = 0
    for name in names or list(J):
        jf, shapes = J[name]
        mf, _ = M[name]
        args = inputs(shapes)
        desc = ", ".join(f"{d if d == 'bfloat16' else np.dtype(d).name}{list(s)}"
                         for s, d in shapes)
        print(f"\n======== {name}: {desc}")
        jjit, mjit = jax.jit(jf), mjax.jit(mf)
        jtext = jjit.trace(*args).lower(**where).as_text()
        try:
            mtext = mjit.trace(*args).lower(**where).as_text()
        except Exception as e:            # noqa: BLE001  (reported, then the next kernel)
            print(f"mjax: lowering failed: {type(e).__name__}: {e}")
            failures += 1
            continue
        jmods, mmods = decode_all(jtext), decode_all(mtext)
        if not mmods:
            print("mjax: no tpu_custom_call in the lowering: the TPU platform record does "
                  "not route pallas_call through --jaxpr-pallas-to-mosaic")
        for k, jm in enumerate(jmods):
            print(f"---- JAX's Mosaic ({k}):\n{jm}")
        for k, mm in enumerate(mmods):
            print(f"---- mjax's Mosaic ({k}):\n{mm}")
        if jmods and mmods:
            print("---- Mosaic modules: " + compare(jmods[0], mmods[0]))
        if not on_tpu:
            continue
        try:
            want = np.asarray(jjit(*args), np.float32)
            got = np.asarray(mjit(*args), np.float32)
            tol = 2e-2 if any(d == "bfloat16" for _, d in shapes) else 1e-5
            np.testing.assert_allclose(got, want, rtol=tol, atol=tol)
            print("values: equal")
        except Exception as e:            # noqa: BLE001
            print(f"values: DIFFER or failed: {type(e).__name__}: {str(e)[:2000]}")
            failures += 1
            continue
        tj, tm = timed(jjit, args), timed(mjit, args)
        line = f"time: jax {tj * 1e3:.3f} ms, mjax {tm * 1e3:.3f} ms ({tm / tj:.3f}x jax)"
        if name.startswith("guide_matmul_"):
            n = shapes[0][0][0]
            line += (f"; {2 * n ** 3 / tj / 1e12:.1f} / {2 * n ** 3 / tm / 1e12:.1f} "
                     f"TFLOP/s")
        print(line)
    print(f"\n{failures} kernel(s) failed")
    return 1 if failures else 0


# ---- JAX's own kernels (jax.experimental.pallas.ops.tpu) as user code -------------------
def ops_child(ops_dir: str, out: str) -> None:
    """Runs test_mosaic_jax_ops' kernels with whichever library `import jax` gives (real
    jax, or mjax under `python -m mjax`): outputs, median times, and Mosaic modules."""
    import jax as J
    import test_mosaic_jax_ops as T
    T._load_ops(ops_dir)
    on_tpu = J.devices()[0].platform == "tpu"
    result = {}
    for name, (f, args) in T._cases(ops_dir):
        entry = {}
        try:
            jf = J.jit(f)
            lowered = (jf.trace(*args).lower() if on_tpu else
                       jf.trace(*args).lower(lowering_platforms=("tpu",)))
            entry["mosaic"] = T._decode(lowered.as_text())
            if on_tpu:
                outs = J.tree_util.tree_leaves(jf(*args))
                entry["outputs"] = [np.asarray(o, np.float32).tolist() for o in outs]
                times = []
                for _ in range(10):
                    t = time.perf_counter()
                    J.block_until_ready(jf(*args))
                    times.append(time.perf_counter() - t)
                entry["time"] = statistics.median(times)
        except Exception as e:      # noqa: BLE001  (reported by the parent)
            entry["error"] = f"{type(e).__name__}: {str(e)[:2000]}"
        result[name] = entry
    with open(out, "w") as f:
        json.dump(result, f)


def jax_ops() -> int:
    import subprocess
    import tempfile
    import jax.experimental.pallas.ops.tpu as ops
    runs = {}
    with tempfile.TemporaryDirectory() as tmp:
        for lib, prefix in (("jax", []), ("mjax", ["-m", "mjax"])):
            out = os.path.join(tmp, f"{lib}.json")
            subprocess.run([sys.executable, *prefix, __file__, "--ops-child",
                            os.path.dirname(ops.__file__), out], check=True)
            with open(out) as f:
                runs[lib] = json.load(f)
    failures = 0
    for name, want in runs["jax"].items():
        got = runs["mjax"].get(name, {"error": "missing"})
        print(f"\n======== {name}")
        if "error" in got or "error" in want:
            print(f"jax: {want.get('error', 'ok')}\nmjax: {got.get('error', 'ok')}")
            failures += "error" in got
            continue
        for k, (a, b) in enumerate(zip(want["mosaic"], got["mosaic"])):
            print(f"---- kernel {k}: Mosaic {compare(a, b)}")
        if "outputs" in want:
            try:
                for x, y in zip(want["outputs"], got["outputs"]):
                    np.testing.assert_allclose(np.asarray(y), np.asarray(x), rtol=2e-3,
                                               atol=2e-3)
                print("values: equal")
            except AssertionError as e:
                print(f"values: DIFFER: {str(e)[:1500]}")
                failures += 1
            print(f"time: jax {want['time'] * 1e3:.3f} ms, mjax {got['time'] * 1e3:.3f} ms "
                  f"({got['time'] / want['time']:.3f}x jax)")
    print(f"\n{failures} kernel(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--ops-child"]:
        ops_child(sys.argv[2], sys.argv[3])
    elif sys.argv[1:2] == ["--jax-ops"]:
        sys.exit(jax_ops())
    else:
        sys.exit(main(sys.argv[1:]))
