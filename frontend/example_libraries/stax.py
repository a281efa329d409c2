"""`mjax.example_libraries.stax`: JAX's small neural-network layer library.

A layer is a pair ``(init_fun, apply_fun)``:

* ``init_fun(rng, input_shape) -> (output_shape, params)`` builds parameters for an
  input of ``input_shape`` and reports the shape the layer produces;
* ``apply_fun(params, inputs, **kwargs) -> outputs`` runs the layer. Keyword
  arguments (``rng`` for the random layers, anything else a user threads through) are
  handed on by the combinators.

Combinators (``serial``, ``parallel``, ``shape_dependent``) take layers and give a
layer. Every random draw goes through `mjax.random` in the order JAX's stax uses, so the
same key gives the same parameters as ``jax.example_libraries.stax``.
"""
import functools
import math

from mjax import lax
from mjax import numpy as jnp
from mjax import random
from mjax.nn import (elu, gelu, leaky_relu, log_softmax, relu, selu, sigmoid, softmax,
                     softplus, standardize)
from mjax.nn.initializers import glorot_normal, normal, ones, zeros

# Older spellings that JAX's stax still exports.
logsoftmax = log_softmax
glorot = glorot_normal
randn = normal

__all__ = [
    "AvgPool", "BatchNorm", "Conv", "Conv1DTranspose", "ConvTranspose", "Dense", "Dropout",
    "Elu", "Exp", "FanInConcat", "FanInSum", "FanOut", "Flatten", "Gelu", "GeneralConv",
    "GeneralConvTranspose", "Identity", "LeakyRelu", "LogSoftmax", "MaxPool", "Relu", "Selu",
    "Sigmoid", "Softmax", "Softplus", "SumPool", "Tanh", "elementwise", "elu", "gelu",
    "glorot", "glorot_normal", "leaky_relu", "log_softmax", "logsoftmax", "normal", "ones",
    "parallel", "randn", "relu", "selu", "serial", "shape_dependent", "sigmoid", "softmax",
    "softplus", "standardize", "zeros",
]


# --------------------------------------------------------------------------- dense / conv

def Dense(out_dim, W_init=glorot_normal(), b_init=normal()):
    """Fully connected layer: ``inputs @ W + b`` over the last axis."""

    def init_fun(rng, input_shape):
        out_shape = tuple(input_shape[:-1]) + (out_dim,)
        w_key, b_key = random.split(rng)
        W = W_init(w_key, (input_shape[-1], out_dim))
        b = b_init(b_key, (out_dim,))
        return out_shape, (W, b)

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        return jnp.dot(inputs, W) + b

    return init_fun, apply_fun


def _kernel_shape(lhs_spec, rhs_spec, input_shape, out_chan, filter_shape):
    """Kernel shape laid out as `rhs_spec`: spatial sizes taken from `filter_shape` in
    order, 'I' from the input's channel dimension, 'O' = `out_chan`."""
    spatial = iter(filter_shape)
    in_chan = input_shape[lhs_spec.index("C")]
    shape = []
    for letter in rhs_spec:
        if letter == "O":
            shape.append(out_chan)
        elif letter == "I":
            shape.append(in_chan)
        else:
            shape.append(next(spatial))
    return shape


def _conv_init(dimension_numbers, out_chan, filter_shape, W_init, b_init, out_shape_of):
    """A (transposed) convolution layer's init_fun: its kernel and a bias broadcast along
    the output channel; `out_shape_of(input_shape, kernel_shape)` gives the output's."""
    lhs_spec, rhs_spec, out_spec = dimension_numbers

    def init_fun(rng, input_shape):
        kernel_shape = _kernel_shape(lhs_spec, rhs_spec, input_shape, out_chan, filter_shape)
        bias_shape = [out_chan if letter == "C" else 1 for letter in out_spec]
        w_key, b_key = random.split(rng)
        return (out_shape_of(input_shape, kernel_shape),
                (W_init(w_key, kernel_shape), b_init(b_key, bias_shape)))
    return init_fun


def GeneralConv(dimension_numbers, out_chan, filter_shape, strides=None, padding="VALID",
                W_init=None, b_init=normal(1e-6)):
    """Convolution with explicit `dimension_numbers` = (lhs_spec, rhs_spec, out_spec),
    e.g. ``('NHWC', 'HWIO', 'NHWC')``; a bias broadcast along the output channel."""
    rhs_spec = dimension_numbers[1]
    unit = (1,) * len(filter_shape)
    strides = strides or unit
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    init_fun = _conv_init(dimension_numbers, out_chan, filter_shape, W_init, b_init,
                          lambda shape, kernel: lax.conv_general_shape_tuple(
                              shape, kernel, strides, padding, dimension_numbers))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        y = lax.conv_general_dilated(inputs, W, strides, padding, unit, unit,
                                     dimension_numbers=dimension_numbers)
        return y + b

    return init_fun, apply_fun


Conv = functools.partial(GeneralConv, ("NHWC", "HWIO", "NHWC"))


def GeneralConvTranspose(dimension_numbers, out_chan, filter_shape, strides=None,
                         padding="VALID", W_init=None, b_init=normal(1e-6)):
    """Transposed convolution (`lax.conv_transpose`) with explicit `dimension_numbers`
    and a bias broadcast along the output channel."""
    rhs_spec = dimension_numbers[1]
    unit = (1,) * len(filter_shape)
    strides = strides or unit
    W_init = W_init or glorot_normal(rhs_spec.index("I"), rhs_spec.index("O"))

    init_fun = _conv_init(dimension_numbers, out_chan, filter_shape, W_init, b_init,
                          lambda shape, kernel: lax.conv_transpose_shape_tuple(
                              shape, kernel, strides, padding, dimension_numbers))

    def apply_fun(params, inputs, **kwargs):
        W, b = params
        y = lax.conv_transpose(inputs, W, strides, padding,
                               dimension_numbers=dimension_numbers)
        return y + b

    return init_fun, apply_fun


Conv1DTranspose = functools.partial(GeneralConvTranspose, ("NHC", "HIO", "NHC"))
ConvTranspose = functools.partial(GeneralConvTranspose, ("NHWC", "HWIO", "NHWC"))


# --------------------------------------------------------------------------- batch norm

def BatchNorm(axis=(0, 1, 2), epsilon=1e-5, center=True, scale=True,
              beta_init=zeros, gamma_init=ones):
    """Normalize over `axis` (batch statistics, no running averages); optional learned
    offset `beta` (``center``) and scale `gamma` (``scale``) over the remaining axes."""
    axes = (axis,) if isinstance(axis, int) else tuple(axis)

    def init_fun(rng, input_shape):
        param_shape = tuple(d for i, d in enumerate(input_shape) if i not in axes)
        beta_key, gamma_key = random.split(rng)
        beta = beta_init(beta_key, param_shape) if center else ()
        gamma = gamma_init(gamma_key, param_shape) if scale else ()
        return input_shape, (beta, gamma)

    def apply_fun(params, x, **kwargs):
        beta, gamma = params
        # Reinsert the normalized axes as size-1 so beta/gamma broadcast against x.
        index = tuple(None if i in axes else slice(None) for i in range(jnp.ndim(x)))
        z = standardize(x, axis, epsilon=epsilon)
        if center and scale:
            return gamma[index] * z + beta[index]
        if center:
            return z + beta[index]
        if scale:
            return gamma[index] * z
        return z

    return init_fun, apply_fun


# --------------------------------------------------------------------------- elementwise

def elementwise(fun, **fun_kwargs):
    """A parameter-free layer applying ``fun(inputs, **fun_kwargs)``."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        return fun(inputs, **fun_kwargs)

    return init_fun, apply_fun


Tanh = elementwise(jnp.tanh)
Relu = elementwise(relu)
Exp = elementwise(jnp.exp)
LogSoftmax = elementwise(log_softmax, axis=-1)
Softmax = elementwise(softmax, axis=-1)
Softplus = elementwise(softplus)
Sigmoid = elementwise(sigmoid)
Elu = elementwise(elu)
LeakyRelu = elementwise(leaky_relu)
Selu = elementwise(selu)
Gelu = elementwise(gelu)


# --------------------------------------------------------------------------- pooling

def _non_spatial_axes(spec, ndim):
    """(batch axis, channel axis) of a layout: `spec` names them 'N' and 'C'; without a
    spec the layout is batch first, channel last."""
    if spec is None:
        return 0, ndim - 1
    return spec.index("N"), spec.index("C")


def _pooling_layer(reducer, init_val, rescaler=None):
    def PoolingLayer(window_shape, strides=None, padding="VALID", spec=None):
        """Pool over the spatial axes with a `window_shape` window."""
        strides = strides or (1,) * len(window_shape)
        rescale = rescaler(window_shape, strides, padding) if rescaler else None

        # Widen window/strides to the full rank: size-1, stride-1 on batch and channel.
        full_window = tuple(window_shape)
        full_strides = tuple(strides)
        for i in sorted(_non_spatial_axes(spec, len(window_shape) + 2)):
            full_window = full_window[:i] + (1,) + full_window[i:]
            full_strides = full_strides[:i] + (1,) + full_strides[i:]

        def init_fun(rng, input_shape):
            pads = lax.padtype_to_pads(input_shape, full_window, full_strides, padding)
            unit = (1,) * len(full_window)
            out_shape = lax.reduce_window_shape_tuple(input_shape, full_window, full_strides,
                                                      pads, unit, unit)
            return out_shape, ()

        def apply_fun(params, inputs, **kwargs):
            out = lax.reduce_window(inputs, init_val, reducer, full_window, full_strides,
                                    padding)
            return rescale(out, inputs, spec) if rescale else out

        return init_fun, apply_fun

    return PoolingLayer


def _normalize_by_window_size(dims, strides, padding):
    """Rescaler for average pooling: divide each window sum by the number of real
    (non-padding) elements that window covered."""

    def rescale(outputs, inputs, spec):
        non_spatial = _non_spatial_axes(spec, inputs.ndim)
        spatial_shape = tuple(inputs.shape[i] for i in range(inputs.ndim)
                              if i not in non_spatial)
        counts = lax.reduce_window(jnp.ones(spatial_shape, dtype=inputs.dtype), 0.,
                                   lax.add, dims, strides, padding)
        for i in sorted(non_spatial):
            counts = jnp.expand_dims(counts, i)
        return outputs / counts

    return rescale


MaxPool = _pooling_layer(lax.max, -jnp.inf)
SumPool = _pooling_layer(lax.add, 0.)
AvgPool = _pooling_layer(lax.add, 0., _normalize_by_window_size)


# --------------------------------------------------------------------------- shape layers

def _flatten_init(rng, input_shape):
    return (input_shape[0], math.prod(input_shape[1:])), ()


def _flatten_apply(params, inputs, **kwargs):
    return jnp.reshape(inputs, (inputs.shape[0], -1))


Flatten = (_flatten_init, _flatten_apply)
"""Layer collapsing every axis after the first into one."""


def _identity_init(rng, input_shape):
    return input_shape, ()


def _identity_apply(params, inputs, **kwargs):
    return inputs


Identity = (_identity_init, _identity_apply)
"""Layer returning its input unchanged."""


def FanOut(num):
    """Layer copying its input into a list of `num` outputs."""

    def init_fun(rng, input_shape):
        return [input_shape] * num, ()

    def apply_fun(params, inputs, **kwargs):
        return [inputs] * num

    return init_fun, apply_fun


def _fan_in_sum_init(rng, input_shape):
    return input_shape[0], ()


def _fan_in_sum_apply(params, inputs, **kwargs):
    return sum(inputs)


FanInSum = (_fan_in_sum_init, _fan_in_sum_apply)
"""Layer adding up a list of same-shaped inputs."""


def FanInConcat(axis=-1):
    """Layer concatenating a list of inputs along `axis`."""

    def init_fun(rng, input_shape):
        ax = axis % len(input_shape[0])
        total = sum(shape[ax] for shape in input_shape)
        first = tuple(input_shape[0])
        return first[:ax] + (total,) + first[ax + 1:], ()

    def apply_fun(params, inputs, **kwargs):
        return jnp.concatenate(inputs, axis)

    return init_fun, apply_fun


# --------------------------------------------------------------------------- dropout

_DROPOUT_NO_RNG = (
    "Dropout layer requires apply_fun to be called with a PRNG key argument. That is, "
    "instead of `apply_fun(params, inputs)`, call it like `apply_fun(params, inputs, rng)` "
    "where `rng` is a PRNG key (e.g. from `jax.random.key`).")


def Dropout(rate, mode="train"):
    """Dropout. As in JAX's stax, `rate` is the probability of KEEPING an element; kept
    elements are divided by `rate`. ``mode`` other than 'train' passes inputs through.
    apply_fun needs an ``rng`` keyword in either mode."""

    def init_fun(rng, input_shape):
        return input_shape, ()

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.get("rng", None)
        if rng is None:
            raise ValueError(_DROPOUT_NO_RNG)
        if mode == "train":
            keep = random.bernoulli(rng, rate, inputs.shape)
            return jnp.where(keep, inputs / rate, 0)
        return inputs

    return init_fun, apply_fun


# --------------------------------------------------------------------------- combinators

def serial(*layers):
    """Compose layers left to right. Each init gets its own key split off the running
    key; at apply time an ``rng`` keyword is split into one key per layer."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        params = []
        for layer_init in init_funs:
            rng, layer_rng = random.split(rng)
            input_shape, layer_params = layer_init(layer_rng, input_shape)
            params.append(layer_params)
        return input_shape, params

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        for layer_apply, layer_params, layer_rng in zip(apply_funs, params, rngs):
            inputs = layer_apply(layer_params, inputs, rng=layer_rng, **kwargs)
        return inputs

    return init_fun, apply_fun


def parallel(*layers):
    """Apply layer i to input i of a sequence of inputs (use with FanOut / FanIn*).
    As in JAX, init_fun returns a ``zip`` that unpacks into (output shapes, params)."""
    nlayers = len(layers)
    init_funs, apply_funs = zip(*layers) if layers else ((), ())

    def init_fun(rng, input_shape):
        rngs = random.split(rng, nlayers)
        return zip(*[layer_init(layer_rng, shape)
                     for layer_init, layer_rng, shape in zip(init_funs, rngs, input_shape)])

    def apply_fun(params, inputs, **kwargs):
        rng = kwargs.pop("rng", None)
        rngs = random.split(rng, nlayers) if rng is not None else (None,) * nlayers
        return [layer_apply(p, x, rng=r, **kwargs)
                for layer_apply, p, x, r in zip(apply_funs, params, inputs, rngs)]

    return init_fun, apply_fun


def shape_dependent(make_layer):
    """A layer built per call from the input's shape: ``make_layer(shape)`` returns the
    (init_fun, apply_fun) to use for that shape."""

    def init_fun(rng, input_shape):
        return make_layer(input_shape)[0](rng, input_shape)

    def apply_fun(params, inputs, **kwargs):
        return make_layer(inputs.shape)[1](params, inputs, **kwargs)

    return init_fun, apply_fun
