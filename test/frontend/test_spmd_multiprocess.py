"""mjax.distributed.initialize on a PJRT plugin platform (GPU): the plugin's client is
made with the distributed client and this process's node id and node count (what the
plugin needs to set up NCCL across processes). No GPU here: the plugin's client factory
is replaced by a recorder; the coordinator and client are real (one process, loopback)."""
from __future__ import annotations

import socket

import pytest
from jaxlib import xla_client as xc

import mjax
import mjax.runtime.xla as rx


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_plugin_client_gets_the_distributed_options(monkeypatch):
    calls = []

    def fake_factory(plugin_name, options=None, distributed_client=None, **kw):
        calls.append((plugin_name, options, distributed_client))
        return object()

    made = []
    monkeypatch.setattr(xc, "make_c_api_client", fake_factory)
    monkeypatch.setattr(rx, "default_platform", lambda: "cuda")
    monkeypatch.setattr(rx, "backends_are_initialized", lambda: False)
    # The runtime's plugin path calls xc.make_c_api_client(platform) on first use.
    monkeypatch.setattr(rx, "get_backend",
                        lambda platform=None: made.append(xc.make_c_api_client(platform)))
    mjax.distributed.initialize(f"127.0.0.1:{_free_port()}", num_processes=1,
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
    monkeypatch.setattr(rx, "default_platform", lambda: "iree")
    with pytest.raises(NotImplementedError, match="iree"):
        mjax.distributed.initialize("127.0.0.1:1", num_processes=1, process_id=0)
