"""The XLA backend: compile/run, the compile cache, device transfer, plugin discovery."""
import numpy as np
import pytest

from mjax.dialect import ShapedArray
from mjax.runtime import buffer_to_numpy, get_backend
from mjax.runtime import xla

SINE = """func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = stablehlo.sine %x : tensor<3xf32>
  return %0 : tensor<3xf32>
}"""


def test_compile_and_run_matches_numpy():
    x = np.linspace(0, 1, 3, dtype=np.float32)
    (y,) = get_backend().compile(SINE).run_numpy(x)
    np.testing.assert_allclose(y, np.sin(x), rtol=1e-6)


def test_identical_programs_share_one_executable():
    backend = get_backend()
    a = backend.compile(SINE + "\n")
    b = backend.compile(SINE + "\n")
    assert a.loaded is b.loaded
    c = backend.compile(SINE.replace("sine", "cosine"))
    assert c.loaded is not a.loaded


def test_result_handlers_give_the_same_values_as_disassembly():
    backend = get_backend()
    x = np.arange(3, dtype=np.float32)
    with_avals = backend.compile(SINE, out_avals=[ShapedArray((3,), np.float32)])
    assert with_avals._handlers is not None
    buf = backend.put(x)
    (fast,) = with_avals.execute([buf])
    (slow,) = backend.compile(SINE).execute([buf])
    np.testing.assert_array_equal(buffer_to_numpy(fast), buffer_to_numpy(slow))


def test_missing_plugin_is_a_clear_error(monkeypatch):
    monkeypatch.delenv("MJAX_PJRT_PLUGIN_NOSUCH", raising=False)
    assert xla.find_pjrt_plugin("nosuch") is None
    with pytest.raises(RuntimeError, match="no PJRT plugin for platform 'nosuch'"):
        xla.XlaBackend("nosuch")


def test_explicit_plugin_path_wins(monkeypatch):
    monkeypatch.setenv("MJAX_PJRT_PLUGIN_CUDA", "/opt/x/plugin.so")
    assert xla.find_pjrt_plugin("cuda") == "/opt/x/plugin.so"

