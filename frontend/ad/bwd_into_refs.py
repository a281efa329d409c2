"""A backward jit that accumulates cotangents into refs (`VJP.with_refs` under a trace):
the rewrite is the pass-side mjax.passes.bwd_into_refs."""
from __future__ import annotations

from mjax.passes.bwd_into_refs import accumulate_into_refs

__all__ = ["accumulate_into_refs"]
