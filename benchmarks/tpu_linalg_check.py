"""Linear algebra on a TPU chip, mjax against JAX: the same values, bit for bit?

    python benchmarks/tpu_linalg_check.py            # on a TPU VM (jax and mjax installed)
    python benchmarks/tpu_linalg_check.py --lower    # anywhere: only compare the StableHLO

Runs each function of the corpus (lu, qr, eigh at the sizes around JAX's 256 threshold,
svd, cholesky, triangular_solve, solve, inv, det, slogdet, matmuls, fft, sort, the PRNG)
jitted by both libraries on the chip in one process (both hold it), and prints per case
whether the results are bit-identical, else the largest absolute difference, and whether
the two StableHLO programs lowered for the TPU have the same ops that matter
(test/frontend/tracing/test_tpu_lowering.py's comparison). A case either library refuses prints
its error. Exit status 1 when a case differs in bits (or in ops, with --lower).
"""
from __future__ import annotations

import argparse
import pathlib
import sys
import traceback

import numpy as np

_TESTS = pathlib.Path(__file__).resolve().parents[1] / "test" / "frontend"


def _corpus():
    rng = np.random.default_rng(0)

    def mat(m, n=None, dtype=np.float32):
        x = rng.standard_normal((m, n or m))
        if np.dtype(dtype).kind == "c":
            x = x + 1j * rng.standard_normal((m, n or m))
        return x.astype(dtype)

    def spd(n):
        x = mat(n)
        return (x @ x.T / n + np.eye(n)).astype(np.float32)

    def jnp_linalg(name, **kw):
        return lambda lib, jnp: (lambda *a: getattr(jnp.linalg, name)(*a, **kw))

    def lax_linalg(name, **kw):
        return lambda lib, jnp: (lambda *a: getattr(lib.lax.linalg, name)(*a, **kw))

    def tsolve(**kw):
        return lambda lib, jnp: (lambda a, b: lib.lax.linalg.triangular_solve(
            jnp.tril(a) if kw.get("lower") else jnp.triu(a), b, **kw))

    def matmul(**kw):
        return lambda lib, jnp: (lambda a, b: jnp.matmul(a, b, **kw))

    return {
        "lu 64": (lax_linalg("lu"), (mat(64),)),
        "lu 96x64": (lax_linalg("lu"), (mat(96, 64),)),
        "lu batched": (lax_linalg("lu"), (np.stack([mat(16), mat(16)]),)),
        "qr reduced 96x64": (jnp_linalg("qr"), (mat(96, 64),)),
        "qr complete 96x64": (jnp_linalg("qr", mode="complete"), (mat(96, 64),)),
        "qr 64x96": (jnp_linalg("qr"), (mat(64, 96),)),
        "eigh 8": (jnp_linalg("eigh"), (mat(8),)),
        "eigh 128": (jnp_linalg("eigh"), (mat(128),)),
        "eigh 256": (jnp_linalg("eigh"), (mat(256),)),
        "eigh 257 (QDWH in JAX)": (jnp_linalg("eigh"), (mat(257),)),
        "eigh upper": (jnp_linalg("eigh", UPLO="U"), (mat(64),)),
        "eigh unsorted": (lax_linalg("eigh", sort_eigenvalues=False), (mat(64),)),
        "eigh complex": (jnp_linalg("eigh"), (mat(32, dtype=np.complex64),)),
        "eigvalsh 200": (jnp_linalg("eigvalsh"), (mat(200),)),
        "svd 64": (jnp_linalg("svd"), (mat(64),)),
        "svd 96x64 full": (jnp_linalg("svd"), (mat(96, 64),)),
        "svd 96x64 reduced": (jnp_linalg("svd", full_matrices=False), (mat(96, 64),)),
        "svd 64x96 reduced": (jnp_linalg("svd", full_matrices=False), (mat(64, 96),)),
        "svd 70x64 reduced": (jnp_linalg("svd", full_matrices=False), (mat(70, 64),)),
        "svdvals 128": (jnp_linalg("svd", compute_uv=False), (mat(128),)),
        "svd complex": (jnp_linalg("svd", full_matrices=False),
                        (mat(24, 16, np.complex64),)),
        "svd rank-deficient": (jnp_linalg("svd"),
                               (np.outer(mat(32, 1), mat(1, 32)).astype(np.float32),)),
        "grad svdvals 64": (lambda lib, jnp: lib.grad(
            lambda a: jnp.sum(jnp.linalg.svd(a, compute_uv=False))), (mat(64),)),
        "grad svd 96x64": (lambda lib, jnp: lib.grad(
            lambda a: (lambda u, s, vh: jnp.sum(u[:, 0] ** 2) + jnp.sum(s) + jnp.sum(vh[0]))(
                *jnp.linalg.svd(a, full_matrices=False))), (mat(96, 64),)),
        "grad svd batched": (lambda lib, jnp: lib.grad(
            lambda a: jnp.sum(jnp.linalg.svd(a, compute_uv=False) ** 2)),
                             (np.stack([mat(16), mat(16)]),)),
        "cholesky 128": (jnp_linalg("cholesky"), (spd(128),)),
        "triangular_solve left lower": (tsolve(left_side=True, lower=True),
                                        (spd(64), mat(64, 8))),
        "triangular_solve right upper T": (tsolve(left_side=False, lower=False,
                                                  transpose_a=True), (spd(64), mat(8, 64))),
        "solve": (jnp_linalg("solve"), (mat(64), mat(64, 4))),
        "inv": (jnp_linalg("inv"), (mat(64),)),
        "det": (jnp_linalg("det"), (mat(16),)),
        "det 64": (jnp_linalg("det"), (mat(64),)),
        "det 3x3": (jnp_linalg("det"), (mat(3),)),
        "grad det 16": (lambda lib, jnp: lib.grad(jnp.linalg.det), (mat(16),)),
        "slogdet": (jnp_linalg("slogdet"), (mat(64),)),
        "matmul default": (matmul(), (mat(256), mat(256))),
        "matmul highest": (matmul(precision="highest"), (mat(256), mat(256))),
        "matmul bf16": (lambda lib, jnp: lambda a, b: (a.astype(jnp.bfloat16)
                                                       @ b.astype(jnp.bfloat16)),
                        (mat(256), mat(256))),
        "dot preferred f32": (lambda lib, jnp: lambda a, b: lib.lax.dot(
            a.astype(jnp.bfloat16), b.astype(jnp.bfloat16),
            preferred_element_type=np.float32), (mat(256), mat(256))),
        "fft": (lambda lib, jnp: lambda a: jnp.fft.fft(a), (mat(64, 128),)),
        "sort": (lambda lib, jnp: lambda a: jnp.sort(a, axis=0), (mat(256),)),
        "normal": (lambda lib, jnp: lambda a: a + lib.random.normal(lib.random.PRNGKey(0),
                                                                     a.shape),
                   (np.zeros((64, 64), np.float32),)),
    }


def _leaves(lib, out):
    return [np.asarray(x) for x in lib.tree_util.tree_leaves(out)]


def _compare(mine, theirs) -> tuple[bool, float]:
    same, worst = len(mine) == len(theirs), 0.0
    for a, b in zip(mine, theirs):
        if a.shape != b.shape or a.dtype != b.dtype:
            return False, float("inf")
        same &= a.tobytes() == b.tobytes()
        if a.size:
            diff = np.abs(a.astype(np.complex128) - b.astype(np.complex128))
            worst = max(worst, float(np.nanmax(diff)) if not np.all(np.isnan(diff)) else 0.0)
    return same, worst


def _ops_differ(make, args, mjax, jax) -> str:
    sys.path.insert(0, str(_TESTS))
    from test_tpu_lowering import _report, ops_that_matter   # the tests' comparison
    texts = []
    for lib, jnp in ((mjax, mjax.numpy), (jax, jax.numpy)):
        texts.append(lib.jit(make(lib, jnp)).trace(*args).lower(
            lowering_platforms=("tpu",)).as_text())
    return _report(*(ops_that_matter(t) for t in texts))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--lower", action="store_true",
                        help="only lower for the TPU and compare the StableHLO")
    parser.add_argument("-k", default="", help="run the cases whose name contains this")
    opts = parser.parse_args()

    import mjax
    print(f"mjax: {mjax.devices()}", flush=True)
    import jax
    if not opts.lower:
        print(f"jax: {jax.devices()}", flush=True)
        if jax.devices()[0].platform != "tpu" or mjax.devices()[0].platform != "tpu":
            print("not on a TPU (both libraries must find it): run with --lower, or on a "
                  "TPU VM", flush=True)
            return 2
    failed = 0
    for name, (make, args) in _corpus().items():
        if opts.k not in name:
            continue
        try:
            ops = _ops_differ(make, args, mjax, jax)
            ops_note = "same ops" if not ops else "OPS DIFFER:\n" + ops
        except Exception as e:     # (a case one library refuses for a TPU)
            ops_note = f"lowering: {type(e).__name__}: {str(e).splitlines()[0][:160]}"
        if opts.lower:
            print(f"{name:34s} {ops_note}", flush=True)
            failed += ops_note.startswith("OPS DIFFER")
            continue
        try:
            theirs = _leaves(jax, jax.jit(make(jax, jax.numpy))(*args))
        except Exception as e:
            print(f"{name:34s} jax: {type(e).__name__}: {str(e)[:160]} | {ops_note}",
                  flush=True)
            continue
        try:
            mine = _leaves(mjax, mjax.jit(make(mjax, mjax.numpy))(*args))
        except Exception as e:
            print(f"{name:34s} mjax: {type(e).__name__}: {str(e).splitlines()[0][:160]} "
                  f"| {ops_note}", flush=True)
            if not isinstance(e, NotImplementedError):
                traceback.print_exc(limit=3)
            continue
        same, worst = _compare(mine, theirs)
        failed += not same
        verdict = "bit-identical" if same else f"DIFFERENT  max |diff| = {worst:.3g}"
        print(f"{name:34s} {verdict} | {ops_note}", flush=True)
    print(f"{failed} case(s) differ", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
