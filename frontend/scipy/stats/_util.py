"""Shared helpers of `mjax.scipy.stats`: argument promotion and support masking."""
from __future__ import annotations

import numpy as np

from mjax import lax
from mjax import numpy as jnp


def promote(name, *args):
    """Promote to one inexact dtype and to one rank (leading 1s), as JAX's
    promote_args_inexact: shapes are not broadcast, so a scalar parameter's own terms
    (log(scale), lgamma(a)) stay scalars, computed (and folded by XLA) as JAX's are, and
    each op broadcasts its operands where it meets them."""
    out = jnp._promote(f"scipy.stats.{name}", *args, inexact=True, broadcast=False)
    ranks = {jnp.ndim(o) for o in out if jnp.ndim(o)}
    if len(ranks) < 2:
        return out      # (scalars stay scalars: each op broadcasts them)
    rank = max(ranks)
    return [o if jnp.ndim(o) == rank else lax.broadcast_to_rank(o, rank) for o in out]


_PY_SCALAR = {"b": bool, "i": int, "u": int, "f": float, "c": complex}


def const(x, value):
    """`value` as a NumPy constant of x's dtype (a literal of the program, as JAX's
    _lax_const; a device array would be a runtime argument, which XLA cannot fold). For
    a weakly typed scalar x it is a Python scalar, as JAX's, so the result stays weak."""
    if getattr(x, "weak_type", False) and np.ndim(x) == 0:
        return _PY_SCALAR[np.dtype(x.dtype).kind](value)
    return np.array(value, dtype=x.dtype)


def outside(mask, value, fill):
    """value where not mask, else fill (for leaving the support)."""
    return jnp.where(mask, jnp.full_like(value, fill), value)


def not_weak(x):
    """x with its weak type dropped, where JAX's version of a function returns a
    committed dtype even for Python-scalar arguments."""
    return lax.convert_element_type(x, x.dtype) if getattr(x, "weak_type", False) else x
