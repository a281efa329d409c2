"""Programs whose host callbacks run beside them. On the host CPU an execution returns
after its callbacks ran; on an accelerator they are host transfers served while the
program runs on, so `effects_barrier` waits for those programs (JAX:
dispatch.runtime_tokens)."""
from __future__ import annotations

# The runtime token of the last run of such a program, per device list.
PENDING: dict = {}


def wait_for_effects() -> None:
    """Blocks until every such program run so far has finished, its callbacks with it
    (runs on one device list finish in order: the last one's token is enough)."""
    while PENDING:
        _, token = PENDING.popitem()
        token.block_until_ready()
