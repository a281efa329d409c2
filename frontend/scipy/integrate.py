"""`mjax.scipy.integrate`: numerical integration of sampled data, as `jax.scipy.integrate`."""
from __future__ import annotations

from mjax import numpy as jnp
from mjax.numpy.arguments import check_arraylike

__all__ = ["trapezoid"]


def trapezoid(y, x=None, dx=1.0, axis=-1):
    """Integral of sampled `y` along `axis` by the composite trapezoidal rule, with sample
    points `x` or a uniform spacing `dx` (SciPy's `scipy.integrate.trapezoid`)."""
    check_arraylike("trapezoid", y, *(() if x is None else (x,)))
    return jnp.trapezoid(y, x, dx, axis)
