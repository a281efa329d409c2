"""JAX-private: jax._src.distributed (orbax): `global_state`, the distributed runtime of
this process (its client, service, process id and count), read from mjax.distributed."""
from mjax.arrays import distributed as _distributed


class _GlobalState:
    """A view of mjax.distributed's state with JAX's attribute names (None: not made,
    process 0 of 1 before `initialize`)."""

    client = property(lambda self: _distributed._STATE.get("client"))
    service = property(lambda self: _distributed._STATE.get("service"))
    process_id = property(lambda self: _distributed._STATE.get("process_id", 0))
    num_processes = property(lambda self: _distributed._STATE.get("num_processes", 1))

    def is_initialized(self) -> bool:
        return _distributed.is_initialized()


global_state = _GlobalState()
