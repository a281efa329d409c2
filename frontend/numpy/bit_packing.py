"""Bit packing: packbits and unpackbits (truth values <-> bits of uint8s)."""
from __future__ import annotations

import operator

import numpy as _onp

from mjax.specs import dtypes as _dt
from mjax.tracing.core import at_user_line
from mjax.numpy import reductions
from mjax.numpy.arraypad import pad
from mjax.numpy.conversion import asarray
from mjax.numpy.creation import arange
from mjax.numpy.elementwise import left_shift, right_shift
from mjax.numpy.scalar_types import uint8
from mjax.numpy.shaping import moveaxis, ravel


def _bitorder(bitorder, name):
    if bitorder not in ("big", "little"):
        raise ValueError(at_user_line(f"jnp.{name}: bitorder must be 'big' or 'little'; "
                                      f"got {bitorder!r}"))
    shifts = arange(8, dtype=uint8)
    return shifts[::-1] if bitorder == "big" else shifts


def packbits(a, axis=None, bitorder="big"):
    """Pack the truth of each element into the bits of uint8s, 8 per byte, along `axis`."""
    a = asarray(a)
    if not (_dt.issubdtype(a.dtype, _onp.integer) or a.dtype == _onp.bool_):
        raise TypeError(at_user_line(f"jnp.packbits: expected an integer or boolean "
                                     f"array; got {a.dtype}"))
    shifts = _bitorder(bitorder, "packbits")
    if axis is None:
        a, axis = ravel(a), 0
    bits = moveaxis((a != 0).astype(uint8), axis, -1)
    n = bits.shape[-1]
    bits = pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, -n % 8)])
    bits = bits.reshape(bits.shape[:-1] + (bits.shape[-1] // 8, 8))
    packed = reductions.sum(left_shift(bits, shifts), axis=-1, dtype=uint8)
    return moveaxis(packed, -1, axis)


def unpackbits(a, axis=None, count=None, bitorder="big"):
    """The bits of uint8s as 0/1 uint8s, 8 per byte, along `axis` (first `count` kept)."""
    a = asarray(a)
    if a.dtype != _onp.uint8:
        raise TypeError(at_user_line(f"jnp.unpackbits: expected an array of uint8; got "
                                     f"{a.dtype}"))
    shifts = _bitorder(bitorder, "unpackbits")
    if axis is None:
        a, axis = ravel(a), 0
    a = moveaxis(a, axis, -1)
    bits = right_shift(a[..., None], shifts) & uint8(1)
    bits = bits.reshape(bits.shape[:-2] + (bits.shape[-2] * 8,))
    if count is not None:
        count = operator.index(count)
        n = bits.shape[-1]
        bits = (bits[..., :count] if count <= n else
                pad(bits, [(0, 0)] * (bits.ndim - 1) + [(0, count - n)]))
    return moveaxis(bits, -1, axis)
