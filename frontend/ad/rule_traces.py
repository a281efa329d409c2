"""Custom rules traced once per staged call, as JAX traces them once per jaxpr equation:
a custom_vjp's bwd (and a fwd or custom_jvp rule traced after staging) that the passes
trace for a call of a kept trace (a jit's trace reused by a second `grad`, a `vjp` and a
`grad` of one jitted function) is copied from the module it was first traced into
instead of running the Python rule again, so its side effects happen once, as in JAX
(JAX caches the jit's JVP, partial evaluation and transpose per jaxpr).

A kept rule is the text of its function and the functions it calls, printed when it is
traced (before the passes expand it in place), parsed into another module under a prefix.
It depends only on its call (the handle: argument, residual and cotangent types, closed
over values as operands), its part (which tangents or cotangents are symbolic zeros) and
what changes tracing (the options, named axes and meshes: `staging.trace_key`). Not kept:
a bwd that reads the residuals' values from its fwd's trace (an eager vjp: those values
are one call's).
"""
from __future__ import annotations

import contextlib

from mjax.tracing.core import Tracer
from mjax.dialect.functions import symbols_of
from mjax.passes.ir_util import functions_text
from mjax.passes.rules.export import _clone_functions
from mjax.tracing.staging import copy_prefix, trace_key


class _KeptRule:
    """One traced rule: its function's name and the text of what it reaches."""

    def __init__(self, module, name: str):
        self.name = name
        self.text = functions_text(module, [name])
        self.prefix = copy_prefix()

    def function_in(self, module) -> str:
        """The name of a copy of the rule in `module` (copied in if it has none)."""
        copied = f"{self.prefix}_{self.name}"
        if copied not in symbols_of(module):
            _clone_functions(module.operation, self.text, self.prefix)
        return copied


def kept_or_traced(kept: dict, module, part: str, trace, reusable: bool) -> str:
    """The function of rule `part` in `module`: a copy of the one `kept` (a call's
    traces) holds, else `trace()`'s (kept if `reusable`)."""
    key = trace_key(part) if reusable else None
    hit = kept.get(key) if key is not None else None
    if hit is not None:
        return hit.function_in(module)
    name = trace()
    if key is not None:
        kept[key] = _KeptRule(module, name)
    return name


@contextlib.contextmanager
def reachable(values):
    """Tracers among a call's operands whose trace has ended count as live while its rule
    is traced later: the rule's uses of them become the call's operands (as the call's
    consts map them), not escaped tracers."""
    ended = {id(t.trace): t.trace for t in values
             if isinstance(t, Tracer) and not t.trace.active}
    for trace in ended.values():
        trace.active = True
    try:
        yield
    finally:
        for trace in ended.values():
            trace.active = False


__all__ = ["kept_or_traced", "reachable"]
