"""`mjax.scipy.sparse.linalg`: Krylov solvers for A x = b (`cg`, `bicgstab`, `gmres`), as
`jax.scipy.sparse.linalg`. `A` and the preconditioner `M` are matrices or linear functions
on pytrees shaped like `b`. Each solve runs inside `lax.custom_linear_solve`, so gradients
are themselves linear solves rather than derivatives of the iteration. Internally the
iteration runs on one flat vector: `b`'s leaves raveled and concatenated."""
from __future__ import annotations

import functools
import operator

import numpy as _onp

from mjax.specs import dtypes
from mjax import lax
from mjax import numpy as jnp
from mjax.ad import custom_jvp
from mjax.ad.transpose import transpose_of
from mjax.ad.custom_vjp_jvp import custom_vjp_with_jvp
from mjax.jaxpr.api import closure_convert
from mjax.scipy import linalg as _sp_linalg
from mjax.base.tree_util import tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten

__all__ = ["cg", "gmres", "bicgstab"]

_HIGHEST = lax.Precision.HIGHEST


def _identity(x):
    return x


def _as_linear_map(f):
    """A matrix, a matmul-able object or a function, as a function."""
    if callable(f):
        return f
    if isinstance(f, (_onp.ndarray, jnp.ndarray)):
        if f.ndim != 2 or f.shape[0] != f.shape[1]:
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{f.shape}")
        return functools.partial(jnp.dot, f, precision=_HIGHEST)
    if hasattr(f, "__matmul__"):
        if hasattr(f, "shape") and (len(f.shape) != 2 or f.shape[0] != f.shape[1]):
            raise ValueError(f"linear operator must be a square matrix, but has shape: "
                             f"{f.shape}")
        return functools.partial(operator.matmul, f)
    raise TypeError(f"linear operator must be either a function or ndarray: {f}")


class _Flat:
    """Ravels pytrees shaped like `like` into one vector of their common dtype, and back."""

    def __init__(self, like):
        leaves, self.treedef = tree_flatten(like)
        self.shapes = [_onp.shape(x) for x in leaves]
        self.dtypes = [jnp.asarray(x).dtype for x in leaves]
        self.dtype = dtypes.result_type(*leaves)
        self.splits = _onp.cumsum([int(_onp.prod(s)) for s in self.shapes])[:-1].tolist()

    def ravel(self, tree):
        leaves = tree_leaves(tree)
        return jnp.concatenate([jnp.ravel(x).astype(self.dtype) for x in leaves])

    def unravel(self, vec):
        parts = jnp.split(vec, self.splits) if self.splits else [vec]
        return tree_unflatten(self.treedef, [p.reshape(s).astype(d) for p, s, d in
                                             zip(parts, self.shapes, self.dtypes)])

    def wrap(self, f):
        return lambda v: self.ravel(f(self.unravel(v)))


def _linear_solve(matvec, b, solve, symmetric=False):
    """lax.custom_linear_solve(matvec, b, solve, transpose_solve=solve, symmetric), made
    differentiable for a while_loop solver. mjax's custom_linear_solve differentiates
    `solve` applied to the residual b - A x (~0, its derivative carrying those of b and of
    matvec's operands); a while_loop cannot be transposed, nor is its derivative in the
    right-hand side the inverse. So the solve is given rules here: its JVP is the solve of
    the tangent, its VJP the solve of the transposed system. The values the solves close
    over (matvec's operands, x0, tolerances) become explicit arguments with zero
    derivative."""
    if symmetric:
        transposed = matvec
    else:
        # (not checked for linearity here: JAX transposes A only when a cotangent reaches
        # the solve, and solvers such as jaxopt's solve affine systems they never
        # differentiate through)
        transpose = transpose_of(matvec, (b,), check=False)
        transposed = lambda y: transpose(y)[0]  # noqa: E731
    forward, consts = closure_convert(lambda r: solve(matvec, r), b)
    backward, t_consts = closure_convert(lambda r: solve(transposed, r), b)
    n = len(consts)

    def apply(r, *cs):
        return forward(r, *cs[:n])

    inverse = custom_vjp_with_jvp(apply)

    def fwd(r, *cs):
        return forward(r, *cs[:n]), cs

    def bwd(cs, ct):
        return (backward(ct, *cs[n:]),) + tuple(jnp.zeros_like(c) for c in cs)

    def jvp(primals, tangents):
        r, *cs = primals
        return inverse(r, *cs), inverse(tangents[0], *cs)

    inverse.defvjp(fwd, bwd)
    inverse.jvp_companion = custom_jvp(apply)
    inverse.jvp_companion.defjvp(jvp)
    return lax.custom_linear_solve(matvec, b, lambda _, r: inverse(r, *consts, *t_consts))


def _rdot(x, y):
    """Re <x, y>, in the real dtype."""
    return jnp.real(jnp.vdot(x, y, precision=_HIGHEST))


def _dot(x, y):
    return jnp.vdot(x, y, precision=_HIGHEST)


def _norm(x):
    return jnp.sqrt(_rdot(x, x))


def _threshold(tol, atol, b):
    return jnp.maximum(jnp.square(tol) * _rdot(b, b), jnp.square(atol))


def _cg(A, b, x0, tol, atol, maxiter, M, precondition):
    limit = _threshold(tol, atol, b)
    r0 = b - A(x0)
    z0 = M(r0)
    dtype = z0.dtype
    gamma0 = _rdot(r0, z0).astype(dtype)

    def cond(state):
        _, r, gamma, _, k = state
        size = _rdot(r, r) if precondition else gamma.real
        return (size > limit) & (k < maxiter)

    def body(state):
        x, r, gamma, p, k = state
        Ap = A(p)
        alpha = gamma / _rdot(p, Ap).astype(dtype)
        x = x + alpha * p
        r = r - alpha * Ap
        z = M(r)
        gamma_next = _rdot(r, z).astype(dtype)
        return x, r, gamma_next, z + (gamma_next / gamma) * p, k + 1

    return lax.while_loop(cond, body, (x0, r0, gamma0, z0, 0))[0]


def _bicgstab(A, b, x0, tol, atol, maxiter, M, precondition):
    del precondition
    limit = _threshold(tol, atol, b)
    r0 = b - A(x0)
    one = jnp.ones((), b.dtype)

    def cond(state):
        r, k = state[1], state[-1]
        return (_rdot(r, r) > limit) & (k < maxiter) & (k >= 0)

    def body(state):
        x, r, rhat, alpha, omega, rho, p, q, k = state
        rho_next = _dot(rhat, r)
        beta = rho_next / rho * alpha / omega
        p = r + beta * (p - omega * q)
        phat = M(p)
        q = A(phat)
        alpha = rho_next / _dot(rhat, q)
        s = r - alpha * q
        done = _rdot(s, s) < limit
        shat = M(s)
        t = A(shat)
        omega = _dot(t, s) / _dot(t, t)
        x = jnp.where(done, x + alpha * phat, x + alpha * phat + omega * shat)
        r = jnp.where(done, s, s - omega * t)
        # Breakdowns end the loop through a negative counter, as SciPy's info codes.
        k = jnp.where((omega == 0) | (alpha == 0), -11, k + 1)
        k = jnp.where(rho_next == 0, -10, k)
        return x, r, rhat, alpha, omega, rho_next, p, q, k

    return lax.while_loop(cond, body, (x0, r0, r0, one, one, one, r0, r0, 0))[0]


def _isolve(method, A, b, x0, tol, atol, maxiter, M, symmetric_if_real):
    b = tree_map(jnp.asarray, b)
    x0 = tree_map(jnp.zeros_like, b) if x0 is None else tree_map(jnp.asarray, x0)
    if maxiter is None:
        maxiter = 10 * sum(x.size for x in tree_leaves(b))
    precondition = M is not None
    A = _as_linear_map(A)
    M = _identity if M is None else _as_linear_map(M)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    shapes = [_onp.shape(x) for x in tree_leaves(x0)], [_onp.shape(x) for x in tree_leaves(b)]
    if shapes[0] != shapes[1]:
        raise ValueError(f"arrays in x0 and b must have matching shapes: "
                         f"{shapes[0]} vs {shapes[1]}")

    def solve(matvec, rhs):
        flat = _Flat(rhs)
        x = method(flat.wrap(matvec), flat.ravel(rhs), flat.ravel(x0), tol, atol, maxiter,
                   flat.wrap(M), precondition)
        return flat.unravel(x)

    symmetric = symmetric_if_real and not any(
        jnp.issubdtype(x.dtype, jnp.complexfloating) for x in tree_leaves(b))
    x = _linear_solve(A, b, solve, symmetric)
    return x, None


def cg(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solves A x = b for Hermitian positive-definite A by (preconditioned) conjugate
    gradients, until ||b - A x|| <= max(tol * ||b||, atol) or `maxiter` steps (default
    10 * size of b). Returns (x, None): JAX reports no convergence info."""
    return _isolve(_cg, A, b, x0, tol, atol, maxiter, M, True)


def bicgstab(A, b, x0=None, *, tol=1e-5, atol=0.0, maxiter=None, M=None):
    """Solves A x = b for general A by the biconjugate gradient stabilized method, with the
    stopping rule of `cg`. Returns (x, None)."""
    return _isolve(_bicgstab, A, b, x0, tol, atol, maxiter, M, False)


def _normalize(v, floor=None):
    """v / ||v|| and ||v||; both zero when ||v|| <= floor (default: machine epsilon)."""
    n = _norm(v)
    floor = jnp.finfo(n.dtype).eps if floor is None else floor
    big = n > floor
    return jnp.where(big, v / n.astype(v.dtype), 0), jnp.where(big, n, 0)


def _arnoldi(k, A, M, V, H):
    """Extends the Krylov basis V (columns 0..k filled) by M A V[:, k], orthogonalised by
    classical Gram-Schmidt applied twice; the coefficients become row k of H (the k-th
    column of the Hessenberg matrix). Also says whether the new vector vanished."""
    v = M(A(V[:, k]))
    n0 = _norm(v)
    h = jnp.zeros(V.shape[1], V.dtype)
    for _ in range(2):
        c = jnp.matmul(V.conj().T, v, precision=_HIGHEST)
        v = v - jnp.matmul(V, c, precision=_HIGHEST)
        h = h + c
    unit, n1 = _normalize(v, jnp.finfo(n0.dtype).eps * n0)
    V = V.at[:, k + 1].set(unit)
    H = H.at[k, :].set(h.at[k + 1].set(n1.astype(V.dtype)))
    return V, H, n1 == 0


def _basis(unit_residual, restart):
    return jnp.zeros((unit_residual.shape[0], restart + 1),
                     unit_residual.dtype).at[:, 0].set(unit_residual)


def _rotate(v, i, c, s):
    """Applies the Givens rotation (c, s) to entries i and i + 1 of v."""
    a, b = v[i], v[i + 1]
    return v.at[i].set(c.conj() * a - s.conj() * b).at[i + 1].set(s * a + c * b)


def _givens(a, b):
    """(c, s) such that the rotation zeroes the second entry of (a, b)."""
    swap = jnp.abs(a) < jnp.abs(b)
    t = -jnp.where(swap, a, b) / jnp.where(swap, b, a)
    r = lax.rsqrt(1 + jnp.abs(t) ** 2).astype(t.dtype)
    zero = jnp.abs(b) == 0
    return (jnp.where(zero, 1, jnp.where(swap, r * t, r)).astype(t.dtype),
            jnp.where(zero, 0, jnp.where(swap, r, r * t)).astype(t.dtype))


def _cycle_incremental(A, b, x, unit, rnorm, ptol, restart, M):
    """One restart cycle, with the least-squares problem kept in triangular form by Givens
    rotations so the residual is known each step and the cycle can stop early."""
    V = _basis(unit, restart)
    R = jnp.eye(restart, restart + 1, dtype=b.dtype)
    rots = jnp.zeros((restart, 2), b.dtype)
    g = jnp.zeros(restart + 1, b.dtype).at[0].set(rnorm.astype(b.dtype))

    def cond(state):
        k, err = state[:2]
        return (k < restart) & (err > ptol)

    def body(state):
        k, _, V, R, g, rots = state
        V, H, _ = _arnoldi(k, A, M, V, R)
        row = lax.fori_loop(0, k, lambda i, row: _rotate(row, i, rots[i, 0], rots[i, 1]),
                            H[k, :])
        c, s = _givens(row[k], row[k + 1])
        rots = rots.at[k].set(jnp.stack([c, s]))
        R = R.at[k, :].set(_rotate(row, k, c, s))
        g = _rotate(g, k, c, s)
        return k + 1, jnp.abs(g[k + 1]), V, R, g, rots

    k, _, V, R, g, _ = lax.while_loop(cond, body, (0, rnorm, V, R, g, rots))
    g = jnp.where(jnp.arange(restart + 1) < k, g, 0)
    y = _sp_linalg.solve_triangular(R[:, :-1].T, g[:-1])
    return _restart(A, b, x + jnp.matmul(V[:, :-1], y, precision=_HIGHEST), M)


def _cycle_batched(A, b, x, unit, rnorm, ptol, restart, M):
    """One restart cycle: the full Arnoldi process (or until breakdown), then the
    least-squares problem through its normal equations."""
    del ptol
    V = _basis(unit, restart)
    H = jnp.eye(restart, restart + 1, dtype=b.dtype)

    def body(state):
        V, H, _, k = state
        V, H, broke = _arnoldi(k, A, M, V, H)
        return V, H, broke, k + 1

    V, H, _, _ = lax.while_loop(lambda s: (s[3] < restart) & ~s[2], body,
                                (V, H, jnp.asarray(False), 0))
    g = jnp.zeros(restart + 1, b.dtype).at[0].set(rnorm.astype(b.dtype))
    Ht = H.T
    lhs = jnp.matmul(Ht.conj().T, Ht, precision=_HIGHEST)
    y = _sp_linalg.solve(lhs, jnp.matmul(Ht.conj().T, g, precision=_HIGHEST), assume_a="pos")
    return _restart(A, b, x + jnp.matmul(V[:, :-1], y, precision=_HIGHEST), M)


def _restart(A, b, x, M):
    unit, rnorm = _normalize(M(b - A(x)))
    return x, unit, rnorm


def gmres(A, b, x0=None, *, tol=1e-5, atol=0.0, restart=20, maxiter=None, M=None,
          solve_method="batched"):
    """Solves A x = b for general A by restarted GMRES: Krylov spaces of dimension
    `restart`, at most `maxiter` restarts, until the preconditioned residual norm is
    <= max(tol * ||b||, atol). `solve_method` 'batched' solves each cycle's least-squares
    problem once at its end; 'incremental' updates it every step and may end a cycle
    early. Returns (x, info): info is -1 if x has NaNs, else 0."""
    b = tree_map(jnp.asarray, b)
    x0 = tree_map(jnp.zeros_like, b) if x0 is None else tree_map(jnp.asarray, x0)
    A = _as_linear_map(A)
    M = _identity if M is None else _as_linear_map(M)
    size = sum(x.size for x in tree_leaves(b))
    if maxiter is None:
        maxiter = 10 * size
    restart = min(restart, size)
    if tree_structure(x0) != tree_structure(b):
        raise ValueError(f"x0 and b must have matching tree structure: "
                         f"{tree_structure(x0)} vs {tree_structure(b)}")
    cycles = {"incremental": _cycle_incremental, "batched": _cycle_batched}
    if solve_method not in cycles:
        raise ValueError(f"invalid solve_method {solve_method}, must be either "
                         "'incremental' or 'batched'")
    cycle = cycles[solve_method]
    flat = _Flat(b)
    b_norm = _norm(flat.ravel(b))
    atol = jnp.maximum(tol * b_norm, atol)
    ptol = _norm(flat.ravel(M(b))) * jnp.minimum(1.0, atol / b_norm)

    def solve(matvec, rhs):
        f = _Flat(rhs)
        Af, Mf, bf = f.wrap(matvec), f.wrap(M), f.ravel(rhs)
        x, unit, rnorm = _restart(Af, bf, f.ravel(x0), Mf)

        def body(state):
            x, k, unit, rnorm = state
            x, unit, rnorm = cycle(Af, bf, x, unit, rnorm, ptol, restart, Mf)
            return x, k + 1, unit, rnorm

        x = lax.while_loop(lambda s: (s[1] < maxiter) & (s[3] > atol), body,
                           (x, 0, unit, rnorm))[0]
        return f.unravel(x)

    x = _linear_solve(A, b, solve)
    return x, jnp.where(jnp.isnan(_norm(flat.ravel(x))), -1, 0)
