"""Helpers shared by the frontend tests."""
import contextlib
import os

import numpy as np

import mjax

# The suite runs on a TPU (test/conftest.py, docs/tpu.md): tolerances widen where the chip's
# transcendental functions differ from the host's, as JAX's own tests widen theirs.
ON_TPU = os.environ.get("MJAX_TEST_TPU", "") not in ("", "0")


def tol(cpu: float, tpu: float) -> float:
    """A tolerance: `cpu` on the CPU, `tpu` when the suite runs on the chip."""
    return tpu if ON_TPU else cpu


def skip_where_the_tpu_lacks(*dtypes) -> None:
    """Skips the test on the chip when a program would compute in complex128, which a TPU
    does not have: XLA's TPU compiler aborts the process on it (in JAX's programs too;
    JAX's own tests leave complex128 out on TPUs)."""
    import pytest
    if ON_TPU and any(np.dtype(d) == np.complex128 for d in dtypes):
        pytest.skip("TPU: no complex128 (XLA's TPU compiler aborts on it)")


@contextlib.contextmanager
def x64(enabled=True):
    """Turns x64 on in both mjax and the jax oracle, restoring both afterwards."""
    import jax
    old_m, old_j = mjax.config.read("jax_enable_x64"), jax.config.jax_enable_x64
    mjax.config.update("jax_enable_x64", enabled)
    jax.config.update("jax_enable_x64", enabled)
    try:
        yield
    finally:
        mjax.config.update("jax_enable_x64", old_m)
        jax.config.update("jax_enable_x64", old_j)


def check(got, want, rtol=1e-5, atol=1e-6):
    """got is an mjax.Array with want's shape and dtype, and close to it."""
    want = np.asarray(want)
    assert isinstance(got, mjax.Array), type(got)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    np.testing.assert_allclose(np.asarray(got), want, rtol=rtol, atol=atol)


def python_calls(call, in_file) -> list:
    """The names of the Python functions `call()` runs whose file satisfies `in_file`
    (a C fast path's hit runs none of mjax's)."""
    import sys
    seen = []

    def profile(frame, event, arg):
        if event == "call" and in_file(frame.f_code.co_filename):
            seen.append(frame.f_code.co_name)
    sys.setprofile(profile)
    try:
        call()
    finally:
        sys.setprofile(None)
    return seen
