"""Testing helpers, as in `jax.test_util`: check derivatives against finite differences.

    from mjax.test_util import check_grads
    check_grads(f, (x, y), order=2)            # jvp and vjp, and their derivatives

`check_jvp` compares `f_jvp(primals, tangents)` with a central difference of `f` along a
random tangent; `check_vjp` compares `<t, vjp(ct)>` with `<jvp(t), ct>` (the tangent
computed by central differences), so one random cotangent checks the whole pullback.
`check_grads(..., order=k)` repeats both on the jvp and vjp functions themselves, down to
order k. JAX: jax.test_util. Everything here is NumPy on the host; `f` may be any
function mjax can differentiate.
"""
from __future__ import annotations

import functools

import numpy as np

from mjax.specs import dtypes as _dt
from mjax.base import trace_trees
from mjax.ad import jvp, vjp

__all__ = ["check_grads", "check_jvp", "check_vjp", "numerical_jvp"]

EPS = 1e-4

# Same defaults as jax.test_util (per dtype; used unless atol/rtol are given).
_DEFAULT_GRADIENT_TOLERANCE = {
    np.dtype(np.float16): 1e-2,
    np.dtype(_dt.bfloat16): 1e-1,
    np.dtype(np.float32): 2e-3,
    np.dtype(np.float64): 1e-5,
    np.dtype(np.complex64): 1e-3,
    np.dtype(np.complex128): 1e-5,
}


# ---- host-side pytree arithmetic ----------------------------------------------------
def _dtype(x) -> np.dtype:
    dt = getattr(x, "dtype", None)
    if dt is not None:
        return np.dtype(dt)
    return np.asarray(x).dtype if not isinstance(x, float) else np.dtype(_dt.default_float())


def _is_float0(x) -> bool:
    return _dtype(x) == _dt.float0


def _inexact(x) -> bool:
    return _dt.issubdtype(_dtype(x), np.inexact)


def _host(x) -> np.ndarray:
    if _is_float0(x):
        return np.zeros(np.shape(x), _dt.float0)
    return np.asarray(x, dtype=_dtype(x))


def _tangent_like(rng, x):
    """A random tangent for an inexact leaf (drawn as JAX's check_grads draws them, from
    a RandomState(0), so both check the same directions; a Python scalar's is a Python
    scalar); float0 zeros for integer/bool leaves."""
    shape, dtype = np.shape(x), _dtype(x)
    if not _dt.issubdtype(dtype, np.inexact):
        return np.zeros(shape, _dt.float0)
    t = np.asarray(rng.randn(*shape), dtype)
    if _dt.issubdtype(dtype, np.complexfloating):
        t = t + dtype.type(1j) * np.asarray(rng.randn(*shape), dtype)
    return t.item() if _is_python_scalar(x) else t


def _is_python_scalar(x) -> bool:
    return type(x) in (bool, int, float, complex)


def _axpy(a, t, x):
    """x + a * t on one leaf, in x's dtype (integer leaves are unchanged; a Python scalar
    stays one, computed in double precision, as JAX's finite differences do)."""
    if not _inexact(x) or _is_float0(t):
        return x
    if _is_python_scalar(x) and _is_python_scalar(t):
        return x + a * t
    x = _host(x)
    return (x + np.asarray(a, x.dtype) * _host(t)).astype(x.dtype)


def _shift(primals, tangents, a):
    return trace_trees.tree_map(lambda x, t: _axpy(a, t, x), primals, tangents)


def numerical_jvp(f, primals, tangents, eps=EPS):
    """(f(primals + eps*t) - f(primals - eps*t)) / (2*eps), leaf by leaf."""
    f_pos = f(*_shift(primals, tangents, eps))
    f_neg = f(*_shift(primals, tangents, -eps))

    def diff(p, n):
        p, n = _host(p), _host(n)
        if not _dt.issubdtype(p.dtype, np.inexact):
            return np.zeros(p.shape, _dt.float0)
        with np.errstate(invalid="ignore"):   # (equal infinities differ by 0, as in JAX)
            d = np.where(p == n, np.zeros((), p.dtype), p - n)
        return (d * np.asarray(0.5 / eps, p.dtype)).astype(p.dtype)
    return trace_trees.tree_map(diff, f_pos, f_neg)


def _inner_prod(xs, ys) -> float:
    """Re <x, y> = Re sum(conj(x) * y), summed over leaves (as jax.test_util)."""
    def leaf(x, y):
        if _is_float0(x) or _is_float0(y):
            return 0.0
        x, y = _host(x), _host(y)
        return float(np.real(np.dot(np.conj(x).reshape(-1).astype(np.complex128),
                                    y.reshape(-1).astype(np.complex128))))
    parts = trace_trees.tree_leaves(trace_trees.tree_map(leaf, xs, ys))
    return float(sum(parts)) if parts else 0.0


def _conj(tree):
    return trace_trees.tree_map(lambda x: np.conj(_host(x)) if _inexact(x) else x, tree)


# ---- comparison ---------------------------------------------------------------------
def _tolerance(dtype, given):
    """given: None (the default per dtype), a number, or a dict by dtype overriding the
    defaults for those dtypes (as JAX's check_grads takes them)."""
    dtype = np.dtype(dtype)
    if isinstance(given, dict):
        given = {np.dtype(k): v for k, v in given.items()}.get(dtype)
    if given is not None:
        return given
    return _DEFAULT_GRADIENT_TOLERANCE.get(dtype, 1e-5)


def _check_close(got, expected, atol, rtol, err_msg):
    got_leaves, got_tree = trace_trees.tree_flatten(got)
    exp_leaves, exp_tree = trace_trees.tree_flatten(expected)
    if got_tree != exp_tree:
        raise AssertionError(f"{err_msg}: tree structure {got_tree} does not match the "
                             f"expected {exp_tree}")
    for k, (g, e) in enumerate(zip(got_leaves, exp_leaves)):
        where = f"{err_msg} (output leaf {k})" if len(got_leaves) > 1 else err_msg
        if np.shape(g) != np.shape(e):
            raise AssertionError(f"{where}: shape {np.shape(g)} does not match the expected "
                                 f"{np.shape(e)}")
        if _is_float0(g) or _is_float0(e):
            continue
        g, e = _host(g), _host(e)
        dtype = np.result_type(g.dtype, e.dtype)
        if not _dt.issubdtype(dtype, np.inexact):
            np.testing.assert_array_equal(g, e, err_msg=where)
            continue
        # (JAX scales both tolerances by the number of elements)
        np.testing.assert_allclose(g.astype(np.complex128 if np.iscomplexobj(g) or
                                            np.iscomplexobj(e) else np.float64),
                                   e, atol=_tolerance(dtype, atol) * max(g.size, 1),
                                   rtol=_tolerance(dtype, rtol) * max(e.size, 1),
                                   err_msg=where)


def _check_dtypes_match(xs, ys, err_msg):
    def leaf(x, y):
        if _is_float0(x) or _is_float0(y):
            return
        if _dtype(x) != _dtype(y):
            raise AssertionError(f"{err_msg}: dtype {_dtype(x).name} does not match "
                                 f"{_dtype(y).name}")
    trace_trees.tree_map(leaf, xs, ys)


# ---- the checks ---------------------------------------------------------------------
def check_jvp(f, f_jvp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Checks f_jvp(args, tangents) == (f(*args), central difference of f along tangents)."""
    rng = np.random.RandomState(0)
    msg = err_msg or "JVP"
    tangent = trace_trees.tree_map(functools.partial(_tangent_like, rng), args)
    v_out, t_out = f_jvp(args, tangent)
    _check_dtypes_match(v_out, t_out, f"{msg}: primal and tangent outputs")
    v_expected = f(*args)
    _check_dtypes_match(v_out, v_expected, f"{msg}: primal output vs f(*args)")
    t_expected = numerical_jvp(f, args, tangent, eps=eps)
    _check_close(v_out, v_expected, atol, rtol, f"{msg} primal output differs from f(*args)")
    _check_close(t_out, t_expected, atol, rtol,
                 f"{msg} tangent output differs from central finite differences "
                 f"(eps={eps})")


def check_vjp(f, f_vjp, args, atol=None, rtol=None, eps=EPS, err_msg=""):
    """Checks <t, vjp(ct)> == <jvp(t), ct> with the jvp by central differences."""
    rng = np.random.RandomState(0)
    msg = err_msg or "VJP"
    v_out, vjp_fun = f_vjp(*args)
    v_expected = f(*args)
    _check_close(v_out, v_expected, atol, rtol, f"{msg} primal output differs from f(*args)")
    tangent = trace_trees.tree_map(functools.partial(_tangent_like, rng), args)
    tangent_out = numerical_jvp(f, args, tangent, eps=eps)
    cotangent = trace_trees.tree_map(functools.partial(_tangent_like, rng), v_out)
    cotangent_out = _conj(vjp_fun(_conj(cotangent)))
    ip = _inner_prod(tangent, cotangent_out)
    ip_expected = _inner_prod(tangent_out, cotangent)
    dtypes = [_dtype(x) for x in trace_trees.tree_leaves(v_out) if _inexact(x)]
    dtype = np.result_type(*dtypes) if dtypes else np.dtype(np.float64)
    tol_a, tol_r = _tolerance(dtype, atol), _tolerance(dtype, rtol)
    # (as NumPy's assert_allclose, which JAX's check uses: nan matches nan, inf itself)
    same = ip == ip_expected or (np.isnan(ip) and np.isnan(ip_expected))
    if not same and not abs(ip - ip_expected) <= tol_a + tol_r * abs(ip_expected):
        raise AssertionError(
            f"{msg} does not match central finite differences (eps={eps}): "
            f"<tangent, vjp(cotangent)> = {ip:.8g} but <numerical jvp(tangent), cotangent> "
            f"= {ip_expected:.8g} (difference {abs(ip - ip_expected):.3g}, atol={tol_a}, "
            f"rtol={tol_r})")


def check_grads(f, args, order, modes=("fwd", "rev"), atol=None, rtol=None, eps=None):
    """Checks forward and/or reverse derivatives of f at args up to `order` against
    central finite differences; raises AssertionError naming the failing check.

    Order 2 checks the derivatives of the jvp and vjp functions themselves, and so on.
    JAX: jax.test_util.check_grads.
    """
    args = tuple(args)
    eps = eps or EPS
    for mode in modes:
        if mode not in ("fwd", "rev"):
            raise ValueError(f"check_grads: unknown mode {mode!r}; expected 'fwd' or 'rev'")

    def check(f, args, order, err_msg=""):
        if "fwd" in modes:
            fwd_msg = f"JVP of {err_msg}" if err_msg else "JVP"
            check_jvp(f, functools.partial(jvp, f), args, atol, rtol, eps, fwd_msg)
            if order > 1:
                check(functools.partial(jvp, f), (args, args), order - 1, fwd_msg)
        if "rev" in modes:
            rev_msg = f"VJP of {err_msg}" if err_msg else "VJP"
            check_vjp(f, functools.partial(vjp, f), args, atol, rtol, eps, rev_msg)
            if order > 1:
                def f_vjp(*args):
                    out, vjp_fun = vjp(f, *args)
                    return vjp_fun(out)
                check(f_vjp, args, order - 1, rev_msg)

    check(f, args, order)
