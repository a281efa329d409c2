"""A one-device XLA program called with NumPy arrays among its arguments, their puts made by
jaxlib's C++ jit (`_jax.pjit`) instead of `batched_device_put` (docs/performance.md,
"NumPy arguments through jaxlib's C++ jit").

Why: `batched_device_put` puts through an HLO sharding and makes a Python array per put.
On a TPU that costs a cached `f(np_array)` about 8% over JAX's call, whose C++ jit puts
a host array straight onto the program's device (`DevicePutWithDevice`), then runs the
program. `host_call(executable, direct)` wraps mjax's compiled program in that same C++ jit: the
jit fast path (runtime/_fastpath.c) calls it with the call's buffers, NumPy arrays left
as they are, and wraps the jaxlib arrays it gives back in `mjax.Array`s as usual.

The C++ jit reads three process-wide states (disable_jit, x64, a post-call hook), which
JAX's config registers when jax is imported. Where jax is not imported, mjax registers
its own (jax, imported later, replaces them with its own). Neither state changes what
runs here: under JAX's disable_jit the C++ jit runs the program from Python (`call`),
and the fast path never hands it a 64-bit NumPy array (`X64_DTYPES`), the only kind of
argument the x64 state changes (a put squashes it to 32 bits where x64 is off).
"""
from __future__ import annotations

import sys
import threading
from typing import Any, NamedTuple

import numpy as np
from jaxlib import _jax
from jaxlib._jax import config as config_ext

# NumPy arrays of these dtypes never go to the C++ jit (see the module).
X64_DTYPES = frozenset(np.dtype(t) for t in (np.float64, np.int64, np.uint64,
                                             np.complex128))

_TREES = _jax.pytree.PyTreeRegistry()
_STATES: list = []
_LOCK = threading.Lock()


class FastpathData(NamedTuple):
    """The fields the C++ jit reads from a cache miss's second result."""
    xla_executable: Any
    out_pytree_def: Any
    in_shardings: Any
    out_shardings: Any
    out_avals: Any
    out_committed: Any
    kept_var_bitvec: Any
    in_device_local_layouts: Any
    const_args: Any


def _ensure_jit_states() -> None:
    """Registers mjax's states for the C++ jit where JAX's config has not registered its
    own (jax not imported)."""
    if _STATES or "jax._src.config" in sys.modules:
        return
    with _LOCK:
        if _STATES or "jax._src.config" in sys.modules:
            return
        states = (config_ext.Config("mjax_host_call_disable_jit", False),
                  config_ext.Config("mjax_host_call_x64", False),
                  config_ext.Config("mjax_host_call_post_hook", None))
        _jax.jax_jit.set_disable_jit_state(states[0])
        _jax.jax_jit.set_enable_x64_state(states[1])
        _jax.jax_jit.set_post_hook_state(states[2])
        _STATES.extend(states)


def host_call(executable, direct):
    """`call(*bufs)` -> tuple of output buffers for a one-device XLA `executable` whose
    arguments may include exact NumPy arrays (not of X64_DTYPES; the others jaxlib arrays
    on its device); None where it does not apply (several devices, or no `direct`: the
    executable's `(run, handlers)`, which it lacks for custom layouts, results in host
    memory, callbacks served beside the run). Its caller keeps it (the jit cache entry):
    it holds the executable, and its own cache of calls."""
    if direct is None or len(executable.devices) != 1:
        return None
    return _wrap(executable, *direct)


def _wrap(executable, run, handlers):
    _ensure_jit_states()
    backend, device = executable.backend, executable.devices[0]
    sharding = backend.sharding(device)

    def miss(*args):
        """Runs the program (NumPy arrays put from Python, on its device) and gives the
        C++ jit what it keeps to run the next calls like this one itself."""
        bufs = [backend.put(a, device) if type(a) is np.ndarray else a for a in args]
        outs = tuple(run(bufs).consume_with_handlers(handlers))
        n = len(args)
        data = FastpathData(executable.loaded, _TREES.flatten(outs)[1], [sharding] * n,
                            [o._sharding for o in outs], [o.aval for o in outs],
                            [o._committed for o in outs], [True] * n, [None] * n, [])
        return outs, data, False

    def call(*args):      # (what the C++ jit calls under JAX's disable_jit)
        return miss(*args)[0]

    def no_fallback(arg, sharding, layout):
        raise RuntimeError(f"mjax host_call: argument {arg!r} is not on the program's device")

    # (its own cache: a few kinds of call, NumPy or device arrays in each position)
    return _jax.pjit("mjax_host_call", call, miss, [], [], object(), _TREES, no_fallback,
                     _jax.PjitFunctionCache(capacity=8))


__all__ = ["FastpathData", "X64_DTYPES", "host_call"]
