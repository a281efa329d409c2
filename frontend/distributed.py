"""`mjax.distributed`: one program over the devices of several processes (hosts).

    mjax.distributed.initialize("10.0.0.1:1234", num_processes=2, process_id=i)
    mjax.devices()          # every process's devices; mjax.local_devices(): this one's

Process 0 runs jaxlib's distributed runtime service (the coordinator); every process
connects a client to it, and the CPU client is made with that client and Gloo TCP
collectives, so a jit over a mesh of all processes' devices runs one SPMD program across
them (NCCL on GPUs comes with the plugin). Call it before any other mjax call that
touches devices. JAX: jax.distributed.
"""
from __future__ import annotations

import contextlib
import functools
import threading

from jaxlib import _jax
from jaxlib import xla_client as xc

_STATE: dict = {}
_LOCK = threading.Lock()


def is_initialized() -> bool:
    return "client" in _STATE


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_ids=None, *,
               cluster_detection_method=None, initialization_timeout: int = 300,
               coordinator_bind_address: str | None = None, heartbeat_timeout_seconds=None,
               **unsupported):
    """Connects this process to the others. JAX: jax.distributed.initialize."""
    from mjax.runtime.xla import backends_are_initialized, default_platform, get_backend
    if unsupported:
        raise NotImplementedError(f"mjax.distributed.initialize does not support "
                                  f"{sorted(unsupported)}")
    if coordinator_address is None or num_processes is None or process_id is None:
        raise NotImplementedError("mjax.distributed.initialize needs coordinator_address, "
                                  "num_processes and process_id (no cluster auto-detection)")
    if local_device_ids is not None or cluster_detection_method is not None:
        raise NotImplementedError("mjax.distributed.initialize(local_device_ids=..., "
                                  "cluster_detection_method=...) is not supported")
    if default_platform() != "cpu":
        raise NotImplementedError(f"mjax.distributed.initialize supports the CPU platform "
                                  f"(Gloo collectives) only, not {default_platform()!r}")
    with _LOCK:
        if is_initialized():
            raise RuntimeError("distributed.initialize should only be called once.")
        if backends_are_initialized():
            raise RuntimeError("distributed.initialize must be called before any JAX "
                               "computations are executed.")
        if not 0 <= process_id < num_processes:
            raise ValueError(f"process_id {process_id} is out of range for "
                             f"num_processes={num_processes}")
        if process_id == 0:
            bind = coordinator_bind_address or "[::]:" + coordinator_address.rsplit(":", 1)[1]
            _STATE["service"] = _jax.get_distributed_runtime_service(
                bind, num_processes, **({"heartbeat_timeout": heartbeat_timeout_seconds}
                                        if heartbeat_timeout_seconds else {}))
        client = _jax.get_distributed_runtime_client(
            coordinator_address, process_id, init_timeout=initialization_timeout)
        client.connect()
        _STATE.update(client=client, process_id=process_id, num_processes=num_processes)
        collectives = _jax.make_gloo_tcp_collectives(distributed_client=client)
        # The runtime makes its CPU client on first use; hand it the distributed options.
        with _cpu_client_options(distributed_client=client, node_id=process_id,
                                 num_nodes=num_processes, collectives=collectives):
            get_backend("cpu")


@contextlib.contextmanager
def _cpu_client_options(**options):
    """While active, jaxlib's make_cpu_client gets `options` (restored afterwards)."""
    original = xc.make_cpu_client
    xc.make_cpu_client = functools.partial(original, **options)
    try:
        yield
    finally:
        xc.make_cpu_client = original


def shutdown():
    """Disconnects from the other processes. JAX: jax.distributed.shutdown."""
    with _LOCK:
        client = _STATE.pop("client", None)
        if client is not None:
            client.shutdown()
        service = _STATE.pop("service", None)
        if service is not None:
            service.shutdown()
        _STATE.clear()


def process_index() -> int:
    return _STATE.get("process_id", 0)


def process_count() -> int:
    return _STATE.get("num_processes", 1)


__all__ = ["initialize", "shutdown", "is_initialized"]
