"""`minimize(method="BFGS")`: quasi-Newton minimization of a scalar function of a 1-D
array, gradients by autodiff, the loop a `lax.while_loop` (so it jits and vmaps).

The line search is backtracking on the Armijo condition; the inverse-Hessian update is
skipped when the step has no positive curvature. Results may differ from JAX's (which
uses a zoom line search) in iteration counts, not in the minimum found.
"""
from __future__ import annotations

from typing import Any, NamedTuple

import numpy as _onp

from mjax import lax
from mjax import numpy as jnp
from mjax.ad import value_and_grad


class OptimizeResults(NamedTuple):
    """The result of `minimize`. JAX: jax.scipy.optimize.OptimizeResults."""
    x: Any
    success: Any
    status: Any
    fun: Any
    jac: Any
    hess_inv: Any
    nfev: Any
    njev: Any
    nit: Any


def minimize(fun, x0, args=(), *, method, tol=None, options=None):
    """Minimize fun(x, *args) from x0 with `method` ("BFGS"); options: maxiter (default
    200 * x0.size), gtol (1e-5), norm (inf), line_search_maxiter (10).
    JAX: jax.scipy.optimize.minimize."""
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError("args argument to jax.scipy.optimize.minimize must be a tuple, "
                        f"got {args}")
    if method.lower() == "bfgs":
        return _bfgs(lambda x: fun(x, *args), x0, **options)
    if method.lower() == "l-bfgs-experimental-do-not-rely-on-this":
        raise NotImplementedError("mjax.scipy.optimize.minimize: the experimental L-BFGS "
                                  "method is not implemented; use method='BFGS'")
    raise ValueError(f"Method {method} not recognized")


def _bfgs(f, x0, maxiter=None, norm=_onp.inf, gtol=1e-5, line_search_maxiter=10):
    x0 = jnp.asarray(x0)
    if x0.ndim != 1:
        raise ValueError(f"minimize: x0 must be a 1-D array, got shape {x0.shape}")
    if not jnp.issubdtype(x0.dtype, jnp.inexact):
        x0 = x0.astype(jnp.zeros(()).dtype)
    n = x0.shape[0]
    maxiter = n * 200 if maxiter is None else maxiter
    vg = value_and_grad(f)
    f0, g0 = vg(x0)
    eye = jnp.eye(n, dtype=x0.dtype)
    # The backtracking budget: enough halvings to reach machine-epsilon steps.
    ls_steps = max(int(line_search_maxiter), 30 if x0.dtype.itemsize == 4 else 60)

    def gnorm(g):
        return jnp.linalg.norm(g, ord=norm)

    def cond(state):
        k, _, _, _, _, converged, failed, _, _ = state
        return (k < maxiter) & ~converged & ~failed

    def line_search(x, fx, gx, p):
        slope = jnp.vdot(gx, p)

        def ls_cond(c):
            i, alpha, fa, _, ok = c
            return (i < ls_steps) & ~ok

        def ls_body(c):
            i, alpha, _, _, _ = c
            alpha = jnp.where(i == 0, alpha, alpha * 0.5)
            fa, ga = vg(x + alpha * p)
            ok = jnp.isfinite(fa) & (fa <= fx + 1e-4 * alpha * slope)
            return i + 1, alpha, fa, ga, ok
        init = (jnp.asarray(0), jnp.asarray(1.0, x.dtype), fx, gx, jnp.asarray(False))
        i, alpha, fa, ga, ok = lax.while_loop(ls_cond, ls_body, init)
        return alpha, fa, ga, ok & (slope < 0), i

    def body(state):
        k, x, fx, gx, H, _, _, nfev, ngev = state
        p = -(H @ gx)
        alpha, f_new, g_new, ok, evals = line_search(x, fx, gx, p)
        s = alpha * p
        y = g_new - gx
        sy = jnp.vdot(y, s)
        rho = 1 / jnp.where(sy > 0, sy, 1)
        A = eye - rho * jnp.outer(s, y)
        H_new = A @ H @ A.T + rho * jnp.outer(s, s)
        H = jnp.where(ok & (sy > 0), H_new, H)
        x = jnp.where(ok, x + s, x)
        fx = jnp.where(ok, f_new, fx)
        gx = jnp.where(ok, g_new, gx)
        converged = gnorm(gx) < gtol
        return (k + 1, x, fx, gx, H, converged, ~ok, nfev + evals, ngev + evals)

    state = (jnp.asarray(0), x0, f0, g0, eye, gnorm(g0) < gtol, jnp.asarray(False),
             jnp.asarray(1), jnp.asarray(1))
    k, x, fx, gx, H, converged, failed, nfev, ngev = lax.while_loop(cond, body, state)
    status = jnp.where(converged, 0, jnp.where(k == maxiter, 1, jnp.where(failed, 2, -1)))
    return OptimizeResults(x=x, success=converged & ~failed, status=status, fun=fx, jac=gx,
                           hess_inv=H, nfev=nfev, njev=ngev, nit=k)
