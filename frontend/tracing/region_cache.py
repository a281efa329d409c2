"""Bodies of control flow kept and reused, as JAX reuses the jaxpr it traced for a loop
body or a cond branch: tracing `lax.scan(f, ...)`, `while_loop`, `fori_loop` or `cond`
again with the same function object and the same argument types (in the same trace or
another) copies the body traced the first time instead of running the Python function
again, so its Python side effects happen once, as in JAX.

A kept body is a detached copy of its region placeholder (core.RegionTrace), with what
using it needs: the output types and tree, the outer values it captured, and the text of
the functions it calls (a body calling a jitted function), copied into another module
under a prefix the first time that module needs them.

Not kept, because the body depends on more than its function and argument types: bodies
that captured a tracer of an enclosing trace (the value exists only there) or a ref,
bodies traced under explicit sharding types or inside a shard_map (the types of their
values live in the trace), and bodies that asked which values a differentiation perturbs
(mjax.ad.symbolic_zeros). What else changes tracing is part of the key: the options that
affect tracing, the named axes, the mesh and the named scopes around the call.
"""
from __future__ import annotations

import weakref

from mjax.tracing import registration
from mjax.tracing.core import RegionTrace, Tracer, current_trace, trace_region
from mjax.dialect.functions import rename_uses, symbols_of
from mjax.dialect.types import RefAval
from mjax.passes.ir_util import functions_text, referenced_symbols
from mjax.passes.rules.export import _clone_functions
from mjax.tracing.source_info import name_stack
from mjax.tracing.staging import EVAL_SHAPES, copy_prefix, kept_for, trace_key

# function -> {key: _KeptBody}; an entry goes when its function is collected.
_KEPT: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
# checkpointed function -> {key: nested_traces.NestedTrace} (mjax.ad.remat).
CHECKPOINTS: "weakref.WeakKeyDictionary" = weakref.WeakKeyDictionary()
_PER_FUNCTION = 32          # (the most bodies kept per function: the oldest go first)


def clear_cache() -> None:
    """Forgets every kept body, and eval_shape's results (jax.clear_caches)."""
    _KEPT.clear()
    CHECKPOINTS.clear()
    EVAL_SHAPES.clear()


class _KeptBody:
    """One traced body and what reusing it needs."""

    def __init__(self, body: RegionTrace, in_avals, out_avals, out_tree, side):
        self.holder = body._holder.clone(ip=False)      # (detached)
        self.in_avals = list(in_avals)
        self.out_avals, self.out_tree = list(out_avals), out_tree
        self.captured, self.capture_avals = list(body.captured), list(body.capture_avals)
        self.forwarded = list(body.forwarded)
        self.side = dict(side) if side is not None else None
        self.symbols = sorted(referenced_symbols(self.holder))
        self.text = functions_text(body.module, self.symbols) if self.symbols else None
        self.prefix = copy_prefix()
        self.origin = weakref.ref(body.module)  # (names are unique only within a module)

    def body_in(self, parent) -> RegionTrace:
        """A copy of the body in `parent`'s block, its calls naming functions `parent`'s
        module holds (copied in when it lacks them)."""
        holder = self.holder.clone(ip=parent.ip)
        if self.symbols:
            module = parent.module.operation
            table = symbols_of(parent.module)
            # (another module holding a name may hold another function: copy them all)
            missing = [] if parent.module is self.origin() else list(self.symbols)
            if missing:
                if f"{self.prefix}_{missing[0]}" not in table:
                    _clone_functions(module, self.text, self.prefix)
                for name in missing:
                    rename_uses(name, f"{self.prefix}_{name}", holder)
        body = RegionTrace.reusing(parent, holder, self.in_avals, self.captured,
                                   self.capture_avals)
        body.forwarded = list(self.forwarded)
        return body


def _key(kind, in_avals, args_tree, parent):
    if parent.type_specs is not None or parent.varying is not None:
        return None
    # (the named scopes too: mjax keeps them in the ops' locations)
    return trace_key(kind, args_tree, tuple(in_avals), name_stack())


def _keepable(body: RegionTrace, asked_before: int) -> bool:
    return (registration.PERTURBATION_QUERIES() == asked_before
            and not any(isinstance(v, Tracer) for v in body.captured)
            and not any(type(a) is RefAval for a in body.capture_avals)
            and body.type_specs is None and body.varying is None)


def trace_region_kept(owner, kind: str, fun, in_avals, args_tree=None, sources=None,
                      side: dict | None = None):
    """core.trace_region(fun, in_avals, args_tree, sources), reusing the body traced
    before for the user's function `owner` in the role `kind` with the same argument
    types (None: not kept). `side`: a dict `fun` fills while it runs (restored on
    reuse)."""
    if owner is None:
        return trace_region(fun, in_avals, args_tree, sources)
    parent = current_trace()
    key = _key(kind, in_avals, args_tree, parent)
    kept = kept_for(_KEPT, owner) if key is not None else None
    if kept is not None:
        hit = kept.get(key)
        if hit is not None:
            if side is not None:
                side.update(hit.side)
            return hit.body_in(parent), list(hit.out_avals), hit.out_tree
    asked = registration.PERTURBATION_QUERIES()
    body, out_avals, out_tree = trace_region(fun, in_avals, args_tree, sources)
    if kept is not None and _keepable(body, asked):
        if len(kept) >= _PER_FUNCTION:
            del kept[next(iter(kept))]
        kept[key] = _KeptBody(body, in_avals, out_avals, out_tree, side)
    return body, out_avals, out_tree


__all__ = ["CHECKPOINTS", "clear_cache", "trace_region_kept"]
