"""jax_check_tracer_leaks (`mjax.checking_leaks`): after a function is traced, a tracer of
its trace that is still referenced from outside the trace is reported, as JAX reports the
tracers its garbage collector still finds alive.

JAX's records of a finished trace hold no tracers (its equations hold variables), so any
live tracer is a leak there. mjax keeps some on purpose: the trace's own records (its
arguments, its captured values) and the sources of custom rules that the passes may trace
later (passes/custom_rules.py: a custom_jvp/custom_vjp call keeps its arguments and the
values its rules close over). A tracer counts as leaked when some chain of references
reaches it from elsewhere: the referrers are followed upwards until each chain ends at one
of those records (not a leak), at a module or a class (a global: a leak), or at an object
nothing visible refers to (a local variable of a running function, an object held by C
code: a leak, as in JAX). Frames of finished functions kept by tracebacks are ignored.
"""
from __future__ import annotations

import gc
import inspect
import types

from mjax.tracing.core import Tracer
from mjax.passes import custom_rules
from mjax.tracing.source_info import describe_location

# How many objects one tracer's search may visit before it is reported (a chain that long
# is not one of mjax's records).
MAX_VISITED = 5000


def check_tracer_leaks(trace, fun_name: str) -> None:
    """Raises JAX's plain Exception naming the tracers of `trace` referenced from outside
    it (see the module doc)."""
    gc.collect()
    tracers = [o for o in gc.get_objects() if isinstance(o, Tracer) and o.trace is trace]
    # (the trace's own records: its arguments, and its map of captured values)
    own = {id(tracers), id(getattr(trace, "args", None))}
    own.update(id(entry) for entry in getattr(trace, "_captured_ids", {}).values())
    records = {id(trace)} | {id(s) for s in custom_rules.sources()}
    leaked = _outside_holders(tracers, trace, own, records)
    del tracers
    if leaked:
        lines = []
        for t, holder in leaked:
            loc = getattr(t, "loc", None)
            made = (f"created at {describe_location(loc)}" if loc is not None
                    else "a function argument")
            lines.append(f"{t} ({made}) is referred to by a {type(holder).__name__}")
        raise Exception(f"Leaked trace (while tracing {fun_name}). Leaked tracer(s):\n\n"
                        + "\n".join(lines))


def _outside_holders(tracers, trace, own: set, records: set) -> list:
    """[(tracer, its referrer on a chain from outside)] for the `tracers` some chain of
    references reaches from outside the records (see the module doc). The referrers are
    found a layer at a time, for all the tracers at once (each layer is one scan of the
    objects the garbage collector tracks)."""
    seen: dict = {}         # id -> object: what the search reached (tracers first)
    holders: dict = {}      # id -> ids of the objects referring to it that the search kept
    outside: set = set()    # ids of chain ends outside the records
    layer = list(tracers)
    mine = set(own) | {id(seen), id(holders), id(outside), id(layer)}
    seen.update((id(t), t) for t in tracers)
    checked = set(seen)
    while layer:
        ids = {id(x) for x in layer}
        found = gc.get_referrers(*layer)
        mine.add(id(found))
        nxt = []
        for r in found:
            if id(r) in mine:
                continue
            # (a record, a traceback's frame, a tracer of the trace (checked itself) hold
            # what they refer to without leaking it)
            inside = (id(r) in records or inspect.isframe(r) or
                      isinstance(r, Tracer) and r.trace is trace)
            for c in gc.get_referents(r):
                if id(c) in ids:
                    held = holders.setdefault(id(c), set())
                    if not inside:
                        held.add(id(r))
            if inside or id(r) in seen:
                continue
            seen[id(r)] = r
            if isinstance(r, (types.ModuleType, type)) or len(seen) > MAX_VISITED:
                outside.add(id(r))      # (a global; a chain too long to be a record's)
            else:
                nxt.append(r)
        # (an object no tracked object refers to is a running function's local, or
        # C code's: outside, unless it is one of the tracers checked)
        outside.update(i for i in ids if i not in holders and i not in checked)
        layer = nxt
        mine.add(id(layer))
    # a holder is outside when one of its holders is
    referred = {}
    for c, hs in holders.items():
        for h in hs:
            referred.setdefault(h, []).append(c)
    todo = list(outside)
    while todo:
        for c in referred.get(todo.pop(), ()):
            if c not in outside:
                outside.add(c)
                todo.append(c)
    return [(t, seen[next(h for h in holders[id(t)] if h in outside)])
            for t in tracers if id(t) in outside]
