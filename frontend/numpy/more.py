"""The last small jax.numpy names, composed from existing functions: vector/matrix
products (vecdot, matvec, vecmat, cross), bit packing, host-side I/O and printing helpers
(which, as in JAX, go through NumPy on the host), and NumPy's abstract scalar types."""
from __future__ import annotations

import operator

import numpy as _onp

from mjax import dtypes as _dt
from mjax import numpy as jnp
from mjax.core import Tracer, at_user_line

# NumPy's abstract scalar classes, warnings and printing controls, as jax.numpy re-exports
# them (printing of mjax arrays goes through NumPy, so NumPy's print options apply).
generic, character, flexible, object_ = (_onp.generic, _onp.character, _onp.flexible,
                                         _onp.object_)
ComplexWarning = _onp.exceptions.ComplexWarning
array_repr, array_str = _onp.array_repr, _onp.array_str
get_printoptions, set_printoptions, printoptions = (_onp.get_printoptions,
                                                    _onp.set_printoptions, _onp.printoptions)
savez = _onp.savez


# ---- products -----------------------------------------------------------------------
def vecdot(x1, x2, /, *, axis=-1, precision=None, preferred_element_type=None):
    """sum(conj(x1) * x2) over `axis` (JAX: jnp.vecdot, the same as jnp.linalg.vecdot)."""
    return jnp.linalg.vecdot(x1, x2, axis=axis, precision=precision,
                             preferred_element_type=preferred_element_type)


def matvec(x1, x2, /):
    """Matrix (..., m, n) times vector (..., n) -> (..., m), batch dims broadcast."""
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    _check_product("matvec", x1, x2, x1.ndim >= 2 and x2.ndim >= 1, -1, -1)
    return jnp.matmul(x1, x2[..., None])[..., 0]


def vecmat(x1, x2, /):
    """conj(vector (..., n)) times matrix (..., n, m) -> (..., m), batch dims broadcast."""
    x1, x2 = jnp.asarray(x1), jnp.asarray(x2)
    _check_product("vecmat", x1, x2, x1.ndim >= 1 and x2.ndim >= 2, -1, -2)
    return jnp.matmul(jnp.conj(x1)[..., None, :], x2)[..., 0, :]


def _check_product(name, x1, x2, ranks_ok, axis1, axis2):
    if not ranks_ok or x1.shape[axis1] != x2.shape[axis2]:
        raise ValueError(at_user_line(
            f"jnp.{name}: incompatible shapes {x1.shape} and {x2.shape} (contracting "
            f"x1 axis {axis1} with x2 axis {axis2})"))


def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """Cross product of 2- or 3-vectors (a 2-vector is (x, y, 0)), NumPy's jnp.cross."""
    if axis is not None:
        axisa = axisb = axisc = axis
    a, b = jnp.asarray(a), jnp.asarray(b)
    a, b = jnp.moveaxis(a, axisa, -1), jnp.moveaxis(b, axisb, -1)
    if a.shape[-1] not in (2, 3) or b.shape[-1] not in (2, 3):
        raise ValueError(at_user_line(
            f"jnp.cross: incompatible dimensions for cross product (dimension must be 2 "
            f"or 3); got vectors of length {a.shape[-1]} and {b.shape[-1]}"))
    if a.shape[-1] == 2 and b.shape[-1] == 2:  # the z component alone, a scalar per pair
        return a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    a2 = a[..., 2] if a.shape[-1] == 3 else jnp.zeros_like(a0)
    b2 = b[..., 2] if b.shape[-1] == 3 else jnp.zeros_like(b0)
    out = jnp.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0], axis=-1)
    return jnp.moveaxis(out, -1, axisc)


# ---- bit packing --------------------------------------------------------------------
def _bitorder(bitorder, name):
    if bitorder not in ("big", "little"):
        raise ValueError(at_user_line(f"jnp.{name}: bitorder must be 'big' or 'little'; "
                                      f"got {bitorder!r}"))
    shifts = jnp.arange(8, dtype=jnp.uint8)
    return shifts[::-1] if bitorder == "big" else shifts


def packbits(a, axis=None, bitorder="big"):
    """Pack the truth of each element into the bits of uint8s, 8 per byte, along `axis`."""
    a = jnp.asarray(a)
    if not (_dt.issubdtype(a.dtype, _onp.integer) or a.dtype == _onp.bool_):
        raise TypeError(at_user_line(f"jnp.packbits: expected an integer or boolean "
                                     f"array; got {a.dtype}"))
    shifts = _bitorder(bitorder, "packbits")
    if axis is None:
        a, axis = jnp.ravel(a), 0
    bits = jnp.moveaxis((a != 0).astype(jnp.uint8), axis, -1)
    n = bits.shape[-1]
    bits = jnp.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, -n % 8)])
    bits = bits.reshape(bits.shape[:-1] + (bits.shape[-1] // 8, 8))
    packed = jnp.sum(jnp.left_shift(bits, shifts), axis=-1, dtype=jnp.uint8)
    return jnp.moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of uint8s as 0/1 uint8s, 8 per byte, along `axis` (first `count` kept)."""
    a = jnp.asarray(a)
    if a.dtype != _onp.uint8:
        raise TypeError(at_user_line(f"jnp.unpackbits: expected an array of uint8; got "
                                     f"{a.dtype}"))
    shifts = _bitorder(bitorder, "unpackbits")
    if axis is None:
        a, axis = jnp.ravel(a), 0
    a = jnp.moveaxis(a, axis, -1)
    bits = jnp.right_shift(a[..., None], shifts) & jnp.uint8(1)
    bits = bits.reshape(bits.shape[:-2] + (bits.shape[-2] * 8,))
    if count is not None:
        count = operator.index(count)
        n = bits.shape[-1]
        bits = (bits[..., :count] if count <= n else
                jnp.pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, count - n)]))
    return jnp.moveaxis(bits, -1, axis)


# ---- host-side construction and I/O (NumPy reads, then the result is put on device) ---
def frombuffer(buffer, dtype=float, count=-1, offset=0):
    return jnp.asarray(_onp.frombuffer(buffer, dtype=dtype, count=count, offset=offset))


def fromstring(string, dtype=float, count=-1, *, sep):
    return jnp.asarray(_onp.fromstring(string, dtype=dtype, count=count, sep=sep))


def load(file, *args, **kwargs):
    """np.load, with arrays put on device (an .npz archive stays NumPy's lazy mapping)."""
    out = _onp.load(file, *args, **kwargs)
    return jnp.asarray(out) if isinstance(out, _onp.ndarray) else out


def _impure(name):
    def refuse(*args, **kwargs):
        raise NotImplementedError(
            f"jnp.{name}() is not implemented: it reads a file or consumes an iterator, "
            f"which is a side effect that jit and other transformations cannot replay. "
            f"Use jnp.asarray(np.{name}(...)) outside transformed functions instead.")
    refuse.__name__ = refuse.__qualname__ = name
    return refuse


fromiter, fromfile = _impure("fromiter"), _impure("fromfile")


def einsum_path(subscripts, /, *operands, optimize="auto"):
    """The contraction order einsum would use, and a report (from NumPy's path search)."""
    if optimize is True or optimize == "auto":
        # (as opt_einsum's 'auto', which JAX uses: exhaustive search for a few operands)
        optimize = "optimal" if len(operands) <= 4 else "greedy"
    shapes = [_onp.empty(_shape(x), dtype=_onp.bool_) for x in operands]
    path, report = _onp.einsum_path(subscripts, *shapes, optimize=optimize)
    return [tuple(p) for p in path[1:]], report


def _shape(x):
    return x.shape if isinstance(x, Tracer) or hasattr(x, "shape") else _onp.shape(x)
