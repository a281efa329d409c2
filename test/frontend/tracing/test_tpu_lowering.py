"""What mjax lowers *for a TPU* is what JAX lowers for one (issue 54, items 4 and 5), on
any machine: `jit(f).trace(x).lower(lowering_platforms=("tpu",))` in both, compared as
StableHLO. These are the programs XLA's TPU compiler gets; a different program gives
different bits on the chip, so CI catches the drift without a chip.

The comparison is the multiset of the ops that decide the numbers (custom calls with
their targets and backend_config, dot_generals with precision and types, loops, sorts,
FFTs, random bits, convolutions, windows, Cholesky and triangular solves...), each
with its attributes and types and without SSA names; private function boundaries,
constants, broadcasts and elementwise glue are ignored. For the models of
test_hlo_parity the dot_general signatures are compared as there too.
benchmarks/tpu_linalg_check.py runs the same functions on a chip and compares bits.
"""
from __future__ import annotations

import collections
import re

import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mjnp

from test_hlo_parity import _model  # (rootdir-relative imports, as the suite does)

LIBS = {"mjax": (mjax, mjnp), "jax": (jax, jjnp)}

# Ops whose presence, attributes and types decide what the chip computes. (Not `case`:
# JAX's jnp.diagonal picks its form by a platform_index `case` on a constant, which XLA
# folds.)
MATTER = ("custom_call", "dot_general", "while", "sort", "fft", "rng", "rng_bit_generator",
          "convolution", "reduce_window", "select_and_scatter", "cholesky",
          "triangular_solve", "scatter", "all_reduce")
# An absent precision config is DEFAULT's (StableHLO): JAX spells it out, mjax leaves it.
_DEFAULT_PRECISION = re.compile(
    r",\s*(precision = \[DEFAULT, DEFAULT\]|precision_config = \[#stablehlo<precision "
    r"DEFAULT>, #stablehlo<precision DEFAULT>\])")
_OP = re.compile(r'(?:"stablehlo\.([a-z_]+)"|stablehlo\.([a-z_]+))')


def _normalize(rest: str) -> str:
    rest = _DEFAULT_PRECISION.sub("", rest)
    rest = re.sub(r"%[\w#.:]+", "%", rest)           # SSA names
    rest = re.sub(r"\s+loc\(.*$", "", rest)
    rest = re.sub(r"\(\{\s*$", "", rest)             # a region opens (sort, case, ...)
    return re.sub(r"\s+", " ", rest).strip()


def ops_that_matter(text: str) -> collections.Counter:
    """The multiset of MATTER ops of a StableHLO module, each as `name: attributes and
    types` (a while loop as its name only: the carried state differs with the helper
    functions each library traces)."""
    found = collections.Counter()
    for line in text.splitlines():
        m = _OP.search(line)
        if not m:
            continue
        name = m.group(1) or m.group(2)
        if name not in MATTER:
            continue
        rest = line[m.end():]
        if name == "while":
            found["while"] += 1
        elif name == "custom_call":
            target = re.search(r"@([\w.$-]+)", rest).group(1)
            config = re.search(r'backend_config = ("[^"]*")', rest)
            types = rest[rest.rindex(" : "):] if " : " in rest else ""
            found[f"custom_call @{target} {config.group(1) if config else ''}"
                  f"{_normalize(types)}"] += 1
        else:
            found[f"{name}: {_normalize(rest)}"] += 1
    return found


def _dots(text: str) -> list[str]:
    """test_hlo_parity's dot signatures (dimension numbers and types, no precision)."""
    return sorted(re.sub(r",\s*precision = \[[^\]]*\]", "", line.split("dot_general", 1)[1])
                  .split(",", 2)[2].strip()
                  for line in text.splitlines() if "stablehlo.dot_general" in line)


def lower_for_tpu(lib_name: str, make, args) -> str:
    lib, jnp = LIBS[lib_name]
    return lib.jit(make(lib, jnp)).trace(*args).lower(
        lowering_platforms=("tpu",)).as_text()


# ---- the corpus ----------------------------------------------------------------------------
_rng = np.random.default_rng(0)


def _mat(m, n=None, dtype=np.float32):
    x = _rng.standard_normal((m, n or m))
    if np.dtype(dtype).kind == "c":
        x = x + 1j * _rng.standard_normal((m, n or m))
    return x.astype(dtype)


def _spd(n):
    x = _mat(n)
    return (x @ x.T + n * np.eye(n)).astype(np.float32)


def _linalg(name):
    return lambda lib, jnp: getattr(jnp.linalg, name)


def _lax_linalg(name, **kw):
    return lambda lib, jnp: (lambda *a: getattr(lib.lax.linalg, name)(*a, **kw))


def _matmul(**kw):
    return lambda lib, jnp: (lambda a, b: jnp.matmul(a, b, **kw))


def _dot_pref(lib, jnp):
    return lambda a, b: lib.lax.dot_general(a, b, (((1,), (0,)), ((), ())),
                                            preferred_element_type=np.float32)


def _normal(lib, jnp):
    return lambda x: x + lib.random.normal(lib.random.PRNGKey(0), x.shape)


def _geqrf(lib):
    # (jax.lax.linalg does not export geqrf in 0.10.2; its primitive's function does)
    if lib is jax:
        from jax._src.lax import linalg as jax_linalg
        return jax_linalg.geqrf
    return lib.lax.linalg.geqrf


def _tsolve(**kw):
    return lambda lib, jnp: (lambda a, b: lib.lax.linalg.triangular_solve(a, b, **kw))


def _max_pool_grad(padding):
    return lambda lib, jnp: lib.grad(lambda x: jnp.sum(lib.lax.reduce_window(
        x * x, -np.inf, lib.lax.max, (1, 2, 3), (1, 2, 1), padding)))


CASES = {
    "lu_4x4": (_lax_linalg("lu"), (_mat(4),)),
    "lu_6x4": (_lax_linalg("lu"), (_mat(6, 4),)),
    "lu_batched": (_lax_linalg("lu"), (np.stack([_mat(3), _mat(3)]),)),
    "qr_reduced_6x4": (lambda lib, jnp: lambda a: jnp.linalg.qr(a), (_mat(6, 4),)),
    "qr_complete_6x4": (lambda lib, jnp: lambda a: jnp.linalg.qr(a, mode="complete"),
                        (_mat(6, 4),)),
    "qr_complete_4x4": (lambda lib, jnp: lambda a: jnp.linalg.qr(a, mode="complete"),
                        (_mat(4),)),
    "qr_reduced_4x6": (lambda lib, jnp: lambda a: jnp.linalg.qr(a), (_mat(4, 6),)),
    "qr_r_only": (lambda lib, jnp: lambda a: jnp.linalg.qr(a, mode="r"), (_mat(5, 3),)),
    "geqrf": (lambda lib, jnp: _geqrf(lib), (_mat(5, 3),)),
    "householder_product": (lambda lib, jnp: lambda a: lib.lax.linalg.householder_product(
        *_geqrf(lib)(a)), (_mat(5, 3),)),
    "eigh_4": (_linalg("eigh"), (_mat(4),)),
    "eigh_upper": (lambda lib, jnp: lambda a: jnp.linalg.eigh(a, UPLO="U"), (_mat(5),)),
    "eigh_unsorted": (_lax_linalg("eigh", sort_eigenvalues=False), (_mat(5),)),
    "eigh_upper_unsorted": (_lax_linalg("eigh", lower=False, sort_eigenvalues=False,
                                        symmetrize_input=False), (_mat(5),)),
    "eigh_complex": (_linalg("eigh"), (_mat(4, dtype=np.complex64),)),
    "eigh_batched": (_linalg("eigh"), (np.stack([_mat(3), _mat(3)]),)),
    "eigvalsh": (_linalg("eigvalsh"), (_mat(6),)),
    "eigh_256": (_linalg("eigh"), (_mat(256),)),      # the largest for XLA's Jacobi Eigh
    "svd_4x4": (_linalg("svd"), (_mat(4),)),
    "svd_6x4_full": (_linalg("svd"), (_mat(6, 4),)),
    "svd_6x4_reduced": (lambda lib, jnp: lambda a: jnp.linalg.svd(a, full_matrices=False),
                        (_mat(6, 4),)),
    "svd_3x5": (lambda lib, jnp: lambda a: jnp.linalg.svd(a, full_matrices=False),
                (_mat(3, 5),)),
    "svd_5x4_reduced": (lambda lib, jnp: lambda a: jnp.linalg.svd(a, full_matrices=False),
                        (_mat(5, 4),)),
    "svdvals": (lambda lib, jnp: lambda a: jnp.linalg.svd(a, compute_uv=False),
                (_mat(6, 4),)),
    "svd_complex": (lambda lib, jnp: lambda a: jnp.linalg.svd(a, full_matrices=False),
                    (_mat(4, 3, np.complex64),)),
    "svd_batched": (lambda lib, jnp: lambda a: jnp.linalg.svd(a, full_matrices=False),
                    (np.stack([_mat(4, 3), _mat(4, 3)]),)),
    "svd_256": (lambda lib, jnp: lambda a: jnp.linalg.svd(a, compute_uv=False),
                (_mat(300, 256),)),
    "cholesky": (_linalg("cholesky"), (_spd(4),)),
    "triangular_solve_left_lower": (_tsolve(left_side=True, lower=True),
                                    (_spd(4), _mat(4, 3))),
    "triangular_solve_right_upper_t": (_tsolve(left_side=False, lower=False,
                                               transpose_a=True), (_spd(4), _mat(3, 4))),
    "triangular_solve_conj_t": (_tsolve(left_side=True, lower=True, transpose_a=True,
                                        conjugate_a=True), (_spd(4), _mat(4, 3))),
    "triangular_solve_unit": (_tsolve(left_side=True, lower=True, unit_diagonal=True),
                              (_spd(4), _mat(4, 3))),
    "solve": (_linalg("solve"), (_mat(4), _mat(4, 2))),
    "inv": (_linalg("inv"), (_mat(4),)),
    "det": (_linalg("det"), (_mat(4),)),
    "slogdet": (_linalg("slogdet"), (_mat(4),)),
    "matmul_default": (_matmul(), (_mat(8, 16), _mat(16, 4))),
    "matmul_highest": (_matmul(precision="highest"), (_mat(8, 16), _mat(16, 4))),
    "dot_preferred_f32": (_dot_pref, (_mat(8, 16, np.float16), _mat(16, 4, np.float16))),
    "matmul_bf16": (_matmul(), (_mat(8, 16).astype(jjnp.bfloat16),
                                _mat(16, 4).astype(jjnp.bfloat16))),
    "fft": (lambda lib, jnp: jnp.fft.fft, (_mat(4, 8, np.complex64),)),
    "rfft": (lambda lib, jnp: jnp.fft.rfft, (_mat(4, 8),)),
    "irfft2": (lambda lib, jnp: jnp.fft.irfft2, (_mat(4, 8, np.complex64),)),
    "sort": (lambda lib, jnp: jnp.sort, (_mat(4, 8),)),
    "argsort": (lambda lib, jnp: jnp.argsort, (_mat(4, 8),)),
    "normal": (_normal, (np.zeros((3, 5), np.float32),)),
    "lu_bf16": (_lax_linalg("lu"), (_mat(4).astype(jjnp.bfloat16),)),
    "eigh_bf16": (_linalg("eigh"), (_mat(4).astype(jjnp.bfloat16),)),
    "cholesky_bf16": (_linalg("cholesky"), (_spd(4).astype(jjnp.bfloat16),)),
    # derivatives: JAX's rules multiply at HIGHEST where they say so, permute and take
    # diagonals by gathers
    "grad_lu": (lambda lib, jnp: lib.grad(lambda a: jnp.sum(lib.lax.linalg.lu(a)[0] ** 2)),
                (_mat(4),)),
    "grad_lu_wide": (lambda lib, jnp: lib.grad(
        lambda a: jnp.sum(lib.lax.linalg.lu(a)[0] ** 2)), (_mat(3, 5),)),
    "grad_qr": (lambda lib, jnp: lib.grad(
        lambda a: (lambda q, r: jnp.sum(q) + jnp.sum(r ** 2))(*jnp.linalg.qr(a))),
                (_mat(5, 3),)),
    "grad_eigh": (lambda lib, jnp: lib.grad(
        lambda a: (lambda w, v: jnp.sum(w) + jnp.sum(v[:, 0] ** 2))(*jnp.linalg.eigh(a))),
                  (_mat(4),)),
    "jvp_eigh_unsymmetrized": (lambda lib, jnp: lambda a: lib.jvp(
        lambda x: lib.lax.linalg.eigh(x, symmetrize_input=False), (a,), (a,)), (_mat(4),)),
    "grad_eigvalsh_batched": (lambda lib, jnp: lib.grad(
        lambda a: jnp.sum(jnp.linalg.eigvalsh(a) ** 2)), (np.stack([_mat(3), _mat(3)]),)),
    "grad_cholesky": (lambda lib, jnp: lib.grad(lambda a: jnp.sum(jnp.linalg.cholesky(a))),
                      (_spd(4),)),
    "grad_triangular_solve": (lambda lib, jnp: lib.grad(lambda a: jnp.sum(
        lib.lax.linalg.triangular_solve(a, jnp.ones((4, 3)), left_side=True, lower=True))),
                              (_spd(4),)),
    "grad_triangular_solve_right_t": (lambda lib, jnp: lib.grad(lambda a: jnp.sum(
        lib.lax.linalg.triangular_solve(a, jnp.ones((3, 4)), left_side=False, lower=False,
                                        transpose_a=True))), (_spd(4),)),
    # svd keeps its own JVP (JAX's TPU lowering expands the algorithm only when lowering)
    "grad_svdvals": (lambda lib, jnp: lib.grad(
        lambda a: jnp.sum(jnp.linalg.svd(a, compute_uv=False))), (_mat(4),)),
    "grad_svd": (lambda lib, jnp: lib.grad(
        lambda a: (lambda u, s, vh: jnp.sum(u[:, 0] ** 2) + jnp.sum(s) + jnp.sum(vh[0]))(
            *jnp.linalg.svd(a, full_matrices=False))), (_mat(5, 3),)),
    "grad_svd_batched": (lambda lib, jnp: lib.grad(
        lambda a: jnp.sum(jnp.linalg.svd(a, compute_uv=False) ** 2)),
                         (np.stack([_mat(3), _mat(3)]),)),
    "jvp_svd_wide": (lambda lib, jnp: lambda a: lib.jvp(
        lambda x: jnp.linalg.svd(x, full_matrices=False), (a,), (a,)), (_mat(3, 5),)),
    # a padded max pool's gradient: on a TPU JAX's select_and_scatter pads (on the CPU
    # and GPUs the operand is padded first)
    "grad_max_pool_same": (_max_pool_grad("SAME"), (_mat(4, 6).reshape(2, 2, 6),)),
    "grad_max_pool_valid": (_max_pool_grad("VALID"), (_mat(4, 6).reshape(2, 2, 6),)),
}
for _name in ("transformer", "cnn", "rnn"):
    _make, _args = _model(_name)
    CASES[f"model_{_name}"] = (_make, _args)

# Past XLA's Jacobi eigh (256): JAX's QDWH spectral divide and conquer, which calls its
# jitted helpers (qr, argsort, norm) as shared private functions; compared op for op with
# them inlined in test/frontend/lax/test_eigh_tpu.py.
QDWH_EIGH = {
    "eigh_257": (_linalg("eigh"), (_mat(257),)),
    "svd_257": (lambda lib, jnp: lambda a: jnp.linalg.svd(a, compute_uv=False),
                (_mat(260, 257),)),                  # (its eigh of a 257x257 matrix)
}

# Differences that do not change what the chip computes, each with its reason and the
# patterns every differing entry must match. They must show (a fixed one is taken off),
# except those in MAY_VANISH.
KNOWN = {
    # JAX's jnp.linalg.qr(mode="r") and svd(compute_uv=False) of a tall matrix still build
    # Q, unused, which XLA deletes; mjax drops the unused op before lowering.
    "qr_r_only": ("an unused Q", [r"jax only: +custom_call @ProductOfElementary"]),
    "svdvals": ("an unused Q", [r"jax only: +custom_call @ProductOfElementary"]),
    "svd_256": ("an unused Q", [r"jax only: +custom_call @ProductOfElementary"]),
    # u @ diag(+-1) in the SVD's rank-deficiency correction, a float32 x int32 dot: JAX's
    # TPU dot lowering keeps mixed float/int operands as they are (jax/_src/lax/lax.py
    # _handle_dot_precision); mjax's (passes/rules/structural.py) converts both to the
    # result type on every platform, as JAX does on CPU and GPU. (Exact for +-1.)
    **{name: ("the sign matrix's dtype", [
        r"(mjax|jax) only: +dot_general: .*precision = \[HIGHEST, HIGHEST\] : "
        r"\(tensor<(\d+)x\2x(f32|complex<f32>)>, tensor<\2x\2x(f32|i32|complex<f32>)>\)"])
       for name in ("svd_4x4", "svd_6x4_full", "svd_6x4_reduced", "svd_3x5",
                    "svd_5x4_reduced", "grad_svdvals", "grad_svd", "jvp_svd_wide")},
    # ...and, batched, JAX's vmap writes the identity under [sqrt(c) u] by a scatter
    # (a batched dynamic_update_slice); mjax keeps the dynamic_update_slice.
    **{name: ("the sign matrix's dtype and the batched update", [
        r"(mjax|jax) only: +dot_general: .*precision = \[HIGHEST, HIGHEST\] : "
        r"\(tensor<2x3x3xf32>, tensor<2x3x3x(f32|i32)>\)",
        r"jax only: +scatter: .*update_window_dims = \[0, 1, 2\]"])
       for name in ("svd_batched", "grad_svd_batched")},
    # The cross-entropy gradient's scatter-add: JAX writes batching dims, mjax iotas in
    # the indices (the same updates; not a linalg lowering).
    "model_transformer": ("the scatter's batch form", [r"(mjax|jax) only: +scatter: "]),
}
# (the scatter's batch form and the TPU's mixed dot are being brought to JAX's in the
# gather/scatter and dot rules)
MAY_VANISH = {"model_transformer", "svd_4x4", "svd_6x4_full", "svd_6x4_reduced", "svd_3x5",
              "svd_5x4_reduced", "grad_svdvals", "grad_svd", "jvp_svd_wide"}
# JAX has no TPU rule for these: both raise.
NO_TPU_RULE = {
    "eig": (lambda lib, jnp: lambda a: jnp.linalg.eig(a), (_mat(4),)),
    "schur": (lambda lib, jnp: lambda a: lib.lax.linalg.schur(a), (_mat(4),)),
    "hessenberg": (lambda lib, jnp: lambda a: lib.lax.linalg.hessenberg(a), (_mat(4),)),
    "tridiagonal": (lambda lib, jnp: lambda a: lib.lax.linalg.tridiagonal(a), (_mat(4),)),
}


def _compare(name):
    make, args = CASES[name]
    mine, theirs = (lower_for_tpu(lib, make, args) for lib in ("mjax", "jax"))
    return ops_that_matter(mine), ops_that_matter(theirs), mine, theirs


def _report(mine, theirs) -> str:
    only_mine, only_theirs = mine - theirs, theirs - mine
    lines = [f"  mjax only: {k} x{v}" for k, v in sorted(only_mine.items())]
    lines += [f"  jax only:  {k} x{v}" for k, v in sorted(only_theirs.items())]
    return "\n".join(lines)


def _check(name) -> list[str]:
    """What makes `name` lower for the TPU unlike JAX, beyond its KNOWN difference."""
    mine, theirs, mine_text, theirs_text = _compare(name)
    problems = []
    if name.startswith("model_") and _dots(mine_text) != _dots(theirs_text):
        problems.append(f"{name}: dot_general signatures differ")
    lines = _report(mine, theirs).splitlines()
    if name not in KNOWN:
        return problems + [f"{name}:{line}" for line in lines]
    reason, patterns = KNOWN[name]
    if not lines and name not in MAY_VANISH:
        problems.append(f"{name} now lowers as JAX does ({reason}): take it off KNOWN")
    return problems + [f"{name} (beyond {reason}):{line}" for line in lines
                       if not any(re.search(p, line) for p in patterns)]


def test_tpu_lowering_matches_jax():
    # (one test over the whole corpus, so that every tier runs every case; 10 s)
    problems = [p for name in sorted(CASES) for p in _check(name)]
    assert not problems, "lowered for the TPU unlike JAX:\n" + "\n".join(problems)


def test_the_comparison_sees_differences():
    # (the test can fail: a different precision, custom call target or loop shows)
    a = ops_that_matter('%0 = stablehlo.dot_general %a, %b, contracting_dims = [1] x [0], '
                        'precision = [HIGHEST, HIGHEST] : (tensor<2x2xf32>, '
                        'tensor<2x2xf32>) -> tensor<2x2xf32>')
    b = ops_that_matter('%7 = stablehlo.dot_general %x, %y, contracting_dims = [1] x [0], '
                        'precision = [DEFAULT, DEFAULT] : (tensor<2x2xf32>, '
                        'tensor<2x2xf32>) -> tensor<2x2xf32>')
    assert a != b and sum(a.values()) == sum(b.values()) == 1
    c = ops_that_matter('%0:2 = stablehlo.custom_call @Eigh(%1) {backend_config = '
                        '"1,1,100,1e-6"} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, '
                        'tensor<4xf32>)')
    d = ops_that_matter('%0:2 = stablehlo.custom_call @Eigh(%9) {backend_config = '
                        '"1,0,100,1e-6"} : (tensor<4x4xf32>) -> (tensor<4x4xf32>, '
                        'tensor<4xf32>)')
    assert c != d and list(c) == ['custom_call @Eigh "1,1,100,1e-6": (tensor<4x4xf32>) -> '
                                  '(tensor<4x4xf32>, tensor<4xf32>)']


def test_no_lapack_for_a_tpu():
    for name, (make, args) in CASES.items():
        if name.startswith(("lu", "qr", "geqrf", "householder", "eigh", "solve", "inv",
                            "det", "slogdet", "cholesky", "triangular")):
            text = lower_for_tpu("mjax", make, args)
            assert "lapack_" not in text and "solver_" not in text, name


@pytest.mark.parametrize("name", sorted(QDWH_EIGH))
def test_eigh_past_jacobi_lowers_for_a_tpu(name):
    # (issue 54: these raised NotImplementedError) XLA's Jacobi Eigh for the 256x256
    # blocks, QDWH's QRs and Cholesky factorizations, no LAPACK
    make, args = QDWH_EIGH[name]
    text = lower_for_tpu("mjax", make, args)
    assert '@Eigh' in text and "@Qr" in text and "stablehlo.cholesky" in text
    assert "lapack" not in text and "solver_" not in text


@pytest.mark.parametrize("name", sorted(NO_TPU_RULE))
def test_no_tpu_rule_as_in_jax(name):
    make, args = NO_TPU_RULE[name]
    prim = name
    with pytest.raises(NotImplementedError,
                       match=f"MLIR translation rule for primitive '{prim}' not found "
                             f"for platform tpu"):
        lower_for_tpu("jax", make, args)
    with pytest.raises(NotImplementedError,
                       match=f"MLIR translation rule for primitive '{prim}' not found "
                             f"for platform tpu"):
        lower_for_tpu("mjax", make, args)


def test_cpu_lowering_keeps_lapack():
    # (lowering for the TPU leaves the CPU's lowering as it was)
    make, args = CASES["lu_4x4"]
    lib, jnp = LIBS["mjax"]
    text = lib.jit(make(lib, jnp)).trace(*args).lower(lowering_platforms=("cpu",)).as_text()
    assert "lapack_sgetrf_ffi" in text


@pytest.mark.parametrize("shape,dtype", [((6, 4), np.float32), ((3, 5), np.float32),
                                         ((5, 3), np.complex64)])
def test_tpu_svd_algorithm_is_jaxs_bit_for_bit(shape, dtype):
    # The SVD mjax's svd expands into when lowered for a TPU, run here on the CPU (its
    # QRs and eigh by LAPACK), against JAX's own TPU SVD function run on the CPU: the
    # same bits, so the program is JAX's op for op, elementwise glue included.
    from jax._src.tpu.linalg import svd as jax_tpu_svd
    from mjax.lax import linalg_tpu
    a = _mat(*shape, dtype=dtype)
    for full, uv in ((False, True), (True, True), (False, False)):
        mine = mjax.jit(lambda x: linalg_tpu.svd_tpu(x, full_matrices=full, compute_uv=uv))(a)
        theirs = jax.jit(lambda x: jax_tpu_svd.svd(x, full_matrices=full,
                                                   compute_uv=uv))(a)
        mine, theirs = ([np.asarray(v) for v in (t if uv else [t])] for t in (mine, theirs))
        for x, y in zip(mine, theirs):
            assert x.tobytes() == y.tobytes(), (shape, full, uv, np.abs(x - y).max())


@pytest.mark.parametrize("shape,dtype,kw", [((8, 6), np.float32, {}),
                                            ((7, 3), np.complex64, {"max_iterations": 2})])
def test_qdwh_is_jaxs_bit_for_bit(shape, dtype, kw):
    # lax.linalg.qdwh is the QDWH of JAX's TPU SVD (JAX's own on every platform)
    a = _mat(*shape, dtype=dtype)
    for x, y in zip(mjax.lax.linalg.qdwh(a, **kw), jax.lax.linalg.qdwh(a, **kw)):
        assert np.asarray(x).tobytes() == np.asarray(y).tobytes()


def test_svd_stays_one_op_until_lowered_for_a_tpu():
    # (JAX: svd_p keeps its JVP and batching rules; its TPU lowering is a lower_fun) The
    # jaxpr handed to lowering still holds jaxpr.svd, also under grad and vmap, and the
    # StableHLO holds the algorithm (XLA's Eigh, loops), no LAPACK.
    a = np.stack([_mat(4), _mat(4)])
    f = mjax.vmap(mjax.grad(lambda x: mjnp.sum(mjnp.linalg.svd(x)[0][:, 0] ** 2)))
    lowered = mjax.jit(f).trace(a).lower(lowering_platforms=("tpu",))
    jaxpr = lowered.as_text(dialect="jaxpr")
    assert '"jaxpr.svd"' in jaxpr and '"jaxpr.while"' not in jaxpr
    text = lowered.as_text()
    assert "@Eigh" in text and "stablehlo.while" in text and "lapack" not in text


def _approx_top_k_calls(text: str) -> list[str]:
    """The ApproxTopK custom calls of a module with their comparators' bodies, SSA names
    and the comparators' visibility aside."""
    calls = [re.sub(r"%[\w#:]+", "%", line.strip()) for line in text.splitlines()
             if "ApproxTopK" in line or re.search(r"compare +[GL]T, %\w+, %\w+ :", line)]
    return sorted(calls)


@pytest.mark.parametrize("fn,kw,shape", [
    ("approx_max_k", dict(k=5), (4, 50)),
    ("approx_min_k", dict(k=3, reduction_dimension=0), (4, 50)),
    ("approx_max_k", dict(k=4, recall_target=0.5, aggregate_to_topk=False), (4, 50)),
    ("approx_min_k", dict(k=2, reduction_input_size_override=60), (2, 3, 50))])
def test_approx_top_k_for_a_tpu_is_xlas_approx_top_k(fn, kw, shape):
    # On a TPU JAX's approx_max_k/approx_min_k are XLA's approximate ApproxTopK (other
    # entries than an exact top_k), with their backend_config; mjax's too, also under grad
    # and vmap. (On the CPU both are exact.)
    x = _rng.standard_normal(shape).astype(np.float32)
    for make in (lambda lib, jnp: lambda x: getattr(lib.lax, fn)(x, **kw),
                 lambda lib, jnp: lib.grad(lambda x: jnp.sum(getattr(lib.lax, fn)(x, **kw)[0])),
                 lambda lib, jnp: lib.vmap(lambda x: getattr(lib.lax, fn)(x, **kw))):
        mine, theirs = (lower_for_tpu(lib, make, (x,)) for lib in ("mjax", "jax"))
        assert "ApproxTopK" in mine and "chlo.top_k" not in mine
        assert _approx_top_k_calls(mine) == _approx_top_k_calls(theirs)
        assert ops_that_matter(mine) == ops_that_matter(theirs)


def test_tridiagonal_solve_for_a_tpu_is_a_sweep_as_jaxs():
    # JAX has no TPU kernel for tridiagonal_solve: its generic lowering, a Thomas sweep of
    # plain ops, and so mjax's (a LAPACK gtsv call there would abort the chip's compile).
    dl, d, du = (_rng.standard_normal(5).astype(np.float32) for _ in range(3))
    b = _rng.standard_normal((5, 2)).astype(np.float32)
    for make in (lambda lib, jnp: lib.lax.linalg.tridiagonal_solve,
                 lambda lib, jnp: lib.grad(lambda *a: jnp.sum(
                     lib.lax.linalg.tridiagonal_solve(*a) ** 2), argnums=(0, 1, 2, 3))):
        mine, theirs = (lower_for_tpu(lib, make, (dl, d + 4, du, b)) for lib in ("mjax", "jax"))
        assert "custom_call" not in theirs
        assert "custom_call" not in mine and "lapack" not in mine
