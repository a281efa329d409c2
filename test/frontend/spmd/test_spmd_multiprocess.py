"""Several processes (mjax.distributed): a data-parallel train step over two local
processes' devices equals NumPy's full-batch step, a replicated result reads whole in
each process and a split one refuses (JAX's error); and on a PJRT plugin platform (GPU)
the plugin's client is made with the distributed client and this process's node id and
node count (what the plugin needs to set up NCCL across processes)."""
from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import textwrap

import numpy as np

import pytest
from jaxlib import xla_client as xc

import mjax
import mjax.distributed as dist
from mjax.runtime.backend import Platform


def _free_address() -> str:
    """'host:port', a free TCP port on a loopback address this machine has (IPv4's, else
    IPv6's); skips the test where neither opens (the TPU machine's sandbox refuses inet
    sockets: Errno 97), since the distributed runtime speaks gRPC over TCP."""
    for family, host, text in ((socket.AF_INET, "127.0.0.1", "127.0.0.1"),
                               (socket.AF_INET6, "::1", "[::1]")):
        try:
            with socket.socket(family) as s:
                s.bind((host, 0))
                return f"{text}:{s.getsockname()[1]}"
        except OSError:
            continue
    pytest.skip("no TCP sockets on this machine (loopback IPv4 and IPv6 both refused), "
                "which the distributed runtime needs")


WORKER = textwrap.dedent("""
    import json, os, sys
    os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=2"
    import numpy as np
    import mjax, mjax.numpy as jnp
    from mjax.sharding import Mesh, NamedSharding, P
    pid, address = int(sys.argv[1]), sys.argv[2]
    mjax.distributed.initialize(address, num_processes=2, process_id=pid,
                                initialization_timeout=60)
    mesh = Mesh(np.array(mjax.devices()), ("data",))
    rep, split = NamedSharding(mesh, P()), NamedSharding(mesh, P("data"))
    rng = np.random.default_rng(0)            # every process builds the same host values
    w = rng.standard_normal((5, 3)).astype(np.float32)
    x = rng.standard_normal((8, 5)).astype(np.float32)
    t = rng.standard_normal((8, 3)).astype(np.float32)

    def step(w, x, t):
        g = mjax.grad(lambda w: jnp.mean((jnp.tanh(x @ w) - t) ** 2))(w)
        return w - 0.1 * g, jnp.tanh(x @ w)

    f = mjax.jit(step, in_shardings=(rep, split, split), out_shardings=(rep, split))
    # The batch as each host would load it: only its own rows.
    xs = mjax.make_array_from_process_local_data(split, x[4 * pid:4 * pid + 4], (8, 5))
    ts = mjax.make_array_from_callback((8, 3), split, lambda index: t[index])
    new_w, y = f(mjax.device_put(w, rep), xs, ts)
    try:
        np.asarray(y)
        refused = ""
    except RuntimeError as e:
        refused = str(e)
    out = {"w": np.asarray(new_w).tolist(), "refused": refused,
           "y": [[s.index[0].start, s.index[0].stop, np.asarray(s.data).tolist()]
                 for s in y.addressable_shards]}
    print("RESULT " + json.dumps(out), flush=True)
    mjax.distributed.shutdown()
""")


def test_data_parallel_step_over_two_processes():
    address = _free_address()
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=2")
    procs = [subprocess.Popen([sys.executable, "-c", WORKER, str(i), address], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
             for i in range(2)]
    outs = []
    try:
        for p in procs:
            outs.append(p.communicate(timeout=120)[0])
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
    rng = np.random.default_rng(0)
    w = rng.standard_normal((5, 3)).astype(np.float32)
    x = rng.standard_normal((8, 5)).astype(np.float32)
    t = rng.standard_normal((8, 3)).astype(np.float32)
    y = np.tanh(x @ w)
    grad = x.T @ (2 * (y - t) / y.size * (1 - y ** 2))     # d mean((y - t)^2) / dw
    rows = set()
    for p, out in zip(procs, outs):
        assert p.returncode == 0, out[-3000:]
        r = json.loads(next(line for line in out.splitlines()
                            if line.startswith("RESULT "))[len("RESULT "):])
        np.testing.assert_allclose(r["w"], w - 0.1 * grad, rtol=1e-5, atol=1e-6)
        assert "non-addressable" in r["refused"]
        for start, stop, data in r["y"]:
            np.testing.assert_allclose(data, y[start:stop], rtol=1e-5, atol=1e-6)
            rows.add((start, stop))
    assert rows == {(0, 2), (2, 4), (4, 6), (6, 8)}


def test_plugin_client_gets_the_distributed_options(monkeypatch):
    calls = []

    def fake_factory(plugin_name, options=None, distributed_client=None, **kw):
        calls.append((plugin_name, options, distributed_client))
        return object()

    made = []
    monkeypatch.setattr(xc, "make_c_api_client", fake_factory)
    monkeypatch.setattr(dist, "configured_platform", lambda: Platform("xla", "cuda"))
    monkeypatch.setattr(dist, "backends_are_initialized", lambda: False)
    # distributed.py binds the runtime's functions by name, so they are patched there; the
    # runtime's plugin path calls xc.make_c_api_client(platform) on first use.
    monkeypatch.setattr(dist, "get_backend",
                        lambda platform=None: made.append(
                            xc.make_c_api_client(Platform.parse(platform).target)))
    mjax.distributed.initialize(_free_address(), num_processes=1,
                                process_id=0, initialization_timeout=30)
    try:
        assert len(made) == 1 and len(calls) == 1
        name, options, client = calls[0]
        assert name == "cuda"
        assert options == {"node_id": 0, "num_nodes": 1}
        assert client is not None and client is mjax.distributed._STATE["client"]
        assert xc.make_c_api_client is fake_factory     # the factory is restored
    finally:
        mjax.distributed.shutdown()
    assert not mjax.distributed.is_initialized()


def test_iree_backend_is_refused(monkeypatch):
    monkeypatch.setattr(dist, "configured_platform", lambda: Platform("iree", "cpu"))
    with pytest.raises(NotImplementedError, match="iree"):
        mjax.distributed.initialize("127.0.0.1:1", num_processes=1, process_id=0)
