"""`lax` special functions that JAX also builds from other ops rather than lowering to
one HLO op: incomplete gamma/beta, Bessel i0e/i1e, Hurwitz zeta, and the reparameterized
gamma-sample gradient. They reuse the compositions in `mjax.scipy.special`."""
from __future__ import annotations

from mjax import dtypes


def _floats(name, *args):
    from mjax import numpy as jnp
    arrays = [jnp.asarray(a) for a in args]
    for i, a in enumerate(arrays):
        if not dtypes.issubdtype(a.dtype, dtypes.np.floating):
            raise TypeError(f"{name} does not accept dtype {a.dtype} at position {i}. "
                            f"Accepted dtypes at position {i} are subtypes of floating.")
    return jnp._promote(f"lax.{name}", *arrays)


def igamma(a, x):
    """The regularized lower incomplete gamma function P(a, x). JAX: lax.igamma."""
    from mjax.scipy.special_series import gammainc
    return gammainc(*_floats("igamma", a, x))


def igammac(a, x):
    """The regularized upper incomplete gamma function Q(a, x). JAX: lax.igammac."""
    from mjax.scipy.special_series import gammaincc
    return gammaincc(*_floats("igammac", a, x))


def igamma_grad_a(a, x):
    """d/da P(a, x). JAX: lax.igamma_grad_a."""
    from mjax import jvp
    from mjax import numpy as jnp
    from mjax.scipy.special_series import gammainc
    a, x = _floats("igamma_grad_a", a, x)
    return jvp(lambda a_: gammainc(a_, x), (a,), (jnp.ones_like(a),))[1]


def random_gamma_grad(a, x):
    """d x / d a for a Gamma(a, 1) sample x (implicit reparameterization).
    JAX: lax.random_gamma_grad."""
    from mjax.random_gamma_grad import random_gamma_grad as _grad
    return _grad(*_floats("random_gamma_grad", a, x))


def betainc(a, b, x):
    """The regularized incomplete beta function I_x(a, b). JAX: lax.betainc."""
    from mjax.scipy.special_series import betainc as _betainc
    return _betainc(*_floats("betainc", a, b, x))


def bessel_i0e(x):
    """exp(-|x|) I0(x). JAX: lax.bessel_i0e."""
    from mjax.scipy.special_series import i0e
    return i0e(*_floats("bessel_i0e", x))


def bessel_i1e(x):
    """exp(-|x|) I1(x). JAX: lax.bessel_i1e."""
    from mjax.scipy.special_series import i1e
    return i1e(*_floats("bessel_i1e", x))


def zeta(x, q):
    """The Hurwitz zeta function. JAX: lax.zeta."""
    from mjax.scipy.special_series import zeta as _zeta
    return _zeta(*_floats("zeta", x, q))
