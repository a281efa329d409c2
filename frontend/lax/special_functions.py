"""`lax` special functions that JAX builds from other ops or lowers to CHLO, with JAX's
operand checks (floating operands of one dtype, broadcast): the regularized incomplete
gamma functions and their derivatives in a (computed as JAX's in mjax.lax.igamma), the
regularized incomplete beta function (mjax.lax.betainc), the exponentially scaled Bessel
functions I0e and I1e and the Hurwitz zeta function (ops of their own, as JAX's
primitives; passes/rules/bessel.py, passes/rules/elementwise.py).
"""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes
from mjax.tracing.core import aval_of_value, bind
from mjax.dialect.ops.elementwise import BesselI0eOp, BesselI1eOp, ZetaOp
from mjax.lax import betainc as _bi
from mjax.lax import igamma as _ig
from mjax.lax.elementwise import as_array, convert_element_type
from mjax.lax.shapes import broadcast_to


# ---- the public functions: JAX's checks (floating operands), promoted and broadcast ------
def _floats(name, *args):
    """The operands as arrays of one floating dtype and shape; JAX's TypeError for others."""
    arrays = [as_array(a) for a in args]
    avals = [aval_of_value(a) for a in arrays]
    for i, av in enumerate(avals):
        if not dtypes.issubdtype(av.dtype, np.floating):
            raise TypeError(f"{name} does not accept dtype {av.dtype} at position {i}. "
                            f"Accepted dtypes at position {i} are subtypes of floating.")
    dtype, weak = dtypes.promote_types(*[(av.dtype, av.weak_type) for av in avals])
    shape = np.broadcast_shapes(*[av.shape for av in avals])
    return [broadcast_to(convert_element_type(a, dtype, weak_type=weak), shape)
            for a in arrays]


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x). JAX: lax.igamma."""
    return _ig.igamma(*_floats("igamma", a, x))


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x). JAX: lax.igammac."""
    return _ig.igammac(*_floats("igammac", a, x))


def igamma_grad_a(a, x):
    """d/da P(a, x). JAX: lax.igamma_grad_a."""
    return _ig.igamma_grad_a(*_floats("igamma_grad_a", a, x))


def random_gamma_grad(a, x):
    """d x / d a for a Gamma(a, 1) sample x (implicit reparameterization).
    JAX: lax.random_gamma_grad."""
    return _ig.random_gamma_grad_value(*_floats("random_gamma_grad", a, x))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b). JAX: lax.betainc."""
    return _bi.betainc(*_floats("betainc", a, b, x))


def bessel_i0e(x):
    """exp(-|x|) I0(x). JAX: lax.bessel_i0e."""
    return bind(BesselI0eOp, *_floats("bessel_i0e", x))


def bessel_i1e(x):
    """exp(-|x|) I1(x). JAX: lax.bessel_i1e."""
    return bind(BesselI1eOp, *_floats("bessel_i1e", x))


def zeta(x, q):
    """The Hurwitz zeta function sum_k (k + q)^-x: one op, CHLO's zeta, as JAX's (so
    XLA's expansion gives the same bits); no derivative rule, as JAX's.
    JAX: lax.zeta."""
    return bind(ZetaOp, *_floats("zeta", x, q))
