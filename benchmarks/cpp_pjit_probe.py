"""Probe: could jaxlib's C++ jit fast path (`_jax.pjit` + `PjitFunctionCache`) dispatch
mjax's compiled programs? Runs without importing jax.

    python benchmarks/cpp_pjit_probe.py

It wraps one mjax executable in `_jax.pjit` with a cache-miss callback that returns the
fast-path data (executable, shardings, avals) and times a cached call with (a) jaxlib's
own array type as the argument and (b) an `mjax.Array`, against mjax's own fast path.
To run at all, `_jax.pjit` needs the process-wide `jax_jit.set_*_state` registrations
that JAX's config makes when it is imported; this probe sets private ones, which is why
mjax itself cannot (JAX in the same process would overwrite them, or read mjax's).
See docs/performance.md (issue #13) for the outcome.
"""
from __future__ import annotations

import time
import timeit

from jaxlib import _jax
from jaxlib._jax import config as config_ext

import mjax
import mjax.numpy as jnp
from mjax.jit.api import _FAST_TREES
from mjax.runtime import get_backend
from mjax.runtime.host_call import FastpathData


def per_call_us(fn, n=20000) -> float:
    return min(timeit.repeat(fn, number=n, repeat=7, timer=time.process_time)) / n * 1e6


def main():
    f = mjax.jit(lambda x: x + 1.0)
    x = jnp.ones((4,), jnp.float32)
    f(x), f(x)
    entry = f._memo.entry
    exe = entry.executable
    sharding = get_backend().sharding(exe.devices[0])
    misses = [0]

    def cache_miss(*args):
        misses[0] += 1
        leaves, _ = _FAST_TREES.flatten(args)
        out = exe.execute([getattr(leaf, "_buf", leaf) for leaf in leaves])[0]
        data = FastpathData(exe.loaded, _FAST_TREES.flatten(out)[1], [sharding],
                            [sharding], list(entry.out_avals), [True], [True], [None], [])
        return out, data, False

    def no_fallback(*args):
        raise RuntimeError("shard_arg_fallback called")

    states = [config_ext.Config("disable_jit", False), config_ext.Config("x64", False),
              config_ext.Config("post_hook", None)]
    _jax.jax_jit.set_disable_jit_state(states[0])
    _jax.jax_jit.set_enable_x64_state(states[1])
    _jax.jax_jit.set_post_hook_state(states[2])
    cpp = _jax.pjit("probe", None, cache_miss, [], [], object(), _FAST_TREES, no_fallback,
                    _jax.PjitFunctionCache(capacity=16))
    buf = x._buf
    cpp(buf), cpp(buf)
    print(f"jaxlib array argument: {per_call_us(lambda: cpp(buf)):.2f} us a call, "
          f"{misses[0]} cache miss(es), result type {type(cpp(buf)).__name__}")
    misses[0] = 0
    for _ in range(3):
        cpp(x)
    print(f"mjax.Array argument: {misses[0]} cache misses in 3 calls (never cached)")
    print(f"mjax's own fast path: {per_call_us(lambda: f(x)):.2f} us a call")


if __name__ == "__main__":
    main()
