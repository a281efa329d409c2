"""Shared helpers of `mjax.scipy.stats`: argument promotion and support masking."""
from __future__ import annotations

from mjax import lax
from mjax import numpy as jnp


def promote(name, *args):
    """Promote to one inexact dtype and broadcast, as JAX's promote_args_inexact."""
    return jnp._promote(f"scipy.stats.{name}", *args, inexact=True)


def outside(mask, value, fill):
    """value where not mask, else fill (for leaving the support)."""
    return jnp.where(mask, jnp.full_like(value, fill), value)


def not_weak(x):
    """x with its weak type dropped, where JAX's version of a function returns a
    committed dtype even for Python-scalar arguments."""
    return lax.convert_element_type(x, x.dtype) if getattr(x, "weak_type", False) else x
