"""A small NumPy argument (at most 1 KiB) of a cached jit call is put once per content
(frontend/jit/fast.py `_ContentPut`): the buffer holds a copy of the bytes it was made
from, so results follow the array's values whatever happens to it (changed in place,
another array of the same bytes but another dtype or shape, a donation that deleted the
buffer), the transfer guard sees every transfer as JAX's does, and jax.live_arrays does
not list the kept buffers. Real jax is the oracle."""
from __future__ import annotations

import jax
import numpy as np
import pytest

import mjax
from mjax.jit import fast as jit_fast
from mjax.runtime.backend import HostPut


@pytest.fixture(autouse=True)
def _fresh_putters():
    """Each test starts with no putter kept (one that gave up on contents in another
    test would be a plain put here)."""
    jit_fast._PUTTERS.clear()
    yield
    jit_fast._PUTTERS.clear()


def _content_puts():
    return [p for p in jit_fast._PUTTERS.values() if type(p) is jit_fast._ContentPut]


def _same(got, want):
    want = np.asarray(want)
    assert isinstance(got, mjax.Array), type(got)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.aval, want.dtype)
    np.testing.assert_array_equal(np.asarray(got), want)


def _both(fun, **kw):
    return mjax.jit(fun, **kw), jax.jit(fun, **kw)


def test_values_follow_an_array_changed_in_place():
    f, g = _both(lambda x: x * 2 + 1)
    h = np.arange(4, dtype=np.float32)
    for k in range(4):
        h[k % 4] += 10.0 * (k + 1)
        for _ in range(2):
            _same(f(h), g(h))
    h[:] = np.arange(4, dtype=np.float32)      # (back to a content seen before)
    _same(f(h), g(h))


def test_equal_bytes_of_other_dtypes_and_shapes_are_other_values():
    f, g = _both(lambda x: x + 1)
    for x in (np.zeros(4, np.float32), np.zeros(4, np.int32), np.zeros((2, 2), np.float32),
              np.zeros(16, np.uint8), np.zeros(16, np.bool_), np.zeros(8, np.float16),
              np.ones(4, np.float32), np.ones(4, np.float32).view(np.int32)):
        for _ in range(2):
            _same(f(x), g(x))


def test_signed_zeros_and_nan_payloads_are_kept_apart():
    f, g = _both(lambda x: 1.0 / x)
    for x in (np.array([0.0, 1.0], np.float32), np.array([-0.0, 1.0], np.float32),
              np.array([0.0, 1.0], np.float32)):
        _same(f(x), g(x))
    nans = np.array([0x7FC00000, 0x7FC00001], np.uint32).view(np.float32)
    ident = mjax.jit(lambda x: x)
    for x in (nans[:1], nans[1:], nans[:1]):
        got = np.asarray(ident(x))
        assert got.view(np.uint32)[0] == x.view(np.uint32)[0]


def test_alternating_contents_and_arrays_of_one_content():
    f, g = _both(lambda x, y: x * y - x)
    xs = [np.full(3, k, np.float32) for k in range(40)]   # (more than a putter keeps)
    for _ in range(2):
        for x in xs:
            _same(f(x, x.copy()), g(x, x.copy()))


def test_a_donated_buffer_is_put_again():
    f, g = _both(lambda x: x * 3, donate_argnums=0)
    plain = mjax.jit(lambda x: x - 1)
    h = np.arange(4, dtype=np.float32)
    for _ in range(2):              # (both cached: their calls take the fast path)
        f(h + 1), plain(h + 1)
    for _ in range(3):
        _same(f(h), g(h))           # (each call donates what the put gave it)
        _same(plain(h), h - 1)      # (the same content and putter, after the donation)
        kept = [b for p in _content_puts() for k, b in p.bufs.items() if k == h.tobytes()]
        assert kept and not any(b.is_deleted() for b in kept)   # (put again)
    np.testing.assert_array_equal(h, np.arange(4, dtype=np.float32))


def test_transfer_guard_sees_each_call():
    f = mjax.jit(lambda x: x + 1)
    h = np.arange(4, dtype=np.float32)
    f(h), f(h)
    for _ in range(2):       # (several calls each: later ones take the fast path)
        with mjax.transfer_guard_host_to_device("disallow"):
            for _ in range(3):
                with pytest.raises(Exception, match="Disallowed host-to-device transfer"):
                    f(h)
        try:
            mjax.config.update("jax_transfer_guard", "disallow")
            for _ in range(3):
                with pytest.raises(Exception, match="Disallowed host-to-device transfer"):
                    f(h)
        finally:
            mjax.config.update("jax_transfer_guard", None)
        _same(f(h), h + 1)


def test_kept_buffers_are_not_live_arrays():
    f = mjax.jit(lambda x: x + 1)
    h = np.array([1.5, 2.5, 3.5, 123.25], np.float32)    # (a content of its own)
    f(h)
    before = {id(a._buf) for a in mjax.live_arrays()}
    outs = [f(h) for _ in range(3)]
    after = {id(a._buf) for a in mjax.live_arrays()}
    assert {id(o._buf) for o in outs} <= after
    assert len(after - before) == 3, len(after - before)    # (the outputs only)
    kept = [b for p in _content_puts() for b in p.bufs.values()]
    assert kept and not any(id(b) in after for b in kept)


def test_large_arrays_are_put_every_call():
    f, g = _both(lambda x: x.sum())
    h = np.arange(300, dtype=np.float32)      # (1200 bytes)
    for k in range(3):
        h[k] = 1000.0 * k
        got, want = f(h), g(h)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6)
    assert not any(type(p) is jit_fast._ContentPut and p.put.args[0].shape == (300,)
                   for p in jit_fast._PUTTERS.values())


def test_mostly_new_contents_give_the_plain_put_back():
    f, g = _both(lambda x: x * 2)
    h = np.zeros(4, np.float32)
    for _ in range(3):
        _same(f(h), g(h))
    assert len(_content_puts()) == 1          # (one content again and again: kept)
    for k in range(40):                       # (then a new content every call)
        h[0] = k + 1
        _same(f(h), g(h))
    assert not _content_puts()
    assert any(type(p) is HostPut for p in jit_fast._PUTTERS.values())
    for k in range(3):
        _same(f(h), g(h))
