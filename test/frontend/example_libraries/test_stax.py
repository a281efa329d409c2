"""mjax.example_libraries.stax against jax's: public names and constructor signatures,
each layer's output shape, initial parameters (same PRNGKey(0) on both sides: the PRNG is
bit-compatible) and apply outputs, a serial CNN, the fan-out / fan-in combinators,
Dropout (with an rng, and its error without one), and a jitted grad through a stax MLP.

JAX compiles every new weight shape its initializers see (seconds each on a loaded
machine), so the cases reuse a few weight shapes: (4, 3) dense kernels, (3, 3, 3, 4) conv
kernels."""
import inspect

import jax
import jax.numpy as jjnp
import numpy as np
import pytest
from jax.example_libraries import stax as js

import mjax
import mjax.numpy as jnp
from mjax.example_libraries import stax as ms

RTOL, ATOL = 2e-5, 2e-6


def _x(shape, seed=0):
    return np.random.RandomState(seed).randn(*shape).astype(np.float32)


def _shape(s):
    """Output shapes as plain ints (JAX's conv shape helpers hand back numpy ints)."""
    if isinstance(s, (list, tuple)) and s and isinstance(s[0], (list, tuple)):
        return type(s)(_shape(t) for t in s)
    return tuple(int(d) for d in s)


def _close(got, want, rtol=RTOL, atol=ATOL):
    got_l, want_l = mjax.tree.leaves(got), jax.tree.leaves(want)
    assert len(got_l) == len(want_l), (len(got_l), len(want_l))
    for g, w in zip(got_l, want_l):
        w = np.asarray(w)
        assert tuple(g.shape) == w.shape, (g.shape, w.shape)
        assert np.dtype(g.dtype) == w.dtype, (g.dtype, w.dtype)
        np.testing.assert_allclose(np.asarray(g), w, rtol=rtol, atol=atol)


def _compare(make, input_shape, inputs=None, rng_seed=None, **kwargs):
    """Builds the layer `make(stax)` in both libraries, inits with PRNGKey(0), applies it
    to the same inputs and compares output shape, params and outputs."""
    ji, ja = make(js)
    mi, ma = make(ms)
    j_out, j_params = ji(jax.random.PRNGKey(0), input_shape)
    m_out, m_params = mi(mjax.random.PRNGKey(0), input_shape)
    assert _shape(m_out) == _shape(j_out)
    assert (jax.tree.structure(j_params).num_leaves
            == mjax.tree.structure(m_params).num_leaves)
    _close(m_params, j_params)
    if inputs is None:
        inputs = _x(input_shape)
    if rng_seed is not None:
        kwargs = dict(kwargs)
        j_kw = dict(kwargs, rng=jax.random.PRNGKey(rng_seed))
        m_kw = dict(kwargs, rng=mjax.random.PRNGKey(rng_seed))
    else:
        j_kw = m_kw = kwargs
    as_j = jax.tree.map(jjnp.asarray, inputs)
    as_m = mjax.tree.map(jnp.asarray, inputs)
    j_y = ja(j_params, as_j, **j_kw)
    m_y = ma(m_params, as_m, **m_kw)
    _close(m_y, j_y)
    return m_out, m_params, m_y


# --------------------------------------------------------------------------- API surface

def test_public_names_and_signatures():
    jnames = {n for n in dir(js) if not n.startswith("_")}
    mnames = {n for n in dir(ms) if not n.startswith("_")}
    assert jnames <= mnames, jnames - mnames
    for name in sorted(jnames):
        jo, mo = getattr(js, name), getattr(ms, name)
        if inspect.ismodule(jo):
            continue
        if isinstance(jo, tuple):  # a ready-made layer: (init_fun, apply_fun)
            assert isinstance(mo, tuple) and len(mo) == 2 and all(map(callable, mo)), name
            continue
        assert callable(mo), name
        jp = inspect.signature(jo).parameters
        mp = inspect.signature(mo).parameters
        assert list(mp) == list(jp), (name, list(mp), list(jp))
        for p in jp:
            jd, md = jp[p].default, mp[p].default
            assert jp[p].kind == mp[p].kind, (name, p)
            if isinstance(jd, (int, float, str, tuple, type(None))):
                assert md == jd, (name, p, md, jd)
    assert ms.randn is ms.normal and ms.glorot is ms.glorot_normal
    assert ms.logsoftmax is ms.log_softmax
    assert ms.relu is mjax.nn.relu and ms.zeros is mjax.nn.initializers.zeros


# --------------------------------------------------------------------------- dense / conv

def test_dense():
    out, (W, b), _ = _compare(lambda s: s.Dense(3), (2, 4))
    assert out == (2, 3) and W.shape == (4, 3) and b.shape == (3,)
    # W_init / b_init are honoured
    _compare(lambda s: s.Dense(3, W_init=s.zeros, b_init=s.ones), (5, 4))


@pytest.mark.parametrize("make,input_shape", [
    (lambda s: s.Conv(4, (3, 3)), (2, 6, 6, 3)),
    (lambda s: s.Conv(4, (3, 3), strides=(2, 2), padding="SAME"), (2, 7, 7, 3)),
    # NCHW input with an HWIO kernel (same kernel shape) and an NHWC output
    (lambda s: s.GeneralConv(("NCHW", "HWIO", "NHWC"), 4, (3, 3), padding="SAME"),
     (2, 3, 5, 5)),
    (lambda s: s.ConvTranspose(4, (3, 3), strides=(2, 2), padding="SAME"), (2, 4, 4, 3)),
    (lambda s: s.GeneralConvTranspose(("NCHW", "HWIO", "NCHW"), 4, (3, 3)), (1, 3, 4, 4)),
], ids=["conv_valid", "conv_same_strided", "general_conv", "conv_transpose",
        "general_conv_transpose"])
def test_conv_layers(make, input_shape):
    _compare(make, input_shape)


def test_conv1d_transpose():
    # A (3, 3, 4) kernel would cost JAX another initializer compile: init on the mjax side
    # only (the key handling is GeneralConvTranspose's, compared above), check the draw
    # against mjax's initializers, and compare shape and apply with JAX on those params.
    ji, ja = js.Conv1DTranspose(4, (3,), strides=(2,))
    mi, ma = ms.Conv1DTranspose(4, (3,), strides=(2,))
    out, (W, b) = mi(mjax.random.PRNGKey(0), (2, 5, 3))
    assert _shape(out) == (2, 11, 4) and W.shape == (3, 3, 4) and b.shape == (1, 1, 4)
    k_w, k_b = mjax.random.split(mjax.random.PRNGKey(0))
    _close(W, np.asarray(mjax.nn.initializers.glorot_normal(1, 2)(k_w, (3, 3, 4))))
    _close(b, np.asarray(mjax.nn.initializers.normal(1e-6)(k_b, (1, 1, 4))))
    jp = (jjnp.asarray(np.asarray(W)), jjnp.asarray(np.asarray(b)))
    x = _x((2, 5, 3))
    _close(ma((W, b), jnp.asarray(x)), ja(jp, jjnp.asarray(x)), rtol=1e-5, atol=1e-6)


# --------------------------------------------------------------------------- batch norm

@pytest.mark.parametrize("kw,input_shape", [
    ({}, (2, 3, 3, 4)),
    ({"axis": (0,), "center": False}, (6, 4)),
    ({"axis": (0, 1), "scale": False, "epsilon": 1e-3}, (3, 2, 4)),
    ({"axis": (0,), "center": False, "scale": False}, (6, 4)),
])
def test_batchnorm(kw, input_shape):
    ji, ja = js.BatchNorm(**kw)
    mi, ma = ms.BatchNorm(**kw)
    _, jp = ji(jax.random.PRNGKey(0), input_shape)
    _, mp = mi(mjax.random.PRNGKey(0), input_shape)
    # unused beta / gamma are () on both sides
    assert [type(p) is tuple for p in mp] == [type(p) is tuple for p in jp]
    # non-trivial beta / gamma so the affine part is exercised
    jp = tuple(() if type(p) is tuple else jjnp.asarray(_x(p.shape, 3)) for p in jp)
    mp = tuple(() if type(p) is tuple else jnp.asarray(_x(p.shape, 3)) for p in mp)
    x = _x(input_shape) * 3 + 1
    _close(ma(mp, jnp.asarray(x)), ja(jp, jjnp.asarray(x)), rtol=1e-4, atol=1e-5)
    _compare(lambda s: s.BatchNorm(**kw), input_shape)


# --------------------------------------------------------------------------- elementwise

@pytest.mark.parametrize("name", ["Tanh", "Relu", "Exp", "LogSoftmax", "Softmax", "Softplus",
                                  "Sigmoid", "Elu", "LeakyRelu", "Selu", "Gelu", "Identity"])
def test_elementwise_layers(name):
    out, params, _ = _compare(lambda s: getattr(s, name), (2, 4))
    assert out == (2, 4) and params == ()


def test_elementwise_with_kwargs():
    _compare(lambda s: s.elementwise(s.leaky_relu, negative_slope=0.3), (2, 4))
    _compare(lambda s: s.elementwise(s.softmax, axis=0), (2, 4))


# --------------------------------------------------------------------------- pooling

@pytest.mark.parametrize("pool", ["MaxPool", "SumPool", "AvgPool"])
@pytest.mark.parametrize("kw,input_shape", [
    ({"window_shape": (2, 2)}, (2, 5, 5, 3)),
    ({"window_shape": (3, 3), "strides": (2, 2), "padding": "SAME"}, (2, 5, 5, 3)),
    ({"window_shape": (2, 3), "padding": "SAME", "spec": "NCHW"}, (2, 3, 5, 4)),
], ids=["valid", "same_strided", "nchw_spec"])
def test_pooling(pool, kw, input_shape):
    out, params, _ = _compare(lambda s: getattr(s, pool)(**kw), input_shape)
    assert params == ()


# --------------------------------------------------------------------------- shape layers

def test_flatten_identity_fanout_fanin():
    out, _, y = _compare(lambda s: s.Flatten, (2, 3, 4))
    assert out == (2, 12) and y.shape == (2, 12)
    _compare(lambda s: s.Identity, (2, 3))
    out, params, ys = _compare(lambda s: s.FanOut(3), (2, 4))
    assert out == [(2, 4)] * 3 and params == () and len(ys) == 3
    two = [_x((2, 4), 1), _x((2, 4), 2)]
    _compare(lambda s: s.FanInSum, [(2, 4), (2, 4)], inputs=two)
    cat = [_x((2, 4), 1), _x((2, 3), 2)]
    out, _, _ = _compare(lambda s: s.FanInConcat(), [(2, 4), (2, 3)], inputs=cat)
    assert out == (2, 7)
    cat0 = [_x((2, 4), 1), _x((3, 4), 2)]
    out, _, _ = _compare(lambda s: s.FanInConcat(axis=0), [(2, 4), (3, 4)], inputs=cat0)
    assert out == (5, 4)


def test_parallel_and_residual():
    # parallel's init_fun unpacks into (output shapes, params), as in JAX
    shapes, params = ms.parallel(ms.Dense(3), ms.Identity)[0](
        mjax.random.PRNGKey(0), [(2, 4), (2, 4)])
    assert tuple(shapes) == ((2, 3), (2, 4)) and len(params) == 2
    two = [_x((2, 4), 1), _x((2, 4), 2)]
    _compare(lambda s: s.parallel(s.Dense(3), s.Relu), [(2, 4), (2, 4)], inputs=two)
    out, _, _ = _compare(lambda s: s.serial(s.FanOut(2), s.parallel(s.Dense(4), s.Identity),
                                            s.FanInSum), (2, 4))
    assert out == (2, 4)
    out, _, _ = _compare(lambda s: s.serial(s.FanOut(3), s.parallel(s.Dense(3), s.Tanh,
                                                                     s.Identity),
                                            s.FanInConcat()), (2, 4))
    assert out == (2, 11)


def test_shape_dependent():
    make = lambda s: s.shape_dependent(lambda shape: s.Dense(3) if shape[-1] == 4
                                       else s.Identity)
    out, _, _ = _compare(make, (2, 4))
    assert out == (2, 3)
    out, params, _ = _compare(make, (2, 5))
    assert out == (2, 5) and params == ()


# --------------------------------------------------------------------------- serial CNN

def test_serial_cnn():
    def cnn(s):
        return s.serial(s.Conv(4, (3, 3)), s.BatchNorm(), s.Relu,
                        s.MaxPool((2, 2), strides=(2, 2)), s.Flatten, s.Dense(3),
                        s.LogSoftmax)
    # (2, 4, 4, 3) -> conv (2, 2, 2, 4) -> pool (2, 1, 1, 4) -> flatten (2, 4)
    # -> dense (2, 3)
    out, params, y = _compare(cnn, (2, 4, 4, 3))
    assert out == (2, 3) and len(params) == 7
    assert [len(p) for p in params] == [2, 2, 0, 0, 0, 2, 0]
    np.testing.assert_allclose(np.exp(np.asarray(y)).sum(-1), 1.0, rtol=1e-5)


# --------------------------------------------------------------------------- dropout

def test_dropout():
    out, params, y = _compare(lambda s: s.Dropout(0.6), (4, 8), rng_seed=3)
    x = _x((4, 8))
    y = np.asarray(y)
    kept = y != 0
    assert 0 < kept.sum() < y.size
    np.testing.assert_allclose(y[kept], x[kept] / 0.6, rtol=1e-6)
    # eval mode passes inputs through (but still wants an rng, as in JAX)
    _, _, y = _compare(lambda s: s.Dropout(0.6, mode="test"), (4, 8), rng_seed=3)
    np.testing.assert_array_equal(np.asarray(y), x)
    for mode in ["train", "test"]:
        with pytest.raises(ValueError) as jerr:
            js.Dropout(0.6, mode=mode)[1]((), jjnp.ones(3))
        with pytest.raises(ValueError) as merr:
            ms.Dropout(0.6, mode=mode)[1]((), jnp.ones(3))
        assert str(merr.value) == str(jerr.value)


def test_serial_threads_rng_to_dropout():
    net = lambda s: s.serial(s.Dense(3), s.Dropout(0.5), s.Relu, s.Dropout(0.7))
    _compare(net, (2, 4), rng_seed=5)
    with pytest.raises(ValueError, match="PRNG key"):
        init, apply = ms.serial(ms.Dense(3), ms.Dropout(0.5))
        apply(init(mjax.random.PRNGKey(0), (2, 4))[1], jnp.ones((2, 4)))


# --------------------------------------------------------------------------- grad under jit

def test_grad_through_mlp_under_jit():
    def mlp(s):
        return s.serial(s.Dense(3), s.Relu, s.Dense(3), s.LogSoftmax)

    mi, ma = mlp(ms)
    ji, ja = mlp(js)
    _, mp = mi(mjax.random.PRNGKey(0), (2, 4))
    jp = jax.tree.map(lambda a: jjnp.asarray(np.asarray(a)), mp)
    x = _x((2, 4))
    labels = np.eye(3, dtype=np.float32)[[0, 2]]

    def m_loss(p, x, t):
        return -jnp.mean(jnp.sum(ma(p, x) * t, axis=-1))

    def j_loss(p, x, t):
        return -jjnp.mean(jjnp.sum(ja(p, x) * t, axis=-1))

    m_val, m_grad = mjax.jit(mjax.value_and_grad(m_loss))(mp, jnp.asarray(x),
                                                            jnp.asarray(labels))
    j_val, j_grad = jax.jit(jax.value_and_grad(j_loss))(jp, x, labels)
    np.testing.assert_allclose(float(m_val), float(j_val), rtol=1e-5)
    assert mjax.tree.structure(m_grad).num_leaves == jax.tree.structure(j_grad).num_leaves
    _close(m_grad, j_grad, rtol=1e-4, atol=1e-6)
    # one SGD step lowers the loss
    stepped = mjax.tree.map(lambda p, g: p - 0.5 * g, mp, m_grad)
    assert float(m_loss(stepped, jnp.asarray(x), jnp.asarray(labels))) < float(m_val)
