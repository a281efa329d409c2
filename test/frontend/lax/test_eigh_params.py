"""eigh's `algorithm` and `subset_by_index` parameters, which the op carries as JAX's
eigh_p does: the printed jaxpr, the errors JAX's CPU rule raises, JAX's TPU rule
(JACOBI: XLA's `Eigh` of any size; QDWH and None: its divide and conquer, which takes a
subset), the JVP, vmap, and the op's text form through mjax-opt.
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
from mjax.lax import eigh_tpu
from mjax.passes.registry import PassError

from frontend_util import ON_TPU
from test_eigh_tpu import _inlined_ops, _negdef, _sym

_rng = np.random.default_rng(1254)
JACOBI, QDWH, QR = "JACOBI", "QDWH", "QR"


def _eigh(lib, impl=None, **kw):
    linalg = lib.lax.linalg
    if impl is not None:
        kw["implementation"] = getattr(linalg.EighImplementation, impl)
    return lambda a: linalg.eigh(a, **kw)


# ---- the printed jaxpr --------------------------------------------------------------------
_PRINTED = [
    ((3, 3), {}), ((3, 3), {"impl": JACOBI}), ((3, 3), {"impl": QDWH}),
    ((3, 3), {"impl": QR}), ((4, 4), {"subset_by_index": (1, 3)}),
    ((4, 4), {"subset_by_index": (0, 4), "impl": JACOBI, "lower": False}),
    ((2, 5, 5), {"subset_by_index": (3, 5), "sort_eigenvalues": False,
                 "symmetrize_input": False})]


@pytest.mark.parametrize("shape,kw", _PRINTED)
def test_printed_jaxpr_is_jaxs(shape, kw):
    x = np.zeros(shape, np.float32)
    mine = str(mjax.make_jaxpr(_eigh(mjax, **kw))(x))
    theirs = str(jax.make_jaxpr(_eigh(jax, **kw))(x))
    assert mine == theirs
    assert "subset_by_index=" in mine and "algorithm=" in mine


def test_printed_jaxpr_of_vmap_and_jvp_is_jaxs():
    x = np.zeros((2, 3, 3), np.float32)
    printed, printed_jvp = {}, {}     # (per library)
    for lib in (mjax, jax):
        f = _eigh(lib, JACOBI, subset_by_index=(0, 3))
        printed[lib] = str(lib.make_jaxpr(lib.vmap(f))(x))
        printed_jvp[lib] = str(lib.make_jaxpr(lambda a, t: lib.jvp(f, (a,), (t,)))(x[0], x[0]))
    assert printed[mjax] == printed[jax]
    assert printed_jvp[mjax].count("algorithm=EighImplementation.JACOBI") == 1
    assert re.findall(r"eigh\[[^\]]*\]", printed_jvp[mjax]) == \
        re.findall(r"eigh\[[^\]]*\]", printed_jvp[jax])


# ---- the CPU: JAX's rule and its errors ----------------------------------------------------
@pytest.mark.skipif(ON_TPU, reason="CPU-only: LAPACK's rule; on a TPU JAX computes these")
@pytest.mark.parametrize("kw,message", [
    ({"subset_by_index": (1, 3)}, "subset_by_index not supported on CPU and GPU"),
    ({"impl": QDWH}, "QDWH implementation is only supported on TPU"),
    ({"impl": JACOBI}, "Jacobi implementation is not supported on CPU")])
def test_cpu_raises_jaxs_errors(kw, message):
    x = _sym(4)
    for lib in (jax, mjax):
        f = _eigh(lib, **kw)
        lib.make_jaxpr(f)(x)            # (tracing takes them; lowering refuses)
        with pytest.raises(NotImplementedError, match=message):
            f(x)
        with pytest.raises(NotImplementedError, match=message):
            lib.jit(f)(x)


def test_whole_subset_and_qr_compute_eigh():
    x = _sym(5)
    expected = np.linalg.eigvalsh(x.astype(np.float64))
    for kw in ({"subset_by_index": (0, 5)}, {} if ON_TPU else {"impl": QR}):
        v, w = mjax.jit(_eigh(mjax, **kw))(x)
        tv, tw = jax.jit(_eigh(jax, **kw))(x)
        assert v.shape == tv.shape == (5, 5) and w.shape == tw.shape == (5,)
        np.testing.assert_allclose(np.asarray(w), expected, atol=1e-5)
        np.testing.assert_allclose(np.asarray(w), np.asarray(tw), atol=1e-5)
        assert np.abs(x @ np.asarray(v) - np.asarray(v) * np.asarray(w)).max() < 1e-4


def test_jvp_of_a_partial_eigh_raises_jaxs_error():
    x = _sym(4)
    for lib in (jax, mjax):
        f = _eigh(lib, subset_by_index=(1, 3))
        # (mjax's jvp expands when the jaxpr is printed or lowered: str raises there)
        with pytest.raises(NotImplementedError, match="partial eigen decomposition"):
            str(lib.make_jaxpr(lambda a: lib.jvp(f, (a,), (a,)))(x))
        with pytest.raises(NotImplementedError, match="partial eigen decomposition"):
            lib.jvp(f, (x,), (x,))


def test_jvp_forwards_the_algorithm():
    x = _sym(4)
    f = _eigh(mjax, subset_by_index=(0, 4))
    g = _eigh(jax, subset_by_index=(0, 4))
    t = _sym(4)
    (v, w), (dv, dw) = mjax.jvp(f, (x,), (t,))
    (tv, tw), (tdv, tdw) = jax.jvp(g, (x,), (t,))
    np.testing.assert_allclose(np.asarray(dw), np.asarray(tdw), atol=1e-4)
    np.testing.assert_allclose(np.abs(np.asarray(dv)), np.abs(np.asarray(tdv)), atol=1e-3)


# ---- lowered for a TPU: JAX's module -------------------------------------------------------
def _lowered(lib, f, x):
    return lib.jit(f).trace(x).lower(lowering_platforms=("tpu",)).as_text()


@pytest.mark.parametrize("name,shape,kw,vmapped,eighs,while_loops", [
    # JACOBI is XLA's Jacobi `Eigh` of any size (mjax raised past 256 before)
    ("jacobi_300", (300, 300), {"impl": JACOBI}, False, 1, 0),
    ("jacobi_600_upper", (600, 600), {"impl": JACOBI, "lower": False}, False, 1, 0),
    # (JAX's JACOBI hands the op's subset-shaped results to XLA's `Eigh` as they are)
    ("jacobi_subset", (4, 4), {"impl": JACOBI, "subset_by_index": (1, 3)}, False, 1, 0),
    # QDWH: a subset of a small matrix is the sorted Jacobi `Eigh`, sliced
    ("qdwh_subset_small", (4, 4), {"subset_by_index": (1, 3)}, False, 1, 0),
    ("qdwh_whole_small", (4, 4), {"subset_by_index": (0, 4), "impl": QDWH}, False, 1, 0),
    # past 256: the divide and conquer, its halves outside the subset left alone
    ("qdwh_subset_300", (300, 300), {"subset_by_index": (10, 20),
                                     "sort_eigenvalues": False}, False, None, None),
    ("qdwh_whole_300", (300, 300), {"subset_by_index": (0, 300)}, False, None, None),
    ("vmap_subset_300", (2, 300, 300), {"subset_by_index": (290, 300), "lower": False},
     True, None, None)])
def test_tpu_module_is_jaxs(name, shape, kw, vmapped, eighs, while_loops):
    x = np.zeros(shape, np.float32)
    mine_f, theirs_f = _eigh(mjax, **kw), _eigh(jax, **kw)
    if vmapped:
        mine_f, theirs_f = mjax.vmap(mine_f), jax.vmap(theirs_f)
    mine, theirs = _lowered(mjax, mine_f, x), _lowered(jax, theirs_f, x)
    assert "lapack" not in mine and "@Eigh" in mine
    if eighs is not None:
        assert mine.count("@Eigh") == eighs and mine.count("stablehlo.while") == while_loops
    mine, theirs = _inlined_ops(mine), _inlined_ops(theirs)
    assert not mine - theirs, mine - theirs
    # (JAX's unused Hermitian factor of the top split's polar decomposition aside, as in
    # test_eigh_tpu)
    extra = theirs - mine
    assert all(k.startswith("dot_general") for k in extra) and sum(extra.values()) <= 1, \
        extra
    assert bool(extra) == (shape[-1] > 256 and kw.get("impl") != JACOBI)


def test_tpu_subset_module_has_the_subsets_tests():
    # the subset's two conditions per split (a half is pushed where its places meet the
    # range), which the inlined count above does not see: the whole-range module's two
    # case ops fewer
    x = np.zeros((300, 300), np.float32)
    some = _lowered(mjax, _eigh(mjax, subset_by_index=(10, 20)), x)
    none = _lowered(mjax, _eigh(mjax), x)
    assert some.count("stablehlo.case") == none.count("stablehlo.case") + 2


def test_qr_for_a_tpu_raises_jaxs_error():
    x = np.zeros((4, 4), np.float32)
    for lib in (jax, mjax):
        with pytest.raises(NotImplementedError, match="QR algorithm is not supported on TPU"):
            _lowered(lib, _eigh(lib, QR), x)


# ---- the TPU algorithm with a subset, run on this machine ----------------------------------
def _qdwh(lib_fn, n, termination_size, subset, sort):
    return lambda x: lib_fn(x, termination_size=termination_size, subset_by_index=subset,
                            sort_eigenvalues=sort)


@pytest.mark.parametrize("n,termination_size,subset,sort", [
    (300, 256, (250, 300), True), (300, 256, (0, 37), False), (300, 256, (0, 300), True),
    (40, 1, (5, 12), True), (40, 8, (0, 40), False), (64, 8, (50, 64), True)])
def test_subset_algorithm_is_jaxs(n, termination_size, subset, sort):
    # mjax's algorithm against JAX's own function, both run here (negative definite
    # matrices, or blocks of 1: see test_eigh_tpu's docstring). JAX's own result is not
    # numpy's where a split's half outside the range is left unreduced (its block's
    # first column then read as eigenvalues can sort into the range: (250, 300), (5, 12),
    # (50, 64) here): mjax's is JAX's there too, which is what is checked.
    from jax._src.tpu.linalg import eigh as jax_tpu_eigh
    a = _negdef(n) if termination_size > 1 else _sym(n)
    mine = mjax.jit(_qdwh(eigh_tpu.eigh_qdwh, n, termination_size, subset, sort))(a)
    theirs = jax.jit(_qdwh(jax_tpu_eigh.eigh, n, termination_size, subset, sort))(a)
    d = subset[1] - subset[0]
    assert np.asarray(mine[0]).shape == (d,) and np.asarray(mine[1]).shape == (n, d)
    scale = float(np.abs(np.asarray(theirs[0])).max())
    for x, y, tol in zip(mine, theirs, (2e-5 * scale, 1e-4)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        if termination_size == 256 and not ON_TPU:      # (the same program: same bits)
            assert x.tobytes() == y.tobytes(), np.abs(x - y).max()
        else:
            np.testing.assert_allclose(x, y, atol=tol, rtol=0)


@pytest.mark.parametrize("n,termination_size,subset,sort", [
    (300, 256, (0, 37), True), (64, 8, (0, 10), False), (40, 1, (0, 40), True),
    (20, 32, (3, 9), True), (20, 32, (0, 20), False)])
def test_subset_algorithm_against_numpy(n, termination_size, subset, sort):
    # the range's eigenvalues and vectors where no unreduced half sorts into it: the
    # whole range, the smallest of a negative definite matrix, a matrix no larger than
    # the termination size (the platform's eigh, sorted, sliced; JAX's own asks for
    # JACOBI there, which the CPU refuses)
    a = _negdef(n) if termination_size > 1 else _sym(n)
    w, v = (np.asarray(t) for t in mjax.jit(
        _qdwh(eigh_tpu.eigh_qdwh, n, termination_size, subset, sort))(a))
    expected = np.linalg.eigvalsh(a.astype(np.float64))[subset[0]:subset[1]]
    scale = np.abs(expected).max()
    assert w.shape == expected.shape and v.shape == (n, len(expected))
    if sort or subset != (0, n):
        assert np.all(np.diff(w) >= 0)
    np.testing.assert_allclose(np.sort(w), expected, atol=2e-5 * scale)
    assert np.abs(a @ v - v * w).max() < 2e-5 * scale * n ** 0.5
    assert np.abs(v.T @ v - np.eye(len(expected))).max() < 1e-4


@pytest.mark.parametrize("subset,message", [
    ((3, 3), "empty index range"), ((-1, 2), "non-negative"),
    ((0, 301), "exceeds matrix size")])
def test_subset_errors_are_jaxs(subset, message):
    # (JAX's ValueError, raised while lowering: mjax's lowering pass reports it as a
    # PassError at the op)
    x = np.zeros((300, 300), np.float32)
    for lib, error in ((jax, ValueError), (mjax, (ValueError, PassError))):
        with pytest.raises(error, match=message):
            _lowered(lib, _eigh(lib, subset_by_index=subset), x)


# ---- the op's text form --------------------------------------------------------------------
@pytest.mark.skipif(shutil.which("mjax-opt") is None, reason="mjax-opt is not installed")
def test_the_params_round_trip_through_mjax_opt():
    x = np.zeros((4, 4), np.float32)
    f = _eigh(mjax, JACOBI, subset_by_index=(1, 3), lower=False)
    text = mjax.jit(f).trace(x).lower(lowering_platforms=("tpu",)).as_text(dialect="jaxpr")
    line, = [s for s in text.splitlines() if "jaxpr.eigh" in s]
    assert 'algorithm = "jacobi"' in line and "subset_by_index = array<i64: 1, 3>" in line
    out = subprocess.run(["mjax-opt"], input=text, capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    again, = [s for s in out.stdout.splitlines() if "jaxpr.eigh" in s]
    strip = lambda s: re.sub(r"%[\w#]+", "%", s).strip()
    assert strip(again) == strip(line)
    # the verifier checks the subset's result types and the algorithm's name
    bad = text.replace("array<i64: 1, 3>", "array<i64: 0, 3>")
    assert bad != text
    bad_algorithm = text.replace('"jacobi"', '"svd"')
    for wrong, message in ((bad, "jaxpr.eigh"), (bad_algorithm, "algorithm")):
        out = subprocess.run(["mjax-opt"], input=wrong, capture_output=True, text=True)
        assert out.returncode != 0 and message in out.stderr, out.stderr
