"""The XLA backend: compile/run, the compile cache, device transfer, plugin discovery."""
import os

import numpy as np
import pytest

from mjax.dialect import ShapedArray
from mjax.runtime import buffer_to_numpy, get_backend
from mjax.runtime import gpu_plugin, xla

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
    assert gpu_plugin.find_pjrt_plugin("nosuch") is None
    with pytest.raises(RuntimeError, match="no PJRT plugin for platform 'nosuch'"):
        xla.XlaBackend("nosuch")


def test_explicit_plugin_path_wins(monkeypatch):
    monkeypatch.setenv("MJAX_PJRT_PLUGIN_CUDA", "/opt/x/plugin.so")
    assert gpu_plugin.find_pjrt_plugin("cuda") == "/opt/x/plugin.so"



def test_gpu_plugin_client_is_set_up_as_jax_sets_it_up(monkeypatch):
    """A GPU plugin's client: the plugin loaded, its extension's FFI handlers handed to
    XLA under the platform's name, jaxlib's solver kernels registered, the client made
    with the XLA_PYTHON_CLIENT_* options, and absl's level defaulted to WARNING first."""
    calls = []

    class FakeXc:
        def pjrt_plugin_loaded(self, name):
            return False

        def load_pjrt_plugin_dynamically(self, name, path):
            calls.append(("load", name, path))
            return "c_api"

        def pjrt_plugin_initialized(self, name):
            return False

        def initialize_pjrt_plugin(self, name):
            calls.append(("init", name))

        def register_custom_call_handler(self, platform, handler):
            calls.append(("handler", platform, handler("target", "fn", 1)))

        def register_custom_call_target(self, name, fn, platform, api_version):
            calls.append(("target", name, platform, api_version))

        def generate_pjrt_gpu_plugin_options(self):
            return {"preallocate": False}

        def make_c_api_client(self, name, options=None, distributed=None):
            calls.append(("client", name, options))
            return "client"

    class FakeExtension:
        @staticmethod
        def register_custom_call_target(c_api, *args):
            return (c_api,) + args

        @staticmethod
        def ffi_handlers():
            return {"xla_ffi_python_gpu_callback": "cb"}

    class FakeSolver:
        @staticmethod
        def registrations():
            return {"CUDA": [("cusolver_getrf_ffi", "getrf", 1)], "ROCM": []}

    class FakeSparse:
        @staticmethod
        def registrations():
            return {"CUDA": [("cusparse_gtsv2_ffi", "gtsv2", 1)], "ROCM": []}

    modules = {"jax_cuda13_plugin.cuda_plugin_extension": FakeExtension,
               "jaxlib.gpu_solver": FakeSolver, "jaxlib.gpu_sparse": FakeSparse}

    def import_module(name):      # (jaxlib.gpu_linalg: not installed, skipped)
        if name not in modules:
            raise ImportError(name)
        return modules[name]
    monkeypatch.setattr(gpu_plugin, "xc", FakeXc())
    monkeypatch.setattr(gpu_plugin.importlib, "import_module", import_module)
    monkeypatch.setattr(gpu_plugin, "_preload_nvidia_libraries", lambda: None)
    monkeypatch.setattr(gpu_plugin, "_register_solvers", gpu_plugin._register_solvers.__wrapped__)
    monkeypatch.setenv("MJAX_PJRT_PLUGIN_CUDA", "/opt/x/plugin.so")
    monkeypatch.delenv("TF_CPP_MIN_LOG_LEVEL", raising=False)
    assert gpu_plugin.plugin_client("cuda", gpu_plugin.find_pjrt_plugin("cuda")) == "client"
    assert os.environ["TF_CPP_MIN_LOG_LEVEL"] == "1"
    assert calls == [("load", "cuda", "/opt/x/plugin.so"),
                     ("handler", "CUDA", ("c_api", "target", "fn", 1)),
                     ("target", "xla_ffi_python_gpu_callback", "CUDA", 1),
                     ("init", "cuda"),
                     ("target", "cusolver_getrf_ffi", "CUDA", 1),
                     ("target", "cusparse_gtsv2_ffi", "CUDA", 1),
                     ("client", "cuda", {"preallocate": False})]
