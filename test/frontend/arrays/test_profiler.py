"""mjax.profiler writes an XSpace trace holding our annotations and XLA's work."""
from __future__ import annotations

import glob
import gzip

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


def test_profile_options_choose_what_is_collected(tmp_path):
    # With the Python tracer on, the trace holds this test's Python function; off, not.
    def traced(level, where):
        options = mjax.profiler.ProfileOptions()
        options.python_tracer_level = level
        mjax.profiler.start_trace(where, profiler_options=options)
        _a_python_function_to_find()
        mjax.profiler.stop_trace()
        (path,) = glob.glob(str(where / "plugins" / "profile" / "*" / "*.xplane.pb"))
        return open(path, "rb").read()
    assert b"_a_python_function_to_find" in traced(1, tmp_path / "on")
    assert b"_a_python_function_to_find" not in traced(0, tmp_path / "off")
    data = mjax.profiler.ProfileData.from_file(
        glob.glob(str(tmp_path / "on" / "plugins" / "profile" / "*" / "*.xplane.pb"))[0])
    assert any(True for _ in data.planes)


def _a_python_function_to_find():
    return sum(range(1000))


def test_profiler_server_is_one_per_process():
    server = mjax.profiler.start_server(0)
    assert server is not None
    try:
        with pytest.raises(ValueError, match="Only one profiler server"):
            mjax.profiler.start_server(0)
    finally:
        mjax.profiler.stop_server()
    with pytest.raises(ValueError, match="No active profiler server"):
        mjax.profiler.stop_server()


def test_device_memory_profile_is_gzipped_pprof(tmp_path):
    x = jnp.ones((123, 7))    # a live buffer the profile counts
    profile = mjax.profiler.device_memory_profile()
    assert gzip.decompress(profile)      # (a pprof Profile message: non-empty protobuf)
    mjax.profiler.save_device_memory_profile(tmp_path / "mem.prof")
    assert gzip.decompress((tmp_path / "mem.prof").read_bytes())
    del x
