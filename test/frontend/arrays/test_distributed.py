"""mjax.distributed: two local processes (loopback only) run one sharded jit step over
both processes' CPU devices, checked against NumPy; when one of them dies the other ends
with the runtime's error within the heartbeat timeout; bounded in time."""
from __future__ import annotations

import json
import os
import pathlib
import socket
import subprocess
import sys
import time

import numpy as np
import pytest

import mjax

WORKER = pathlib.Path(__file__).parent.with_name("distributed_worker.py")
HEARTBEAT_TIMEOUT = 10  # distributed_worker.HEARTBEAT_TIMEOUT


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _start_workers(*extra):
    port = str(_free_port())
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    return [subprocess.Popen([sys.executable, str(WORKER), str(i), port, *extra], env=env,
                             stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            for i in range(2)]


def test_two_processes_run_one_sharded_step():
    procs = _start_workers()
    outs = []
    try:
        for p in procs:
            out, _ = p.communicate(timeout=120)
            outs.append(out)
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    results = []
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out[-3000:]
        line = next(l for l in out.splitlines() if l.startswith("RESULT "))
        results.append(json.loads(line[len("RESULT "):]))
    x = np.arange(32, dtype=np.float32).reshape(8, 4)
    w = np.linspace(-1, 1, 4 * 3, dtype=np.float32).reshape(4, 3)
    y = np.tanh(x @ w)
    rows = set()
    for i, r in enumerate(results):
        assert (r["process_index"], r["process_count"]) == (i, 2)
        assert (r["devices"], r["local_devices"]) == (4, 2)
        np.testing.assert_allclose(r["total"], y.sum(0), rtol=1e-5)
        for start, stop, data in r["y"]:
            np.testing.assert_allclose(data, y[start:stop], rtol=1e-5, atol=1e-6)
            rows.add((start, stop))
    assert rows == {(0, 2), (2, 4), (4, 6), (6, 8)}  # each process holds its half


@pytest.mark.parametrize("victim", [1, 0], ids=["other_process_dies", "coordinator_dies"])
def test_a_dead_process_ends_the_other_within_the_heartbeat_timeout(victim):
    # After one sharded step together, the victim SIGKILLs itself; the survivor, waiting
    # in the next step for the victim's devices, must not hang: the coordination service
    # fails the job (process 0 hosts it: its death is seen at once) and jaxlib's runtime
    # ends the survivor with its fatal-error message, as JAX's does.
    procs = _start_workers(f"victim={victim}")
    survivor = procs[1 - victim]
    try:
        procs[victim].wait(timeout=300)
        died = time.monotonic()
        out, _ = survivor.communicate(timeout=HEARTBEAT_TIMEOUT + 120)
        ended = time.monotonic()
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    victim_out = procs[victim].stdout.read()
    assert "DYING" in victim_out and procs[victim].returncode == -9, victim_out[-3000:]
    assert "RESULT " in out, out[-3000:]  # the step before the death ran
    assert survivor.returncode != 0, out[-3000:]
    assert "Terminating process because the JAX distributed service detected fatal " \
           "errors. This most likely indicates that another task died" in out, out[-3000:]
    # Within the heartbeat timeout, plus slack for a loaded machine.
    assert ended - died < HEARTBEAT_TIMEOUT + 45, (ended - died, out[-3000:])


def test_initialize_after_computations_is_an_error():
    mjax.numpy.ones(2).block_until_ready()
    with pytest.raises(RuntimeError, match="before any JAX computations"):
        mjax.distributed.initialize("127.0.0.1:1", num_processes=2, process_id=0)


def test_single_process_defaults():
    assert mjax.process_index() == 0
    assert mjax.process_count() == 1
    assert mjax.local_device_count() == mjax.device_count()
