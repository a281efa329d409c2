"""jnp.convolve and jnp.correlate: one-dimensional convolutions computed as JAX computes
them, by lax.conv_general_dilated of the two operands (the shorter one flipped for a
convolution, conjugated for a correlation), so the sums come out in XLA's convolution
order, bit for bit JAX's. Called eagerly each is one program, as JAX jits them."""
from __future__ import annotations

from mjax import lax
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.arguments import check_arraylike
from mjax.numpy.elementwise import conj
from mjax.numpy.promotion import promote
from mjax.numpy.shaping import flip


def _conv(x, y, mode, op, precision, preferred_element_type):
    check_arraylike(op, x, y)
    # (without preferred_element_type: inexact, NumPy's default for convolutions)
    x, y = promote(op, x, y, broadcast=False, inexact=preferred_element_type is None)
    if x.ndim != 1 or y.ndim != 1:
        raise ValueError(f"{op}() only support 1-dimensional inputs.")
    if x.shape[0] == 0 or y.shape[0] == 0:
        raise ValueError(f"{op}: inputs cannot be empty, got shapes {x.shape} and "
                         f"{y.shape}.")
    reverse = False
    if op == "correlate":
        y = conj(y)
        if x.shape[0] < y.shape[0]:
            x, y, reverse = y, x, True
    else:
        if x.shape[0] < y.shape[0]:
            x, y = y, x
        y = flip(y)
    m = y.shape[0]
    pads = {"valid": (0, 0), "same": (m // 2, m - m // 2 - 1), "full": (m - 1, m - 1)}
    if mode not in pads:
        raise ValueError("mode must be one of ['full', 'same', 'valid']")
    out = lax.conv_general_dilated(x[None, None, :], y[None, None, :], (1,), [pads[mode]],
                                   precision=precision,
                                   preferred_element_type=preferred_element_type)
    out = out[0, 0]
    return lax.rev(out, (0,)) if reverse else out


@fused_when_eager
def convolve(a, v, mode="full", *, precision=None, preferred_element_type=None):
    """Discrete linear convolution of two 1-d arrays; mode full, same or valid. JAX:
    jnp.convolve."""
    return _conv(a, v, mode, "convolve", precision, preferred_element_type)


@fused_when_eager
def correlate(a, v, mode="valid", *, precision=None, preferred_element_type=None):
    """Cross-correlation of two 1-d arrays. JAX: jnp.correlate."""
    return _conv(a, v, mode, "correlate", precision, preferred_element_type)
