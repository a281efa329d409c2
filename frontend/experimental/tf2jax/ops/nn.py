"""Activations, softmax, bias, convolutions, pooling and batch normalization."""
from __future__ import annotations

import numpy as np

import mjax.lax as lax
import mjax.nn as nn
import mjax.numpy as jnp
from mjax.experimental.tf2jax.ops.registry import (cast, register, shape_of, static,
                                                   static_ints, xp)


def _jnp():
    return jnp


def _nn():
    return nn


def _lax():
    return lax


def _asarray(x):
    return _jnp().asarray(x)


# ---- activations ----------------------------------------------------------------------------
@register("Relu")
def _relu(ctx, node, x):
    return xp(x).maximum(x, np.zeros((), np.dtype(x.dtype)))


@register("Relu6")
def _relu6(ctx, node, x):
    m = xp(x)
    dt = np.dtype(x.dtype)
    return m.minimum(m.maximum(x, np.zeros((), dt)), np.asarray(6, dt))


@register("Elu")
def _elu(ctx, node, x):
    return _nn().elu(_asarray(x))


@register("Selu")
def _selu(ctx, node, x):
    return _nn().selu(_asarray(x))


@register("Gelu")
def _gelu(ctx, node, x):
    return _nn().gelu(_asarray(x), approximate=bool(node.attrs.get("approximate", False)))


@register("LeakyRelu")
def _leaky_relu(ctx, node, x):
    return _nn().leaky_relu(_asarray(x), negative_slope=float(node.attrs.get("alpha", 0.2)))


@register("Softplus")
def _softplus(ctx, node, x):
    return _nn().softplus(_asarray(x))


@register("Softsign")
def _softsign(ctx, node, x):
    return _nn().soft_sign(_asarray(x))


@register("Softmax")
def _softmax(ctx, node, x):
    return _nn().softmax(_asarray(x), axis=-1)


@register("LogSoftmax")
def _log_softmax(ctx, node, x):
    return _nn().log_softmax(_asarray(x), axis=-1)


@register("BiasAdd", "BiasAddV1")
def _bias_add(ctx, node, x, b):
    m = xp(x, b)
    if node.attrs.get("data_format", "NHWC").startswith("NC") and np.ndim(x) > 2:
        b = m.reshape(b, (-1,) + (1,) * (np.ndim(x) - 2))
    return m.add(x, b)


@register("L2Loss")
def _l2_loss(ctx, node, x):
    m = xp(x)
    return cast(m.sum(m.square(x)) / 2, np.dtype(x.dtype))


# ---- convolutions ---------------------------------------------------------------------------
def _spatial(values, fmt: str):
    """The spatial entries of a per-dimension attribute given in layout `fmt`."""
    return tuple(int(values[i]) for i, c in enumerate(fmt) if c not in "NC")


def _padding(node, fmt: str):
    pad = node.attrs["padding"]
    if pad == "EXPLICIT":
        flat = list(node.attrs["explicit_paddings"])
        pairs = [(flat[2 * i], flat[2 * i + 1]) for i in range(len(fmt))]
        return [p for p, c in zip(pairs, fmt) if c not in "NC"]
    return pad


def _conv(node, x, w, groups_from_input: bool):
    fmt = node.attrs.get("data_format", "NHWC")
    nd = len(fmt) - 2
    kernel_fmt = "HWIO" if nd == 2 else ("DHWIO" if nd == 3 else "WIO")
    x, w = _asarray(x), _asarray(w)
    groups = 1
    if groups_from_input:         # depthwise: (H, W, in, mult) -> (H, W, 1, in*mult)
        cin = shape_of(w)[-2]
        w = w.reshape(shape_of(w)[:-2] + (1, cin * shape_of(w)[-1]))
        groups = cin
    else:
        cin = shape_of(x)[fmt.index("C")]
        if cin != shape_of(w)[-2]:
            groups = cin // shape_of(w)[-2]      # grouped convolution
    return _lax().conv_general_dilated(
        x, w, window_strides=_spatial(node.attrs["strides"], fmt),
        padding=_padding(node, fmt),
        rhs_dilation=_spatial(node.attrs.get("dilations", [1] * len(fmt)), fmt),
        dimension_numbers=(fmt, kernel_fmt, fmt), feature_group_count=groups)


@register("Conv2D", "Conv3D")
def _conv2d(ctx, node, x, w):
    return _conv(node, x, w, False)


@register("DepthwiseConv2dNative")
def _depthwise(ctx, node, x, w):
    return _conv(node, x, w, True)


# ---- pooling --------------------------------------------------------------------------------
def _window(node):
    return (tuple(int(k) for k in node.attrs["ksize"]),
            tuple(int(s) for s in node.attrs["strides"]), node.attrs["padding"])


@register("MaxPool", "MaxPool3D")
def _max_pool(ctx, node, x):
    lax = _lax()
    x = _asarray(x)
    dims, strides, pad = _window(node)
    init = np.array(-np.inf if np.issubdtype(np.dtype(x.dtype), np.floating)
                    else np.iinfo(np.dtype(x.dtype)).min, np.dtype(x.dtype))
    return lax.reduce_window(x, init, lax.max, dims, strides, pad)


@register("AvgPool", "AvgPool3D")
def _avg_pool(ctx, node, x):
    lax = _lax()
    x = _asarray(x)
    dims, strides, pad = _window(node)
    zero = np.array(0, np.dtype(x.dtype))
    total = lax.reduce_window(x, zero, lax.add, dims, strides, pad)
    # TF divides by the number of input elements in each window (padding not counted).
    ones = np.ones(shape_of(x), np.dtype(x.dtype))
    count = lax.reduce_window(ones, zero, lax.add, dims, strides, pad)
    return total / count


# ---- normalization --------------------------------------------------------------------------
@register("FusedBatchNorm", "FusedBatchNormV2", "FusedBatchNormV3")
def _fused_batch_norm(ctx, node, x, scale, offset, mean, var):
    jnp = _jnp()
    fmt = node.attrs.get("data_format", "NHWC")
    eps = float(node.attrs.get("epsilon", 1e-3))
    x = _asarray(x)
    in_dtype = x.dtype
    x = x.astype(np.dtype(scale.dtype))       # half inputs normalize in float32
    caxis = fmt.index("C")
    shape = [1] * x.ndim
    shape[caxis] = -1
    axes = tuple(i for i in range(x.ndim) if i != caxis)
    if node.attrs.get("is_training", True):
        batch_mean = jnp.mean(x, axis=axes)
        batch_var = jnp.var(x, axis=axes)
        n = int(np.prod([x.shape[a] for a in axes]))
        y = (x - batch_mean.reshape(shape)) / jnp.sqrt(batch_var.reshape(shape) + eps)
        out_var = batch_var * (n / max(n - 1, 1))
        f = float(node.attrs.get("exponential_avg_factor", 1.0))
        if f != 1.0:
            batch_mean = (1 - f) * mean + f * batch_mean
            out_var = (1 - f) * var + f * out_var
        saved = (batch_mean, batch_var)
    else:
        y = (x - jnp.reshape(mean, shape)) / jnp.sqrt(jnp.reshape(var, shape) + eps)
        batch_mean, out_var, saved = mean, var, (mean, var)
    y = y * jnp.reshape(scale, shape) + jnp.reshape(offset, shape)
    outs = [y.astype(in_dtype), batch_mean, out_var, saved[0], saved[1]]
    if node.op == "FusedBatchNormV3":
        outs.append(np.zeros((0,), np.dtype(scale.dtype)))
    return outs


@register("Conv2DBackpropInput", "Conv3DBackpropInputV2")
def _conv_transpose(ctx, node, input_sizes, w, dy):
    """The gradient of a convolution with respect to its input (Keras Conv2DTranspose):
    a convolution of `dy` dilated by the strides with the flipped kernel, its feature
    dimensions swapped, padded so the result has `input_sizes`."""
    fmt = node.attrs.get("data_format", "NHWC")
    nd = len(fmt) - 2
    sizes = [int(v) for v in static(input_sizes, "the input sizes")]
    in_spatial = _spatial(sizes, fmt) if len(sizes) == len(fmt) else tuple(sizes)
    strides = _spatial(node.attrs["strides"], fmt)
    dil = _spatial(node.attrs.get("dilations", [1] * len(fmt)), fmt)
    kernel = shape_of(w)[:nd]
    dy = _asarray(dy)
    out_spatial = _spatial(shape_of(dy), fmt)
    pads = _padding(node, fmt)
    result = []
    for i in range(nd):
        k = (kernel[i] - 1) * dil[i] + 1
        n, o, s = in_spatial[i], out_spatial[i], strides[i]
        if pads == "VALID":
            lo = 0
        elif pads == "SAME":
            lo = max((o - 1) * s + k - n, 0) // 2
        else:
            lo = pads[i][0]
        a = k - 1 - lo
        result.append((a, n + k - 2 - (o - 1) * s - a))
    w = _jnp().flip(_asarray(w), axis=tuple(range(nd)))
    kernel_fmt = ("HWOI" if nd == 2 else "DHWOI")
    return _lax().conv_general_dilated(
        dy, w, window_strides=(1,) * nd, padding=result, lhs_dilation=strides,
        rhs_dilation=dil, dimension_numbers=(fmt, kernel_fmt, fmt))


@register("SoftmaxCrossEntropyWithLogits")
def _softmax_xent(ctx, node, logits, labels):
    jnp, nn = _jnp(), _nn()
    logp = nn.log_softmax(_asarray(logits), axis=-1)
    return -jnp.sum(labels * logp, axis=-1), jnp.exp(logp) - labels


@register("SparseSoftmaxCrossEntropyWithLogits")
def _sparse_softmax_xent(ctx, node, logits, labels):
    jnp, nn = _jnp(), _nn()
    logp = nn.log_softmax(_asarray(logits), axis=-1)
    onehot = nn.one_hot(labels, shape_of(logits)[-1], dtype=logp.dtype)
    return -jnp.sum(onehot * logp, axis=-1), jnp.exp(logp) - onehot


def _resize_source(n_in, n_out, align_corners, half_pixel):
    """Source coordinates of the outputs along one axis, as TF's resize kernels compute."""
    if align_corners and n_out > 1:
        scale = (n_in - 1) / (n_out - 1)
    else:
        scale = n_in / n_out
    i = np.arange(n_out, dtype=np.float64)
    return (i + 0.5) * scale - 0.5 if half_pixel else i * scale


@register("ResizeNearestNeighbor")
def _resize_nearest(ctx, node, images, size):
    out_hw = static_ints(size, "the size of ResizeNearestNeighbor")
    align, half = node.attrs.get("align_corners"), node.attrs.get("half_pixel_centers")
    x = _asarray(images)
    for axis, n_out in zip((1, 2), out_hw):
        n_in = x.shape[axis]
        scale = (n_in - 1) / (n_out - 1) if align and n_out > 1 else n_in / n_out
        src = (np.arange(n_out) + (0.5 if half else 0.0)) * scale
        idx = np.round(src) if align else np.floor(src)
        x = _jnp().take(x, np.minimum(idx, n_in - 1).astype(np.int32), axis=axis)
    return x


@register("ResizeBilinear")
def _resize_bilinear(ctx, node, images, size):
    out_hw = static_ints(size, "the size of ResizeBilinear")
    align, half = node.attrs.get("align_corners"), node.attrs.get("half_pixel_centers")
    x = _asarray(images).astype(np.float32)
    for axis, n_out in zip((1, 2), out_hw):
        n_in = x.shape[axis]
        src = _resize_source(n_in, n_out, align, half)
        src = np.clip(src, 0, n_in - 1)
        lo = np.floor(src).astype(np.int64)
        hi = np.minimum(lo + 1, n_in - 1)
        frac = src - lo
        m = np.zeros((n_out, n_in), np.float64)      # the interpolation as a matrix
        np.add.at(m, (np.arange(n_out), lo), 1 - frac)
        np.add.at(m, (np.arange(n_out), hi), frac)
        x = _jnp().moveaxis(_jnp().tensordot(x, m.astype(np.float32), axes=[[axis], [1]]),
                            -1, axis)
    return x


@register("LRN")
def _lrn(ctx, node, x):
    """x / (bias + alpha * sum of squares over a window of channels) ** beta."""
    lax = _lax()
    x = _asarray(x)
    r = int(node.attrs.get("depth_radius", 5))
    bias, alpha = float(node.attrs.get("bias", 1.0)), float(node.attrs.get("alpha", 1.0))
    beta = float(node.attrs.get("beta", 0.5))
    zero = np.array(0, np.dtype(x.dtype))
    window = (1,) * (x.ndim - 1) + (2 * r + 1,)
    sq = lax.reduce_window(x * x, zero, lax.add, window, (1,) * x.ndim,
                           [(0, 0)] * (x.ndim - 1) + [(r, r)])
    return x / (bias + alpha * sq) ** beta
