"""A cached jit call with NumPy array arguments runs through jaxlib's C++ jit, which puts
them on the device itself (runtime/host_call.py): results, dtypes and errors as the call
without it, x64 and JAX's states in either import order, no leak."""
import gc
import os
import subprocess
import sys
import textwrap
import weakref

import ml_dtypes
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.runtime import c_fast_path

C_PATH = c_fast_path("_fastpath") is not None


def _cached(f, *args):
    f(*args)
    return f(*args)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, np.float16,
                                   np.complex64, ml_dtypes.bfloat16, np.int8])
def test_numpy_arguments_give_numpy_values(dtype):
    f = mjax.jit(lambda x, y: (x + y, x * y))
    rng = np.random.RandomState(0)
    x = (rng.rand(3, 5) * 10).astype(dtype)
    y = (rng.rand(3, 5) * 10).astype(dtype)
    for _ in range(3):
        s, p = f(x, y)
        assert isinstance(s, mjax.Array) and s.dtype == np.dtype(dtype)
        np.testing.assert_array_equal(np.asarray(s), x + y)
        np.testing.assert_array_equal(np.asarray(p), x * y)
    if C_PATH:      # (the C++ jit ran them: its cache holds the call)
        assert f._memo.entry.host_run._cache_size() == 1


def test_mixed_leaves_pytrees_and_keywords():
    f = mjax.jit(lambda d, s, k: {"a": d["x"] * s + k, "b": d["y"]})
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = jnp.ones((4,), jnp.int32)
    for _ in range(3):
        out = f({"x": x, "y": y}, 2.0, k=np.float32(1.5) * np.ones(3, np.float32))
        np.testing.assert_array_equal(np.asarray(out["a"]), x * 2 + 1.5)
        np.testing.assert_array_equal(np.asarray(out["b"]), np.ones(4, np.int32))
    g = mjax.jit(lambda x, n: x * n, static_argnums=1)
    for n in (2, 3, 2):
        np.testing.assert_array_equal(np.asarray(g(x, n)), x * n)


def test_non_contiguous_and_fresh_arrays():
    f = mjax.jit(lambda x: x.sum(0))
    base = np.arange(40, dtype=np.float32).reshape(8, 5)
    for view in (base[::2], base.T[:, ::2].T.copy(), base[:, 1:4], base[::-1]):
        for _ in range(2):
            np.testing.assert_array_equal(np.asarray(f(np.ascontiguousarray(view)[:4])),
                                          np.ascontiguousarray(view)[:4].sum(0))
    # a new array each call: each result is its own call's. (Not one array changed after
    # each call: the put may read it after the call returns, on a TPU in JAX too, whose
    # contract is that an argument is not changed while its transfer runs.)
    outs = [f(np.full((1, 3), i, np.float32)) for i in range(4)]
    np.testing.assert_array_equal(np.stack([np.asarray(o) for o in outs]),
                                  np.arange(4, dtype=np.float32)[:, None] * np.ones(3))


def test_programs_on_another_device_put_there(capfd):
    """A program placed by a committed argument on a device other than the first puts
    its NumPy arguments on that device (the C++ jit's first run too)."""
    if len(mjax.devices()) < 3:
        pytest.skip("needs 3 devices (the suite's CPU devices; one on the TPU machine)")
    f = mjax.jit(lambda a, b: a * b + 1)
    a = mjax.device_put(jnp.arange(4, dtype=jnp.float32), mjax.devices()[2])
    h = np.arange(4, dtype=np.float32) + 0.5
    for _ in range(3):
        out = f(a, h)
        assert out.devices() == {mjax.devices()[2]}
        np.testing.assert_array_equal(np.asarray(out), np.arange(4) * h + 1)
    # (committed arguments take the C path unless some array of the process has had a
    # custom layout: then no memo is kept, and nothing runs through the C++ jit)
    if C_PATH and f._memo is not None:
        assert f._memo.entry.host_run._cache_size() == 1
    assert "is on device" not in capfd.readouterr().err


def test_x64_arrays_keep_their_width():
    f = mjax.jit(lambda x: x + 1)
    with mjax.enable_x64(True):
        x = np.arange(3, dtype=np.float64) + 0.1
        for _ in range(3):
            out = f(x)
            assert out.dtype == np.float64
            # (a TPU emulates float64: ulps off where a CPU's is exact)
            np.testing.assert_allclose(np.asarray(out), x + 1, rtol=1e-14)
    x32 = np.arange(3, dtype=np.float64) + 0.1
    out = _cached(f, x32)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(np.asarray(out), (x32 + 1).astype(np.float32))


def test_transfer_guard_still_refuses_numpy_arguments():
    f = mjax.jit(lambda x: x * 2)
    x = np.ones(3, np.float32)
    _cached(f, x)
    with mjax.transfer_guard("disallow"):
        with pytest.raises(Exception, match="host-to-device"):
            f(x)
    np.testing.assert_array_equal(np.asarray(f(x)), x * 2)


def test_donating_programs_put_from_python():
    f = mjax.jit(lambda x: x + 1, donate_argnums=0)
    x = np.ones(3, np.float32)
    np.testing.assert_array_equal(np.asarray(_cached(f, x)), x + 1)
    assert f._memo.entry.host_run is None


def test_entries_and_their_programs_are_freed():
    f = mjax.jit(lambda x: x * 3)
    x = np.ones(2, np.float32)
    _cached(f, x)
    exe = weakref.ref(f._memo.entry.executable)
    del f
    mjax.clear_caches()
    gc.collect()
    assert exe() is None


_SCRIPT = """
import sys, numpy as np
{before}
import mjax
f = mjax.jit(lambda x: x * 2 + 1)
x = np.arange(4, dtype=np.float32)
with mjax.enable_x64(True):
    z = np.arange(4, dtype=np.float64)
    assert f(z).dtype == np.float64 and f(z).dtype == np.float64
print("host_run", f._memo.entry.host_run is not None or not {c_path})
{after}
for _ in range(3):
    np.testing.assert_array_equal(np.asarray(f(x)), x * 2 + 1)
assert not {c_path} or f._memo.entry.host_run._cache_size() >= 1
with mjax.enable_x64(True):
    for _ in range(3):
        out = f(z)
        assert out.dtype == np.float64, out.dtype
        np.testing.assert_array_equal(np.asarray(out), z * 2 + 1)
print("jax" in sys.modules, "ok")
"""

_JAX_AFTER = """
import jax
jax.config.update("jax_enable_x64", False)
with jax.disable_jit():
    np.testing.assert_array_equal(np.asarray(f(x)), x * 2 + 1)
"""


@pytest.mark.parametrize("order", ["no jax", "jax first", "jax after"])
def test_in_a_process_with_or_without_jax(order):
    """jaxlib's C++ jit reads process-wide states JAX's config registers; mjax registers
    its own where jax is not imported, and JAX's replace them when it is."""
    before = "import jax" if order == "jax first" else ""
    after = _JAX_AFTER if order == "jax after" else ""
    script = _SCRIPT.format(before=before, after=after, c_path=C_PATH)
    out = subprocess.run([sys.executable, "-c", textwrap.dedent(script)],
                         capture_output=True, text=True, timeout=300,
                         env=dict(os.environ, JAX_PLATFORMS="cpu", MJAX_PLATFORM="cpu"))
    assert out.returncode == 0, out.stderr[-3000:]
    assert "host_run True" in out.stdout
    assert out.stdout.strip().endswith(f"{order != 'no jax'} ok")
