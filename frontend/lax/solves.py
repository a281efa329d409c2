"""`lax.custom_root` and `lax.custom_linear_solve`: solvers differentiated implicitly.

The solver itself is never differentiated (it may loop, stop early, or call the host).
Derivatives come from the implicit function theorem, as in JAX: for a root x* of
f(x; theta), dx* = -J^-1 (df/dtheta dtheta), with J = df/dx at x*; for x = A^-1 b,
dx = A^-1 (db - dA x). Both are written as a correction `delta` whose value is removed
again (delta - stop_gradient(delta)), so the result's value is exactly the solver's and
only its derivative carries the correction. First derivatives (jvp, grad, vmap of them)
match JAX's; derivatives of higher order drop the terms in the derivative of J^-1.
"""
from __future__ import annotations

from mjax.tracing import registration
from mjax.base import trace_trees
from mjax.lax.elementwise import add, neg, stop_gradient, sub


def _stop(x):
    return trace_trees.tree_map(stop_gradient, x)


def _correct(sol, delta):
    """sol + (delta - stop_gradient(delta)): sol's value, delta's derivative."""
    return trace_trees.tree_map(lambda s, d: add(s, sub(d, stop_gradient(d))), sol, delta)


def custom_root(f, initial_guess, solve, tangent_solve, has_aux=False):
    """solve(f, initial_guess), a root of f, differentiated implicitly through f's
    closed-over values with tangent_solve(g, y) (which solves the linear g(x) = y).
    JAX: lax.custom_root. (f is differentiated with jvp, floors above:
    registration.JVP.)"""
    out = solve(f, _stop(initial_guess))
    sol, aux = out if has_aux else (out, None)
    sol = _stop(sol)
    residual = f(sol)  # ~0 in value; its derivative in f's closed-over values matters

    def linearized(v):
        return registration.JVP(f, (sol,), (v,))[1]
    step = tangent_solve(linearized, residual)
    delta = trace_trees.tree_map(neg, step)
    root = _correct(sol, delta)
    return (root, _stop(aux)) if has_aux else root


def custom_linear_solve(matvec, b, solve, transpose_solve=None, symmetric=False,
                        has_aux=False):
    """solve(matvec, b), the x with matvec(x) = b, differentiated implicitly: through b
    and matvec's closed-over values, using `solve` on the residual. JAX:
    lax.custom_linear_solve. (`transpose_solve`/`symmetric`: JAX's reverse mode
    transposes with them; here reverse mode differentiates `solve` applied to the
    residual, so `solve` must itself be differentiable in its right-hand side, as a
    direct solver is; an iterative solver written with while_loop is not.)"""
    out = solve(matvec, _stop(b))
    sol, aux = out if has_aux else (out, None)
    sol = _stop(sol)
    residual = trace_trees.tree_map(sub, b, matvec(sol))  # b - A x: ~0
    step = solve(matvec, residual)
    step = step[0] if has_aux else step
    x = _correct(sol, step)
    return (x, _stop(aux)) if has_aux else x


__all__ = ["custom_root", "custom_linear_solve"]
