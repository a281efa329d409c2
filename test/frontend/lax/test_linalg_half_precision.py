"""Linear algebra on float16/bfloat16 operands does what JAX 0.10.2 does, per platform.

JAX hands half floats to the platform's kernels as they are. On the CPU LAPACK has no half
types: cholesky, lu, qr, eigh, svd, eig, ... raise jaxlib's NotImplementedError
`(KeyError(<class 'ml_dtypes.bfloat16'>), 'Unsupported dtype bfloat16.')` when lowered,
while what XLA computes itself (triangular solves, the closed-form 2x2/3x3 det, products)
runs in the half type. For a TPU, XLA's factorizations (`LuDecomposition`, `Qr`, `Eigh`,
stablehlo.cholesky and triangular_solve, the QDWH SVD built on them) take the half type.
mjax must raise the same error where JAX does, compute the same bits where JAX computes,
and lower the same ops with the same element types for a TPU.
"""
from __future__ import annotations

import re

import jax
import jax.numpy as jjnp
import jax.scipy.linalg as jsl
import ml_dtypes
import numpy as np
import pytest

import mjax
import mjax.numpy as mjnp
import mjax.scipy.linalg as msl
from frontend_util import ON_TPU

LIBS = {"mjax": (mjax, mjnp, msl), "jax": (jax, jjnp, jsl)}
HALF = {"float16": np.float16, "bfloat16": ml_dtypes.bfloat16}

_rng = np.random.default_rng(0)
_A = _rng.standard_normal((4, 4)).astype(np.float32)
_S = (_A @ _A.T + 4 * np.eye(4)).astype(np.float32)
_T = np.tril(_S)
_B = _rng.standard_normal((4, 2)).astype(np.float32)
_TAU = np.full(4, 0.5, np.float32)


def _lax(name, **kw):
    return lambda lib, jnp, sl: (lambda *a: getattr(lib.lax.linalg, name)(*a, **kw))


def _np(name, **kw):
    return lambda lib, jnp, sl: (lambda *a: getattr(jnp.linalg, name)(*a, **kw))


def _sp(name, **kw):
    return lambda lib, jnp, sl: (lambda *a: getattr(sl, name)(*a, **kw))


# entry point -> (function of (lib, jnp, scipy.linalg), float32 operands)
ENTRIES = {
    "lax.cholesky": (_lax("cholesky"), (_S,)),
    "lax.triangular_solve": (_lax("triangular_solve", left_side=True, lower=True), (_T, _B)),
    "lax.triangular_solve_t": (_lax("triangular_solve", transpose_a=True), (_T, _B.T)),
    "lax.lu": (_lax("lu"), (_A,)),
    "lax.householder_product": (_lax("householder_product"), (_A, _TAU)),
    "lax.qr": (_lax("qr"), (_A,)),
    "lax.eigh": (_lax("eigh"), (_S,)),
    "lax.svd": (_lax("svd"), (_A,)),
    "lax.eig": (_lax("eig"), (_A,)),
    "lax.tridiagonal_solve": (_lax("tridiagonal_solve"), (_A[0], _A[1] + 4, _A[2], _B)),
    "lax.tridiagonal": (_lax("tridiagonal"), (_S,)),
    "lax.hessenberg": (_lax("hessenberg"), (_A,)),
    "lax.schur": (_lax("schur"), (_A,)),
    "lax.ormqr": (_lax("ormqr"), (_A, _TAU, _B)),
    "lax.symmetric_product": (_lax("symmetric_product"), (_A, _S)),
    "lax.cholesky_update": (_lax("cholesky_update"), (_T.T.copy(), _A[0])),
    "lax.qdwh": (_lax("qdwh"), (_S,)),
    "jnp.cholesky": (_np("cholesky"), (_S,)),
    "jnp.qr": (_np("qr"), (_A,)),
    "jnp.eigh": (_np("eigh"), (_S,)),
    "jnp.svd": (_np("svd"), (_A,)),
    "jnp.svdvals": (_np("svd", compute_uv=False), (_A,)),
    "jnp.eigvals": (_np("eigvals"), (_A,)),
    "jnp.inv": (_np("inv"), (_A,)),
    "jnp.solve": (_np("solve"), (_A, _B)),
    "jnp.det": (_np("det"), (_A,)),
    "jnp.det_3x3": (_np("det"), (_A[:3, :3],)),     # (JAX's closed form: no LU)
    "jnp.det_2x2": (_np("det"), (_A[:2, :2],)),
    "jnp.slogdet": (_np("slogdet"), (_A,)),
    "jnp.pinv": (_np("pinv"), (_A,)),
    "jnp.lstsq": (lambda lib, jnp, sl: lambda a, b: jnp.linalg.lstsq(a, b)[0], (_A, _B)),
    "jnp.norm_2": (_np("norm", ord=2), (_A,)),
    "sp.cho_factor": (lambda lib, jnp, sl: lambda a: sl.cho_factor(a)[0], (_S,)),
    "sp.cho_solve": (lambda lib, jnp, sl: lambda c, b: sl.cho_solve((c, True), b), (_T, _B)),
    "sp.lu": (_sp("lu"), (_A,)),
    "sp.lu_solve": (lambda lib, jnp, sl: lambda lu, b: sl.lu_solve(
        (lu, np.arange(4, dtype=np.int32)), b), (_S, _B)),
    "sp.qr": (_sp("qr"), (_A,)),
    "sp.solve_pos": (_sp("solve", assume_a="pos"), (_S, _B)),
    "sp.solve_triangular": (_sp("solve_triangular", lower=True), (_T, _B)),
    "sp.eigh": (_sp("eigh"), (_S,)),
    "sp.schur": (_sp("schur"), (_A,)),
    "sp.expm": (_sp("expm"), (_A * 0.1,)),
    "sp.qr_multiply": (lambda lib, jnp, sl: lambda a, c: sl.qr_multiply(a, c)[0],
                       (_A, _B.T.copy())),
    "sp.polar": (_sp("polar"), (_A,)),
}


def _args(args, dt):
    return tuple(a.astype(dt) if a.dtype == np.float32 else a for a in args)


def _outcome(lib_name, make, args, jit):
    """The leaves of the result, or the exception raised."""
    lib, jnp, sl = LIBS[lib_name]
    f = make(lib, jnp, sl)
    try:
        out = (lib.jit(f) if jit else f)(*args)
        return [np.asarray(x) for x in lib.tree_util.tree_leaves(out)]
    except Exception as e:  # noqa: BLE001 (the error itself is compared)
        return e


@pytest.mark.parametrize("jit", [False, True], ids=["eager", "jit"])
@pytest.mark.parametrize("dtype", sorted(HALF))
@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_half_floats_as_jax(name, dtype, jit):
    make, args = ENTRIES[name]
    args = _args(args, HALF[dtype])
    mine, theirs = (_outcome(lib, make, args, jit) for lib in ("mjax", "jax"))
    if isinstance(theirs, Exception):
        assert isinstance(mine, Exception), f"jax raised {theirs!r}; mjax computed"
        assert type(mine) is type(theirs) and str(mine) == str(theirs), (mine, theirs)
        return
    assert not isinstance(mine, Exception), f"mjax raised {mine!r}; jax computed"
    assert [x.dtype for x in mine] == [x.dtype for x in theirs]
    assert [x.shape for x in mine] == [x.shape for x in theirs]
    for m, t in zip(mine, theirs):
        if ON_TPU:      # (the chip's kernels: the same program, compared at the type's eps)
            tol = 4 * float(np.finfo(m.dtype).eps) if m.dtype.kind in "fc" else 0
            scale = max(1.0, float(np.max(np.abs(t.astype(np.complex64)), initial=0)))
            np.testing.assert_allclose(m.astype(np.complex64), t.astype(np.complex64),
                                       rtol=tol, atol=tol * scale)
        else:
            np.testing.assert_array_equal(m, t)     # bit for bit (NaNs where JAX's are)


def test_cpu_error_is_jaxlibs_for_each_half_type():
    # (the assertion above can fail: mjax's LAPACK lowering names the type as jaxlib does)
    if ON_TPU:
        pytest.skip("a CPU-only assertion: on a TPU XLA's factorizations take half floats")
    for dtype, dt in HALF.items():
        with pytest.raises(NotImplementedError) as info:
            mjnp.linalg.cholesky(np.eye(3, dtype=dt))
        assert str(info.value) == (f"(KeyError({np.dtype(dt).type!r}), "
                                   f"'Unsupported dtype {dtype}.')")


# ---- lowered for a TPU -----------------------------------------------------------------
_FACTOR = re.compile(r"stablehlo\.(custom_call @\w+|cholesky|triangular_solve)")


def _factor_ops(text: str) -> list[str]:
    """The factorization ops of a StableHLO module, each with the element types of its
    signature, sorted."""
    ops = []
    for line in text.splitlines():
        m = _FACTOR.search(line)
        if m:
            types = re.findall(r"x(f16|bf16|f32|f64)>", line.rsplit(" : ", 1)[-1])
            ops.append(f"{m.group(1)} {'/'.join(types)}")
    return sorted(ops)


def _lowered_for_tpu(lib_name, make, args):
    lib, jnp, sl = LIBS[lib_name]
    try:
        return _factor_ops(lib.jit(make(lib, jnp, sl)).trace(*args).lower(
            lowering_platforms=("tpu",)).as_text())
    except Exception as e:  # noqa: BLE001
        return e


@pytest.mark.parametrize("dtype", sorted(HALF))
@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_tpu_lowering_keeps_half_floats_as_jax(name, dtype):
    make, args = ENTRIES[name]
    args = _args(args, HALF[dtype])
    mine, theirs = (_lowered_for_tpu(lib, make, args) for lib in ("mjax", "jax"))
    if isinstance(theirs, Exception):
        assert isinstance(mine, Exception), f"jax raised {theirs!r}; mjax lowered {mine}"
        assert type(mine) is type(theirs) and str(mine) == str(theirs), (mine, theirs)
        return
    assert not isinstance(mine, Exception), f"mjax raised {mine!r}; jax lowered {theirs}"
    assert mine == theirs
    assert not any("f32" in op for op in mine), mine     # (no float32 round trip)


def test_tpu_cholesky_takes_bfloat16():
    # (the task's check, in mjax: bf16 reaches the chip's cholesky, no float32 round trip)
    text = mjax.jit(mjnp.linalg.cholesky).trace(
        np.eye(4, dtype=ml_dtypes.bfloat16)).lower(lowering_platforms=("tpu",)).as_text()
    assert re.search(r"stablehlo\.cholesky.*tensor<4x4xbf16>", text)
    assert "f32" not in text


@pytest.mark.parametrize("dtype", sorted(HALF))
def test_rfft_of_half_floats_raises_as_jax(dtype):
    x = np.ones((2, 8), HALF[dtype])
    for lib in (mjax, jax):
        with pytest.raises(ValueError, match=f"RFFT input must be float32 or float64, got "
                                             f"{dtype}"):
            lib.lax.fft(x, "RFFT", (8,))
    # (FFT of a half float is promoted to complex64 by jnp, in both)
    assert mjnp.fft.fft(x).dtype == jjnp.fft.fft(x).dtype == np.complex64
