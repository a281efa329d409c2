"""L-BFGS (Nocedal & Wright, algorithm 7.5; complex x as Sorber et al. 2012), JAX's
experimental `minimize(method="l-bfgs-experimental-do-not-rely-on-this")`: the two-loop
recursion over the last `maxcor` steps, the strong-Wolfe `line_search`, and status
0 converged, 1 maxiter, 2 maxfun, 3 maxgrad, 4 decrease below ftol, 5 line search failed.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as _onp

from mjax import lax
from mjax import numpy as jnp
from mjax.ad import value_and_grad
from mjax.scipy.optimize.line_search import _dot, line_search
from mjax.specs import dtypes


class LBFGSState(NamedTuple):
    """The loop's carry: the point, its value and gradient, and the history of steps
    (s), gradient changes (y) and their 1 / (y.s), oldest first."""
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    s_history: Any
    y_history: Any
    rho_history: Any
    gamma: Any
    status: Any
    ls_status: Any


def minimize_lbfgs(fun, x0, maxiter=None, norm=_onp.inf, maxcor=10,
                   ftol=2.220446049250313e-09, gtol=1e-05, maxfun=None, maxgrad=None,
                   maxls=20):
    """Minimize fun from x0; without maxiter, maxfun or maxgrad, maxiter = 200 * len(x0)."""
    d = len(x0)
    dtype = dtypes.dtype(x0)
    if maxiter is None and maxfun is None and maxgrad is None:
        maxiter = d * 200
    # (a missing limit is infinite, so that the >= tests below always fail)
    maxiter, maxfun, maxgrad = (_onp.inf if v is None else v
                                for v in (maxiter, maxfun, maxgrad))
    f0, g0 = value_and_grad(fun)(x0)
    init = LBFGSState(converged=jnp.array(False), failed=jnp.array(False), k=0, nfev=1,
                      ngev=1, x_k=x0, f_k=f0, g_k=g0,
                      s_history=jnp.zeros((maxcor, d), dtype=dtype),
                      y_history=jnp.zeros((maxcor, d), dtype=dtype),
                      rho_history=jnp.zeros((maxcor,), dtype=dtype), gamma=1., status=0,
                      ls_status=0)

    def body(s):
        p = _direction(s)
        ls = line_search(f=fun, xk=s.x_k, pk=p, old_fval=s.f_k, gfk=s.g_k, maxiter=maxls)
        step = jnp.asarray(ls.a_k).astype(p.dtype) * p
        y = ls.g_k - s.g_k
        ys = jnp.real(_dot(y, step))
        rho = jnp.reciprocal(ys).astype(y.dtype)
        gamma = ys / jnp.real(_dot(jnp.conj(y), y))
        # (the last reason that holds wins, as JAX orders them)
        status = jnp.array(0)
        status = jnp.where(s.f_k - ls.f_k < ftol, 4, status)
        status = jnp.where(s.ngev >= maxgrad, 3, status)
        status = jnp.where(s.nfev >= maxfun, 2, status)
        status = jnp.where(s.k >= maxiter, 1, status)
        status = jnp.where(ls.failed, 5, status)
        converged = jnp.linalg.norm(ls.g_k, ord=norm) < gtol
        return s._replace(
            converged=converged, failed=(status > 0) & ~converged, k=s.k + 1,
            nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev,
            x_k=(s.x_k + step).astype(s.x_k.dtype), f_k=ls.f_k.astype(s.f_k.dtype),
            g_k=ls.g_k.astype(s.g_k.dtype), s_history=_push(s.s_history, step),
            y_history=_push(s.y_history, y), rho_history=_push(s.rho_history, rho),
            gamma=gamma.astype(s.g_k.dtype), status=jnp.where(converged, 0, status),
            ls_status=ls.status)

    return lax.while_loop(lambda s: ~s.converged & ~s.failed, body, init)


def _direction(s):
    """-H g by the two-loop recursion over the filled part of the history."""
    dtype = s.rho_history.dtype
    size = len(s.rho_history)
    used = jnp.where(s.k < size, s.k, size)

    def newest_first(j, carry):
        q, alphas = carry
        i = size - 1 - j
        a = s.rho_history[i] * _dot(jnp.conj(s.s_history[i]), q).real.astype(dtype)
        return q - a * jnp.conj(s.y_history[i]), alphas.at[i].set(a)

    q, alphas = lax.fori_loop(0, used, newest_first,
                              (-jnp.conj(s.g_k), jnp.zeros_like(s.rho_history)))
    q = s.gamma * q

    def oldest_first(j, q):
        i = size - used + j
        b = s.rho_history[i] * _dot(s.y_history[i], q).real.astype(dtype)
        return q + (alphas[i] - b) * s.s_history[i]

    return lax.fori_loop(0, used, oldest_first, q)


def _push(history, new):
    """history with its oldest row dropped and `new` appended."""
    return jnp.roll(history, -1, axis=0).at[-1].set(new)
