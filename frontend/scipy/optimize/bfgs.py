"""BFGS (Nocedal & Wright, "Numerical Optimization", algorithm 6.1) as JAX runs it: the
strong-Wolfe line search of `line_search`, the inverse-Hessian update kept only where
1 / (y.s) is finite, convergence when the gradient's `norm` falls below gtol, and
status 0 converged, 1 out of iterations, 2 + the line search's status when it failed.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as _onp

from mjax import lax
from mjax import numpy as jnp
from mjax.ad import value_and_grad
from mjax.scipy.optimize.line_search import _dot, line_search

_HIGHEST = (lax.Precision.HIGHEST, lax.Precision.HIGHEST)


class BFGSState(NamedTuple):
    """The loop's carry; `x_k`, `f_k`, `g_k`, `H_k` the current point, value, gradient
    and inverse-Hessian estimate."""
    converged: Any
    failed: Any
    k: Any
    nfev: Any
    ngev: Any
    nhev: Any
    x_k: Any
    f_k: Any
    g_k: Any
    H_k: Any
    old_old_fval: Any
    status: Any
    line_search_status: Any


def _sandwich(w, h):
    """w @ h @ w.T, contracted in the order JAX's einsum('ij,jk,lk') picks."""
    t = lax.dot_general(h, w, (((0,), (1,)), ((), ())), precision=_HIGHEST)
    return lax.dot_general(t, w, (((0,), (1,)), ((), ())), precision=_HIGHEST)


def _eye(d, dtype):
    """The identity built from iotas in the program, as JAX's jnp.eye is (a constant
    instead changes how XLA fuses the update, and with it the last bits of H)."""
    rows = lax.broadcasted_iota(jnp.int_, (d, d), 0) + 0
    return (rows == lax.broadcasted_iota(jnp.int_, (d, d), 1)).astype(dtype)


def minimize_bfgs(fun, x0, maxiter=None, norm=_onp.inf, gtol=1e-5, line_search_maxiter=10):
    """Minimize fun from x0 (a 1-D array); maxiter defaults to 200 * x0.size."""
    if maxiter is None:
        maxiter = _onp.size(x0) * 200
    d = x0.shape[0]
    f0, g0 = value_and_grad(fun)(x0)
    init = BFGSState(converged=jnp.linalg.norm(g0, ord=norm) < gtol, failed=False, k=0,
                     nfev=1, ngev=1, nhev=0, x_k=x0, f_k=f0, g_k=g0,
                     H_k=jnp.eye(d, dtype=x0.dtype),
                     old_old_fval=f0 + jnp.linalg.norm(g0) / 2, status=0,
                     line_search_status=0)

    def cond(s):
        return ~s.converged & ~s.failed & (s.k < maxiter)

    def body(s):
        p = -_dot(s.H_k, s.g_k)
        ls = line_search(fun, s.x_k, p, old_fval=s.f_k, old_old_fval=s.old_old_fval,
                         gfk=s.g_k, maxiter=line_search_maxiter)
        step = ls.a_k * p
        y = ls.g_k - s.g_k
        rho = jnp.reciprocal(_dot(y, step))
        w = _eye(d, rho.dtype) - rho * (step[:, None] * y[None, :])
        h = _sandwich(w, s.H_k) + rho * step[:, None] * step[None, :]
        return s._replace(
            nfev=s.nfev + ls.nfev, ngev=s.ngev + ls.ngev, failed=ls.failed,
            line_search_status=ls.status,
            converged=jnp.linalg.norm(ls.g_k, ord=norm) < gtol, k=s.k + 1,
            x_k=s.x_k + step, f_k=ls.f_k, g_k=ls.g_k,
            H_k=jnp.where(jnp.isfinite(rho), h, s.H_k), old_old_fval=s.f_k)

    s = lax.while_loop(cond, body, init)
    status = jnp.where(s.converged, 0,
                       jnp.where(s.k == maxiter, 1,
                                 jnp.where(s.failed, 2 + s.line_search_status, -1)))
    return s._replace(status=status)
