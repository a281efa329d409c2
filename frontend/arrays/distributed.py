"""`mjax.distributed`: one program over the devices of several processes (hosts).

    mjax.distributed.initialize("10.0.0.1:1234", num_processes=2, process_id=i)
    mjax.devices()          # every process's devices; mjax.local_devices(): this one's

Process 0 runs jaxlib's distributed runtime service (the coordinator); every process
connects a client to it. On CPU the client is made with that client and Gloo TCP
collectives; on a PJRT plugin platform (MJAX_PLATFORM=cuda/rocm) the plugin's client is
made with it and the process's node id and node count, and the plugin brings its own
collectives (NCCL/RCCL). A jit over a mesh of all processes' devices then runs one SPMD
program across them. Call it before any other mjax call that touches devices.
docs/multihost.md shows how to run it. JAX: jax.distributed.
"""
from __future__ import annotations

import atexit
import contextlib
import functools
import threading

from jaxlib import _jax
from jaxlib import xla_client as xc

from mjax.runtime.backend import (Platform, available_platforms, backends_are_initialized,
                                  configured_platform, get_backend)

_STATE: dict = {}
_LOCK = threading.Lock()


def is_initialized() -> bool:
    return "client" in _STATE


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, local_device_ids=None, *,
               cluster_detection_method=None, initialization_timeout: int = 300,
               coordinator_bind_address: str | None = None,
               heartbeat_timeout_seconds: int = 100, shutdown_timeout_seconds: int = 300,
               **unsupported):
    """Connects this process to the others. JAX: jax.distributed.initialize.

    A process that stops sending heartbeats for `heartbeat_timeout_seconds` (it died, or
    hangs) fails the job: the coordination service tells every other process, and
    jaxlib's runtime ends each of them with "Terminating process because the JAX
    distributed service detected fatal errors. This most likely indicates that another
    task died" (SIGABRT), as in JAX, rather than leaving it waiting in a collective. When
    process 0 (the coordinator) dies, the others end at once."""
    if unsupported:
        raise NotImplementedError(f"mjax.distributed.initialize does not support "
                                  f"{sorted(unsupported)}")
    if coordinator_address is None or num_processes is None or process_id is None:
        raise NotImplementedError("mjax.distributed.initialize needs coordinator_address, "
                                  "num_processes and process_id (no cluster auto-detection)")
    if local_device_ids is not None or cluster_detection_method is not None:
        raise NotImplementedError("mjax.distributed.initialize(local_device_ids=..., "
                                  "cluster_detection_method=...) is not supported")
    # The platform chosen, else the installed one of highest priority (discovering which
    # opens would open its devices, which must wait for the distributed client).
    platform = configured_platform() or Platform("xla", available_platforms()[0])
    if platform.backend == "iree":
        raise NotImplementedError(f"mjax.distributed.initialize: the {str(platform)!r} backend "
                                  f"runs one process; use XLA (cpu, or a PJRT plugin)")
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
                bind, num_processes, heartbeat_timeout=heartbeat_timeout_seconds,
                shutdown_timeout=shutdown_timeout_seconds)
        # The client heartbeats at the service's rate: with its own default rate a live
        # process looked dead to a service with a shorter timeout (and the job failed).
        client = _jax.get_distributed_runtime_client(
            coordinator_address, process_id, init_timeout=initialization_timeout,
            heartbeat_timeout=heartbeat_timeout_seconds)
        client.connect()
        _STATE.update(client=client, process_id=process_id, num_processes=num_processes)
        # At exit the client disconnects before the service stops, as JAX's clean_up
        # does (else the service, torn down first, fails the client's process).
        atexit.register(shutdown)
        # The runtime makes its client on first use; hand it the distributed options.
        if str(platform) == "cpu":
            collectives = _jax.make_gloo_tcp_collectives(distributed_client=client)
            with _client_options("make_cpu_client", distributed_client=client,
                                 node_id=process_id, num_nodes=num_processes,
                                 collectives=collectives):
                get_backend("cpu")
        else:
            # A PJRT plugin (GPU): node id and count as create options; the plugin uses
            # the distributed client's key-value store to set up NCCL between processes.
            with _client_options("make_c_api_client", distributed_client=client,
                                 options={"node_id": process_id,
                                          "num_nodes": num_processes}):
                get_backend(platform)


@contextlib.contextmanager
def _client_options(factory: str, **options):
    """While active, jaxlib's client factory `factory` gets `options` (restored
    afterwards)."""
    original = getattr(xc, factory)
    setattr(xc, factory, functools.partial(original, **options))
    try:
        yield
    finally:
        setattr(xc, factory, original)


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
