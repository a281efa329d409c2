"""JAX: jax.image: resizing images (any number of spatial dimensions) by separable
resampling kernels: one weight matrix per resized axis, contracted with einsum."""
from __future__ import annotations

import enum
import math

import numpy as np

from mjax import lax
from mjax import numpy as jnp
from mjax.jit.api import jit
from mjax.extend.core import concrete_or_error

__all__ = ["ResizeMethod", "resize", "scale_and_translate"]

_EPS_CUTOFF = 1000.0 * float(np.finfo(np.float32).eps)  # smaller weight sums give zeros


class ResizeMethod(enum.Enum):
    """Image resize method (`resize` also takes the names: 'nearest', 'linear', ...)."""
    NEAREST = 0
    LINEAR = 1
    LANCZOS3 = 2
    LANCZOS5 = 3
    CUBIC = 4
    CUBIC_PYTORCH = 5
    AREA = 6

    @staticmethod
    def from_string(s: str) -> "ResizeMethod":
        for method, names in _NAMES.items():
            if s in names:
                return method
        raise ValueError(f'Unknown resize method "{s}"')


_NAMES = {
    ResizeMethod.NEAREST: ("nearest",),
    ResizeMethod.LINEAR: ("linear", "bilinear", "trilinear", "triangle"),
    ResizeMethod.LANCZOS3: ("lanczos3",),
    ResizeMethod.LANCZOS5: ("lanczos5",),
    ResizeMethod.CUBIC: ("cubic", "bicubic", "tricubic"),
    ResizeMethod.CUBIC_PYTORCH: ("cubic-pytorch", "bicubic-pytorch"),
    ResizeMethod.AREA: ("area",),
}


# ---- kernels: weight of an input sample at distance x (>= 0) from the output's centre
def _triangle(x):
    return jnp.maximum(0, 1 - jnp.abs(x))


def _lanczos(radius):
    def kernel(x):
        y = radius * jnp.sin(np.pi * x) * jnp.sin(np.pi * x / radius)
        # (near 0 the ratio is 1; the where keeps the division finite)
        out = jnp.where(x > 1e-3, y / jnp.where(x != 0, np.pi ** 2 * x ** 2, 1), 1)
        return jnp.where(x > radius, 0.0, out)
    return kernel


def _cubic(a):
    """Keys' cubic convolution kernel with parameter a (-0.5: Keys, -0.75: OpenCV's)."""
    def kernel(x):
        near = ((a + 2.0) * x - (a + 3.0)) * x * x + 1.0
        far = ((a * x - 5.0 * a) * x + 8.0 * a) * x - 4.0 * a
        return jnp.where(x >= 2.0, 0.0, jnp.where(x >= 1.0, far, near))
    return kernel


_AREA = object()  # box-overlap weights, computed from intervals rather than a kernel

# method -> (radius, kernel)
_KERNELS = {
    ResizeMethod.LINEAR: (1, _triangle),
    ResizeMethod.LANCZOS3: (3, _lanczos(3.0)),
    ResizeMethod.LANCZOS5: (5, _lanczos(5.0)),
    ResizeMethod.CUBIC: (2, _cubic(-0.5)),
    ResizeMethod.CUBIC_PYTORCH: (2, _cubic(-0.75)),
    ResizeMethod.AREA: (1, _AREA),
}


def _normalized(weights):
    """Columns scaled to sum to 1 (columns summing to about 0 become zeros)."""
    total = jnp.sum(weights, axis=0, keepdims=True)
    return jnp.where(jnp.abs(total) > _EPS_CUTOFF,
                     weights / jnp.where(total != 0, total, 1), 0)


def _weight_matrix(in_size, out_size, scale, translation, kernel, antialias,
                   edge_padding, radius):
    """[in_size, out_size] weights: output j = sum_i input i * w[i, j]."""
    dtype = jnp.result_type(scale, translation)
    inv_scale = 1.0 / scale
    kernel_scale = jnp.maximum(inv_scale, 1.0) if antialias else 1.0
    # Output sample j sits at input coordinate sample[j] (pixel centres at i + 0.5).
    sample = (jnp.arange(out_size, dtype=dtype) + 0.5) * inv_scale \
        - translation * inv_scale - 0.5
    pad = 0
    if edge_padding:   # (inputs beyond the edges repeat the edge pixel)
        pad = radius
        if antialias:
            s = float(concrete_or_error(None, scale,
                                        "Antialiasing with edge padding requires a "
                                        "static scale."))
            pad = math.ceil(radius * max(1.0 / s, 1.0))
    inputs = jnp.arange(-pad, in_size + pad, dtype=dtype)
    if kernel is _AREA:
        lo_out = jnp.arange(out_size, dtype=dtype) * inv_scale - translation * inv_scale
        hi_out = lo_out + inv_scale
        lo_in = jnp.arange(in_size, dtype=dtype)
        weights = jnp.maximum(0.0, jnp.minimum(hi_out[None, :], lo_in[:, None] + 1.0)
                              - jnp.maximum(lo_out[None, :], lo_in[:, None]))
    else:
        weights = kernel(jnp.abs(sample[None, :] - inputs[:, None]) / kernel_scale)
    if edge_padding:
        rows = jnp.clip(inputs.astype(jnp.int32), 0, in_size - 1)
        folded = jnp.zeros((in_size, out_size), dtype)
        cols = jnp.broadcast_to(jnp.arange(out_size)[None, :], weights.shape)
        return _normalized(folded.at[rows[:, None], cols].add(weights))
    inside = (sample >= -0.5) & (sample <= in_size - 0.5)
    return jnp.where(inside[None, :], _normalized(weights), 0)


def _resample(x, out_shape, spatial_dims, scale, translation, kernel, antialias,
              precision, edge_padding=False, radius=None):
    if not spatial_dims:
        return x
    rank = len(out_shape)
    operands, out_idx = [], list(range(rank))
    for i, d in enumerate(spatial_dims):
        d = d % x.ndim
        w = _weight_matrix(x.shape[d], out_shape[d], scale[i], translation[i], kernel,
                           antialias, edge_padding, radius).astype(x.dtype)
        operands += [w, [d, rank + i]]
        out_idx[d] = rank + i
    # (the subscripts as letters: mjax.numpy.einsum takes no interleaved sublists yet)
    letters = lambda idx: "".join(chr(ord("a") + i) for i in idx)  # noqa: E731
    specs = [letters(range(rank))] + [letters(ix) for ix in operands[1::2]]
    return jnp.einsum(",".join(specs) + "->" + letters(out_idx), x, *operands[0::2],
                      precision=precision)


def _method(method) -> ResizeMethod:
    return ResizeMethod.from_string(method) if isinstance(method, str) else method


def _check_rank(shape, image):
    if len(shape) != image.ndim:
        raise ValueError("shape must have length equal to the number of dimensions of "
                         f"x;  {shape} vs {image.shape}")


def _promote_inexact(*xs):
    dtype = jnp.result_type(*xs)
    if not jnp.issubdtype(dtype, jnp.inexact):
        dtype = jnp.result_type(dtype, jnp.float32)  # (integers: the default float)
    return [jnp.asarray(x, dtype) for x in xs]


def scale_and_translate(image, shape, spatial_dims, scale, translation, method,
                        antialias=True, precision=lax.Precision.HIGHEST):
    """Resamples `image` to `shape` on `spatial_dims`, output pixel centre j sitting at
    input coordinate (j + 0.5 - translation) / scale - 0.5."""
    shape = tuple(int(s) for s in shape)
    _check_rank(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        raise ValueError("Nearest neighbor resampling is not currently supported for "
                         "scale_and_translate.")
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    (image,) = _promote_inexact(image)
    scale, translation = _promote_inexact(scale, translation)
    return _resample(image, shape, spatial_dims, scale, translation, kernel, antialias,
                     precision, edge_padding=method == ResizeMethod.CUBIC_PYTORCH,
                     radius=radius)


def _resize_nearest(x, shape):
    for d, (m, n) in enumerate(zip(x.shape, shape)):
        if m == n:
            continue
        src = jnp.floor(((jnp.arange(n, dtype=np.float32) + 0.5) * m / n)
                        .astype(np.float32)).astype(np.int32)
        x = jnp.take(x, src, axis=d)
    return x


@jit(static_argnums=(1, 2, 3, 4))
def _resize(image, shape, method, antialias, precision):
    _check_rank(shape, image)
    method = _method(method)
    if method == ResizeMethod.NEAREST:
        return _resize_nearest(image, shape)
    (image,) = _promote_inexact(image)
    dims = tuple(d for d in range(len(shape)) if image.shape[d] != shape[d])
    if method == ResizeMethod.CUBIC_PYTORCH and antialias:
        method = ResizeMethod.CUBIC
    radius, kernel = _KERNELS[method]
    scale = [1.0 if shape[d] == 0 else shape[d] / image.shape[d] for d in dims]
    return _resample(image, shape, dims, scale, [0.0] * len(dims), kernel, antialias,
                     precision, edge_padding=method == ResizeMethod.CUBIC_PYTORCH,
                     radius=radius)


def resize(image, shape, method, antialias=True, precision=lax.Precision.HIGHEST):
    """Image resize to `shape` (a resized axis is resampled with `method`; antialias
    widens the kernel when downsampling). Integer images give floats, as JAX's."""
    return _resize(image, tuple(int(s) for s in shape), method, antialias, precision)
