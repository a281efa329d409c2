"""What `vjp(...)`'s function object does with each input's cotangent (JAX: jax.ad).

`f_vjp.with_refs(*markers)` takes one marker per primal leaf (a prefix tree is not
accepted, as in JAX):

    GradValue()   return the cotangent, as `f_vjp(ct)` does
    a Ref         add the cotangent into the ref (`ref[...] += ct`); the result holds
                  GradRef() there
    DontWant()    skip it: it is not computed, and the result holds DidntWant()
"""
from __future__ import annotations

import dataclasses

from mjax.base.tree_util import register_dataclass


@dataclasses.dataclass(frozen=True, slots=True)
class GradValue:
    """Return this input's cotangent as a value."""


@dataclasses.dataclass(frozen=True, slots=True)
class DontWant:
    """Do not compute this input's cotangent."""


@register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class DidntWant:
    """Stands for a cotangent that was not computed (DontWant)."""


@register_dataclass
@dataclasses.dataclass(frozen=True, slots=True)
class GradRef:
    """Stands for a cotangent that was added into a ref."""


__all__ = ["DidntWant", "DontWant", "GradRef", "GradValue"]
