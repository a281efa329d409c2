"""JAX: jax.monitoring: a process-wide registry of listeners for named events,
durations, time spans and scalars (profilers and checkpointing libraries listen here).

mjax records no events of its own yet (JAX's '/jax/core/compile/...' durations are not
emitted); what libraries record reaches every registered listener, as in JAX.
"""
from __future__ import annotations

__all__ = ["record_event", "record_event_duration_secs", "record_event_time_span",
           "record_scalar", "register_event_listener", "register_event_duration_secs_listener",
           "register_event_time_span_listener", "register_scalar_listener",
           "unregister_event_listener", "unregister_event_duration_listener",
           "unregister_event_time_span_listener", "unregister_scalar_listener",
           "clear_event_listeners"]

# One list per kind of record; a listener is called with the record's arguments.
_listeners: dict[str, list] = {"event": [], "duration": [], "span": [], "scalar": []}


def _notify(kind, *args, **kwargs):
    for callback in list(_listeners[kind]):
        callback(*args, **kwargs)


def record_event(event: str, **kwargs: str | int) -> None:
    """Calls every event listener with (event, **kwargs)."""
    _notify("event", event, **kwargs)


def record_event_duration_secs(event: str, duration: float, **kwargs: str | int) -> None:
    """Calls every duration listener with (event, duration, **kwargs)."""
    _notify("duration", event, duration, **kwargs)


def record_event_time_span(event: str, start_time: float, end_time: float,
                           **kwargs: str | int) -> None:
    """Calls every time-span listener with (event, start_time, end_time, **kwargs)."""
    _notify("span", event, start_time, end_time, **kwargs)


def record_scalar(event: str, value: float | int, **kwargs: str | int) -> None:
    """Calls every scalar listener with (event, value, **kwargs)."""
    _notify("scalar", event, value, **kwargs)


def register_event_listener(callback) -> None:
    _listeners["event"].append(callback)


def register_event_duration_secs_listener(callback) -> None:
    _listeners["duration"].append(callback)


def register_event_time_span_listener(callback) -> None:
    _listeners["span"].append(callback)


def register_scalar_listener(callback) -> None:
    _listeners["scalar"].append(callback)


def _unregister(kind, callback):
    if callback not in _listeners[kind]:
        raise AssertionError(f"{callback!r} is not a registered {kind} listener")
    _listeners[kind].remove(callback)


def unregister_event_listener(callback) -> None:
    _unregister("event", callback)


def unregister_event_duration_listener(callback) -> None:
    _unregister("duration", callback)


def unregister_event_time_span_listener(callback) -> None:
    _unregister("span", callback)


def unregister_scalar_listener(callback) -> None:
    _unregister("scalar", callback)


def clear_event_listeners() -> None:
    """Removes every listener of every kind."""
    for callbacks in _listeners.values():
        callbacks.clear()
