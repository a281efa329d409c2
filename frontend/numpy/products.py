"""Matrix and tensor products (matmul, dot, vdot, inner, outer, tensordot, vecdot,
matvec, vecmat, cross, kron) and diagonals (diagonal, diag, diagflat, trace)."""
from __future__ import annotations

import builtins
import operator as _operator

from mjax import lax
from mjax.tracing.core import at_user_line
from mjax.lax.sharding import takes_out_sharding
from mjax.numpy import reductions
from mjax.numpy.arguments import check_arraylike, is_array, no_out, normalize_axis
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.conversion import asarray, astype
from mjax.numpy.creation import arange, zeros, zeros_like
from mjax.numpy.elementwise import conj, multiply
from mjax.numpy.promotion import promote
from mjax.numpy.shaping import moveaxis, ravel, reshape, stack


@fused_when_eager
@takes_out_sharding
def matmul(a, b, *, precision=None, preferred_element_type=None):
    """NumPy matmul: batched, with broadcasting of batch dims and 1-d promotion."""
    a, b = _operands("matmul", a, b, preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(at_user_line(
            f"matmul: operands must be at least 1-d, got shapes {a.shape} and "
            f"{b.shape}"))
    b_contract = builtins.max(b.ndim - 2, 0)
    if a.shape[-1] != b.shape[b_contract]:
        raise TypeError(at_user_line(  # (JAX's words: its dot_general's)
            f"dot_general requires contracting dimensions to have the same shape, got "
            f"{(a.shape[-1],)} and {(b.shape[b_contract],)}."))
    if a.ndim == 1 or b.ndim == 1:
        # One dot_general on the vector itself, as JAX emits: the other operand's leading
        # dims stay free dims (nothing to broadcast), already in the result's order.
        return lax.dot_general(a, b, (((a.ndim - 1,), (b_contract,)), ((), ())),
                               precision=precision,
                               preferred_element_type=preferred_element_type)
    return _batched_matmul(a, b, precision, preferred_element_type)


def _batched_matmul(a, b, precision, preferred_element_type):
    """matmul of two operands of rank >= 2 as one dot_general without broadcasting, as JAX
    emits it: a leading dim both operands have (same size) is a batch dim; one only an
    operand has, or where the other's is 1 (squeezed away), stays a free dim of that
    operand. So `x @ W` with x (B, T, d) and W (d, n) contracts x's last dim with W
    directly, one (B*T, d) x (d, n) product for XLA, not a batched product over copies of
    W. The result is transposed back to matmul's order (batch dims, rows, columns)."""
    n = builtins.max(a.ndim, b.ndim) - 2
    a_lead = (None,) * (n - a.ndim + 2) + a.shape[:-2]
    b_lead = (None,) * (n - b.ndim + 2) + b.shape[:-2]
    batch, a_free, b_free = [], [], []           # result positions of each kind of dim
    a_batch, b_batch, a_squeeze, b_squeeze = [], [], [], []
    a_at = b_at = 0                              # position in a's / b's own leading dims
    for i, (da, db) in enumerate(zip(a_lead, b_lead)):
        if da is None or (db is not None and da == 1 and db != 1):
            if da is not None:
                a_squeeze.append(a_at)
            b_free.append(i)
        elif db is None or db == 1 and da != 1:
            if db is not None:
                b_squeeze.append(b_at)
            a_free.append(i)
        elif da == db:
            a_batch.append(a_at - len(a_squeeze))
            b_batch.append(b_at - len(b_squeeze))
            batch.append(i)
        else:
            raise ValueError(at_user_line(
                f"Incompatible shapes for matmul arguments: {a.shape} and {b.shape}"))
        a_at += da is not None
        b_at += db is not None
    a = lax.squeeze(a, tuple(a_squeeze)) if a_squeeze else a
    b = lax.squeeze(b, tuple(b_squeeze)) if b_squeeze else b
    # dot_general's result: batch dims, a's free dims (its leading ones, then its rows),
    # b's free dims (leading ones, then its columns).
    order = batch + a_free + [n] + b_free + [n + 1]
    out = lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 2,)),
                                 (tuple(a_batch), tuple(b_batch))),
                          precision=precision, preferred_element_type=preferred_element_type)
    perm = tuple(sorted(range(len(order)), key=order.__getitem__))
    return out if perm == tuple(range(len(perm))) else lax.transpose(out, perm)


def _needs_promotion(a, b):
    return not (is_array(a) and is_array(b) and a.dtype == b.dtype)


def _operands(name, a, b, preferred_element_type):
    """dot's and matmul's operands: promoted to one dtype, but for arrays given a
    preferred_element_type, which dot_general takes as they are (JAX's jnp.dot and
    jnp.matmul stage f32 x bf16 -> f32 as one mixed dot_general, no convert)."""
    if preferred_element_type is not None and is_array(a) and is_array(b):
        return asarray(a), asarray(b)
    return (promote(name, a, b, broadcast=False) if _needs_promotion(a, b)
            else (asarray(a), asarray(b)))


@takes_out_sharding
def dot(a, b, *, precision=None, preferred_element_type=None):
    a, b = _operands("dot", a, b, preferred_element_type)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if b.ndim == 1 or a.ndim == 1 or (a.ndim <= 2 and b.ndim <= 2):
        return matmul(a, b, precision=precision,
                      preferred_element_type=preferred_element_type)
    # N-d: sum over last axis of a and second-to-last of b
    return lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 2,)), ((), ())),
                           precision=precision, preferred_element_type=preferred_element_type)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    a, b = asarray(a), asarray(b)
    return dot(conj(ravel(a)), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


def inner(a, b, *, precision=None, preferred_element_type=None):
    if preferred_element_type is not None:
        a, b = (astype(v, preferred_element_type) for v in (a, b))
    a, b = promote("inner", a, b, broadcast=False) if _needs_promotion(a, b) else (a, b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((), ())),
                           precision=precision)


@fused_when_eager
def outer(a, b, out=None):
    no_out("outer", out)
    a, b = ravel(a), ravel(b)
    return multiply(lax.expand_dims(a, (1,)), lax.expand_dims(b, (0,)))


@fused_when_eager
@takes_out_sharding
def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    if preferred_element_type is not None:
        a, b = (astype(v, preferred_element_type) for v in (a, b))
    a, b = promote("tensordot", a, b, broadcast=False) if _needs_promotion(a, b) else (a, b)
    if isinstance(axes, int):
        ax_a, ax_b = tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = (ax_a,) if isinstance(ax_a, int) else tuple(ax_a)
        ax_b = (ax_b,) if isinstance(ax_b, int) else tuple(ax_b)
    return lax.dot_general(a, b, ((tuple(normalize_axis(x, a.ndim) for x in ax_a),
                                   tuple(normalize_axis(x, b.ndim) for x in ax_b)), ((), ())),
                           precision=precision)


@fused_when_eager
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along a diagonal (small integers widen as in sum). JAX: jax.numpy.trace."""
    check_arraylike("trace", a)
    no_out("trace", out)
    nd = asarray(a).ndim
    if normalize_axis(axis1, nd) == normalize_axis(axis2, nd):
        raise ValueError(at_user_line(f"axis1 and axis2 can not be same. axis1={axis1} and "
                                      f"axis2={axis2}"))
    return reductions.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


@fused_when_eager
def diagonal(a, offset=0, axis1=0, axis2=1):
    a = asarray(a)
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    n, m = a.shape[-2:]
    size_ = builtins.max(0, builtins.min(n + builtins.min(offset, 0),
                                         m - builtins.max(offset, 0)))
    rows = arange(size_) - builtins.min(offset, 0)
    cols = arange(size_) + builtins.max(offset, 0)
    return a[..., rows, cols]


def diag(v, k=0):
    v, k = asarray(v), _operator.index(k)
    if v.ndim == 1:
        n = v.shape[0] + builtins.abs(k)
        out = zeros((n, n), v.dtype)
        rows = arange(v.shape[0]) - builtins.min(k, 0)
        cols = arange(v.shape[0]) + builtins.max(k, 0)
        return out.at[rows, cols].set(v)
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError("diag: input must be 1-d or 2-d")


def diagflat(v, k=0):
    """A 2-d array with ravel(v) on diagonal k. JAX: jnp.diagflat."""
    return diag(ravel(asarray(v)), k)


def kron(a, b):
    """The Kronecker product. JAX: jnp.kron."""
    a, b = asarray(a), asarray(b)
    nd = max(a.ndim, b.ndim)
    a = reshape(a, (1,) * (nd - a.ndim) + a.shape)
    b = reshape(b, (1,) * (nd - b.ndim) + b.shape)
    # a's dims at even positions, b's at odd ones, then merge each pair.
    a_ex = reshape(a, tuple(d for n in a.shape for d in (n, 1)))
    b_ex = reshape(b, tuple(d for n in b.shape for d in (1, n)))
    return reshape(a_ex * b_ex, tuple(x * y for x, y in zip(a.shape, b.shape)))


@fused_when_eager
def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) over `axis` (JAX: jnp.vecdot, the same as jnp.linalg.vecdot)."""
    x1, x2 = asarray(x1), asarray(x2)
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"axes must match; got shapes {x1.shape} and {x2.shape} with "
                         f"axis={axis}")
    prod = conj(x1) * x2
    # The product's dtype, as JAX: no widening of small integers; a bool sum is `any`.
    out = (reductions.any(prod, axis=axis) if prod.dtype == bool else
           reductions.sum(prod, axis=axis, dtype=prod.dtype))
    return out if preferred_element_type is None else out.astype(preferred_element_type)


def matvec(x1, x2, /):
    """Matrix (..., m, n) times vector (..., n) -> (..., m), batch dims broadcast."""
    x1, x2 = asarray(x1), asarray(x2)
    _check_product("matvec", x1, x2, x1.ndim >= 2 and x2.ndim >= 1, -1, -1)
    return matmul(x1, x2[..., None])[..., 0]


def vecmat(x1, x2, /):
    """conj(vector (..., n)) times matrix (..., n, m) -> (..., m), batch dims broadcast."""
    x1, x2 = asarray(x1), asarray(x2)
    _check_product("vecmat", x1, x2, x1.ndim >= 1 and x2.ndim >= 2, -1, -2)
    return matmul(conj(x1)[..., None, :], x2)[..., 0, :]


def _check_product(name, x1, x2, ranks_ok, axis1, axis2):
    if not ranks_ok or x1.shape[axis1] != x2.shape[axis2]:
        raise ValueError(at_user_line(
            f"jnp.{name}: incompatible shapes {x1.shape} and {x2.shape} (contracting "
            f"x1 axis {axis1} with x2 axis {axis2})"))


@fused_when_eager
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 2- or 3-vectors (a 2-vector is (x, y, 0)), NumPy's jnp.cross."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = asarray(a), asarray(b)
    a, b = moveaxis(a, axisa, -1), moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(at_user_line(
            f"jnp.cross: incompatible dimensions for cross product (dimension must be 2 "
            f"or 3); got vectors of length {a.shape[-1]} and {b.shape[-1]}"))
    if a.shape[-1] == 2 and b.shape[-1] == 2:  # the z component alone, a scalar per pair
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else zeros_like(a0)
    b2 = b[..., 2] if b.shape[-1] == 3 else zeros_like(b0)
    out = stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return moveaxis(out, -1, axisc)
