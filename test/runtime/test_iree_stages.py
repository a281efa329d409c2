"""The AOT stages on the other backend of a CPU machine: `jit(f, backend='iree')`,
`jit(f, device=<an IREE device>)` and arguments committed to IREE lower for IREE, compile
with it and run there, as their calls do (JAX lowers and compiles a jit's `.lower(...)`
for its device's platform)."""
from __future__ import annotations

import iree.runtime  # noqa: F401  (the `iree` packages are test dependencies)
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax.runtime import get_backend
from mjax.runtime.iree import IreeBuffer

X = np.arange(6, dtype=np.float32).reshape(2, 3)
A = np.eye(3, dtype=np.float32) * 2


def f(x):
    return jnp.sin(x) * 2 + 1


def _on(device, out):
    assert out.devices() == {device}
    return out


@pytest.mark.parametrize("how", ["backend", "device", "committed"])
def test_stages_compile_and_run_on_iree(how):
    iree = get_backend("iree").devices()[0]
    if how == "committed":
        lowered = mjax.jit(f).lower(mjax.device_put(X, iree))
    else:
        kw = {"backend": "iree"} if how == "backend" else {"device": iree}
        lowered = mjax.jit(f, **kw).lower(X)
    compiled = lowered.compile()
    out = _on(iree, compiled(X))
    assert isinstance(out._buf, IreeBuffer) and out.committed
    np.testing.assert_allclose(np.asarray(out), np.sin(X) * 2 + 1, rtol=1e-6)
    assert compiled.input_shardings[0][0].device_set == {iree}
    assert compiled.output_shardings.device_set == {iree}
    # The same executable as the call's: through .trace too.
    kw = {"device": iree} if how != "committed" else {}
    staged = mjax.jit(f, **kw).trace(mjax.device_put(X, iree)).lower().compile()
    _on(iree, staged(X))


def test_lowered_text_is_for_the_device_platform():
    cpu, iree = get_backend("cpu").devices()[0], get_backend("iree").devices()[0]
    chol = jnp.linalg.cholesky
    on_cpu = mjax.jit(chol, device=cpu).lower(A)
    on_iree = mjax.jit(chol, device=iree).lower(A)
    # XLA's CPU factors with LAPACK's kernel; IREE gets XLA's own op (as its calls do).
    assert "lapack" in on_cpu.as_text() and "stablehlo.cholesky" not in on_cpu.as_text()
    assert "lapack" not in on_iree.as_text() and "stablehlo.cholesky" in on_iree.as_text()
    assert mjax.jit(chol).lower(mjax.device_put(A, iree)).as_text() == on_iree.as_text()
    # Compiled by IREE, which has no lowering of it: the call's error, not XLA's result.
    with pytest.raises(RuntimeError, match="IREE could not compile"):
        on_iree.compile()
    np.testing.assert_allclose(np.asarray(_on(cpu, on_cpu.compile()(A))),
                               np.linalg.cholesky(A), rtol=1e-6)


def test_lowering_for_another_platform_than_the_device_does_not_compile():
    traced = mjax.jit(f, backend="iree").trace(X)
    with pytest.raises(ValueError, match="lowered for the 'cpu' platform"):
        traced.lower(lowering_platforms=("cpu",)).compile()
