"""Per-example gradients (vmap of grad) through pooling (lax.reduce_window with max, min
and add) and strided convolutions, for every padding, stride, window dilation and base
dilation (lhs and rhs dilation, with feature groups) JAX accepts, against jax. (JAX's
max/min-pool gradient takes neither window dilation nor negative padding:
NotImplementedError and TypeError, as mjax's.)

Each test is one jitted program summing the losses of all its window configurations
(one compile per test); the gradients of the sum, per example with shared parameters and
with per-example parameters, must agree with JAX's."""
import itertools

import numpy as np
import pytest

import jax
import mjax

RNG = np.random.default_rng(5)
STRIDES = (1, 2, 3)
DILATIONS = (1, 2)
PADDINGS = ["VALID", "SAME", "SAME_LOWER", ((1, 0), (0, 2)), ((2, 2), (1, 0))]
NEGATIVE_PADDINGS = [((0, -1), (1, 1)), ((-1, 0), (0, 0))]


def _cover(pairs, dilations):
    """Every (padding, stride) pair with two of the dilation pairs in turn: each padding
    meets every dilation pair across its strides, at half the full product's compile
    time."""
    return [(p, s) + dilations[(k + j) % len(dilations)]
            for k, (p, s) in enumerate(pairs) for j in range(2)]


def _check(loss_of, params, xs):
    """vmap(grad) of loss(params, x) over xs, with params shared and per example."""
    stacked = np.stack([params * (1 + 0.5 * k) for k in range(len(xs))])
    for in_axes, args in (((None, 0), (params, xs)), ((0, 0), (stacked, xs))):
        got = mjax.jit(mjax.vmap(mjax.grad(loss_of(mjax), argnums=(0, 1)),
                                 in_axes=in_axes))(*args)
        want = jax.jit(jax.vmap(jax.grad(loss_of(jax), argnums=(0, 1)),
                                in_axes=in_axes))(*args)
        for g, w in zip(got, want):
            assert g.shape == w.shape and g.dtype == w.dtype
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=2e-5, atol=2e-5)


@pytest.mark.parametrize("op", ["max", "min", "add"])
def test_pooling(op):
    paddings = PADDINGS + (NEGATIVE_PADDINGS if op == "add" else [])
    window_dilations = DILATIONS if op == "add" else (1,)
    configs = _cover(itertools.product(paddings, STRIDES),
                     list(itertools.product(window_dilations, DILATIONS)))

    def loss_of(L):
        init, fn = {"max": (-np.inf, L.lax.max), "min": (np.inf, L.lax.min),
                    "add": (0.0, L.lax.add)}[op]

        def loss(scale, x):
            total = 0.0
            for k, (padding, stride, wdil, base) in enumerate(configs):
                y = L.lax.reduce_window(x * scale, init, fn, (2, 3), (stride, 1 + k % 2),
                                        padding, (base, 1), (1, wdil))
                y = L.numpy.where(L.numpy.isfinite(y), y, 0.0)  # all-padding windows
                total = total + L.numpy.sum(L.numpy.tanh(y) * (1 + k % 3))
            return total
        return loss
    _check(loss_of, np.float32(1.5), RNG.normal(size=(3, 7, 6)).astype(np.float32))


@pytest.mark.parametrize("paddings", [PADDINGS[:3], PADDINGS[3:] + NEGATIVE_PADDINGS],
                         ids=["named", "explicit"])
def test_strided_convolution(paddings):
    # (JAX takes no string padding, VALID included, with lhs dilation.)
    configs = [(p, s, ld, rd) for p, s, ld, rd in _cover(
        itertools.product(paddings, STRIDES), list(itertools.product(DILATIONS, DILATIONS)))
        if ld == 1 or not isinstance(p, str)]

    def loss_of(L):
        def loss(w, x):
            total = 0.0
            for k, (padding, stride, lhs_dil, rhs_dil) in enumerate(configs):
                y = L.lax.conv_general_dilated(x[None], w, (stride, 1 + k % 2), padding,
                                               (lhs_dil, 1), (1, rhs_dil),
                                               feature_group_count=2)
                total = total + L.numpy.sum(L.numpy.tanh(y) * (1 + k % 3))
            return total
        return loss
    _check(loss_of, RNG.normal(size=(4, 2, 3, 2)).astype(np.float32),   # O, I/2, H, W
           RNG.normal(size=(2, 4, 7, 6)).astype(np.float32))            # per example C,H,W
