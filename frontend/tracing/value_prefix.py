"""The part of a trace that computes one value, as a function of its own.

What a transformed value's text or attributes need (`.val` of a value in a vmap body:
mjax.vmap.vmap_val; a JVP tracer's tangent: mjax.ad.jvp_text) is found by transforming the
ops the value depends on alone: `prefix_ops` lists them, `prefix_function` copies them
into a private function of the trace's module, staged (and evaluated) in the trace around.
The IR work is mjax.passes.value_prefix's.
"""
from __future__ import annotations

from mjax.passes import value_prefix as _ir
from mjax.passes.value_prefix import prefix_ops


def prefix_function(trace, ops, used, v, base: str) -> str:
    """A private function `{base}_k` of trace's module: `ops` on arguments `used`,
    returning v."""
    return _ir.prefix_function(trace.module, ops, used, v, base)


__all__ = ["prefix_function", "prefix_ops"]
