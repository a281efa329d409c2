"""Transfer guards: refusing (or logging) transfers between host and devices.

The checks themselves are jaxlib's (its `guard_lib` state, read by every host-to-device
put mjax makes through `batched_device_put`): these options set that state, process-wide
(`config.update`) or per thread (the context managers), as JAX's do. An implicit transfer
is one a computation makes on its own (a NumPy array passed to a jitted function or an
eager op); `device_put`/`device_get` are explicit ones, which only the '*_explicit' levels
refuse. JAX: jax.transfer_guard and the jax_transfer_guard_* options.

mjax stages Python scalars into its programs as constants, so `x + 1.0` transfers nothing
(JAX puts the scalar on the device first, which 'disallow' refuses).
"""
from __future__ import annotations

import contextlib

from jaxlib._jax import guard_lib

from mjax.config import config, enum_option

_LEVELS = ("allow", "log", "disallow", "log_explicit", "disallow_explicit")
_DIRECTIONS = ("host_to_device", "device_to_device", "device_to_host")


def _level(value):
    return None if value is None else getattr(guard_lib.TransferGuardLevel, value.upper())


def _setter(state_of, direction: str):
    return lambda value: setattr(state_of(), direction, _level(value))


def _direction_option(direction: str):
    return enum_option(
        f"jax_transfer_guard_{direction}", None, _LEVELS,
        f"What a {direction.replace('_', '-')} transfer does: 'allow', 'log' (implicit "
        f"ones), 'disallow' (implicit ones), 'log_explicit' or 'disallow_explicit' (all "
        f"of them); None: as jax_transfer_guard says (default 'allow').", optional=True,
        on_change=_setter(guard_lib.global_state, direction),
        on_override=_setter(guard_lib.thread_local_state, direction))


transfer_guard_host_to_device = _direction_option("host_to_device")
transfer_guard_device_to_device = _direction_option("device_to_device")
transfer_guard_device_to_host = _direction_option("device_to_host")


def _set_all(value) -> None:
    for direction in _DIRECTIONS:
        config.update(f"jax_transfer_guard_{direction}", value)


_all_directions = enum_option(
    "jax_transfer_guard", None, _LEVELS,
    "The transfer guard level of every direction (set-only: each direction's own option "
    "reads its level).", optional=True, on_change=_set_all)


@contextlib.contextmanager
def transfer_guard(new_val: str):
    """Within the block, this thread's transfer guard level for every direction."""
    with contextlib.ExitStack() as stack:
        for state in (transfer_guard_host_to_device, transfer_guard_device_to_device,
                      transfer_guard_device_to_host):
            stack.enter_context(state(new_val))
        yield


@contextlib.contextmanager
def _explicit(field: str):
    """Within the block, this thread's transfers of one direction count as explicit."""
    state = guard_lib.thread_local_state()
    previous = getattr(state, field)
    setattr(state, field, True)
    try:
        yield
    finally:
        setattr(state, field, previous)


def explicit_device_put():
    """Marks the transfers in the block as explicit (mjax.device_put)."""
    return _explicit("explicit_device_put")


def explicit_device_get():
    """Marks the transfers in the block as explicit (mjax.device_get)."""
    return _explicit("explicit_device_get")
