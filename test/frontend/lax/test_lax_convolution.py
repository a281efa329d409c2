"""conv_general_dilated and its wrappers (conv, conv_transpose, patches, local) against
jax, with gradients and vmap, and a small CNN that trains as in JAX."""
import jax
import jax.numpy as jjnp
import numpy as np
import pytest

import mjax
import mjax.numpy as jnp
from mjax import lax
from mjax.test_util import check_grads
from frontend_util import check, x64

RNG = np.random.default_rng(7)


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


# ---- conv_general_dilated ---------------------------------------------------------
# (lhs shape, rhs shape, kwargs); layouts in the kwargs' dimension_numbers.
CONV_CASES = [
    ((2, 3, 7, 6), (4, 3, 3, 2), dict(window_strides=(1, 1), padding="VALID")),
    ((2, 3, 7, 6), (4, 3, 3, 2), dict(window_strides=(2, 1), padding="SAME")),
    ((2, 3, 7, 6), (4, 3, 2, 3), dict(window_strides=(2, 3), padding="SAME_LOWER")),
    ((2, 3, 7, 6), (4, 3, 3, 2), dict(window_strides=(1, 2), padding=((1, 2), (0, 1)),
                                      lhs_dilation=(2, 1), rhs_dilation=(1, 2))),
    ((2, 7, 6, 4), (3, 2, 2, 6), dict(window_strides=(1, 1), padding="SAME",
                                      dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                      feature_group_count=2)),
    ((4, 6, 5, 2), (2, 3, 2, 6), dict(window_strides=(1, 2), padding=((1, 0), (2, 1)),
                                      dimension_numbers=("NHWC", "HWIO", "NCHW"),
                                      batch_group_count=2)),
    ((5, 2, 9), (3, 2, 4), dict(window_strides=(3,), padding=((-1, 2),),
                                rhs_dilation=(2,))),
    ((3, 8, 2), (4, 2, 5), dict(window_strides=(1,), padding="SAME",
                                dimension_numbers=("NWC", "WIO", "CNW"))),
    ((2, 2, 4, 3, 5), (3, 2, 2, 2, 2), dict(window_strides=(1, 2, 1), padding="VALID",
                                            dimension_numbers=("NCDHW", "OIDHW", "NDHWC"))),
]
CONV_IDS = ["valid", "same_strided", "same_lower", "dilated", "nhwc_groups",
            "batch_groups", "1d_negative_pad", "1d_odd_layout", "3d"]


@pytest.mark.parametrize("case", CONV_CASES, ids=CONV_IDS)
def test_conv_general_dilated_matches_jax(case):
    lhs_shape, rhs_shape, kw = case
    x, w = rand(*lhs_shape), rand(*rhs_shape)
    want = jax.lax.conv_general_dilated(x, w, **kw)
    check(lax.conv_general_dilated(x, w, **kw), want, rtol=1e-4, atol=1e-4)
    check(mjax.jit(lambda x, w: lax.conv_general_dilated(x, w, **kw))(x, w), want,
          rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("case", CONV_CASES, ids=CONV_IDS)
def test_conv_general_dilated_grads_match_jax(case):
    lhs_shape, rhs_shape, kw = case
    x, w = rand(*lhs_shape), rand(*rhs_shape)
    ct = rand(*jax.eval_shape(lambda: jax.lax.conv_general_dilated(x, w, **kw)).shape)

    def loss(conv):
        return lambda x, w: (conv(x, w, **kw) * ct).sum()
    got = mjax.grad(loss(lax.conv_general_dilated), argnums=(0, 1))(x, w)
    want = jax.grad(loss(jax.lax.conv_general_dilated), argnums=(0, 1))(x, w)
    for g, wt in zip(got, want):
        check(g, wt, rtol=1e-4, atol=1e-4)


def test_conv_check_grads_second_order():
    x, w = rand(2, 2, 5, 4).astype(np.float64), rand(3, 2, 2, 3).astype(np.float64)
    with x64():
        f = lambda x, w: jnp.tanh(lax.conv_general_dilated(  # noqa: E731
            x, w, (2, 1), "SAME", rhs_dilation=(1, 2)))
        check_grads(f, (x, w), order=2, modes=("rev",))  # (first order: fwd and rev)
        check_grads(f, (x, w), order=1, modes=("fwd",))


# Batching folds the vmapped axis differently with feature groups, batch groups and odd
# layouts: one case of each keeps the test short.
VMAP_IDS = ["dilated", "nhwc_groups", "batch_groups", "1d_odd_layout"]


@pytest.mark.parametrize("case", [CONV_CASES[CONV_IDS.index(i)] for i in VMAP_IDS],
                         ids=VMAP_IDS)
def test_conv_vmap_matches_loop(case):
    lhs_shape, rhs_shape, kw = case
    xs, ws = rand(3, *lhs_shape), rand(3, *rhs_shape)
    f = lambda x, w: lax.conv_general_dilated(x, w, **kw)  # noqa: E731
    jf = lambda x, w: jax.lax.conv_general_dilated(x, w, **kw)  # noqa: E731
    for in_axes, args, jargs in [((0, 0), (xs, ws), (xs, ws)),
                                 ((0, None), (xs, ws[0]), (xs, ws[0])),
                                 ((None, 0), (xs[0], ws), (xs[0], ws)),
                                 ((2, 1), (np.moveaxis(xs, 0, 2), np.moveaxis(ws, 0, 1)),
                                  (np.moveaxis(xs, 0, 2), np.moveaxis(ws, 0, 1)))]:
        want = jax.vmap(jf, in_axes=in_axes)(*jargs)
        check(mjax.vmap(f, in_axes=in_axes)(*args), want, rtol=1e-4, atol=1e-4)


def test_conv_wrappers_match_jax():
    x, w = rand(2, 3, 6, 5), rand(4, 3, 3, 2)
    check(lax.conv(x, w, (1, 2), "SAME"), jax.lax.conv(x, w, (1, 2), "SAME"), rtol=1e-4,
          atol=1e-4)
    check(lax.conv_with_general_padding(x, w, (2, 1), ((1, 1), (2, 0)), (1, 2), (2, 1)),
          jax.lax.conv_with_general_padding(x, w, (2, 1), ((1, 1), (2, 0)), (1, 2), (2, 1)),
          rtol=1e-4, atol=1e-4)
    xt, wt = rand(2, 5, 6, 3), rand(3, 2, 3, 4)
    for pad in ["SAME", "VALID", ((1, 2), (0, 1))]:
        for tk in (False, True):
            kw = dict(transpose_kernel=tk)
            wk = rand(3, 2, 4, 3) if tk else wt
            check(lax.conv_transpose(xt, wk, (2, 2), pad, **kw),
                  jax.lax.conv_transpose(xt, wk, (2, 2), pad, **kw), rtol=1e-4, atol=1e-4)
    check(lax.conv_transpose(xt, wt, (2, 1), ((1, 2), (0, 1)), use_consistent_padding=True),
          jax.lax.conv_transpose(xt, wt, (2, 1), ((1, 2), (0, 1)),
                                 use_consistent_padding=True), rtol=1e-4, atol=1e-4)
    dn = lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4), ("NHWC", "HWIO", "NCHW"))
    assert dn == tuple(jax.lax.conv_dimension_numbers((1, 2, 3, 4), (1, 2, 3, 4),
                                                      ("NHWC", "HWIO", "NCHW")))
    assert isinstance(dn, lax.ConvDimensionNumbers)


def test_conv_dtypes_and_precision():
    x, w = rand(1, 2, 5), rand(3, 2, 2)
    xi, wi = (RNG.integers(-3, 3, s).astype(np.int32) for s in ((1, 2, 5), (3, 2, 2)))
    check(lax.conv(xi, wi, (1,), "VALID"), jax.lax.conv(xi, wi, (1,), "VALID"))
    check(lax.conv(xi, wi, (1,), "VALID", preferred_element_type=np.float32),
          jax.lax.conv(xi, wi, (1,), "VALID", preferred_element_type=np.float32))
    # (jax at the same precision: on a TPU the default is one bfloat16 pass)
    for p, jp in [("highest", "highest"), (lax.Precision.HIGHEST, jax.lax.Precision.HIGHEST),
                  (("high", "default"), ("high", "default"))]:
        check(lax.conv(x, w, (1,), "SAME", precision=p),
              jax.lax.conv(x, w, (1,), "SAME", precision=jp), rtol=1e-5)
    text = mjax.jit(lambda x, w: lax.conv(x, w, (1,), "SAME", precision="highest")).lower(
        x, w).as_text()
    assert "HIGHEST" in text


def test_conv_errors():
    x, w = rand(2, 4, 5), rand(3, 3, 2)
    with pytest.raises(ValueError, match="must equal the rhs input feature dimension"):
        lax.conv(x, w, (1,), "SAME")
    with pytest.raises(TypeError, match="ndim to be equal"):
        lax.conv_general_dilated(x, rand(3, 4), (1,), "SAME")
    with pytest.raises(TypeError, match="exactly once"):
        lax.conv_general_dilated(x, rand(3, 4, 2), (1,), "SAME",
                                 dimension_numbers=("NCW", "OOW", "NCW"))
    with pytest.raises(ValueError, match="String padding is not implemented"):
        lax.conv_general_dilated(x, rand(3, 4, 2), (1,), "SAME", lhs_dilation=(2,))
    with pytest.raises(TypeError, match="same dtypes"):
        lax.conv(x, rand(3, 4, 2).astype(np.float16), (1,), "SAME")
    with pytest.raises(ValueError, match="feature_group_count must divide"):
        lax.conv_general_dilated(x, rand(3, 4, 2), (1,), "SAME", feature_group_count=3)
    with pytest.raises(RuntimeError, match="Unrecognized padding"):
        lax.conv(x, rand(3, 4, 2), (1,), "FULL")

# ---- a small CNN trains as in JAX ----------------------------------------------------------
def _cnn_loss(lib, jl, params, x, y):
    """conv (SAME, NHWC) -> relu -> 2x2 max-pool -> conv (strided, VALID) -> mean pool ->
    dense -> softmax cross-entropy."""
    w1, w2, w3 = params
    dn = ("NHWC", "HWIO", "NHWC")
    h = jl.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=dn)
    h = lib.maximum(h, 0.0)
    h = jl.reduce_window(h, -np.inf, jl.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = jl.conv_general_dilated(h, w2, (2, 2), "VALID", dimension_numbers=dn)
    h = lib.tanh(h)
    h = jl.reduce_window(h, 0.0, jl.add, (1, 2, 2, 1), (1, 1, 1, 1), "SAME") / 4.0
    logits = lib.mean(h, axis=(1, 2)) @ w3
    logp = logits - lib.log(lib.sum(lib.exp(logits), axis=1, keepdims=True))
    return -lib.mean(lib.sum(logp * y, axis=1))


def test_small_cnn_trains_like_jax():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 10, 10, 3)).astype(np.float32)
    y = np.eye(4, dtype=np.float32)[rng.integers(0, 4, 8)]
    params = [0.3 * rng.standard_normal(s).astype(np.float32)
              for s in [(3, 3, 3, 6), (3, 3, 6, 5), (5, 4)]]

    def step(lib, jl, grad, p, x, y):
        loss, g = grad(lambda p: _cnn_loss(lib, jl, p, x, y))(p)
        return loss, [w - 0.5 * gw for w, gw in zip(p, g)]

    m_step = mjax.jit(lambda p, x, y: step(jnp, lax, mjax.value_and_grad, p, x, y))
    j_step = jax.jit(lambda p, x, y: step(jjnp, jax.lax, jax.value_and_grad, p, x, y))
    mp, jp = params, params
    losses = []
    for _ in range(5):
        ml, mp = m_step(mp, x, y)
        jl_, jp = j_step(jp, x, y)
        np.testing.assert_allclose(float(ml), float(jl_), rtol=2e-5)
        for a, b in zip(mp, jp):
            np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=2e-4, atol=2e-5)
        losses.append(float(ml))
    assert losses[-1] < losses[0]


def test_conv_patches_local_and_shape_tuples():
    x = rand(2, 3, 6, 5)
    for dn, xx in [(None, x), (("NHWC", "HWIO", "NCHW"), np.moveaxis(x, 1, 3))]:
        check(lax.conv_general_dilated_patches(xx, (2, 3), (1, 2), "SAME", dimension_numbers=dn),
              jax.lax.conv_general_dilated_patches(xx, (2, 3), (1, 2), "SAME",
                                                   dimension_numbers=dn))
    rhs = rand(4, 18, 6, 3)
    check(lax.conv_general_dilated_local(x, rhs, (1, 2), "SAME", (2, 3)),
          jax.lax.conv_general_dilated_local(x, rhs, (1, 2), "SAME", (2, 3)), rtol=1e-4,
          atol=1e-5)
    rhs2 = rand(5, 2, 18, 4)
    dn = ("NHWC", "HWIO", "NHWC")
    check(lax.conv_general_dilated_local(np.moveaxis(x, 1, 3), rhs2, (1, 2), "VALID", (2, 3),
                                         dimension_numbers=dn),
          jax.lax.conv_general_dilated_local(np.moveaxis(x, 1, 3), rhs2, (1, 2), "VALID",
                                             (2, 3), dimension_numbers=dn), rtol=1e-4, atol=1e-5)
    assert lax.conv_shape_tuple((2, 3, 6, 5), (4, 3, 2, 3), (1, 2), "SAME") == \
        jax.lax.conv_shape_tuple((2, 3, 6, 5), (4, 3, 2, 3), (1, 2), "SAME")
    args = ((2, 6, 5, 3), (2, 3, 3, 4), (2, 2), "SAME", ("NHWC", "HWIO", "NHWC"))
    assert lax.conv_transpose_shape_tuple(*args) == jax.lax.conv_transpose_shape_tuple(*args)
    args = ((2, 3, 6, 5), (4, 3, 2, 3), (1, 2), "VALID", ("NCHW", "OIHW", "NHWC"))
    assert lax.conv_general_shape_tuple(*args) == jax.lax.conv_general_shape_tuple(*args)
