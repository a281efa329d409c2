"""Array methods JAX has (sort, cumsum, std, round, take, view, byteswap, to_device, ...),
positional argument orders of the reductions (max/min take no dtype), trace's dtype,
scalar and empty boolean masks: against jax.numpy and NumPy."""
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from frontend_util import check

A = np.arange(12, dtype=np.float32).reshape(3, 4) - 5.5


def test_every_public_method_of_jax_arrays_exists():
    # (device_buffer(s), platform, traceback, clone, flat, format, addressable_data,
    # is_fully_addressable: runtime internals or deprecated in JAX)
    internals = {"addressable_data", "clone", "device_buffer", "device_buffers", "flat",
                 "format", "is_fully_addressable", "platform", "traceback"}
    want = {n for n in dir(jjnp.ones(2)) if not n.startswith("_")} - internals
    have = {n for n in dir(jnp.ones(2)) if not n.startswith("_")}
    assert sorted(want - have) == []


METHOD_CASES = [
    ("sort", (0,), {}), ("sort", (), {"descending": True}), ("argsort", (), {}),
    ("argsort", (0,), {"stable": True}), ("cumsum", (1,), {}), ("cumprod", (), {}),
    ("cumsum", (0, np.int32), {}), ("std", (), {}), ("std", (0,), {"ddof": 1}),
    ("var", (1,), {"keepdims": True}), ("round", (1,), {}), ("ptp", (0,), {}),
    ("diagonal", (1,), {}), ("trace", (-1,), {}), ("trace", (), {"dtype": np.int32}),
    ("repeat", (2,), {"axis": 0}), ("take", (np.array([0, 2]), 1), {}),
    ("searchsorted", (np.float32(0.0),), {}), ("argpartition", (1,), {}),
    ("max", (0, None, True), {}), ("min", (), {"initial": -100.0}),
    ("sum", (1,), {"where": A > 0}), ("prod", (0,), {"promote_integers": False}),
    ("mean", (), {"where": A > 0}), ("all", (0,), {}), ("any", (), {"keepdims": True}),
    ("astype", (np.int16,), {}), ("clip", (-1, 1), {}), ("squeeze", (), {}),
]


@pytest.mark.parametrize("name,args,kw", METHOD_CASES,
                         ids=[f"{c[0]}{i}" for i, c in enumerate(METHOD_CASES)])
def test_method_matches_jax(name, args, kw):
    x = A.ravel() if name == "searchsorted" else A
    got = getattr(jnp.asarray(x), name)(*args, **kw)
    want = getattr(jjnp.asarray(x), name)(*args, **kw)
    check(got, np.asarray(want))


def test_nonzero_compress_choose_methods():
    x = jnp.asarray(A)
    for g, w in zip(x.nonzero(), jjnp.asarray(A).nonzero()):
        check(g, np.asarray(w))
    check(x.compress(np.array([True, False, True]), axis=0), A[[0, 2]])
    idx = jnp.asarray(np.array([0, 1, 0]))
    check(idx.choose([np.zeros(3, np.float32), np.ones(3, np.float32)]),
          np.array([0, 1, 0], np.float32))


def test_methods_work_on_tracers():
    got = mjax.jit(lambda v: v.sort(0).cumsum(1).std())(A)
    check(got, np.asarray(jjnp.asarray(A).sort(0).cumsum(1).std()))


@pytest.mark.parametrize("src,dst,shape", [
    (np.float32, np.int32, (3, 4)), (np.float32, np.uint16, (3, 4)),
    (np.uint8, np.int16, (2, 6)), (np.int32, np.float32, (2, 2)),
    (np.bool_, np.uint8, (4,)), (np.int8, np.bool_, (4,))])
def test_view_matches_numpy(src, dst, shape):
    x = (np.arange(np.prod(shape)) % 2 if src in (np.bool_, np.int8)
         else np.arange(np.prod(shape)) * 3 + 1).astype(src).reshape(shape)
    check(jnp.asarray(x).view(dst), x.view(dst))


def test_byteswap_nbytes_itemsize_tobytes():
    x = np.arange(6, dtype=np.int32).reshape(2, 3) * 1000 + 7
    m = jnp.asarray(x)
    check(m.byteswap(), x.byteswap())
    assert (m.nbytes, m.itemsize) == (x.nbytes, x.itemsize)
    assert m.tobytes() == x.tobytes()


def test_to_device_places_on_the_device():
    x = jnp.asarray(A)
    dev = mjax.devices()[0]
    y = x.to_device(dev)
    assert y.device == dev
    np.testing.assert_array_equal(y, A)
    with pytest.raises(NotImplementedError, match="stream"):
        x.to_device(dev, stream=1)


def test_max_min_positional_order_is_axis_out_keepdims():
    # JAX's max(a, axis, out, keepdims): no dtype argument in between.
    check(jnp.max(A, 0, None, True), np.max(A, 0, None, True))
    check(jnp.min(A, 1, None, False, 100.0), np.min(A, 1, None, False, 100.0))
    with pytest.raises(TypeError):
        jnp.max(A, dtype=np.float32)


def test_trace_dtype_and_out():
    x = np.arange(9, dtype=np.int8).reshape(3, 3)
    check(jnp.trace(x), np.asarray(jjnp.trace(x)))
    check(jnp.trace(x, 1, dtype=np.float32), np.trace(x, 1, dtype=np.float32))
    check(jnp.trace(np.ones((2, 3, 4), np.float32), 0, 1, 2), np.trace(np.ones((2, 3, 4)), 0, 1,
                                                                       2).astype(np.float32))
    with pytest.raises(NotImplementedError, match="out"):
        jnp.trace(x, out=np.zeros(()))


@pytest.mark.parametrize("make_index", [
    lambda xp: True, lambda xp: xp.asarray(False), lambda xp: (Ellipsis, True),
    lambda xp: (True, 1), lambda xp: (xp.asarray(True), 0), lambda xp: (0, True),
    lambda xp: (xp.asarray([1, 0]), True)],
    ids=["true", "false_array", "ellipsis_true", "true_int", "true_array_int", "int_true",
         "array_true"])
def test_scalar_boolean_index_matches_numpy(make_index):
    check(jnp.asarray(A)[make_index(jnp)], A[make_index(np)])


def test_empty_masks_and_index_arrays_on_empty_axes():
    check(jnp.zeros((0,))[np.zeros((0,), bool)], np.zeros((0,), np.float32))
    check(jnp.zeros((0, 3))[np.zeros((0,), bool)], np.zeros((0, 3), np.float32))
    check(jnp.zeros((2, 0))[np.zeros((2, 0), bool)], np.zeros((0,), np.float32))
    check(jnp.zeros((0, 3))[np.zeros((0,), np.int32)], np.zeros((0, 3), np.float32))
    with pytest.raises(IndexError, match="size 0"):
        jnp.zeros((0, 3))[np.array([0, 1])]


def test_scalar_mask_updates():
    x = jnp.asarray(A)
    check(x.at[True].set(7.0), np.full_like(A, 7.0))
    check(x.at[np.bool_(False)].add(1.0), A)
