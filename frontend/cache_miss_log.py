"""jax_explain_cache_misses: why a jit traces again, logged against the closest key it has
seen (JAX logs the same explanation)."""
from __future__ import annotations

import logging

from mjax.config import config
from mjax.source_info import describe_location, user_location

# (the logger jit's compilations use: 'mjax.api', as eager ops share)
logger = logging.getLogger("mjax.api")


def explain_cache_miss(name, key, seen):
    """jax_explain_cache_misses: why jit(name) traces again, against the closest key seen."""
    where = f"TRACING CACHE MISS at {describe_location(user_location())} because:\n  "
    if not seen:
        logger.warning(where + "never seen function:\n    %s", name)
        return
    parts = ("input pytree structure", "input types", "static arguments",
             "config options that change tracing", "donated arguments")
    closest = max(seen, key=lambda k: sum(a == b for a, b in zip(k, key)))
    reasons = []
    for what, old, new in zip(parts, closest, key):
        if old == new:
            continue
        if what == "input types" and len(old) == len(new):
            diff = [f"argument {i}: {o.str_short()} -> {n.str_short()}"
                    + (" (weak type differs)" if o.weak_type != n.weak_type else "")
                    for i, (o, n) in enumerate(zip(old, new)) if o != n]
            reasons.append("never seen input type signature; closest seen differs in "
                           + ", ".join(diff))
        elif what == "config options that change tracing":
            names = [o.name for o in config.options() if o.affects_tracing]
            reasons.append("; ".join(f"{n}: {o!r} -> {v!r}" for n, o, v in zip(names, old, new)
                                     if o != v) + " (config options that change tracing)")
        else:
            reasons.append(f"different {what}: {old} vs {new}")
    logger.warning(where + "for %s: %s", name, "\n  ".join(reasons))
