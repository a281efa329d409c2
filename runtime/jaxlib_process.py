"""Process-wide settings of jaxlib that mjax makes at import, as JAX does when imported:
quiet C++ logs and a garbage-collector hook. (runtime/xla.py imports this module.)"""
from __future__ import annotations

import gc
import os

from jaxlib import _jax
from jaxlib import utils as jaxlib_utils


# ---- jaxlib's C++ log ------------------------------------------------------------------
# XLA and PJRT log through absl, and left alone print INFO lines on every start (the CPU
# client's "PjRt-IFRT device count"). JAX hides them by defaulting TF_CPP_MIN_LOG_LEVEL
# to 1 (WARNING) in the environment before jaxlib loads, which only works while jax is
# the first to load it; mjax sets absl's level itself, at import, unless the user set
# TF_CPP_MIN_LOG_LEVEL (then jaxlib has read it). jax_logging_level overrides both.
_CPP_LEVELS = {"DEBUG": 0, "INFO": 0, "WARNING": 1, "ERROR": 2, "CRITICAL": 3}


def set_log_level(level: str | None) -> None:
    """jaxlib's C++ minimum log level from a Python level name (the jax_logging_level
    option); None and 'NOTSET' leave it as it is, as in JAX."""
    if level not in (None, "NOTSET"):
        jaxlib_utils.absl_set_min_log_level(_CPP_LEVELS[level])


if "TF_CPP_MIN_LOG_LEVEL" not in os.environ:
    set_log_level("WARNING")


def _collect_jaxlib_garbage(phase, info):
    """jaxlib queues some Python objects it releases (the tracebacks it records with each
    execution among them) and frees them in `collect_garbage()`; without a caller they
    pile up, ~56 bytes per executed program. JAX hooks it to Python's garbage collector
    when imported; mjax does the same, so memory stays flat without JAX in the process."""
    if phase == "start":
        _jax.collect_garbage()


if hasattr(_jax, "collect_garbage"):
    gc.callbacks.append(_collect_jaxlib_garbage)
