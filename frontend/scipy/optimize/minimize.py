"""`minimize`: unconstrained minimization of a scalar function of a 1-D array, gradients
by autodiff, each method a `lax.while_loop` (so it jits and vmaps), with JAX's algorithms
step for step so that results agree with JAX's to the bit: "BFGS" (`bfgs.py`) and the
experimental "l-bfgs-experimental-do-not-rely-on-this" (`lbfgs.py`), over the strong-Wolfe
line search of `line_search.py`. As in JAX, `tol` is accepted and not used.
"""
from __future__ import annotations

from typing import Any, NamedTuple

from mjax import numpy as jnp
from mjax.scipy.optimize.bfgs import minimize_bfgs
from mjax.scipy.optimize.lbfgs import minimize_lbfgs


class OptimizeResults(NamedTuple):
    """The result of `minimize`: status 0 converged; BFGS: 1 out of iterations, 3 zoom
    failed, 5 line search out of iterations, -1 undefined (L-BFGS: see lbfgs.py).
    JAX: jax.scipy.optimize.OptimizeResults."""
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
    """Minimize fun(x, *args) from x0 with `method` ("BFGS", or JAX's experimental
    "l-bfgs-experimental-do-not-rely-on-this"); `options` are the method's keyword
    arguments (BFGS: maxiter, norm, gtol, line_search_maxiter).
    JAX: jax.scipy.optimize.minimize."""
    if options is None:
        options = {}
    if not isinstance(args, tuple):
        raise TypeError("args argument to jax.scipy.optimize.minimize must be a tuple, "
                        f"got {args}")

    def f(x):
        return fun(x, *args)
    name = method.lower()
    if name == "bfgs":
        r = minimize_bfgs(f, x0, **options)
        hess_inv = r.H_k
    elif name == "l-bfgs-experimental-do-not-rely-on-this":
        r = minimize_lbfgs(f, x0, **options)
        hess_inv = None
    else:
        raise ValueError(f"Method {method} not recognized")
    return OptimizeResults(x=r.x_k, success=r.converged & jnp.logical_not(r.failed),
                           status=r.status, fun=r.f_k, jac=r.g_k, hess_inv=hess_inv,
                           nfev=r.nfev, njev=r.ngev, nit=r.k)
