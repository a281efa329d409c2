"""mjax.profiler writes an XSpace trace holding our annotations and XLA's work."""
from __future__ import annotations

import glob

import numpy as np
import pytest

import mjax
import mjax.numpy as jnp


def test_trace_writes_xspace_with_annotations(tmp_path):
    f = mjax.jit(lambda x: jnp.sin(x) @ x)
    with mjax.profiler.trace(tmp_path):
        with mjax.profiler.TraceAnnotation("mjax_test_region"):
            y = f(jnp.ones((32, 32)))
            y.block_until_ready()
    (path,) = glob.glob(str(tmp_path / "plugins" / "profile" / "*" / "*.xplane.pb"))
    data = open(path, "rb").read()
    assert b"mjax_test_region" in data
    np.testing.assert_allclose(np.asarray(y), np.sin(np.ones((32, 32))) @ np.ones((32, 32)),
                               rtol=1e-5)


def test_start_stop_errors(tmp_path):
    with pytest.raises(RuntimeError, match="No profile started"):
        mjax.profiler.stop_trace()
    mjax.profiler.start_trace(tmp_path)
    try:
        with pytest.raises(RuntimeError, match="already been started"):
            mjax.profiler.start_trace(tmp_path)
    finally:
        mjax.profiler.stop_trace()


def test_annotate_function_keeps_behaviour():
    @mjax.profiler.annotate_function
    def g(x):
        return x * 2
    assert g(3) == 6 and g.__name__ == "g"
