"""The strong-Wolfe line search under `minimize` (Nocedal & Wright, "Numerical
Optimization", algorithms 3.5 and 3.6), with JAX's choices so results agree to the bit:
the first trial step from the previous decrease, doubling while no bracket is found, a
zoom that tries cubic, then quadratic interpolation, then bisection, its failure when
the bracket gets narrower than 1e-5 (1e-10 in float64) or after 30 trials, and a floor of
1e-8 on the step outside float64. Branches are `where`s, not `cond`s, so both zooms run
every outer step (each one's loop stops at once when it is not wanted).
"""
from __future__ import annotations

from typing import Any, NamedTuple

from mjax import lax
from mjax import numpy as jnp
from mjax.ad import value_and_grad
from mjax.specs import dtypes

_HIGHEST = lax.Precision.HIGHEST


def _dot(a, b):
    return jnp.dot(a, b, precision=_HIGHEST)


def _cubic_minimizer(a, fa, fpa, b, fb, c, fc):
    """The minimizer of the cubic through (a, fa) with slope fpa, (b, fb) and (c, fc)."""
    dtype = dtypes.result_type(a, fa, fpa, b, fb, c, fc)
    db, dc = b - a, c - a
    denom = (db * dc) ** 2 * (db - dc)
    lhs = jnp.array([[dc ** 2, -db ** 2], [-dc ** 3, db ** 3]], dtype=dtype)
    rhs = jnp.array([fb - fa - fpa * db, fc - fa - fpa * dc], dtype=dtype)
    coef = _dot(lhs, rhs) / denom
    A, B = coef[0], coef[1]
    radical = B * B - 3. * A * fpa
    return a + (-B + jnp.sqrt(radical)) / (3. * A)


def _quadratic_minimizer(a, fa, fpa, b, fb):
    """The minimizer of the parabola through (a, fa) with slope fpa, and (b, fb)."""
    db = b - a
    curv = (fb - fa - fpa * db) / (db ** 2)
    return a - fpa / (2. * curv)


def _pick(cond, new, old):
    """`old` with the fields of `new` (a dict) replaced where `cond` holds."""
    return old._replace(**{k: jnp.where(cond, v, getattr(old, k)) for k, v in new.items()})


class _Zoom(NamedTuple):
    done: Any
    failed: Any
    j: Any
    a_lo: Any
    phi_lo: Any
    dphi_lo: Any
    a_hi: Any
    phi_hi: Any
    dphi_hi: Any
    a_rec: Any
    phi_rec: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any
    nfev: Any
    ngev: Any


def _zoom(phi_dphi, sufficient_decrease_fails, curvature_holds, a_lo, phi_lo, dphi_lo,
          a_hi, phi_hi, dphi_hi, g0, skip):
    """Shrink the bracket [a_lo, a_hi] until a step meets both Wolfe conditions."""
    init = _Zoom(done=False, failed=False, j=0, a_lo=a_lo, phi_lo=phi_lo, dphi_lo=dphi_lo,
                 a_hi=a_hi, phi_hi=phi_hi, dphi_hi=dphi_hi, a_rec=(a_lo + a_hi) / 2.,
                 phi_rec=(phi_lo + phi_hi) / 2., a_star=1., phi_star=phi_lo,
                 dphi_star=dphi_lo, g_star=g0, nfev=0, ngev=0)

    def body(s):
        width = s.a_hi - s.a_lo
        lo, hi = jnp.minimum(s.a_hi, s.a_lo), jnp.maximum(s.a_hi, s.a_lo)
        cubic_margin, quad_margin = 0.2 * width, 0.1 * width
        too_narrow = 1e-5 if dtypes.finfo(width.dtype).bits < 64 else 1e-10
        s = s._replace(failed=s.failed | (width <= too_narrow))
        # (the cubic may be NaN; then its bounds test fails and the next choice is taken)
        cubic = _cubic_minimizer(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi, s.a_rec,
                                 s.phi_rec)
        use_cubic = (s.j > 0) & (cubic > lo + cubic_margin) & (cubic < hi - cubic_margin)
        quad = _quadratic_minimizer(s.a_lo, s.phi_lo, s.dphi_lo, s.a_hi, s.phi_hi)
        use_quad = ~use_cubic & (quad > lo + quad_margin) & (quad < hi - quad_margin)
        bisect = (s.a_lo + s.a_hi) / 2.
        a = jnp.where(use_cubic, cubic, s.a_rec)
        a = jnp.where(use_quad, quad, a)
        a = jnp.where(~use_cubic & ~use_quad, bisect, a)
        phi, dphi, g = phi_dphi(a)
        phi = phi.astype(s.phi_lo.dtype)
        dphi = dphi.astype(s.dphi_lo.dtype)
        g = g.astype(s.g_star.dtype)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)

        new_hi = sufficient_decrease_fails(a, phi) | (phi >= s.phi_lo)
        found = curvature_holds(dphi) & ~new_hi
        flip = (dphi * (s.a_hi - s.a_lo) >= 0.) & ~new_hi & ~found
        new_lo = ~new_hi & ~found
        s = _pick(new_hi, dict(a_hi=a, phi_hi=phi, dphi_hi=dphi, a_rec=s.a_hi,
                               phi_rec=s.phi_hi), s)
        s = _pick(found, dict(a_star=a, phi_star=phi, dphi_star=dphi, g_star=g),
                  s._replace(done=found | s.done))
        s = _pick(flip, dict(a_hi=s.a_lo, phi_hi=s.phi_lo, dphi_hi=s.dphi_lo,
                             a_rec=s.a_hi, phi_rec=s.phi_hi), s)
        s = _pick(new_lo & ~flip, dict(a_rec=s.a_lo, phi_rec=s.phi_lo), s)
        s = _pick(new_lo, dict(a_lo=a, phi_lo=phi, dphi_lo=dphi), s)
        j = s.j + 1
        return s._replace(j=j, failed=s.failed | (j >= 30))

    return lax.while_loop(lambda s: ~s.done & ~skip & ~s.failed, body, init)


class _Search(NamedTuple):
    done: Any
    failed: Any
    i: Any
    a_prev: Any
    phi_prev: Any
    dphi_prev: Any
    nfev: Any
    ngev: Any
    a_star: Any
    phi_star: Any
    dphi_star: Any
    g_star: Any


class LineSearchResults(NamedTuple):
    """What `line_search` found: status 0 passed, 1 zoom failed, 3 out of iterations."""
    failed: Any
    nit: Any
    nfev: Any
    ngev: Any
    k: Any
    a_k: Any
    f_k: Any
    g_k: Any
    status: Any


def line_search(f, xk, pk, old_fval=None, old_old_fval=None, gfk=None, c1=1e-4, c2=0.9,
                maxiter=20):
    """A step along the descent direction pk from xk meeting the strong Wolfe conditions
    with constants c1, c2, in at most maxiter doublings. old_fval and gfk are f and its
    gradient at xk (computed when either is None); old_old_fval, the previous value,
    sets the first trial step."""
    xk, pk = jnp._promote("line_search", jnp.asarray(xk), jnp.asarray(pk), inexact=True,
                          broadcast=False)

    def phi_dphi(t):
        t = jnp.array(t, dtype=pk.dtype)
        phi, g = value_and_grad(f)(xk + t * pk)
        return phi, jnp.real(_dot(g, pk)), g

    fresh = old_fval is None or gfk is None
    if fresh:
        phi0, dphi0, gfk = phi_dphi(0)
    else:
        phi0, dphi0 = old_fval, jnp.real(_dot(gfk, pk))
    if old_old_fval is None:
        first = 1
    else:
        guess = 1.01 * 2 * (phi0 - old_old_fval) / dphi0
        first = jnp.where(guess > 1, 1.0, guess)

    def sufficient_decrease_fails(a, phi):
        return phi > phi0 + c1 * a * dphi0

    def curvature_holds(dphi):
        return jnp.abs(dphi) <= -c2 * dphi0

    init = _Search(done=jnp.array(False), failed=jnp.array(False), i=1, a_prev=0.,
                   phi_prev=phi0, dphi_prev=dphi0, nfev=int(fresh), ngev=int(fresh),
                   a_star=0., phi_star=phi0, dphi_star=dphi0, g_star=gfk)

    def body(s):
        a = jnp.where(s.i == 1, first, s.a_prev * 2.)
        phi, dphi, g = phi_dphi(a)
        s = s._replace(nfev=s.nfev + 1, ngev=s.ngev + 1)
        bracket_up = sufficient_decrease_fails(a, phi) | ((phi >= s.phi_prev) & (s.i > 1))
        found = curvature_holds(dphi) & ~bracket_up
        bracket_down = (dphi >= 0.) & ~bracket_up & ~found
        z_up = _zoom(phi_dphi, sufficient_decrease_fails, curvature_holds, s.a_prev,
                     s.phi_prev, s.dphi_prev, a, phi, dphi, gfk, ~bracket_up)
        s = s._replace(nfev=s.nfev + z_up.nfev, ngev=s.ngev + z_up.ngev)
        z_down = _zoom(phi_dphi, sufficient_decrease_fails, curvature_holds, a, phi, dphi,
                       s.a_prev, s.phi_prev, s.dphi_prev, gfk, ~bracket_down)
        s = s._replace(nfev=s.nfev + z_down.nfev, ngev=s.ngev + z_down.ngev)
        star = ("a_star", "phi_star", "dphi_star", "g_star")
        s = _pick(bracket_up, {k: getattr(z_up, k) for k in star},
                  s._replace(done=bracket_up | s.done,
                             failed=(bracket_up & z_up.failed) | s.failed))
        s = _pick(found, dict(a_star=a, phi_star=phi, dphi_star=dphi, g_star=g),
                  s._replace(done=found | s.done))
        s = _pick(bracket_down, {k: getattr(z_down, k) for k in star},
                  s._replace(done=bracket_down | s.done,
                             failed=(bracket_down & z_down.failed) | s.failed))
        return s._replace(i=s.i + 1, a_prev=a, phi_prev=phi, dphi_prev=dphi)

    s = lax.while_loop(lambda s: ~s.done & (s.i <= maxiter) & ~s.failed, body, init)
    status = jnp.where(s.failed, jnp.array(1), jnp.where(s.i > maxiter, jnp.array(3),
                                                         jnp.array(0)))
    alpha = jnp.asarray(s.a_star)
    if dtypes.finfo(alpha.dtype).bits != 64:
        # (steps this small stall the search outside float64)
        alpha = jnp.where(jnp.abs(alpha) < 1e-8, jnp.sign(alpha) * 1e-8, alpha)
    return LineSearchResults(failed=s.failed | ~s.done, nit=s.i - 1, nfev=s.nfev,
                             ngev=s.ngev, k=s.i, a_k=alpha, f_k=s.phi_star, g_k=s.g_star,
                             status=status)
