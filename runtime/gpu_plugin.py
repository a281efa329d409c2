"""PJRT plugin clients (CUDA, ROCm), found and set up as JAX's plugin packages set them up,
without importing jax.

A GPU client needs four things besides the plugin library itself:
1. NVIDIA's libraries (cuBLAS, cuDNN, cuSOLVER, ...) loaded from the `nvidia.*` wheels
   first, so the plugin finds those copies whatever LD_LIBRARY_PATH says;
2. the options `xla_client.generate_pjrt_gpu_plugin_options()` reads from the
   environment, so XLA_PYTHON_CLIENT_PREALLOCATE, _MEM_FRACTION and _ALLOCATOR act as in
   JAX (two processes, or mjax beside JAX, can then share one GPU);
3. the plugin extension's FFI handlers (host callbacks among them) and custom types,
   handed to XLA through the extension's registration hook;
4. jaxlib's GPU solver kernels (`cusolver_*_ffi`), which linalg's GPU lowerings call
   (passes/rules/linalg.py).
"""
from __future__ import annotations

import ctypes
import functools
import glob
import importlib
import importlib.util
import os

from jaxlib import xla_client as xc

# The packages that hold each platform's plugin extension (newest first).
_EXTENSIONS = {"cuda": [f"{p}.cuda_plugin_extension" for p in
                        ("jax_cuda13_plugin", "jax_cuda12_plugin", "jaxlib.cuda")],
               "rocm": [f"{p}.rocm_plugin_extension" for p in
                        ("jax_rocm7_plugin", "jax_rocm60_plugin", "jaxlib.rocm")]}

# NVIDIA wheels' libraries, by `nvidia.<package>`: CUDA 13's wheels share nvidia/cu13, CUDA
# 12's have one package each. Missing ones are skipped (a system CUDA may provide them).
_NVIDIA_LIBRARIES = (
    ("cu13", ("libcudart.so.13", "libnvrtc.so.13", "libcublasLt.so.13", "libcublas.so.13",
              "libcupti.so.13", "libcusparse.so.12", "libcusolver.so.12",
              "libcufft.so.12")),
    ("cuda_runtime", ("libcudart.so.12",)), ("cuda_nvrtc", ("libnvrtc.so.12",)),
    ("cublas", ("libcublasLt.so.12", "libcublas.so.12")), ("cuda_cupti", ("libcupti.so.12",)),
    ("cusparse", ("libcusparse.so.12",)), ("cusolver", ("libcusolver.so.11",)),
    ("cufft", ("libcufft.so.11",)), ("nccl", ("libnccl.so.2",)),
    ("nvshmem", ("libnvshmem_host.so.3",)), ("cudnn", ("libcudnn.so.9",)))


def find_pjrt_plugin(platform: str) -> str | None:
    """Path of an installed PJRT plugin library for `platform` ('cuda', 'rocm', ...).

    `MJAX_PJRT_PLUGIN_<PLATFORM>` names one explicitly; otherwise the `jax_plugins`
    namespace packages (jax-cuda12-pjrt, jax-cuda13-pjrt, ...) are searched without
    importing jax.
    """
    explicit = os.environ.get(f"MJAX_PJRT_PLUGIN_{platform.upper()}")
    if explicit:
        return explicit
    for root in _namespace_roots("jax_plugins"):
        for lib in sorted(glob.glob(os.path.join(root, f"xla_{platform}*", "*.so"))):
            if "plugin" in os.path.basename(lib):
                return lib
    return None


def plugin_client(platform: str, path: str):
    """A PJRT client of the plugin at `path` for `platform`, set up as the module
    docstring says (runtime/backend.py's platform record finds the path)."""
    gpu = platform in _EXTENSIONS
    if platform == "cuda":
        _preload_nvidia_libraries()
    # The plugin carries its own copy of absl's log, which reads its level from the
    # environment when loaded: WARNING, as JAX sets it, unless the user chose one (else
    # every start prints INFO lines, and each XLA compile ptxas's register notes).
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    if not xc.pjrt_plugin_loaded(platform):
        c_api = xc.load_pjrt_plugin_dynamically(platform, path)
        if gpu:      # (a plugin someone else loaded, JAX say, had its handlers set there)
            _register_extension(platform, c_api)
    if not xc.pjrt_plugin_initialized(platform):
        xc.initialize_pjrt_plugin(platform)
    if not gpu:
        return xc.make_c_api_client(platform)
    _register_solvers()
    return xc.make_c_api_client(platform, xc.generate_pjrt_gpu_plugin_options(), None)


def _namespace_roots(package: str) -> list[str]:
    spec = importlib.util.find_spec(package)
    return list(spec.submodule_search_locations or []) if spec else []


@functools.cache
def _preload_nvidia_libraries() -> None:
    roots = _namespace_roots("nvidia")
    for package, names in _NVIDIA_LIBRARIES:
        for name in names:
            for root in roots:
                path = os.path.join(root, package, "lib", name)
                if os.path.exists(path):
                    try:
                        ctypes.cdll.LoadLibrary(path)
                    except OSError:
                        pass     # (the plugin reports what it then cannot find)
                    break


def _register_extension(platform: str, c_api) -> None:
    """Hands XLA the plugin extension's FFI handlers and types for `platform`."""
    ext = _first_module(_EXTENSIONS[platform])
    if ext is None:
        return
    name = platform.upper()
    xc.register_custom_call_handler(
        name, functools.partial(ext.register_custom_call_target, c_api))
    if hasattr(ext, "register_custom_type") and hasattr(xc, "register_custom_type_handler"):
        xc.register_custom_type_handler(
            name, functools.partial(ext.register_custom_type, c_api))
        for type_name, type_id in getattr(ext, "ffi_types", dict)().items():
            xc.register_custom_type(type_name, type_id, platform=name)
    for target, handler in getattr(ext, "ffi_handlers", dict)().items():
        xc.register_custom_call_target(target, handler, platform=name, api_version=1)


@functools.cache
def _register_solvers() -> None:
    """jaxlib's GPU linear-algebra kernels (`jaxlib.gpu_solver`: cuSOLVER/hipSOLVER and
    the hybrid eig; `gpu_sparse`: the tridiagonal solve; `gpu_linalg`: the perturbed
    tridiagonal solve; each finds its kernels in the plugin packages), registered with
    XLA for their platforms, as JAX's linalg module registers them."""
    for module in ("jaxlib.gpu_solver", "jaxlib.gpu_sparse", "jaxlib.gpu_linalg"):
        try:
            kernels = importlib.import_module(module)
        except ImportError:
            continue
        for name, handlers in kernels.registrations().items():
            for target, handler, api_version in handlers:
                xc.register_custom_call_target(target, handler, platform=name,
                                               api_version=api_version)
        # (the hybrid kernels, eig with left eigenvectors: LAPACK on the host, or MAGMA)
        getattr(kernels, "initialize_hybrid_kernels", lambda: None)()


def _first_module(names):
    for name in names:
        try:
            return importlib.import_module(name)
        except ImportError:
            continue
    return None
