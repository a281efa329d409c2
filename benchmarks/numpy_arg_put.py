"""Where a NumPy argument's cost goes: a jitted call of a NumPy array, of a device array
and of a 256x256 NumPy array, in mjax and JAX (one process, jax imported after mjax's
rows), and jaxlib's `batched_device_put` alone with each host-buffer semantics, also
patched into mjax's fast path (its C++ jit put, host_run, set aside for those rows). Run on a TPU (docs/tpu.md, the eighth session) or a CPU:

    python benchmarks/numpy_arg_put.py [--calls N]

Prints microseconds per call, wall and CPU (process) time: medians of 5 rounds of N
calls each. Also times, with mjax's compiled program, a bare put + `execute_sharded` from
Python and jaxlib's C++ jit alone (`_jax.pjit` over the program, runtime/host_call.py: what
mjax's fast path calls with NumPy arguments; its put is JAX's, `DevicePutWithDevice`).
"""
import argparse
import statistics
import sys
import time

import numpy as np


def per_call(fn, n, rounds=5):
    for _ in range(min(n, 200)):
        fn()
    walls, cpus = [], []
    for _ in range(rounds):
        start, cpu = time.perf_counter(), time.process_time()
        for _ in range(n):
            out = fn()
        getattr(out, "block_until_ready", lambda: None)()
        walls.append((time.perf_counter() - start) / n * 1e6)
        cpus.append((time.process_time() - cpu) / n * 1e6)
    return statistics.median(walls), statistics.median(cpus)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--calls", type=int, default=3000)
    n = parser.parse_args().calls

    import mjax
    import mjax.runtime.xla as rx
    from jaxlib import _jax
    from jaxlib import xla_client as xc
    from mjax.runtime.backend import get_backend
    fast = sys.modules["mjax.jit.fast"]     # (mjax.jit is the function)

    host, big = np.ones((4,), np.float32), np.ones((256, 256), np.float32)
    rows = {}
    f = mjax.jit(lambda x: x * 2.0)
    rows["mjax f(NumPy array)"] = per_call(lambda: f(host), n)
    dev = mjax.device_put(host)
    rows["mjax f(device array)"] = per_call(lambda: f(dev), n)
    rows["mjax f(256x256 NumPy array)"] = per_call(lambda: f(big), n // 6)

    backend = get_backend()
    device = backend.client.devices()[0]
    aval = rx._Aval((4,), np.dtype(np.float32))
    sharding = _jax.GSPMDSharding(xc.DeviceList((device,)), rx._REPLICATED)
    putter = backend.putter
    entry = f._memo.entry
    host_run, entry.host_run = entry.host_run, None   # (the fast path's own put, as before)
    for name in ("ZERO_COPY", "IMMUTABLE_ONLY_DURING_CALL",
                 "IMMUTABLE_UNTIL_TRANSFER_COMPLETES"):
        sem = getattr(_jax.HostBufferSemantics, name)

        def put(a=host, sem=sem, aval=aval):
            return xc.batched_device_put(aval, sharding, [a], [device], True, False, sem,
                                         True)
        rows[f"batched_device_put {name}"] = per_call(put, n)
        backend.putter = lambda shape, dtype, sem=sem: (
            lambda a: put(a, sem, rx._Aval(tuple(shape), np.dtype(dtype))))
        fast._PUTTERS.clear()
        rows[f"mjax f(NumPy array), puts {name}"] = per_call(lambda: f(host), n)
        backend.putter = putter
        fast._PUTTERS.clear()
    entry.host_run = host_run

    run, handlers = f._memo.entry.executable.direct_call()
    held = dev._buf
    rows["bare execute_sharded(held buffer)"] = per_call(
        lambda: run([held]).consume_with_handlers(handlers), n)
    put0 = HostPutOf(backend, host)
    rows["bare put + execute_sharded"] = per_call(
        lambda: run([put0(host)]).consume_with_handlers(handlers), n)

    import jax
    from mjax.runtime.host_call import host_call
    try:
        entry = f._memo.entry     # (what f's fast path calls)
        cpp = host_call(entry.executable, (entry.run, entry.handlers))
        cpp(host), cpp(host)
        rows["jaxlib C++ jit of mjax's program, NumPy array"] = per_call(lambda: cpp(host), n)
        rows["jaxlib C++ jit of mjax's program, device array"] = per_call(lambda: cpp(held), n)
    except Exception as e:      # a probe: report and go on
        print("C++ jit probe failed:", type(e).__name__, e)
    g = jax.jit(lambda x: x * 2.0)
    rows["jax f(NumPy array)"] = per_call(lambda: g(host), n)
    jdev = jax.device_put(host)
    rows["jax f(device array)"] = per_call(lambda: g(jdev), n)
    rows["jax f(256x256 NumPy array)"] = per_call(lambda: g(big), n // 6)
    print("device:", mjax.devices()[0])
    print(f"{'':62s} {'wall':>9s}    {'CPU':>9s}")
    for name, (us, cpu) in rows.items():
        print(f"{name:62s} {us:9.2f} us {cpu:9.2f} us")


def HostPutOf(backend, array):
    """The put mjax's fast path keeps for `array`'s shape and dtype."""
    return backend.putter(array.shape, array.dtype)


if __name__ == "__main__":
    main()
