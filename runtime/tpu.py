"""The TPU's PJRT client: libtpu, found and opened as JAX finds and opens it, without
importing jax.

libtpu is a PJRT plugin library. JAX looks for it in `TPU_LIBRARY_PATH` (a file), else in
the `libtpu` package (`pip install "mjax[tpu]"` brings the release JAX 0.10.2 pins), and
tries it before the CPU whenever it is found; opening it fails when no chip is attached
(or another process holds the chip), and the process then goes on with the CPU.
"""
from __future__ import annotations

import glob
import importlib.util
import os
import warnings

from jaxlib import xla_client as xc

from jaxlib import version as _jaxlib_version


def find_library(platform: str = "tpu") -> str | None:
    """libtpu's path: `TPU_LIBRARY_PATH` when it names a file, else the `libtpu`
    package's `libtpu.so` (found without importing it), else None."""
    explicit = os.environ.get("TPU_LIBRARY_PATH")
    if explicit:
        if os.path.isfile(explicit):
            return explicit
        warnings.warn(f"TPU_LIBRARY_PATH is set to {explicit!r}, which is not a file; "
                      f"looking for the libtpu package instead", RuntimeWarning,
                      stacklevel=3)
    spec = importlib.util.find_spec("libtpu")
    if spec is None or not spec.submodule_search_locations:
        return None
    for root in spec.submodule_search_locations:
        path = os.path.join(root, "libtpu.so")
        if os.path.isfile(path):
            return path
    return None


def attached_chips() -> int:
    """TPU chips on this machine's PCI bus (Google's vendor id); 0 where /sys does not
    show them (some sandboxes), which does not mean there is none."""
    count = 0
    for vendor in glob.glob("/sys/bus/pci/devices/*/vendor"):
        try:
            with open(vendor) as f:
                if f.read().strip() == "0x1ae0":
                    count += 1
        except OSError:
            continue
    return count


# PCI device ids of TPU chips (Google's vendor id 0x1ae0), as JAX's hardware_utils lists
# them: v3, plc, v4, v5p, v5e, v6e, 7x.
_TPU_DEVICE_IDS = {"0x0027", "0x0056", "0x005e", "0x0062", "0x0063", "0x006f", "0x0076"}


def tpu_chips() -> int:
    """TPU chips on the PCI bus, counted as JAX counts them (its known device ids)."""
    count = 0
    for vendor in glob.glob("/sys/bus/pci/devices/*/vendor"):
        try:
            with open(vendor) as f:
                if f.read().strip() != "0x1ae0":
                    continue
            with open(os.path.join(os.path.dirname(vendor), "device")) as f:
                count += f.read().strip() in _TPU_DEVICE_IDS
        except OSError:
            continue
    return count


def cloud_tpu_vm() -> bool:
    """Whether JAX's Cloud TPU setup applies at `import jax` (cloud_tpu_init): libtpu is
    installed and a TPU chip is attached, or JAX_FORCE_TPU_INIT is set. JAX then makes
    'tpu,cpu' its jax_platforms (a TPU that fails to open is an error, not a fallback)."""
    if "JAX_FORCE_TPU_INIT" in os.environ:
        return True
    return tpu_chips() > 0 and find_library() is not None


def client_create_options() -> str:
    """JAX's jax_pjrt_client_create_options on a Cloud TPU VM (jaxlib's version is the
    JAX release mjax follows)."""
    return f"ml_framework_name:JAX;ml_framework_version:{_jaxlib_version.__version__}"


def make_client(platform: str, library: str):
    """A PJRT client of libtpu at `library` (the process's one TPU client)."""
    if attached_chips() == 0:
        # (else libtpu asks a cloud metadata server about the machine, and waits)
        os.environ.setdefault("TPU_SKIP_MDS_QUERY", "1")
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
    # What JAX sets before opening libtpu (jaxlib's version is the JAX release mjax
    # follows): libtpu picks per-framework defaults from these, and mjax means to compile
    # and run as JAX does there.
    os.environ.setdefault("TPU_ML_PLATFORM", "JAX")
    os.environ.setdefault("TPU_ML_PLATFORM_VERSION", _jaxlib_version.__version__)
    args = os.environ.get("LIBTPU_INIT_ARGS", "")
    if "--xla_tpu_use_enhanced_launch_barrier" not in args:
        os.environ["LIBTPU_INIT_ARGS"] = (args + " --xla_tpu_use_enhanced_launch_barrier"
                                          "=true").strip()
    if not xc.pjrt_plugin_loaded("tpu"):
        xc.load_pjrt_plugin_dynamically("tpu", library)
    if not xc.pjrt_plugin_initialized("tpu"):
        xc.initialize_pjrt_plugin("tpu")
    options = {"ml_framework_name": "JAX", "ml_framework_version": _jaxlib_version.__version__}
    return xc.make_c_api_client("tpu", options)


__all__ = ["attached_chips", "client_create_options", "cloud_tpu_vm", "find_library",
           "make_client", "tpu_chips"]
