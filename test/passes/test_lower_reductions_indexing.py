"""Reductions, cumulative reductions, argmin/argmax, sort, dynamic slicing, gather and
scatter: each op lowered with --jaxpr-to-stablehlo and run by XLA, checked against NumPy
(and, for gather/scatter modes and sort order, JAX's lax as an oracle). Bad operands raise
InferError with messages that name the op, shapes and dtypes.
"""
from __future__ import annotations

import itertools
import os

import ml_dtypes
import numpy as np
import pytest

from op_runner import op_module, run_op  # noqa: E402  (test/ is on sys.path via conftest)

from mjax.dialect import InferError, ShapedArray
from mjax.dialect.ops.indexing import gather_shape

ON_TPU = os.environ.get("MJAX_TEST_TPU", "") not in ("", "0")

F16, BF16 = np.float16, ml_dtypes.bfloat16
F32, F64, C64 = np.float32, np.float64, np.complex64
I8, I32, I64 = np.int8, np.int32, np.int64
U8, U32 = np.uint8, np.uint32
BOOL = np.bool_

RNG = np.random.default_rng(0)


def run1(op, *args, **params) -> np.ndarray:
    outs = run_op(op, *args, **params)
    assert len(outs) == 1, f"{op}: expected 1 result, got {len(outs)}"
    return outs[0]


def assert_same(got, expected, *, rtol=0.0, atol=0.0):
    """Equal dtype, shape and values (NaNs in the same places)."""
    expected = np.asarray(expected)
    assert got.dtype == expected.dtype, (got.dtype, expected.dtype)
    assert got.shape == expected.shape, (got.shape, expected.shape)
    if rtol or atol:
        np.testing.assert_allclose(got.astype(np.float64) if got.dtype == BF16 else got,
                                   expected.astype(np.float64) if got.dtype == BF16
                                   else expected, rtol=rtol, atol=atol)
    else:
        np.testing.assert_array_equal(got, expected)


def sample(shape, dtype, lo=-4, hi=5):
    """Random values of dtype: small integers (exact in every dtype), or bools."""
    if dtype == BOOL:
        return RNG.random(shape) < 0.5
    if np.dtype(dtype).kind == "u":
        lo = 0
    vals = RNG.integers(lo, hi, size=shape)
    if np.dtype(dtype).kind == "c":
        return (vals + 1j * RNG.integers(lo, hi, size=shape)).astype(dtype)
    return vals.astype(dtype)


def infer_error(op, avals, **params) -> str:
    with pytest.raises(InferError) as e:
        op_module(op, avals, **params)
    return str(e.value)


# =====================================================================================
# reduce_*
# =====================================================================================
def _np_reduce(op, x, axes):
    if op == "reduce_sum":
        return np.sum(x, axis=axes, dtype=x.dtype)
    if op == "reduce_prod":
        return np.prod(x, axis=axes, dtype=x.dtype)
    ufunc = {"reduce_max": np.maximum, "reduce_min": np.minimum,
             "reduce_and": np.bitwise_and if x.dtype != BOOL else np.logical_and,
             "reduce_or": np.bitwise_or if x.dtype != BOOL else np.logical_or,
             "reduce_xor": np.bitwise_xor if x.dtype != BOOL else np.logical_xor}[op]
    return ufunc.reduce(x, axis=axes).astype(x.dtype)


REDUCE_CASES = [
    (op, dtype, axes)
    for op, dtypes in [("reduce_sum", (F32, F64, I32, U8, C64)),
                       ("reduce_prod", (F32, I32, I8, C64)),
                       ("reduce_max", (F32, F16, BF16, I32, U32, BOOL)),
                       ("reduce_min", (F32, F64, I8, U8, BOOL)),
                       ("reduce_and", (BOOL, I32, U8)),
                       ("reduce_or", (BOOL, I8, U32)),
                       ("reduce_xor", (BOOL, I32))]
    for dtype in dtypes
    for axes in [(0,), (1, 2), (0, 1, 2), ()]
]


@pytest.mark.parametrize("op,dtype,axes", REDUCE_CASES,
                         ids=[f"{o}-{np.dtype(d).name}-{a}" for o, d, a in REDUCE_CASES])
def test_reduce(op, dtype, axes):
    lo, hi = (-2, 3) if op == "reduce_prod" else (-50, 50)
    x = sample((3, 4, 5), dtype, lo, hi)
    got = run1(op, x, axes=axes)
    expected = _np_reduce(op, x.astype(F32) if dtype in (BF16,) else x, axes)
    assert_same(got, np.asarray(expected).astype(dtype),
                rtol=1e-6 if dtype in (F32, C64) and op == "reduce_sum" else 0.0)


@pytest.mark.parametrize("op,dtype,expected", [
    ("reduce_sum", F32, 0.0), ("reduce_prod", I32, 1), ("reduce_max", F32, -np.inf),
    ("reduce_min", F32, np.inf), ("reduce_max", I8, -128), ("reduce_min", U8, 255),
    ("reduce_and", I32, -1), ("reduce_and", BOOL, True), ("reduce_or", BOOL, False),
    ("reduce_max", BOOL, False), ("reduce_min", BOOL, True),
    ("reduce_max", ml_dtypes.float8_e4m3fn, -448.0),  # no inf: the lowest finite value
])
def test_reduce_empty_gives_identity(op, dtype, expected):
    got = run1(op, np.zeros((0, 3), dtype), axes=(0,))
    assert_same(got, np.full((3,), expected, dtype))


def test_reduce_max_min_propagate_nan():
    x = np.array([[1.0, np.nan, 3.0], [np.inf, -1.0, -np.inf]], F32)
    assert_same(run1("reduce_max", x, axes=(1,)), np.array([np.nan, np.inf], F32))
    assert_same(run1("reduce_min", x, axes=(1,)), np.array([np.nan, -np.inf], F32))


def test_reduce_max_min_complex_lexicographic():
    x = np.array([[1 + 2j, 3 + 1j, 3 + 5j, -1j], [-2 - 1j, -2 - 3j, -5 + 9j, -2 + 0j]], C64)
    # NumPy orders complex numbers lexicographically, as JAX does.
    assert_same(run1("reduce_max", x, axes=(1,)), np.max(x, axis=1))
    assert_same(run1("reduce_min", x, axes=(1,)), np.min(x, axis=1))


# =====================================================================================
# argmin / argmax
# =====================================================================================
ARG_CASES = [(op, dtype, index_dtype, axis)
             for op in ("argmax", "argmin")
             for dtype, index_dtype in [(F32, I32), (F64, I64), (I32, I32), (U8, U8),
                                        (BOOL, I32), (BF16, I32)]
             for axis in (0, 2)]


@pytest.mark.parametrize("op,dtype,index_dtype,axis", ARG_CASES,
                         ids=[f"{o}-{np.dtype(d).name}-{np.dtype(i).name}-ax{a}"
                              for o, d, i, a in ARG_CASES])
def test_argminmax(op, dtype, index_dtype, axis):
    # Few distinct values, so ties are common: the smallest index must win.
    x = sample((4, 3, 6), dtype, -2, 3)
    got = run1(op, x, axes=(axis,), index_dtype=index_dtype)
    ref = np.argmax if op == "argmax" else np.argmin
    assert_same(got, ref(x.astype(F32) if dtype == BF16 else x, axis=axis).astype(index_dtype))


@pytest.mark.parametrize("op", ["argmax", "argmin"])
def test_argminmax_nan_and_infinities(op):
    nan, inf = np.nan, np.inf
    x = np.array([[1.0, nan, 3.0, nan],     # first NaN wins
                  [-inf, -inf, -inf, -inf],  # all the same: index 0
                  [inf, 2.0, inf, -inf],
                  [0.0, -0.0, 5.0, 5.0],     # 0.0 == -0.0: a tie
                  [nan, nan, nan, nan]], F32)
    got = run1(op, x, axes=(1,), index_dtype=I32)
    ref = np.argmax if op == "argmax" else np.argmin  # NumPy: first NaN wins too
    assert_same(got, ref(x, axis=1).astype(I32))


# =====================================================================================
# cumulative reductions
# =====================================================================================
def _np_cumulative(op, x, axis, reverse):
    fn = {"cumsum": lambda v: np.cumsum(v, axis=axis, dtype=x.dtype),
          "cumprod": lambda v: np.cumprod(v, axis=axis, dtype=x.dtype),
          "cummax": lambda v: np.maximum.accumulate(v, axis=axis),
          "cummin": lambda v: np.minimum.accumulate(v, axis=axis),
          "cumlogsumexp": lambda v: np.logaddexp.accumulate(v, axis=axis)}[op]
    if reverse:
        return np.flip(fn(np.flip(x, axis)), axis)
    return fn(x)


CUM_CASES = [(op, dtype, axis, reverse)
             for op, dtypes in [("cumsum", (F32, I32, U8, C64)), ("cumprod", (F64, I32)),
                                ("cummax", (F32, I8, C64)), ("cummin", (F64, U32)),
                                ("cumlogsumexp", (F32, F64))]
             for dtype in dtypes
             for axis, reverse in [(0, False), (1, True), (2, False), (2, True)]]


@pytest.mark.parametrize("op,dtype,axis,reverse", CUM_CASES,
                         ids=[f"{o}-{np.dtype(d).name}-ax{a}-{'rev' if r else 'fwd'}"
                              for o, d, a, r in CUM_CASES])
def test_cumulative(op, dtype, axis, reverse):
    lo, hi = (-2, 3) if op == "cumprod" else (-9, 10)
    x = sample((3, 4, 5), dtype, lo, hi)
    got = run1(op, x, axis=axis, reverse=reverse)
    inexact = np.dtype(dtype).kind in "fc"
    # (a TPU has no float64 unit: XLA computes float64 there in pairs of float32, and its
    # log and exp of those pairs are off by up to about 1e-8 relative)
    f64_rtol = 1e-8 if ON_TPU and op == "cumlogsumexp" else 1e-12
    assert_same(got, _np_cumulative(op, x, axis, reverse).astype(dtype),
                rtol=(1e-5 if dtype in (F32, C64) else f64_rtol) if inexact else 0.0)


def test_cumulative_special_values():
    x = np.array([-np.inf, -np.inf, 0.0, np.inf, np.nan, 1.0], F32)
    with np.errstate(invalid="ignore"):  # -inf - -inf inside NumPy's logaddexp
        expected = np.logaddexp.accumulate(x)
    assert_same(run1("cumlogsumexp", x, axis=0), expected)
    assert_same(run1("cummax", x, axis=0), np.maximum.accumulate(x))
    assert_same(run1("cumsum", np.zeros((2, 0), F32), axis=1), np.zeros((2, 0), F32))
    assert_same(run1("cumsum", x[:1], axis=0, reverse=True), x[:1])


# =====================================================================================
# sort
# =====================================================================================
NAN_NEG = np.copysign(np.nan, -1.0)
SORT_SPECIAL = np.array([3.0, -0.0, np.nan, 0.0, -1.0, NAN_NEG, np.inf, -np.inf, 0.0, -0.0,
                         2.5, np.nan], F32)


@pytest.mark.parametrize("dtype", [F32, F64, F16, BF16])
def test_sort_total_order_stable(dtype):
    keys = SORT_SPECIAL.astype(dtype)
    iota = np.arange(keys.size, dtype=I32)
    got_keys, got_perm = run_op("sort", keys, iota, dimension=0, is_stable=True, num_keys=1)
    # NumPy's stable sort: NaNs (of either sign) last, -0.0 == 0.0, original order on ties.
    perm = np.argsort(keys.astype(F64), kind="stable").astype(I32)
    assert_same(got_perm, perm)
    assert_same(got_keys.view(np.dtype(f"u{np.dtype(dtype).itemsize}")),
                keys[perm].view(np.dtype(f"u{np.dtype(dtype).itemsize}")))


@pytest.mark.parametrize("dtype,dimension", [(I32, 0), (U8, 1), (BOOL, 1), (I64, 0),
                                             (F32, 1), (C64, 1)])
def test_sort_one_operand(dtype, dimension):
    x = sample((5, 7), dtype, -20, 20)
    assert_same(run1("sort", x, dimension=dimension, is_stable=False, num_keys=1),
                np.sort(x, axis=dimension))  # complex: lexicographic in both


def test_sort_two_keys_and_payload():
    k0 = sample((3, 30), I32, 0, 3)
    k1 = sample((3, 30), F32, -2, 2)
    payload = RNG.standard_normal((3, 30)).astype(F32)
    got = run_op("sort", k0, k1, payload, dimension=1, is_stable=True, num_keys=2)
    perm = np.stack([np.lexsort((k1[r], k0[r])) for r in range(3)])
    for g, x in zip(got, (k0, k1, payload)):
        assert_same(g, np.take_along_axis(x, perm, axis=1))


def test_sort_one_key_keeps_payload_order():
    # num_keys=1: the second operand is not a key, so a stable sort keeps its order.
    k = np.array([1, 0, 1, 0, 1], I32)
    v = np.array([5, 4, 3, 2, 1], I32)
    got_k, got_v = run_op("sort", k, v, dimension=0, is_stable=True, num_keys=1)
    assert_same(got_k, np.array([0, 0, 1, 1, 1], I32))
    assert_same(got_v, np.array([4, 2, 5, 3, 1], I32))


# =====================================================================================
# dynamic_slice / dynamic_update_slice
# =====================================================================================
def _clamp_start(starts, shape, sizes):
    return [int(np.clip(s, 0, d - z)) for s, d, z in zip(starts, shape, sizes)]


@pytest.mark.parametrize("index_dtype", [I32, I64, U8, I8])
def test_dynamic_slice(index_dtype):
    x = sample((5, 6, 3), F32, -100, 100)
    sizes = (2, 4, 3)
    cases = [(0, 0, 0), (3, 2, 0), (4, 5, 2), (1, 1, 1), (100, 100, 100)]
    if np.dtype(index_dtype).kind == "i":
        cases += [(-1, -7, 0), (-100, 2, -1)]
    for starts in cases:
        s = _clamp_start(starts, x.shape, sizes)
        args = [np.array(v, index_dtype) for v in starts]
        got = run1("dynamic_slice", x, *args, slice_sizes=sizes)
        assert_same(got, x[s[0]:s[0] + 2, s[1]:s[1] + 4, s[2]:s[2] + 3])


@pytest.mark.parametrize("dtype", [F32, I32, BOOL])
def test_dynamic_update_slice(dtype):
    x = sample((5, 6), dtype)
    u = sample((2, 3), dtype)
    for starts in [(0, 0), (3, 3), (4, 5), (-3, 1), (1, 100)]:
        s = _clamp_start(starts, x.shape, u.shape)
        expected = x.copy()
        expected[s[0]:s[0] + 2, s[1]:s[1] + 3] = u
        args = [np.array(v, I32) for v in starts]
        assert_same(run1("dynamic_update_slice", x, u, *args), expected)


def test_dynamic_slice_scalar_operand():
    x = np.array(7.5, F32)
    assert_same(run1("dynamic_slice", x, slice_sizes=()), x)
    assert_same(run1("dynamic_update_slice", x, np.array(2.0, F32)), np.array(2.0, F32))


# =====================================================================================
# gather
# =====================================================================================
def gdn(offset_dims=(), collapsed_slice_dims=(), start_index_map=(), operand_batching_dims=(),
        start_indices_batching_dims=()):
    return dict(offset_dims=offset_dims, collapsed_slice_dims=collapsed_slice_dims,
                start_index_map=start_index_map, operand_batching_dims=operand_batching_dims,
                start_indices_batching_dims=start_indices_batching_dims)


def np_gather(x, idx, dn, slice_sizes, mode, fill_value):
    """Gather by the StableHLO spec, one output element at a time."""
    batch_shape = idx.shape[:-1]
    kept = [d for d in range(x.ndim) if d not in dn["collapsed_slice_dims"]
            and d not in dn["operand_batching_dims"]]
    out_rank = len(dn["offset_dims"]) + len(batch_shape)
    sizes, batch = iter(slice_sizes[d] for d in kept), iter(batch_shape)
    out_shape = tuple(next(sizes) if i in dn["offset_dims"] else next(batch)
                      for i in range(out_rank))
    batch_out = [d for d in range(out_rank) if d not in dn["offset_dims"]]
    out = np.empty(out_shape, x.dtype)
    for o in np.ndindex(*out_shape):
        b = tuple(o[d] for d in batch_out)
        start = [0] * x.ndim
        for k, d in enumerate(dn["start_index_map"]):
            start[d] = int(idx[b][k])
        for od, ib in zip(dn["operand_batching_dims"], dn["start_indices_batching_dims"]):
            start[od] = b[ib]
        oob = False
        for d in dn["start_index_map"]:
            hi = x.shape[d] - slice_sizes[d]
            if mode == "fill" and not 0 <= start[d] <= hi:
                oob = True
            start[d] = min(max(start[d], 0), hi)
        pos = list(start)
        for j, d in enumerate(kept):
            pos[d] += o[dn["offset_dims"][j]]
        out[o] = fill_value if oob else x[tuple(pos)]
    return out


GATHER_CASES = {
    # x[idx] along axis 0, keeping whole rows.
    "rows": ((5, 3), (4, 1), gdn((1,), (0,), (0,)), (1, 3)),
    # Points of a 2-D array.
    "points": ((4, 5), (6, 2), gdn((), (0, 1), (0, 1)), (1, 1)),
    # Points with the index vector in the opposite order.
    "points_swapped": ((4, 5), (6, 2), gdn((), (0, 1), (1, 0)), (1, 1)),
    # Uncollapsed 2x3 windows.
    "windows": ((5, 6), (3, 2), gdn((1, 2), (), (0, 1)), (2, 3)),
    # Two batch dims in the indices; the offset dim lands between them.
    "interleaved": ((6, 4), (2, 3, 1), gdn((1,), (0,), (0,)), (1, 4)),
    # Batching: row b of the indices gathers from batch b of the operand.
    "batching": ((3, 5, 2), (3, 4, 1), gdn((2,), (1,), (1,), (0,), (0,)), (1, 1, 2)),
    # An indices batching dim that is not the leading one.
    "batching_dim1": ((3, 5), (4, 3, 1), gdn((), (1,), (1,), (0,), (1,)), (1, 1)),
}


def _gather_indices(shape, x_shape, dn, slice_sizes, in_bounds, dtype=I32):
    """Random index vectors; with in_bounds=False some stick out on either side."""
    idx = np.empty(shape, dtype)
    for k, d in enumerate(dn["start_index_map"]):
        hi = x_shape[d] - slice_sizes[d]
        lo_, hi_ = (0, hi + 1) if in_bounds else (-3, hi + 4)
        if np.dtype(dtype).kind == "u":
            lo_ = 0
        idx[..., k] = RNG.integers(lo_, hi_, size=shape[:-1])
    return idx


GATHER_PARAMS = [(name, mode) for name in GATHER_CASES
                 for mode in ("clip", "fill", "promise_in_bounds")]


@pytest.mark.parametrize("name,mode", GATHER_PARAMS,
                         ids=[f"{n}-{m}" for n, m in GATHER_PARAMS])
def test_gather(name, mode):
    x_shape, i_shape, dn, slice_sizes = GATHER_CASES[name]
    x = sample(x_shape, F32, -100, 100)
    idx = _gather_indices(i_shape, x_shape, dn, slice_sizes, in_bounds=mode ==
                          "promise_in_bounds")
    got = run1("gather", x, idx, dimension_numbers=dn, slice_sizes=slice_sizes, mode=mode)
    assert_same(got, np_gather(x, idx, dn, slice_sizes, mode, np.nan))
    assert got.shape == gather_shape(x_shape, i_shape, dn, slice_sizes)


@pytest.mark.parametrize("dtype,index_dtype,fill", [
    (I32, I8, np.iinfo(I32).min), (U8, U32, 255), (BOOL, I64, True), (F64, U8, np.nan),
    (C64, I32, np.nan)])
def test_gather_fill_defaults_and_index_dtypes(dtype, index_dtype, fill):
    x_shape, i_shape, dn, slice_sizes = GATHER_CASES["windows"]
    x = sample(x_shape, dtype, 0, 100)
    idx = _gather_indices(i_shape, x_shape, dn, slice_sizes, False, index_dtype)
    idx[0] = (x_shape[0] - 1, 0)  # sticks out: filled
    got = run1("gather", x, idx, dimension_numbers=dn, slice_sizes=slice_sizes)
    assert_same(got, np_gather(x, idx, dn, slice_sizes, "fill", fill))
    assert np.all(got[0] == fill) or np.all(np.isnan(got[0]))


def test_gather_explicit_fill_value_and_huge_indices():
    x = np.arange(5, dtype=I32)
    dn = gdn((), (0,), (0,))
    idx = np.array([[0], [4], [5], [-1], [2**31 - 1], [-2**31]], I32)
    got = run1("gather", x, idx, dimension_numbers=dn, slice_sizes=(1,), fill_value=-7)
    assert_same(got, np.array([0, 4, -7, -7, -7, -7], I32))
    got = run1("gather", x, idx, dimension_numbers=dn, slice_sizes=(1,), mode="clip")
    assert_same(got, np.array([0, 4, 4, 0, 4, 0], I32))


# =====================================================================================
# scatter
# =====================================================================================
def sdn(update_window_dims=(), inserted_window_dims=(), scatter_dims_to_operand_dims=(),
        operand_batching_dims=(), scatter_indices_batching_dims=()):
    return dict(update_window_dims=update_window_dims,
                inserted_window_dims=inserted_window_dims,
                scatter_dims_to_operand_dims=scatter_dims_to_operand_dims,
                operand_batching_dims=operand_batching_dims,
                scatter_indices_batching_dims=scatter_indices_batching_dims)


COMBINE = {"scatter": lambda old, new: new, "scatter_add": lambda old, new: old + new,
           "scatter_mul": lambda old, new: old * new, "scatter_min": min,
           "scatter_max": max}


def np_scatter(op, x, idx, upd, dn, mode):
    """Scatter by the StableHLO spec: windows not wholly in bounds are skipped (or, with
    "clip", their start is clamped first)."""
    out = x.copy()
    uwd = dn["update_window_dims"]
    scatter_dims = [d for d in range(upd.ndim) if d not in uwd]
    skipped = set(dn["inserted_window_dims"]) | set(dn["operand_batching_dims"])
    window_dims = [d for d in range(x.ndim) if d not in skipped]
    window = [1] * x.ndim
    for j, d in enumerate(window_dims):
        window[d] = upd.shape[uwd[j]]
    for u in np.ndindex(*upd.shape):
        s = tuple(u[d] for d in scatter_dims)
        start = [0] * x.ndim
        for k, d in enumerate(dn["scatter_dims_to_operand_dims"]):
            start[d] = int(idx[s][k])
        for od, ib in zip(dn["operand_batching_dims"], dn["scatter_indices_batching_dims"]):
            start[od] = s[ib]
        if mode == "clip":
            for d in dn["scatter_dims_to_operand_dims"]:
                start[d] = min(max(start[d], 0), x.shape[d] - window[d])
        if any(not 0 <= start[d] <= x.shape[d] - window[d] for d in range(x.ndim)):
            continue
        pos = list(start)
        for j, d in enumerate(window_dims):
            pos[d] += u[uwd[j]]
        out[tuple(pos)] = COMBINE[op](out[tuple(pos)], upd[u])
    return out


SCATTER_CASES = {
    # Whole rows at idx along axis 0.
    "rows": ((5, 3), (4, 1), (4, 3), sdn((1,), (0,), (0,))),
    # Points of a 2-D array.
    "points": ((4, 5), (6, 2), (6,), sdn((), (0, 1), (0, 1))),
    # 2x2 windows, possibly sticking out.
    "windows": ((5, 6), (3, 2), (3, 2, 2), sdn((1, 2), (), (0, 1))),
    # Batching: row b of the indices scatters into batch b of the operand.
    "batching": ((3, 5), (3, 2, 1), (3, 2), sdn((), (1,), (1,), (0,), (0,))),
}
SCATTER_PARAMS = [(op, name, mode) for op in COMBINE for name in SCATTER_CASES
                  for mode in ("clip", "fill")]


@pytest.mark.parametrize("op,name,mode", SCATTER_PARAMS,
                         ids=[f"{o}-{n}-{m}" for o, n, m in SCATTER_PARAMS])
def test_scatter(op, name, mode):
    x_shape, i_shape, u_shape, dn = SCATTER_CASES[name]
    dtype = I32 if op in ("scatter_add", "scatter_mul") else F32  # exact on duplicates
    x = sample(x_shape, dtype, -5, 6)
    upd = sample(u_shape, dtype, -5, 6)
    window = [1] * len(x_shape)
    skipped = set(dn["inserted_window_dims"]) | set(dn["operand_batching_dims"])
    for j, d in enumerate(d for d in range(len(x_shape)) if d not in skipped):
        window[d] = u_shape[dn["update_window_dims"][j]]
    if op == "scatter":
        # Overwrites with duplicate targets are unordered: use distinct in-bounds starts,
        # plus (outside "clip", where they would land on others) ones that stick out.
        flat = [p for p in itertools.product(*[range(x_shape[d] - window[d] + 1)
                                               for d in dn["scatter_dims_to_operand_dims"]])]
        batch = int(np.prod(i_shape[:-1]) // (x_shape[0] if dn["operand_batching_dims"]
                                               else 1))
        picks = RNG.choice(len(flat), size=batch, replace=False)
        idx = np.array([flat[p] for p in picks], I32)
        if dn["operand_batching_dims"]:
            idx = np.stack([np.array([flat[p] for p in RNG.choice(len(flat), batch, False)])
                            for _ in range(i_shape[0])]).astype(I32)
        idx = idx.reshape(i_shape)
        if mode == "fill":
            idx.reshape(-1, i_shape[-1])[0] = [x_shape[d] for d in
                                               dn["scatter_dims_to_operand_dims"]]
    else:
        idx = np.empty(i_shape, I32)
        for k, d in enumerate(dn["scatter_dims_to_operand_dims"]):
            idx[..., k] = RNG.integers(-2, x_shape[d] - window[d] + 3, size=i_shape[:-1])
    got = run1(op, x, idx, upd, dimension_numbers=dn, mode=mode)
    assert_same(got, np_scatter(op, x, idx, upd, dn, mode))


@pytest.mark.parametrize("op,dtype", [("scatter", BOOL), ("scatter_max", BOOL),
                                      ("scatter_min", U8), ("scatter_add", F64),
                                      ("scatter_mul", C64), ("scatter_add", U8)])
def test_scatter_dtypes(op, dtype):
    x = sample((6,), dtype, 0, 4)
    idx = np.array([[1], [4], [1], [7], [-1]], I32)
    upd = sample((5,), dtype, 0, 4)
    if op == "scatter":
        idx[2] = 2
    dn = sdn((), (0,), (0,))
    got = run1(op, x, idx, upd, dimension_numbers=dn)
    assert_same(got, np_scatter(op, x, idx, upd, dn, "fill"))


def test_scatter_min_max_nan_and_promise_in_bounds():
    x = np.array([1.0, 2.0, np.nan, 4.0], F32)
    idx = np.array([[0], [1], [2], [3]], I32)
    upd = np.array([np.nan, -1.0, 0.0, 9.0], F32)
    dn = sdn((), (0,), (0,))
    got = run1("scatter_max", x, idx, upd, dimension_numbers=dn, mode="promise_in_bounds",
               indices_are_sorted=True, unique_indices=True)
    assert_same(got, np.array([np.nan, 2.0, np.nan, 9.0], F32))
    got = run1("scatter_min", x, idx, upd, dimension_numbers=dn, mode="promise_in_bounds")
    assert_same(got, np.array([np.nan, -1.0, np.nan, 4.0], F32))


# =====================================================================================
# JAX as an oracle for the modes and orders it defines
# =====================================================================================
@pytest.fixture(scope="module")
def lax():
    import jax
    # x64 for this module's oracle only: left on, it changed later tests' jax in the worker.
    old = jax.config.jax_enable_x64
    jax.config.update("jax_enable_x64", True)
    yield jax.lax
    jax.config.update("jax_enable_x64", old)


@pytest.mark.parametrize("name", ["rows", "windows", "batching"])
@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_gather_matches_jax(lax, name, mode):
    x_shape, i_shape, dn, slice_sizes = GATHER_CASES[name]
    x = sample(x_shape, F32, -100, 100)
    idx = _gather_indices(i_shape, x_shape, dn, slice_sizes, False)
    got = run1("gather", x, idx, dimension_numbers=dn, slice_sizes=slice_sizes, mode=mode)
    want = lax.gather(x, idx, lax.GatherDimensionNumbers(**dn), slice_sizes, mode=mode)
    assert_same(got, np.asarray(want))


@pytest.mark.parametrize("op", ["scatter_add", "scatter_max"])
@pytest.mark.parametrize("mode", ["clip", "fill"])
def test_scatter_matches_jax(lax, op, mode):
    x_shape, i_shape, u_shape, dn = SCATTER_CASES["windows"]
    x, upd = sample(x_shape, I32), sample(u_shape, I32)
    idx = RNG.integers(-2, 6, size=i_shape).astype(I32)
    got = run1(op, x, idx, upd, dimension_numbers=dn, mode=mode)
    want = getattr(lax, op)(x, idx, upd, lax.ScatterDimensionNumbers(**dn), mode=mode)
    assert_same(got, np.asarray(want))


def test_sort_and_argmax_match_jax(lax):
    keys = SORT_SPECIAL
    got = run_op("sort", keys, np.arange(keys.size, dtype=I32), dimension=0, is_stable=True,
                 num_keys=1)
    want = lax.sort((keys, np.arange(keys.size, dtype=I32)), num_keys=1, is_stable=True)
    assert_same(got[1], np.asarray(want[1]))
    x = np.array([[0.0, np.nan, 1.0, np.nan], [2.0, 2.0, -np.inf, 2.0]], F32)
    for op in ("argmax", "argmin"):
        want = getattr(lax, op)(x, 1, np.int32)
        assert_same(run1(op, x, axes=(1,), index_dtype=I32), np.asarray(want))


# =====================================================================================
# errors: bad operands and attributes raise InferError naming op, shapes and dtypes
# =====================================================================================
def A(shape, dtype=F32):
    return ShapedArray(shape, dtype)


@pytest.mark.parametrize("op,avals,params,message", [
    ("reduce_sum", [A((2, 3), BOOL)], dict(axes=(0,)),
     "reduce_sum does not accept dtype bool (operand must be numeric)"),
    ("reduce_sum", [A((2, 3))], dict(axes=(0, 0)),
     "duplicate value in 'axes' of reduction: (0, 0)"),
    ("reduce_max", [A((2, 3))], dict(axes=(3,)),
     "reduction axes (3,) contains out-of-bounds indices for operand of shape (2, 3)"),
    ("reduce_or", [A((2,), F32)], dict(axes=(0,)),
     "reduce_or does not accept dtype f32 (operand must be bool or integer)"),
    ("reduce_sum", [A((2, 3))], dict(),
     "'jaxpr.reduce_sum' op requires attribute 'axes'"),
    ("argmax", [A((2, 3))], dict(axes=(0, 1), index_dtype=I32),
     "argmax requires exactly one axis in 'axes', got (0, 1)"),
    ("argmin", [A((2, 0))], dict(axes=(1,), index_dtype=I32),
     "argmin requires a non-empty reduced dimension, got operand shape (2, 0) and axis 1"),
    ("argmax", [A((2, 3))], dict(axes=(1,), index_dtype=F32),
     "argmax index_dtype must be an integer type, but got f32"),
    ("cumsum", [A((2, 3))], dict(axis=2),
     "cumsum: axis 2 is out of bounds for array of shape (2, 3)"),
    ("cumlogsumexp", [A((3,), I32)], dict(axis=0),
     "cumlogsumexp does not accept dtype i32 (operand must be floating-point)"),
    ("cumsum", [A((3,))], dict(axis=0, reverse="yes"),
     "attribute 'reverse' must be a boolean, got 'yes'"),
    ("sort", [A((3,)), A((4,), I32)], dict(dimension=0),
     "sort requires operands of equal shapes, got (3,), (4,)"),
    ("sort", [A((3,)), A((3,))], dict(dimension=0, num_keys=3),
     "sort: num_keys must be in [1, 2] (the number of operands), got 3"),
    ("sort", [A((3, 2))], dict(dimension=-1),
     "sort: dimension -1 is out of range for operands of shape (3, 2) (rank 2)"),
    ("dynamic_slice", [A((4, 5)), A((), I32)], dict(slice_sizes=(2, 2)),
     "dynamic_slice start_indices must have length equal to the number of dimensions of "
     "the operand, got 1 indices for operand shape (4, 5)"),
    ("dynamic_slice", [A((4, 5)), A((), I32), A((), F32)], dict(slice_sizes=(2, 2)),
     "dynamic_slice start indices must have an integer dtype, got f32"),
    ("dynamic_slice", [A((4, 5)), A((), I32), A((), I32)], dict(slice_sizes=(2, 6)),
     "dynamic_slice slice_sizes must be less than or equal to operand shape, got "
     "slice_sizes (2, 6) for operand shape (4, 5)"),
    ("dynamic_update_slice", [A((4, 5)), A((2, 2), I32), A((), I32), A((), I32)], {},
     "dynamic_update_slice requires operand and update to have the same dtypes, got f32, "
     "i32"),
    ("dynamic_update_slice", [A((4, 5)), A((5, 1)), A((), I32), A((), I32)], {},
     "dynamic_update_slice update shape must be smaller than operand shape, got update "
     "shape (5, 1) for operand shape (4, 5)"),
    ("gather", [A((5, 3)), A((4, 1), F32)], dict(dimension_numbers=gdn((1,), (0,), (0,)),
                                                 slice_sizes=(1, 3)),
     "gather indices must have an integer dtype, got f32"),
    ("gather", [A((5, 3)), A((4, 2), I32)], dict(dimension_numbers=gdn((1,), (0,), (0,)),
                                                 slice_sizes=(1, 3)),
     "gather: start_index_map (0,) has 1 entries but the index vector dimension of indices "
     "shape (4, 2) has size 2; they must be equal"),
    ("gather", [A((5, 3)), A((4, 1), I32)], dict(dimension_numbers=gdn((1,), (0,), (0,)),
                                                 slice_sizes=(2, 3)),
     "gather can only collapse slice dims of size 1, got slice size 2 for collapsed "
     "dimension 0"),
    ("gather", [A((5, 3)), A((4, 1), I32)], dict(dimension_numbers=gdn((1,), (0,), (0,)),
                                                 slice_sizes=(1, 3), mode="wrap"),
     "attribute 'mode' must be one of 'clip', 'fill', 'promise_in_bounds', got 'wrap'"),
    ("gather", [A((5, 3)), A((4, 1), I32)], dict(dimension_numbers={"offset_dims": (1,)},
                                                 slice_sizes=(1, 3)),
     "attribute 'dimension_numbers' must be a dictionary with integer-sequence fields"),
    ("scatter_add", [A((5, 3)), A((4, 1), I32), A((4, 3), I32)],
     dict(dimension_numbers=sdn((1,), (0,), (0,))),
     "scatter_add requires operand and updates to have the same dtypes, got f32, i32"),
    ("scatter_mul", [A((5,), BOOL), A((2, 1), I32), A((2,), BOOL)],
     dict(dimension_numbers=sdn((), (0,), (0,))),
     "scatter_mul does not accept dtype bool (operand must be numeric)"),
    ("scatter", [A((5, 3)), A((4, 1), I32), A((3, 3))],
     dict(dimension_numbers=sdn((1,), (0,), (0,))),
     "scatter: scatter dimension 0 of updates shape (3, 3) must match the indices batch "
     "shape (4,), got 3 and 4"),
    ("scatter_max", [A((5, 3)), A((4, 1), I32), A((4, 4))],
     dict(dimension_numbers=sdn((1,), (0,), (0,))),
     "scatter_max: update window dimension 1 of updates shape (4, 4) has size 4, larger "
     "than operand dimension 1 of size 3 (operand shape (5, 3))"),
])
def test_infer_errors(op, avals, params, message):
    text = infer_error(op, avals, **params)
    assert message in text, text


def test_infer_error_is_a_type_error():
    assert issubclass(InferError, TypeError)
    with pytest.raises(TypeError, match="gather indices must have rank >= 1"):
        op_module("gather", [A((5,)), A((), I32)], dimension_numbers=gdn((), (0,), ()),
                  slice_sizes=(1,))


def test_gather_shape_rule_matches_jax(lax):
    import jax
    for name, (x_shape, i_shape, dn, slice_sizes) in GATHER_CASES.items():
        want = jax.eval_shape(lambda x, i: lax.gather(x, i, lax.GatherDimensionNumbers(**dn),
                                                      slice_sizes),
                              jax.ShapeDtypeStruct(x_shape, F32),
                              jax.ShapeDtypeStruct(i_shape, I32)).shape
        assert gather_shape(x_shape, i_shape, dn, slice_sizes) == want, name
