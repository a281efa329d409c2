"""JAX: jax.experimental.ode: `odeint`, an adaptive-step Dormand-Prince (RK5(4)) solver
of y' = func(y, t, *args), differentiable by the adjoint method.

The state (any pytree) is flattened to one vector; each output time of `t` is reached by
a `while_loop` of Runge-Kutta steps (step accepted when the embedded error estimate is
within `rtol`/`atol`, step size adapted either way), and the solution at the output time
is read from a 4th-order polynomial fitted to the last accepted step (dense output).

Reverse mode (a custom_vjp) does not differentiate through the solver: it integrates the
adjoint system backwards in time between consecutive output times (Chen et al. 2018,
"Neural Ordinary Differential Equations", appendix C), carrying the cotangents of the
state, of the initial time and of `args` (and of the values `func` closes over, which
are made explicit arguments first). Forward mode is not defined (a custom_vjp function),
as in JAX.

Dormand & Prince (1980) coefficients; error estimate and dense-output midpoint weights
as in Shampine (1986).
"""
from __future__ import annotations

import functools
import operator

import numpy as np

from mjax import lax
from mjax.base import trace_trees, tree_util
from mjax import numpy as jnp
from mjax.ad import custom_vjp, vjp
from mjax.vmap.batching import vmap
from mjax.config import default_matmul_precision
from mjax.tracing.core import aval_of_value
from mjax.jaxpr.api import closure_convert
from mjax.jit.jitted import jit

__all__ = ["odeint", "abs2", "fit_4th_order_polynomial", "initial_step_size",
           "interp_fit_dopri", "mean_error_ratio", "optimal_step_size", "ravel_first_arg",
           "runge_kutta_step"]

# ---- the Dormand-Prince tableau ------------------------------------------------------------
# Stage i (0..6) evaluates func at t0 + _NODES[i] * dt and y0 + dt * _STAGES[i] @ k.
_NODES = np.array([0.0, 1 / 5, 3 / 10, 4 / 5, 8 / 9, 1.0, 1.0])
_STAGES = np.array([
    [0, 0, 0, 0, 0, 0, 0],
    [1 / 5, 0, 0, 0, 0, 0, 0],
    [3 / 40, 9 / 40, 0, 0, 0, 0, 0],
    [44 / 45, -56 / 15, 32 / 9, 0, 0, 0, 0],
    [19372 / 6561, -25360 / 2187, 64448 / 6561, -212 / 729, 0, 0, 0],
    [9017 / 3168, -355 / 33, 46732 / 5247, 49 / 176, -5103 / 18656, 0, 0],
    [35 / 384, 0, 500 / 1113, 125 / 192, -2187 / 6784, 11 / 84, 0]])
_SOLUTION = _STAGES[6]                     # 5th order (FSAL: the last stage is f(y1))
_EMBEDDED = np.array([1951 / 21600, 0, 22642 / 50085, 451 / 720, -12231 / 42400,
                      649 / 6300, 1 / 60])  # 4th order
_ERROR = _SOLUTION - _EMBEDDED
_MIDPOINT = np.array([6025192743 / 30085553152, 0, 51252292925 / 65400821598,
                      -2691868925 / 45128329728, 187940372067 / 1594534317056,
                      -1776094331 / 19743644256, 11237099 / 235043384]) / 2


def _dot(a, b):
    # (the default precision, as JAX's helpers: odeint computes under
    # default_matmul_precision("highest"); a helper called by itself on a TPU takes the
    # chip's default, bfloat16 passes, in JAX too)
    return jnp.dot(a, b)


# ---- one step ----------------------------------------------------------------------------
def runge_kutta_step(func, y0, f0, t0, dt):
    """One Dormand-Prince step of func(y, t) from (y0, t0) with f0 = func(y0, t0):
    (y1, func(y1, t0 + dt), the error estimate of y1, the stages k[7, n])."""
    nodes = jnp.asarray(_NODES, dtype=dt.dtype)
    stages = jnp.asarray(_STAGES, dtype=f0.dtype)
    h = dt.astype(f0.dtype)

    def stage(i, k):
        return k.at[i, :].set(func(y0 + h * _dot(stages[i], k), t0 + dt * nodes[i]))
    k = jnp.zeros((7, f0.shape[0]), f0.dtype).at[0, :].set(f0)
    k = lax.fori_loop(1, 7, stage, k)
    y1 = y0 + h * _dot(jnp.asarray(_SOLUTION, f0.dtype), k)
    error = h * _dot(jnp.asarray(_ERROR, f0.dtype), k)
    return y1, k[6], error, k


def fit_4th_order_polynomial(y0, y1, y_mid, dy0, dy1, dt):
    """Coefficients (a, b, c, d, e), highest power first, of the quartic in s in [0, 1]
    through y0, y_mid, y1 at s = 0, 1/2, 1 with slopes dt*dy0, dt*dy1 at the ends."""
    # (JAX's order of operations, term by term, so that the coefficients round as JAX's)
    h = dt.astype(y0.dtype)
    a = -2.0 * h * dy0 + 2.0 * h * dy1 - 8.0 * y0 - 8.0 * y1 + 16.0 * y_mid
    b = 5.0 * h * dy0 - 3.0 * h * dy1 + 18.0 * y0 + 14.0 * y1 - 32.0 * y_mid
    c = -4.0 * h * dy0 + h * dy1 - 11.0 * y0 - 5.0 * y1 + 16.0 * y_mid
    return a, b, c, h * dy0, y0


def interp_fit_dopri(y0, y1, k, dt):
    """The dense-output quartic of a step (coefficients [5, n]): through its ends and
    the 5th-order midpoint estimate from its stages `k`."""
    y_mid = y0 + dt.astype(y0.dtype) * _dot(jnp.asarray(_MIDPOINT, y0.dtype), k)
    return jnp.asarray(fit_4th_order_polynomial(y0, y1, y_mid, k[0], k[-1], dt))


def abs2(x):
    """|x|^2 elementwise (real for complex x)."""
    if jnp.iscomplexobj(x):
        return x.real ** 2 + x.imag ** 2
    return x ** 2


def mean_error_ratio(error_estimate, rtol, atol, y0, y1):
    """RMS of the error estimate relative to atol + rtol * max(|y0|, |y1|): a step is
    accepted when this is at most 1."""
    tolerance = atol + rtol * jnp.maximum(jnp.abs(y0), jnp.abs(y1))
    return jnp.sqrt(jnp.mean(abs2(error_estimate / tolerance.astype(error_estimate.dtype))))


def optimal_step_size(last_step, mean_error_ratio, safety=0.9, ifactor=10.0,
                      dfactor=0.2, order=5.0):
    """The next step size: last_step scaled by safety * ratio^(-1/order), at most
    `ifactor` times larger and (after a rejected step) at most 1/`dfactor` times smaller;
    an accepted step never shrinks it."""
    ratio = mean_error_ratio
    smallest = jnp.where(ratio < 1, 1.0, dfactor)
    factor = jnp.minimum(ifactor, jnp.maximum(ratio ** (-1.0 / order) * safety, smallest))
    return jnp.where(ratio == 0, last_step * ifactor, last_step * factor)


def initial_step_size(fun, t0, y0, order, rtol, atol, f0):
    """A first step size for fun(y, t) from (t0, y0), f0 = fun(y0, t0) (Hairer, Norsett
    and Wanner, Solving ODEs I, section II.4)."""
    y0 = jnp.asarray(y0)
    dtype = jnp.result_type(y0.dtype, jnp.asarray(f0).dtype, float)
    y0, f0 = y0.astype(dtype), jnp.asarray(f0).astype(dtype)
    scale = (atol + jnp.abs(y0) * rtol).astype(dtype)
    d0 = jnp.linalg.norm(y0 / scale)
    d1 = jnp.linalg.norm(f0 / scale)
    h0 = jnp.where((d0 < 1e-5) | (d1 < 1e-5), 1e-6, 0.01 * d0 / d1)
    f1 = fun(y0 + h0.astype(dtype) * f0, t0 + h0)
    d2 = jnp.linalg.norm((f1 - f0) / scale) / h0
    h1 = jnp.where((d1 <= 1e-15) & (d2 <= 1e-15), jnp.maximum(1e-6, h0 * 1e-3),
                   (0.01 / jnp.maximum(d1, d2)) ** (1.0 / (order + 1.0)))
    return jnp.minimum(100.0 * h0, h1)


# ---- pytree states as vectors ---------------------------------------------------------------
def _ravel(tree):
    """(one vector of tree's leaves, in their common dtype; the function undoing it)."""
    leaves, treedef = trace_trees.tree_flatten(tree)
    leaves = [jnp.asarray(x) for x in leaves]
    if not leaves:
        return jnp.zeros((0,), jnp.float32), lambda v: tree_util.tree_unflatten(treedef, [])
    dtype = jnp.result_type(*leaves)
    shapes = [x.shape for x in leaves]
    dtypes = [x.dtype for x in leaves]
    sizes = [int(np.prod(s, dtype=np.int64)) for s in shapes]
    flat = jnp.concatenate([jnp.ravel(x).astype(dtype) for x in leaves])

    def unravel(v):
        parts, start = [], 0
        for shape, dt, n in zip(shapes, dtypes, sizes):
            parts.append(v[start:start + n].reshape(shape).astype(dt))
            start += n
        return tree_util.tree_unflatten(treedef, parts)
    return flat, unravel


def ravel_first_arg(f, unravel, debug_info):
    """f(y, *args) as a function of y raveled: (y_flat, *args) -> f's result raveled."""
    del debug_info

    def raveled(y_flat, *args):
        return _ravel(f(unravel(y_flat), *args))[0]
    return raveled


# ---- odeint ---------------------------------------------------------------------------------
def odeint(func, y0, t, *args, rtol=1.4e-8, atol=1.4e-8, mxstep=np.inf, hmax=np.inf):
    """Solves y' = func(y, t, *args), y(t[0]) = y0, returning y at each time of `t`
    (strictly increasing floats): y0's pytree with a leading axis of len(t). `rtol`,
    `atol`: local error tolerances; `mxstep`: the most steps per output interval;
    `hmax`: the largest step. Differentiable (reverse mode) in y0, t, args and what
    func closes over, by the adjoint method. JAX: jax.experimental.ode.odeint."""
    for arg in trace_trees.tree_leaves(args):
        try:
            aval_of_value(arg)
        except TypeError:
            raise TypeError(f"The contents of odeint *args must be arrays or scalars, "
                            f"but got {arg}.") from None
    if not jnp.issubdtype(jnp.result_type(t), jnp.floating):
        raise TypeError(f"t must be an array of floats, but got {t}.")
    converted, consts = closure_convert(func, y0, t[0], *args)
    return _odeint_pytree(converted, rtol, atol, mxstep, hmax, y0, t, *args, *consts)


@functools.partial(jit, static_argnums=(0, 1, 2, 3, 4))
def _odeint_pytree(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    y_flat, unravel = _ravel(y0)
    flat_func = ravel_first_arg(func, unravel, None)
    with default_matmul_precision("highest"):
        ys = _solve(flat_func, rtol, atol, mxstep, hmax, y_flat, ts, *args)
    return vmap(unravel)(ys)


@functools.partial(custom_vjp, nondiff_argnums=(0, 1, 2, 3, 4))
def _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    """y at each of `ts` for y' = func(y, t, *args), y a vector."""
    def f(y, t):
        return func(y, t, *args)

    def to_output_time(carry, target):
        def more(state):
            i, _, _, t, dt, _, _ = state
            return (t < target) & (i < mxstep) & (dt > 0)

        def step(state):
            i, y, fy, t, dt, last_t, coeffs = state
            y1, f1, error, k = runge_kutta_step(f, y, fy, t, dt)
            ratio = mean_error_ratio(error, rtol, atol, y, y1)
            next_dt = jnp.clip(optimal_step_size(dt, ratio), min=0.0, max=hmax)
            accepted = ratio <= 1.0
            taken = (y1, f1, t + dt, t, interp_fit_dopri(y, y1, k, dt))
            kept = (y, fy, t, last_t, coeffs)
            y, fy, t, last_t, coeffs = (jnp.where(accepted, a, b)
                                        for a, b in zip(taken, kept))
            return i + 1, y, fy, t, next_dt, last_t, coeffs

        _, *carry = lax.while_loop(more, step, (0, *carry))
        _, _, t, _, last_t, coeffs = carry
        s = (target - last_t) / (t - last_t)
        return tuple(carry), jnp.polyval(coeffs, s.astype(coeffs.dtype))

    # (the steps' products in full float32, wherever this is traced: JAX's _odeint)
    with default_matmul_precision("highest"):
        t0 = ts[0]
        f0 = f(y0, t0)
        dt = jnp.clip(initial_step_size(f, t0, y0, 4, rtol, atol, f0), min=0.0, max=hmax)
        start = (y0, f0, t0, dt, t0, jnp.stack([y0] * 5))
        _, ys = lax.scan(to_output_time, start, ts[1:])
        return jnp.concatenate([y0[None], ys])


def _solve_fwd(func, rtol, atol, mxstep, hmax, y0, ts, *args):
    ys = _solve(func, rtol, atol, mxstep, hmax, y0, ts, *args)
    return ys, (ys, ts, args)


def _solve_bwd(func, rtol, atol, mxstep, hmax, residuals, g):
    """Cotangents of (y0, ts, *args) from those of the solution `g`: the adjoint system
    integrated backwards over each output interval, as one odeint in reversed time
    s = -t of the state (y, adjoint of y, cotangent of t0, cotangents of args)."""
    ys, ts, args = residuals

    def augmented(state, s, *args):
        y, y_bar, _, _ = state
        y_dot, pullback = vjp(func, y, -s, *args)
        y_bar_dot, t_dot, *args_dot = pullback(y_bar)
        return -y_dot, y_bar_dot, t_dot, tuple(args_dot)

    def interval(carry, i):
        y_bar, t0_bar, args_bar = carry
        # moving output time i moves y(t_i) along func
        t_bar = _dot(func(ys[i], ts[i], *args), g[i]).real
        t0_bar = t0_bar - t_bar
        _, y_bar, t0_bar, args_bar = odeint(
            augmented, (ys[i], y_bar, t0_bar, args_bar), jnp.stack([-ts[i], -ts[i - 1]]),
            *args, rtol=rtol, atol=atol, mxstep=mxstep, hmax=hmax)
        y_bar, t0_bar, args_bar = tree_util.tree_map(operator.itemgetter(1),
                                                     (y_bar, t0_bar, args_bar))
        return (y_bar + g[i - 1], t0_bar, args_bar), t_bar

    with default_matmul_precision("highest"):
        start = (g[-1], jnp.zeros((), ts.dtype),
                 tree_util.tree_map(jnp.zeros_like, tuple(args)))
        (y_bar, t0_bar, args_bar), ts_bar = lax.scan(
            interval, start, jnp.arange(ts.shape[0] - 1, 0, -1))
        ts_bar = jnp.concatenate([t0_bar[None], ts_bar[::-1]])
    return (y_bar, ts_bar, *args_bar)


_solve.defvjp(_solve_fwd, _solve_bwd)
