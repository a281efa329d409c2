"""JAX's public shape arithmetic (lax.reduce_window_shape_tuple, conv_shape_tuple,
conv_general_shape_tuple, conv_transpose_shape_tuple, padtype_to_pads) against jax over a
grid of inputs, -1 and 0 dimensions included, and stax models initialised with a -1 batch
(the convention of JAX's examples)."""
import itertools

import jax
import jax.example_libraries.stax as jstax
import numpy as np
import pytest

import mjax
import mjax.example_libraries.stax as mstax


def _same(f_m, f_j, *args):
    """mjax's f gives jax's result, or raises where jax raises (an instance of jax's
    exception's class)."""
    try:
        want = f_j(*args)
    except Exception as e:  # noqa: BLE001
        with pytest.raises(type(e)):
            f_m(*args)
        return
    got = f_m(*args)
    assert got == want, (args, got, want)
    assert [int(d) for d in np.ravel(got)] == [int(d) for d in np.ravel(want)]


DIMS = (-1, 0, 1, 2, 5, 7)
WINDOWS = (1, 2, 3)
STRIDES = (1, 2, 3)
PADS = ((0, 0), (1, 0), (0, 2), (1, 1), (-1, 0))


def test_reduce_window_shape_tuple_grid():
    n = 0
    for d, w, s, p in itertools.product(DIMS, WINDOWS, STRIDES, PADS):
        for bd, wd in ((None, None), ((1, 2), (1, 1)), ((1, 1), (1, 2)), ((1, 3), (1, 2))):
            args = ((2, d), (1, w), (1, s), ((0, 0), p), bd, wd)
            _same(mjax.lax.reduce_window_shape_tuple, jax.lax.reduce_window_shape_tuple, *args)
            n += 1
    # The case: a stax pooling layer initialised with a -1 batch.
    assert mjax.lax.reduce_window_shape_tuple((-1, 28, 28, 1), (1, 2, 2, 1), (1, 1, 1, 1),
                                              ((0, 0),) * 4) == (0, 27, 27, 1)
    # A dilation that is not positive is a TypeError in both.
    _same(mjax.lax.reduce_window_shape_tuple, jax.lax.reduce_window_shape_tuple,
          (4, 4), (2, 2), (1, 1), ((0, 0),) * 2, (0, 1), None)
    assert n > 1000


@pytest.mark.parametrize("mode", ["SAME", "SAME_LOWER", "VALID", "same", "valid", "FULL"])
def test_padtype_to_pads_grid(mode):
    for d, w, s in itertools.product(DIMS, WINDOWS + (5,), STRIDES):
        _same(mjax.lax.padtype_to_pads, jax.lax.padtype_to_pads, (d, 4), (w, 1), (s, 1), mode)


@pytest.mark.parametrize("pad", ["SAME", "VALID", ((0, 0), (0, 0)), ((1, 2), (0, 1)),
                                 ((-1, 0), (0, 0)), ((-3, -3), (0, 0)), ((1, 1),)])
def test_conv_shape_tuple_grid(pad):
    for n, d, k, s, bg in itertools.product((-1, 0, 4), DIMS, WINDOWS, STRIDES, (1, 2)):
        _same(mjax.lax.conv_shape_tuple, jax.lax.conv_shape_tuple,
              (n, 3, d, 6), (8, 3, k, 2), (s, 1), pad, bg)


SPECS = [("NHWC", "HWIO", "NHWC"), ("NCHW", "OIHW", "NCHW"), ("NHWC", "OIHW", "NCHW"),
         ("CHWN", "HWOI", "HWNC"), ("NWHC", "HWIO", "NHWC")]


@pytest.mark.parametrize("spec", SPECS)
@pytest.mark.parametrize("pad", ["SAME", "VALID", ((1, 0), (0, 2))])
def test_conv_general_and_transpose_shape_tuple_grid(spec, pad):
    lhs_spec, rhs_spec, _ = spec
    for n, h, k, s in itertools.product((-1, 0, 3), (-1, 0, 1, 6, 9), (1, 2, 3), (1, 2)):
        size = {"N": n, "C": 4, "H": h, "W": 5}
        ksize = {"H": k, "W": 2, "I": 4, "O": 7}
        lhs = tuple(size[c] for c in lhs_spec)
        rhs = tuple(ksize[c] for c in rhs_spec)
        for fm, fj in ((mjax.lax.conv_general_shape_tuple, jax.lax.conv_general_shape_tuple),
                       (mjax.lax.conv_transpose_shape_tuple,
                        jax.lax.conv_transpose_shape_tuple)):
            _same(fm, fj, lhs, rhs, (s, 1), pad, spec)


def _cnn(stax):
    return stax.serial(
        stax.Conv(8, (3, 3), padding="SAME"), stax.Relu,
        stax.MaxPool((2, 2), strides=(2, 2)),
        stax.Conv(16, (3, 3)), stax.Relu,
        stax.AvgPool((2, 2)), stax.SumPool((3, 3), padding="SAME"),
        stax.ConvTranspose(4, (2, 2), strides=(2, 2)),
        stax.Flatten, stax.Dense(10), stax.LogSoftmax)


@pytest.mark.parametrize("batch", [-1, 0, 3])
def test_stax_cnn_initialises_with_a_minus_one_batch(batch):
    """JAX's stax examples initialise with a -1 batch: every layer's output shape is JAX's
    and the parameters have JAX's shapes."""
    m_init, m_apply = _cnn(mstax)
    j_init, _ = _cnn(jstax)
    m_shape, m_params = m_init(mjax.random.PRNGKey(0), (batch, 28, 28, 1))
    j_shape, j_params = j_init(jax.random.PRNGKey(0), (batch, 28, 28, 1))
    assert tuple(m_shape) == tuple(j_shape)
    assert [np.shape(p) for p in mjax.tree_util.tree_leaves(m_params)] == \
        [np.shape(p) for p in jax.tree_util.tree_leaves(j_params)]
    out = m_apply(m_params, np.zeros((2, 28, 28, 1), np.float32))
    assert out.shape == (2, 10)
