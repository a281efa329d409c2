"""runtime/backend.py: Platform names parsed once, the registry backends add themselves
to, the default platform from the environment, and the runtime's import layering."""
import ast
import importlib.util
import os
import pathlib

import numpy as np
import pytest

import mjax.runtime.backend as rb
from mjax.runtime.backend import Platform
from mjax.runtime.iree import IreeBackend
from mjax.runtime.xla import XlaBackend

RUNTIME = pathlib.Path(__file__).resolve().parents[2] / "runtime"


@pytest.mark.parametrize("name,backend,target,text", [
    ("cpu", "xla", "cpu", "cpu"), (" CPU ", "xla", "cpu", "cpu"),
    ("cuda", "xla", "cuda", "cuda"), ("gpu", "xla", "cuda", "cuda"),
    ("rocm", "xla", "rocm", "rocm"), ("iree", "iree", "cpu", "iree"),
    ("iree-cpu", "iree", "cpu", "iree"), ("IREE-Vulkan", "iree", "vulkan", "iree-vulkan"),
    ("iree-cuda", "iree", "cuda", "iree-cuda")])
def test_platform_names(name, backend, target, text):
    p = Platform.parse(name)
    assert (p.backend, p.target, str(p)) == (backend, target, text)
    assert Platform.parse(p) is p and Platform.parse(str(p)) == p


@pytest.mark.parametrize("bad", ["", "  ", "xla"])
def test_platform_refuses_non_names(bad):
    with pytest.raises(ValueError, match="not a platform"):
        Platform.parse(bad)


def test_default_platform_reads_environment(monkeypatch):
    monkeypatch.setattr(rb, "_DEFAULT", [])       # (whatever the config options set)
    for var in ("MJAX_BACKEND", "MJAX_PLATFORM", "JAX_PLATFORMS"):
        monkeypatch.delenv(var, raising=False)
    # (discovery: the chip where the suite runs on one, MJAX_TEST_TPU=1)
    found = Platform("xla", "tpu" if os.environ.get("MJAX_TEST_TPU", "") not in ("", "0")
                     else "cpu")
    assert rb.default_platform() == found
    monkeypatch.setenv("JAX_PLATFORMS", "cuda,cpu")
    assert rb.default_platform() == Platform("xla", "cuda")
    monkeypatch.setenv("MJAX_PLATFORM", "cpu")
    assert rb.default_platform() == Platform("xla", "cpu")
    monkeypatch.setenv("MJAX_BACKEND", "iree")
    assert rb.default_platform() == Platform("iree", "cpu")
    monkeypatch.setenv("MJAX_BACKEND", "iree-vulkan")
    assert rb.default_platform() == Platform("iree", "vulkan")
    monkeypatch.setenv("MJAX_BACKEND", "tpu")
    with pytest.raises(ValueError, match="MJAX_BACKEND='tpu'"):
        rb.default_platform()
    monkeypatch.setenv("MJAX_BACKEND", "xla")
    rb.set_default_platform("iree")
    assert rb.default_platform() == Platform("iree", "cpu")
    rb.set_default_platform(None)      # (back to the environment: MJAX_PLATFORM=cpu)
    assert rb.default_platform() == Platform("xla", "cpu")
    for var in ("MJAX_BACKEND", "MJAX_PLATFORM", "JAX_PLATFORMS"):
        monkeypatch.delenv(var)
    assert rb.default_platform() == found


def test_backend_platforms_are_the_backends_jax_holds(monkeypatch):
    """jnp.__array_namespace_info__().devices() lists every backend's devices, as JAX's
    xb.backends(): unconfigured, discovery's platform and every other installed one that
    opens (on a TPU machine the chip, then the CPU); configured, the chosen one and the
    rest of the jax_platforms list."""
    monkeypatch.setattr(rb, "_DEFAULT", [])
    for var in ("MJAX_BACKEND", "MJAX_PLATFORM", "JAX_PLATFORMS"):
        monkeypatch.delenv(var, raising=False)
    tpu, cpu = Platform("xla", "tpu"), Platform("xla", "cpu")
    monkeypatch.setattr(rb, "_DISCOVERED", [tpu])
    monkeypatch.setitem(rb._SKIPPED, "cuda", "no GPU here")
    monkeypatch.setattr(rb, "available_platforms", lambda: ["cuda", "tpu", "cpu"])
    assert rb.backend_platforms() == [tpu, cpu]
    monkeypatch.setattr(rb, "_DISCOVERED", [cpu])
    monkeypatch.setattr(rb, "available_platforms", lambda: ["cpu"])
    assert rb.backend_platforms() == [cpu]
    monkeypatch.setenv("JAX_PLATFORMS", "cpu")
    assert rb.backend_platforms("cpu") == [cpu]
    assert rb.backend_platforms("cpu,iree,cpu") == [cpu, Platform("iree", "cpu")]
    monkeypatch.setenv("MJAX_PLATFORM", "cpu")          # (one platform, not the list's first)
    assert rb.backend_platforms("tpu,cpu") == [cpu]


def test_registry_makes_one_backend_per_platform(monkeypatch):
    made = []

    class Fake:
        def __init__(self, target):
            made.append(target)
            self.target = target

    monkeypatch.setitem(rb._PLUGINS, "fake", Fake)
    monkeypatch.setattr(rb, "_BACKENDS", {})
    a = rb.get_backend(Platform("fake", "x"))
    assert isinstance(a, Fake) and a.target == "x"
    assert rb.get_backend(Platform("fake", "x")) is a and made == ["x"]
    assert rb.backends_are_initialized()
    with pytest.raises(ValueError, match="no backend 'nosuch' is registered"):
        rb.get_backend(Platform("nosuch", "cpu"))


def test_iree_names_share_one_backend_and_buffers_read_back():
    if os.environ.get("MJAX_TEST_TPU", "") not in ("", "0") and \
            importlib.util.find_spec("iree") is None:
        pytest.skip("TPU: needs iree, a test dependency not installed on the TPU machine")
    iree = rb.get_backend("iree")
    assert isinstance(iree, IreeBackend) and rb.get_backend("iree-cpu") is iree
    assert isinstance(rb.get_backend("cpu"), XlaBackend)
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    for name in ("iree", "cpu"):
        backend = rb.get_backend(name)
        np.testing.assert_array_equal(rb.buffer_to_numpy(backend.put(x)), x)
        assert rb.backend_of_device(backend.devices()[0]) is backend


# ---- layering ----------------------------------------------------------------------------
def mjax_imports(path: pathlib.Path) -> tuple[set, set]:
    """(module-level, function-local) mjax modules a file imports."""
    tree = ast.parse(path.read_text())
    top, local = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module:
            names = {node.module} | {f"{node.module}.{a.name}" for a in node.names}
        elif isinstance(node, ast.Import):
            names = {a.name for a in node.names}
        else:
            continue
        names = {n for n in names if n.startswith("mjax.")}
        (top if node.col_offset == 0 else local).update(names)
    return top, local


def test_runtime_layers():
    """backend.py imports no other mjax module; xla.py and iree.py are leaves that import
    the interface and their own helpers, never each other; no mjax import in runtime/ is
    hidden in a function."""
    for path in RUNTIME.glob("*.py"):
        top, local = mjax_imports(path)
        assert not local, f"{path.name}: function-local imports of {sorted(local)}"
    assert mjax_imports(RUNTIME / "backend.py")[0] == set()
    for leaf, other in (("xla.py", "mjax.runtime.iree"), ("iree.py", "mjax.runtime.xla")):
        top, _ = mjax_imports(RUNTIME / leaf)
        assert other not in top, f"{leaf} imports {other}"
        assert "mjax.runtime.backend" in top
        allowed = ("mjax.runtime.backend", "mjax.runtime.compilation_cache", "mjax.runtime.ir_dump",
                   "mjax.runtime.iree_rewrites", "mjax.runtime.gpu_plugin", "mjax.runtime.jaxlib_process",
                   "mjax.runtime.host_effects", "mjax.dialect")
        assert all(n.startswith(allowed) or n == "mjax.runtime" for n in top), (leaf, top)
