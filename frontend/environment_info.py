"""`mjax.print_environment_info`: the versions and devices to quote in a bug report.
JAX: jax.print_environment_info."""
from __future__ import annotations

import os
import platform
import subprocess
import sys

import jaxlib
import numpy as np

from mjax.arrays import placement
from mjax.version import __version__


def _nvidia_smi() -> str | None:
    try:
        return subprocess.check_output(["nvidia-smi"], text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None


def print_environment_info(return_string: bool = False) -> str | None:
    """Prints (or with `return_string=True` returns) mjax's, jaxlib's, NumPy's and
    Python's versions, the devices, the platform and the JAX_/XLA_/MJAX_ environment
    variables set."""
    devs = placement.devices()
    lines = [f"jax:    {__version__} (mjax)",
             f"jaxlib: {jaxlib.__version__}",
             f"numpy:  {np.__version__}",
             f"python: {sys.version.replace(chr(10), ' ')}",
             f"device info: {devs[0].device_kind}-{len(devs)}, "
             f"{placement.local_device_count()} local devices",
             f"process_count: {placement.process_count()}",
             f"platform: {platform.uname()}"]
    lines += [f"{key}={value}" for key, value in os.environ.items()
              if key.startswith(("JAX_", "XLA_", "MJAX_"))]
    info = "\n".join(lines)
    smi = _nvidia_smi()
    if smi:
        info += "\n\n$ nvidia-smi\n" + smi
    if return_string:
        return info
    print(info)
    return None
