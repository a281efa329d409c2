"""eigh of matrices larger than 256 for a TPU (issue 54): JAX's QDWH spectral divide and
conquer (jax/_src/tpu/linalg/eigh.py), which mjax expands the eigh op into when lowering
it for a TPU (passes/rules/linalg_tpu.py, the algorithm in mjax/lax/eigh_tpu.py), and so
svd of such sizes (its eigh of the polar factor's Hermitian part).

Checked without a chip: (1) the module lowered for a TPU against jax's, op for op with
private functions inlined; (2) the algorithm run here (the platform's eigh as the base
case) against JAX's own function run here, bit for bit, and against numpy. On the CPU
LAPACK sorts the base case's eigenvalues, so the zero padding of a block stays out of
its corner only for negative definite matrices, or with termination_size=1 (as JAX's
own comment says); on a TPU the Jacobi base case keeps them in place.
"""
from __future__ import annotations

import collections
import functools
import re

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mjnp
from mjax.lax import eigh_tpu

from frontend_util import ON_TPU
from test_tpu_lowering import ops_that_matter  # (rootdir-relative, as the suite does)

_rng = np.random.default_rng(54)


def _sym(n, dtype=np.float32):
    x = _rng.standard_normal((n, n))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _rng.standard_normal((n, n))
    return ((x + x.conj().T) / 2).astype(dtype)


def _negdef(n, dtype=np.float32):
    """A negative definite matrix (eigenvalues in about [-4.1, -0.1])."""
    x = _rng.standard_normal((n, n))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _rng.standard_normal((n, n))
    return (-(x @ x.conj().T) / n - 0.1 * np.eye(n)).astype(dtype)


# ---- (1) the module lowered for a TPU ------------------------------------------------------
def _inlined_ops(text: str) -> collections.Counter:
    """test_tpu_lowering's ops that decide the numbers, counted as if every private
    function were inlined at each call (JAX calls one function for each of its jitted
    helpers, jnp.linalg.qr, argsort..., wherever they recur; mjax inlines them)."""
    funcs, name, body = {}, None, []
    for line in text.splitlines():
        m = re.match(r"\s*func\.func (?:public |private )?@([\w.$-]+)", line)
        if m:
            if name:
                funcs[name] = body
            name, body = m.group(1), []
        else:
            body.append(line)
    funcs[name] = body

    @functools.lru_cache(maxsize=None)
    def count(fn):
        found = ops_that_matter("\n".join(funcs[fn]))
        for line in funcs[fn]:
            if "custom_call" not in line:
                for callee in re.findall(r"(?<![\w])(?:func\.)?call @([\w.$-]+)", line):
                    found.update(count(callee))
        return found
    return count("main")


def _lowered(lib, jnp, f, x):
    return lib.jit(f(lib, jnp)).trace(x).lower(lowering_platforms=("tpu",)).as_text()


def _eigh(lib, jnp):
    return jnp.linalg.eigh


def _svd(lib, jnp):
    return lambda a: jnp.linalg.svd(a, full_matrices=False)


def _grad_eigh(lib, jnp):
    return lib.grad(lambda a: (lambda w, v: jnp.sum(w ** 2) + jnp.sum(v[:, 0] ** 2))(
        *jnp.linalg.eigh(a)))


def _vmap_eigh(lib, jnp):
    return lib.vmap(jnp.linalg.eigh)


def _eigh_upper_unsorted(lib, jnp):
    return lambda a: lib.lax.linalg.eigh(a, lower=False, sort_eigenvalues=False)


@pytest.mark.parametrize("name,f,shape,dtype", [
    ("eigh", _eigh, (300, 300), np.float32), ("svd", _svd, (300, 300), np.float32),
    ("eigh", _eigh, (600, 600), np.float32), ("svd", _svd, (600, 600), np.float32),
    ("grad_eigh", _grad_eigh, (300, 300), np.float32),
    ("vmap_eigh", _vmap_eigh, (2, 300, 300), np.float32),
    ("eigh_complex", _eigh, (300, 300), np.complex64),
    ("eigh_upper_unsorted", _eigh_upper_unsorted, (300, 300), np.float32),
    ("svd_tall", _svd, (400, 300), np.float32)])
def test_tpu_module_is_jaxs(name, f, shape, dtype):
    x = np.zeros(shape, dtype)
    mine = _lowered(mjax, mjnp, f, x)
    theirs = _lowered(jax, jjnp, f, x)
    assert "lapack" not in mine and "@Eigh" in mine
    mine, theirs = _inlined_ops(mine), _inlined_ops(theirs)
    assert not mine - theirs, mine - theirs
    # JAX's module also holds the polar factor's Hermitian part h = u^H x of each
    # split's QDWH, unused (XLA deletes it); mjax drops unused ops before lowering: one
    # N x N dot for each size of block that splits (N, and N/1.98 rounded up to 32 above
    # 256), each in a loop over the batch at most
    n = shape[-1]
    splits = [n] + ([320] if n == 600 else [])
    t = "complex<f32>" if np.dtype(dtype).kind == "c" else "f32"
    unused = collections.Counter({
        f"dot_general: %, %, contracting_dims = [1] x [0], precision = [HIGHEST, HIGHEST] "
        f": (tensor<{b}x{b}x{t}>, tensor<{b}x{b}x{t}>) -> tensor<{b}x{b}x{t}>": 1
        for b in splits})
    assert theirs - mine == unused, theirs - mine


def test_eigh_stays_one_op_until_lowered_for_a_tpu():
    # (JAX: eigh_p keeps its JVP and batching rules; its TPU lowering is a lower_fun)
    a = np.stack([_sym(300), _sym(300)])
    f = mjax.vmap(mjax.grad(lambda x: mjnp.sum(mjnp.linalg.eigh(x)[1][:, 0] ** 2)))
    lowered = mjax.jit(f).trace(a).lower(lowering_platforms=("tpu",))
    jaxpr = lowered.as_text(dialect="jaxpr")
    assert '"jaxpr.eigh"' in jaxpr and '"jaxpr.while"' not in jaxpr
    text = lowered.as_text()
    assert "@Eigh" in text and "stablehlo.while" in text and "lapack" not in text


def test_the_inlined_count_sees_calls():
    # (the count can fail: an op in a function called twice counts twice)
    text = """func.func public @main(%a: tensor<2x2xf32>) {
  %0 = call @f(%a) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = func.call @f(%0) : (tensor<2x2xf32>) -> tensor<2x2xf32>
}
func.func private @f(%a: tensor<2x2xf32>) {
  %0 = stablehlo.sort(%a) <{dimension = 0 : i64, is_stable = true}> ({
}"""
    assert sum(_inlined_ops(text).values()) == 2


# ---- (2) the algorithm, run on this machine -------------------------------------------------
@pytest.mark.parametrize("n,termination_size,make,dtype,exact", [
    (300, 256, _negdef, np.float32, True),    # the TPU's own termination size
    (40, 1, _sym, np.float32, False),         # any spectrum, blocks down to 1x1
    (64, 8, _negdef, np.complex64, False)])
def test_eigh_algorithm_is_jaxs(n, termination_size, make, dtype, exact):
    # mjax's algorithm against JAX's own function, both run here. The same program: at
    # the TPU's sizes the same bits on the CPU. Where small blocks recurse in a padded
    # bucket (termination_size < 256, blocks far smaller than their bucket), XLA's CPU
    # compiler rounds JAX's program differently with its context: JAX's own jitted
    # split_spectrum is ~1e-7 off the same function run op by op, which mjax's jitted one
    # matches bit for bit; there the two agree to float32 rounding. (On a TPU, unverified
    # there, both are compared at that tolerance.)
    from jax._src.tpu.linalg import eigh as jax_tpu_eigh
    a = make(n, dtype)
    mine = mjax.jit(lambda x: eigh_tpu.eigh_qdwh(x, termination_size=termination_size))(a)
    theirs = jax.jit(lambda x: jax_tpu_eigh.eigh(x, termination_size=termination_size))(a)
    scale = float(np.abs(np.asarray(theirs[0])).max())
    for x, y, tol in zip(mine, theirs, (1e-5 * scale, 1e-4)):
        x, y = np.asarray(x), np.asarray(y)
        assert x.dtype == y.dtype and x.shape == y.shape
        if exact and not ON_TPU:
            assert x.tobytes() == y.tobytes(), np.abs(x - y).max()
        else:
            np.testing.assert_allclose(x, y, atol=tol, rtol=0)


def test_split_spectrum_is_jaxs_op_by_op():
    # (why the comparison above is not bit for bit everywhere) one split of a small block
    # padded into its bucket, mjax's jitted against JAX's run op by op: the same bits
    from jax._src.tpu.linalg import eigh as jax_tpu_eigh
    v0 = np.linalg.qr(_rng.standard_normal((40, 32)))[0].astype(np.float32)
    split = mjax.jit(lambda h, n, s, v: eigh_tpu._split_spectrum(h, n, s, v))
    for n in (3, 7, 11):
        h = np.zeros((32, 32), np.float32)
        h[:n, :n] = _negdef(n)
        median = np.float32(np.median(np.diag(h)[:n]))
        mine = split(h, np.int32(n), median, v0)
        theirs = jax_tpu_eigh.split_spectrum(h, np.int32(n), median, v0)
        for x, y in zip(mine, theirs):
            if ON_TPU:
                np.testing.assert_allclose(np.asarray(x), np.asarray(y), atol=1e-5)
            else:
                assert np.asarray(x).tobytes() == np.asarray(y).tobytes(), n


@pytest.mark.parametrize("n,termination_size,make,dtype,sort", [
    (300, 256, _negdef, np.float32, True), (300, 256, _negdef, np.float32, False),
    (40, 1, _sym, np.float32, True), (64, 8, _negdef, np.complex64, True)])
def test_eigh_algorithm_against_numpy(n, termination_size, make, dtype, sort):
    a = make(n, dtype)
    w, v = mjax.jit(lambda x: eigh_tpu.eigh_qdwh(
        x, sort_eigenvalues=sort, termination_size=termination_size))(a)
    w, v = np.asarray(w), np.asarray(v)
    assert w.dtype == np.float32 and v.dtype == dtype
    expected = np.linalg.eigvalsh(a.astype(np.complex128 if v.dtype.kind == "c" else
                                           np.float64))
    scale = np.abs(expected).max()
    if sort:
        assert np.all(np.diff(w) >= 0)
    np.testing.assert_allclose(np.sort(w), expected, atol=2e-5 * scale)
    assert np.abs(a @ v - v * w).max() < 2e-5 * scale * n ** 0.5
    assert np.abs(v.conj().T @ v - np.eye(n)).max() < 1e-4


def test_eigh_tpu_takes_a_triangle_and_batches():
    # the op's TPU form: the `lower` (else upper) triangle stands for the matrix, batch
    # axes are a loop; run here on negative definite matrices, as above
    a = np.stack([_negdef(24), _negdef(24)])
    garbage = np.triu(_rng.standard_normal((24, 24)), 1).astype(np.float32)
    for lower, x in ((True, a + garbage), (False, a + garbage.T)):
        v, w = mjax.jit(lambda x: eigh_tpu.eigh_tpu(x, lower=lower, termination_size=4))(x)
        w, v = np.asarray(w), np.asarray(v)
        for k in range(2):
            np.testing.assert_allclose(w[k], np.linalg.eigvalsh(a[k]), atol=1e-5)
            assert np.abs(a[k] @ v[k] - v[k] * w[k]).max() < 1e-4
