"""svd's `algorithm` and `subset_by_index` parameters, which the op carries as JAX's svd_p
does: the printed jaxpr, the shape rule's error, the CPU rule (gesdd for None, DEFAULT
and DIVIDE_AND_CONQUER, gesvd for QR, JAX's errors for JACOBI, POLAR and a partial
subset), JAX's TPU rule (POLAR and DEFAULT: its QDWH-based SVD, which takes the subset;
the other algorithms raise; the subset's errors), the JVP, vmap, jnp.linalg.svd, and the
op's text form through mjax-opt.
"""
from __future__ import annotations

import re
import shutil
import subprocess

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mjnp
from mjax.passes.registry import PassError

from frontend_util import ON_TPU
from test_eigh_tpu import _inlined_ops

_rng = np.random.default_rng(2117)
ALGORITHMS = ("DEFAULT", "QR", "JACOBI", "POLAR", "DIVIDE_AND_CONQUER")


def _mat(*shape, dtype=np.float32):
    x = _rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _rng.standard_normal(shape)
    return x.astype(dtype)


def _svd(lib, algorithm=None, **kw):
    linalg = lib.lax.linalg
    if algorithm is not None:
        kw["algorithm"] = getattr(linalg.SvdAlgorithm, algorithm)
    return lambda a: linalg.svd(a, **kw)


def test_svd_algorithm_is_exported_as_jaxs():
    assert {m.name: m.value for m in mjax.lax.linalg.SvdAlgorithm} == \
        {m.name: m.value for m in jax.lax.linalg.SvdAlgorithm}
    import inspect
    mine = inspect.signature(mjax.lax.linalg.svd).parameters
    theirs = inspect.signature(jax.lax.linalg.svd).parameters
    assert [(p.name, p.kind, p.default) for p in mine.values()] == \
        [(p.name, p.kind, p.default) for p in theirs.values()]


# ---- the printed jaxpr --------------------------------------------------------------------
_PRINTED = [
    ((4, 3), {}), *[((4, 3), {"algorithm": a}) for a in ALGORITHMS],
    ((4, 3), {"full_matrices": False, "subset_by_index": (0, 2)}),
    ((3, 5), {"full_matrices": False, "subset_by_index": (1, 3), "algorithm": "QR"}),
    ((4, 3), {"compute_uv": False, "full_matrices": False, "subset_by_index": (0, 1),
              "algorithm": "POLAR"}),
    ((4, 3), {"subset_by_index": (0, 3)}),                  # (the whole range: full ok)
    ((4, 3), {"full_matrices": False, "subset_by_index": (1, 7)}),  # (min(3, 6) values)
    ((2, 5, 5), {"full_matrices": False, "subset_by_index": (3, 5),
                 "algorithm": "JACOBI"}),
    ((2, 3), {"full_matrices": False, "subset_by_index": (0, 0)})]


@pytest.mark.parametrize("shape,kw", _PRINTED)
def test_printed_jaxpr_is_jaxs(shape, kw):
    x = np.zeros(shape, np.float32)
    mine = str(mjax.make_jaxpr(_svd(mjax, **kw))(x))
    theirs = str(jax.make_jaxpr(_svd(jax, **kw))(x))
    assert mine == theirs
    assert "subset_by_index=" in mine and "algorithm=" in mine


def test_printed_jaxpr_of_vmap_and_jvp_is_jaxs():
    x = np.zeros((2, 4, 3), np.float32)
    printed, printed_jvp = {}, {}     # (per library)
    for lib in (mjax, jax):
        f = _svd(lib, "QR", full_matrices=False, subset_by_index=(0, 2))
        printed[lib] = str(lib.make_jaxpr(lib.vmap(f))(x))
        g = lambda a: f(a)[1]
        printed_jvp[lib] = str(lib.make_jaxpr(lambda a, t: lib.jvp(g, (a,), (t,)))(x[0], x[0]))
    assert printed[mjax] == printed[jax]
    # (the JVP's reduced svd keeps the subset and the algorithm)
    assert printed_jvp[mjax].count("algorithm=SvdAlgorithm.QR") == 1
    find = lambda s: re.findall(r"svd\[[^\]]*\]", s)
    assert find(printed_jvp[mjax]) == find(printed_jvp[jax])
    assert "subset_by_index=(0, 2)" in find(printed_jvp[mjax])[0]


@pytest.mark.parametrize("kw", [{"subset_by_index": (0, 2)},
                                {"subset_by_index": (1, 3), "compute_uv": False}])
def test_full_matrices_with_a_subset_raises_jaxs_error(kw):
    x = np.zeros((4, 3), np.float32)
    for lib in (jax, mjax):
        with pytest.raises(ValueError, match="full_matrices and subset_by_index cannot "
                                             "both be set"):
            lib.make_jaxpr(_svd(lib, **kw))(x)


# ---- the CPU: JAX's rule and its errors ----------------------------------------------------
@pytest.mark.skipif(ON_TPU, reason="CPU-only: LAPACK's rule; on a TPU JAX computes these")
@pytest.mark.parametrize("kw,message", [
    ({"full_matrices": False, "subset_by_index": (0, 2)},
     "subset_by_index not implemented for CPU and GPU"),
    # (the subset is refused first, as JAX's)
    ({"full_matrices": False, "subset_by_index": (1, 3), "algorithm": "JACOBI"},
     "subset_by_index not implemented for CPU and GPU"),
    ({"algorithm": "JACOBI"}, "The SVD Jacobi and Polar algorithms are not implemented"),
    ({"algorithm": "POLAR", "compute_uv": False},
     "The SVD Jacobi and Polar algorithms are not implemented")])
def test_cpu_raises_jaxs_errors(kw, message):
    x = _mat(4, 3)
    for lib in (jax, mjax):
        f = _svd(lib, **kw)
        lib.make_jaxpr(f)(x)            # (tracing takes them; lowering refuses)
        with pytest.raises(NotImplementedError, match=message):
            f(x)
        with pytest.raises(NotImplementedError, match=message):
            lib.jit(f)(x)


def _targets(text):
    return sorted(set(re.findall(r"custom_call @(\w+)", text)))


@pytest.mark.skipif(ON_TPU, reason="CPU-only: LAPACK's routines")
@pytest.mark.parametrize("algorithm,routine", [
    (None, "gesdd"), ("DEFAULT", "gesdd"), ("DIVIDE_AND_CONQUER", "gesdd"), ("QR", "gesvd")])
@pytest.mark.parametrize("shape,dtype,kw", [
    ((5, 3), np.float32, {}), ((3, 5), np.float64, {"full_matrices": False}),
    ((4, 4), np.complex64, {"compute_uv": False}),
    ((2, 4, 3), np.float32, {"full_matrices": False, "subset_by_index": (0, 3)})])
def test_cpu_routine_and_values_are_jaxs(algorithm, routine, shape, dtype, kw):
    x = _mat(*shape, dtype=dtype)
    mine_f, theirs_f = _svd(mjax, algorithm, **kw), _svd(jax, algorithm, **kw)
    mine_text = mjax.jit(mine_f).trace(x).lower(lowering_platforms=("cpu",)).as_text()
    theirs_text = jax.jit(theirs_f).trace(x).lower(lowering_platforms=("cpu",)).as_text()
    assert _targets(mine_text) == _targets(theirs_text)
    assert any(t.endswith(routine + "_ffi") for t in _targets(mine_text))
    mine, theirs = mjax.jit(mine_f)(x), jax.jit(theirs_f)(x)
    mine = mine if isinstance(mine, (tuple, list)) else [mine]
    theirs = theirs if isinstance(theirs, (tuple, list)) else [theirs]
    # (float64 only where x64 is on: the results' dtype says)
    tol = 1e-10 if np.asarray(mine[0]).dtype in (np.float64, np.complex128) else 1e-5
    for a, b in zip(mine, theirs, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_allclose(a, b, atol=tol, rtol=0)     # (the same routine)
    s = np.asarray(mine[1] if len(mine) == 3 else mine[0])
    np.testing.assert_allclose(s, np.linalg.svd(x.astype(np.complex128), compute_uv=False),
                               atol=100 * tol)


@pytest.mark.skipif(ON_TPU, reason="CPU-only: JAX's CPU rule")
@pytest.mark.parametrize("shape,kw", [
    ((0, 3), {"algorithm": "JACOBI"}),      # (empty before the algorithm, as JAX's)
    ((3, 0), {"algorithm": "POLAR", "full_matrices": False, "subset_by_index": (0, 0)}),
    ((2, 0, 4), {"algorithm": "QR", "compute_uv": True})])
def test_cpu_empty_matrices_are_jaxs(shape, kw):
    x = np.zeros(shape, np.float32)
    mine, theirs = mjax.jit(_svd(mjax, **kw))(x), jax.jit(_svd(jax, **kw))(x)
    for a, b in zip(mine, theirs, strict=True):
        a, b = np.asarray(a), np.asarray(b)
        assert a.dtype == b.dtype and a.shape == b.shape and np.array_equal(a, b)


@pytest.mark.skipif(ON_TPU, reason="CPU-only: QR is LAPACK's gesvd")
def test_jvp_forwards_the_algorithm_and_subset():
    x, t = _mat(5, 3), _mat(5, 3)
    kw = {"algorithm": "QR", "full_matrices": False, "subset_by_index": (0, 3)}
    (u, s, vt), (du, ds, dvt) = mjax.jvp(_svd(mjax, **kw), (x,), (t,))
    (tu, ts, tvt), (tdu, tds, tdvt) = jax.jvp(_svd(jax, **kw), (x,), (t,))
    np.testing.assert_allclose(np.asarray(ds), np.asarray(tds), atol=1e-4)
    np.testing.assert_allclose(np.asarray(du), np.asarray(tdu), atol=1e-3)
    np.testing.assert_allclose(np.asarray(dvt), np.asarray(tdvt), atol=1e-3)
    text = str(mjax.make_jaxpr(lambda a: mjax.jvp(_svd(mjax, **kw), (a,), (a,)))(x))
    assert "algorithm=SvdAlgorithm.QR" in text and "subset_by_index=(0, 3)" in text


# ---- lowered for a GPU: JAX's solver calls ------------------------------------------------
def _solver_calls(text):
    """The custom calls of a module, SSA names, locations, frontend attributes and
    sharding rules aside."""
    calls = []
    for line in text.splitlines():
        if "custom_call" in line:
            line = re.sub(r"\s+loc\(.*$", "", re.sub(r"%[\w#:]+", "%", line.strip()))
            line = re.sub(r", mhlo.frontend_attributes = \{[^}]*\}", "", line)
            calls.append(re.sub(r", sdy.sharding_rule = .*?custom>", "", line))
    return calls


@pytest.mark.parametrize("platform", ["cuda", "rocm"])
@pytest.mark.parametrize("algorithm", [None, *ALGORITHMS])
@pytest.mark.parametrize("shape,dtype", [((4, 6), np.float32), ((40, 50), np.float32),
                                         ((2, 5, 4), np.float32), ((3, 3), np.complex64)])
def test_gpu_solver_is_jaxs(platform, algorithm, shape, dtype):
    # JAX's _resolve_gpu_svd_implementation: JACOBI gesvdj, POLAR gesvdp, QR gesvd (of
    # the transpose when wide), DIVIDE_AND_CONQUER gesdd on ROCm only (CUDA: JAX's
    # error), DEFAULT gesvdj up to 1024
    x = np.zeros(shape, dtype)
    for kw in ({"full_matrices": False}, {}, {"compute_uv": False}):
        outcome = []
        for lib in (jax, mjax):
            try:
                outcome.append(_solver_calls(lib.jit(_svd(lib, algorithm, **kw)).trace(x)
                                             .lower(lowering_platforms=(platform,))
                                             .as_text()))
            except NotImplementedError as e:
                outcome.append(str(e))
        assert outcome[0] == outcome[1], (kw, outcome)
        assert (algorithm == "DIVIDE_AND_CONQUER" and platform == "cuda") == \
            isinstance(outcome[1], str), outcome[1]
        assert isinstance(outcome[1], str) or any("solver_gesv" in c or "solver_gesdd" in c
                                                  for c in outcome[1])


# ---- lowered for a TPU: JAX's module -------------------------------------------------------
def _lowered(lib, f, x):
    return lib.jit(f).trace(x).lower(lowering_platforms=("tpu",)).as_text()


def _difference(shape, kw, vmapped):
    x = np.zeros(shape, np.float32)
    mine_f, theirs_f = _svd(mjax, **kw), _svd(jax, **kw)
    if vmapped:
        mine_f, theirs_f = mjax.vmap(mine_f), jax.vmap(theirs_f)
    mine, theirs = _lowered(mjax, mine_f, x), _lowered(jax, theirs_f, x)
    assert "lapack" not in mine and "@Eigh" in mine
    mine, theirs = _inlined_ops(mine), _inlined_ops(theirs)
    return mine - theirs, theirs - mine, sum(mine.values())


@pytest.mark.parametrize("shape,kw,vmapped", [
    ((4, 3), {"full_matrices": False, "subset_by_index": (0, 2)}, False),
    ((4, 3), {"full_matrices": False, "subset_by_index": (1, 3), "algorithm": "POLAR"},
     False),
    ((6, 4), {"subset_by_index": (0, 4), "algorithm": "DEFAULT"}, False),
    ((3, 5), {"full_matrices": False, "compute_uv": False, "subset_by_index": (2, 3)},
     False),
    ((8, 8), {"full_matrices": False, "subset_by_index": (0, 8)}, False),
    ((4, 4, 3), {"full_matrices": False, "subset_by_index": (0, 1)}, True),
    ((300, 300), {"full_matrices": False, "subset_by_index": (0, 10)}, False)])
def test_tpu_module_is_jaxs(shape, kw, vmapped):
    # The module against JAX's op for op (jitted helpers inlined); where the two differ
    # they differ as the same call without a subset and algorithm does (JAX's ops whose
    # results are unused, which mjax drops: the Q of an unused QR, the batched QR's
    # padding scatter, the top split's Hermitian factor past 256), no more.
    extra, missing, count = _difference(shape, kw, vmapped)
    plain = {k: v for k, v in kw.items() if k not in ("subset_by_index", "algorithm")}
    base_extra, base_missing, base_count = _difference(shape, plain, vmapped)
    assert not extra, extra
    assert missing == base_missing, (missing, base_missing)
    # past 256 a partial subset asks the eigh of the polar factor's Hermitian part for
    # part of its spectrum: its divide and conquer's subset tests (more ops)
    if shape[-1] > 256:
        assert count > base_count, (count, base_count)


@pytest.mark.parametrize("algorithm", ["QR", "JACOBI", "DIVIDE_AND_CONQUER"])
def test_tpu_algorithms_raise_jaxs_error(algorithm):
    for shape in ((4, 3), (0, 3)):         # (before the empty case, as JAX's)
        x = np.zeros(shape, np.float32)
        for lib in (jax, mjax):
            with pytest.raises(NotImplementedError, match="Only the POLAR .which is also "
                                                          "DEFAULT on TPU. SVD algorithm"):
                _lowered(lib, _svd(lib, algorithm), x)


@pytest.mark.parametrize("subset,message", [
    ((0, 0), "empty index range"), ((-1, 2), "non-negative"),
    ((0, 5), "exceeds matrix size")])
def test_tpu_subset_errors_are_jaxs(subset, message):
    # (JAX's ValueError, raised while lowering: mjax's lowering pass reports it as a
    # PassError at the op)
    x = np.zeros((4, 3), np.float32)
    for lib, error in ((jax, ValueError), (mjax, (ValueError, PassError))):
        with pytest.raises(error, match=message):
            _lowered(lib, _svd(lib, full_matrices=False, subset_by_index=subset), x)


# ---- the TPU algorithm, run on this machine ------------------------------------------------
@pytest.mark.parametrize("shape,dtype,full", [((6, 4), np.float32, True),
                                              ((3, 5), np.float32, False),
                                              ((5, 3), np.complex64, False)])
def test_tpu_algorithm_with_the_whole_subset_is_jaxs_bit_for_bit(shape, dtype, full):
    # the SVD the op expands into for a TPU, the whole range asked (which its eigh takes
    # as a subset (0, n)), run here against JAX's own TPU SVD function: the same bits
    from jax._src.tpu.linalg import svd as jax_tpu_svd
    from mjax.lax import linalg_tpu
    a = _mat(*shape, dtype=dtype)
    whole = (0, min(shape))
    for uv in (True, False):
        mine = mjax.jit(lambda x: linalg_tpu.svd_tpu(
            x, full_matrices=full, compute_uv=uv, subset_by_index=whole))(a)
        theirs = jax.jit(lambda x: jax_tpu_svd.svd(
            x, full_matrices=full, compute_uv=uv, subset_by_index=whole))(a)
        mine, theirs = ([np.asarray(v) for v in (t if uv else [t])] for t in (mine, theirs))
        for x, y in zip(mine, theirs, strict=True):
            assert x.shape == y.shape and x.tobytes() == y.tobytes(), np.abs(x - y).max()


@pytest.mark.skipif(not ON_TPU, reason="a partial subset's eigh runs on a TPU only (the "
                                       "CPU's eigh refuses a subset, in JAX as in mjax)")
@pytest.mark.parametrize("shape,subset", [((6, 4), (0, 2)), ((3, 5), (1, 3))])
def test_tpu_subset_values(shape, subset):
    a = _mat(*shape)
    kw = {"full_matrices": False, "subset_by_index": subset}
    u, s, vt = (np.asarray(t) for t in mjax.jit(_svd(mjax, **kw))(a))
    tu, ts, tvt = (np.asarray(t) for t in jax.jit(_svd(jax, **kw))(a))
    np.testing.assert_allclose(s, ts, atol=1e-4)
    expected = np.linalg.svd(a.astype(np.float64), compute_uv=False)[subset[0]:subset[1]]
    np.testing.assert_allclose(s, expected, atol=1e-3)
    np.testing.assert_allclose(np.abs(u), np.abs(tu), atol=1e-3)
    np.testing.assert_allclose(np.abs(vt), np.abs(tvt), atol=1e-3)


# ---- jnp.linalg.svd ------------------------------------------------------------------------
def test_jnp_svd_takes_the_subset():
    x = _mat(4, 3)
    kw = {"full_matrices": False, "subset_by_index": (0, 2)}
    find = lambda s: [re.sub(r"\s+", " ", e) for e in re.findall(r"svd\[[^\]]*\]", s)]
    mine = find(str(mjax.make_jaxpr(lambda a: mjnp.linalg.svd(a, **kw))(x)))
    theirs = find(str(jax.make_jaxpr(lambda a: jjnp.linalg.svd(a, **kw))(x)))
    assert mine == theirs and "subset_by_index=(0, 2)" in mine[0]
    shapes = [t.shape for t in mjax.eval_shape(lambda a: mjnp.linalg.svd(a, **kw), x)]
    assert shapes == [t.shape for t in jax.eval_shape(
        lambda a: jjnp.linalg.svd(a, **kw), x)] == [(4, 2), (2,), (2, 3)]
    whole = {"full_matrices": False, "subset_by_index": (0, 3)}
    for a, b in zip(mjnp.linalg.svd(x, **whole), jjnp.linalg.svd(x, **whole), strict=True):
        np.testing.assert_allclose(np.abs(np.asarray(a)), np.abs(np.asarray(b)), atol=1e-5)
    if not ON_TPU:
        for lib, jnp in ((jax, jjnp), (mjax, mjnp)):
            with pytest.raises(NotImplementedError, match="subset_by_index not implemented"):
                jnp.linalg.svd(x, **kw)


# ---- the op's text form --------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("mjax-opt") is None, reason="mjax-opt is not installed")
def test_the_params_round_trip_through_mjax_opt():
    x = np.zeros((4, 3), np.float32)
    f = _svd(mjax, "POLAR", full_matrices=False, subset_by_index=(0, 2))
    text = mjax.jit(f).trace(x).lower(lowering_platforms=("tpu",)).as_text(dialect="jaxpr")
    line, = [s for s in text.splitlines() if "jaxpr.svd" in s]
    assert 'algorithm = "polar"' in line and "subset_by_index = array<i64: 0, 2>" in line
    out = subprocess.run(["mjax-opt"], input=text, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    again, = [s for s in out.stdout.splitlines() if "jaxpr.svd" in s]
    strip = lambda s: re.sub(r"%[\w#]+", "%", s).strip()
    assert strip(again) == strip(line)
    # the verifier checks the subset's result types and the algorithm's name
    bad = text.replace("array<i64: 0, 2>", "array<i64: 0, 1>")
    bad_algorithm = text.replace('"polar"', '"Polar"')
    assert bad != text and bad_algorithm != text
    for wrong, message in ((bad, "jaxpr.svd"), (bad_algorithm, "algorithm")):
        out = subprocess.run(["mjax-opt"], input=wrong, capture_output=True, text=True)
        assert out.returncode != 0 and message in out.stderr, out.stderr
