"""conv_general_dilated (and wrappers), reduce_window and friends, top_k, approx_max_k,
reduce, segment_* against jax, with gradients and vmap."""
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
    for p in ["highest", lax.Precision.HIGHEST, ("high", "default")]:
        check(lax.conv(x, w, (1,), "SAME", precision=p), jax.lax.conv(x, w, (1,), "SAME"),
              rtol=1e-5)
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


# ---- reduce_window ------------------------------------------------------------------
WINDOW_CASES = [
    dict(window_dimensions=(1, 3, 2), window_strides=(1, 2, 1), padding="SAME"),
    dict(window_dimensions=(2, 2, 2), padding=((0, 1), (1, 2), (0, 0)),
         base_dilation=(1, 2, 1), window_dilation=(1, 1, 2)),
    dict(window_dimensions=(1, 2, 3), window_strides=(1, 2, 2), padding="VALID"),
    dict(window_dimensions=(2, 3, 1), window_strides=(1, 1, 1), padding="SAME_LOWER",
         window_dilation=(1, 2, 1)),
]
MONOIDS = [(lax.add, jax.lax.add, 0.0), (lax.max, jax.lax.max, -np.inf),
           (lax.min, jax.lax.min, np.inf)]


@pytest.mark.parametrize("kw", WINDOW_CASES)
def test_reduce_window_matches_jax(kw):
    x = rand(2, 7, 6)
    xi = RNG.integers(-9, 9, (2, 7, 6)).astype(np.int32)
    for k, (f, jf, init) in enumerate(MONOIDS):
        check(lax.reduce_window(x, init, f, **kw), jax.lax.reduce_window(x, init, jf, **kw))
        if k == WINDOW_CASES.index(kw) % 3:  # one monoid per case for the other dtypes
            iinit = {0.0: 0, -np.inf: -2**31, np.inf: 2**31 - 1}[init]
            check(lax.reduce_window(xi, iinit, f, **kw),
                  jax.lax.reduce_window(xi, iinit, jf, **kw))
            # An init value that is not the identity starts every window's reduction.
            check(lax.reduce_window(x, 0.5, f, **kw), jax.lax.reduce_window(x, 0.5, jf, **kw))
    got = mjax.jit(lambda x, v: lax.reduce_window(x, v, lax.max, **kw))(x, np.float32(0.25))
    check(got, jax.lax.reduce_window(x, 0.25, jax.lax.max, **kw))


@pytest.mark.parametrize("kw", WINDOW_CASES)
def test_reduce_window_grads_match_jax(kw):
    x = rand(2, 7, 6)
    x[0, :2, :2] = 1.0  # ties: JAX's choice (the first maximum) must be reproduced
    for f, jf, init in MONOIDS:
        ct = rand(*jax.eval_shape(lambda x: jax.lax.reduce_window(x, init, jf, **kw), x).shape)

        def loss(red, fn):
            return lambda x: (red(jnp.sin(x) if red is lax.reduce_window else jjnp.sin(x),
                                  init, fn, **kw) * ct).sum()
        if f is not lax.add and any(d != 1 for d in kw.get("window_dilation", ())):
            with pytest.raises(NotImplementedError, match="window dilation"):  # as JAX
                mjax.grad(loss(lax.reduce_window, f))(x)
        else:
            got = mjax.grad(loss(lax.reduce_window, f))(x)
            want = jax.grad(loss(jax.lax.reduce_window, jf))(x)
            check(got, want, rtol=1e-5, atol=1e-5)
        t = rand(*x.shape)
        _, got_t = mjax.jvp(lambda x: lax.reduce_window(x, init, f, **kw), (x,), (t,))
        _, want_t = jax.jvp(lambda x: jax.lax.reduce_window(x, init, jf, **kw), (x,), (t,))
        check(got_t, want_t, rtol=1e-5, atol=1e-5)


def test_max_pool_second_order_grads():
    x = RNG.permutation(48).reshape(2, 4, 6).astype(np.float64) / 7.0  # no ties
    with x64():
        kw = dict(window_dimensions=(1, 2, 3), window_strides=(1, 2, 1), padding="SAME")
        f = lambda x: lax.reduce_window(x * x, -np.inf, lax.max, **kw)  # noqa: E731
        check_grads(f, (x,), order=2, modes=("rev",))
        g = lambda x: lax.reduce_window(jnp.sin(x), 0.0, lax.add, **kw)  # noqa: E731
        check_grads(g, (x,), order=2, modes=("fwd",))


def test_reduce_window_vmap_matches_jax():
    xs = rand(3, 2, 7, 6)
    for i, kw in enumerate(WINDOW_CASES[:2]):
        for f, jf, init in MONOIDS:
            for axis in ((0, 2)[i],):
                xa = np.moveaxis(xs, 0, axis)
                got = mjax.vmap(lambda x: lax.reduce_window(x, init, f, **kw), axis)(xa)
                want = jax.vmap(lambda x: jax.lax.reduce_window(x, init, jf, **kw), axis)(xa)
                check(got, want)
    kw = dict(window_dimensions=(1, 2, 2), window_strides=(1, 2, 1),
              padding=((0, 0), (1, 0), (0, 1)))
    pool = lambda x: lax.reduce_window(x, -np.inf, lax.max, **kw)  # noqa: E731
    jpool = lambda x: jax.lax.reduce_window(x, -np.inf, jax.lax.max, **kw)  # noqa: E731
    ts, cts = rand(*xs.shape), rand(*jax.eval_shape(jax.vmap(jpool), xs).shape)
    # Batching select_and_gather_add (the JVP) and select_and_scatter_add (the VJP).
    check(mjax.vmap(lambda x, t: mjax.jvp(pool, (x,), (t,))[1])(xs, ts),
          jax.vmap(lambda x, t: jax.jvp(jpool, (x,), (t,))[1])(xs, ts))
    check(mjax.vmap(lambda x, c: mjax.vjp(pool, x)[1](c)[0], (1, 0))(np.moveaxis(xs, 0, 1), cts),
          jax.vmap(lambda x, c: jax.vjp(jpool, x)[1](c)[0], (1, 0))(np.moveaxis(xs, 0, 1), cts))
    check(mjax.vmap(lambda c: mjax.vjp(pool, xs[0])[1](c)[0])(cts),
          jax.vmap(lambda c: jax.vjp(jpool, xs[0])[1](c)[0])(cts))


def test_reduce_window_errors():
    x = rand(4, 5)
    with pytest.raises(TypeError, match="wrong number of window_dimensions"):
        lax.reduce_window(x, 0.0, lax.add, (2,))
    with pytest.raises(ValueError, match="tree structure"):
        lax.reduce_window((x, x), 0.0, lax.add, (2, 2))
    assert lax.reduce_window_shape_tuple((4, 5), (2, 2), (1, 2), ((0, 0), (1, 1))) == \
        jax.lax.reduce_window_shape_tuple((4, 5), (2, 2), (1, 2), ((0, 0), (1, 1)))


# ---- top_k, approx_max_k / approx_min_k, sort ------------------------------------------
def test_top_k_matches_jax():
    x = rand(3, 7)
    x[0, :4] = 1.0  # ties go to the lower index
    xi = RNG.integers(-5, 5, (4, 6)).astype(np.int32)
    for arr, k, axis in [(x, 3, -1), (x, 2, 0), (xi, 6, 1), (xi, 0, 1), (x[0], 7, 0)]:
        got, want = lax.top_k(arr, k, axis=axis), jax.lax.top_k(arr, k, axis=axis)
        check(got[0], want[0])
        check(got[1], want[1])
    got = mjax.jit(lambda x: lax.top_k(x, 2))(x)
    check(got[1], jax.lax.top_k(x, 2)[1])
    with pytest.raises(ValueError, match="no larger than size along axis"):
        lax.top_k(x, 8)
    with pytest.raises(ValueError, match="nonnegative"):
        lax.top_k(x, -1)


def test_top_k_grads_and_vmap():
    x = RNG.permutation(21).reshape(3, 7).astype(np.float32)
    f = lambda x: lax.top_k(jnp.sin(x), 3, axis=0)[0]  # noqa: E731
    jf = lambda x: jax.lax.top_k(jjnp.sin(x), 3, axis=0)[0]  # noqa: E731
    ct = rand(3, 7)
    check(mjax.grad(lambda x: (f(x) * ct).sum())(x), jax.grad(lambda x: (jf(x) * ct).sum())(x))
    with x64():
        check_grads(lambda x: lax.top_k(x, 2)[0], (x.astype(np.float64),), order=2)
    xs = rand(4, 3, 7)
    for axis in (0, 1, 2):
        got = mjax.vmap(lambda x: lax.top_k(x, 2), axis)(xs)
        want = jax.vmap(lambda x: jax.lax.top_k(x, 2), axis)(xs)
        check(got[0], want[0])
        check(got[1], want[1])


def test_approx_max_min_k_match_jax():
    x = rand(4, 50)
    for fn, jfn in [(lax.approx_max_k, jax.lax.approx_max_k),
                    (lax.approx_min_k, jax.lax.approx_min_k)]:
        for kw in [dict(k=5), dict(k=3, reduction_dimension=0),
                   dict(k=4, recall_target=0.5, aggregate_to_topk=False)]:
            got, want = fn(x, **kw), jfn(x, **kw)
            check(got[0], want[0])
            check(got[1], want[1])
    with pytest.raises(ValueError, match="floating"):
        lax.approx_max_k(np.arange(5), 2)


def test_sort_num_keys_and_sort_key_val():
    a = RNG.integers(0, 3, (2, 9)).astype(np.int32)
    b = rand(2, 9)
    c = rand(2, 9)
    for num_keys in (1, 2):
        got = lax.sort((a, b, c), dimension=1, num_keys=num_keys)
        want = jax.lax.sort((a, b, c), dimension=1, num_keys=num_keys)
        for g, w in zip(got, want):
            check(g, w)
    for g, w in zip(lax.sort_key_val(b, a, dimension=0), jax.lax.sort_key_val(b, a, dimension=0)):
        check(g, w)


def test_cumlogsumexp_and_reduce_precision():
    x = rand(3, 5)
    check(lax.cumlogsumexp(x, axis=1), jax.lax.cumlogsumexp(x, axis=1), rtol=1e-5)
    check(lax.cumlogsumexp(x, axis=0, reverse=True),
          jax.lax.cumlogsumexp(x, axis=0, reverse=True), rtol=1e-5)
    check(lax.reduce_precision(x, exponent_bits=5, mantissa_bits=2),
          jax.lax.reduce_precision(x, exponent_bits=5, mantissa_bits=2))
    check(mjax.grad(lambda x: lax.reduce_precision(x, 8, 7).sum())(x),
          jax.grad(lambda x: jax.lax.reduce_precision(x, 8, 7).sum())(x))


# ---- lax.reduce ------------------------------------------------------------------------
def test_reduce_with_monoids_matches_jax():
    x = rand(3, 4, 5)
    xi = RNG.integers(-4, 9, (3, 4, 5)).astype(np.int32)
    xb = RNG.uniform(size=(3, 4)) < 0.5
    cases = [(x, 0.0, lax.add, jax.lax.add), (x, 1.0, lax.mul, jax.lax.mul),
             (x, -np.inf, lax.max, jax.lax.max), (x, np.inf, lax.min, jax.lax.min),
             (x, 2.5, lax.add, jax.lax.add), (x, 0.0, lax.max, jax.lax.max),
             (x, 2.0, jnp.multiply, jjnp.multiply),
             (xi, 0, lax.add, jax.lax.add), (xi, -1, lax.bitwise_and, jax.lax.bitwise_and),
             (xi, 3, lax.bitwise_or, jax.lax.bitwise_or), (xi, 0, lax.bitwise_xor,
                                                          jax.lax.bitwise_xor),
             (xb, False, lax.bitwise_or, jax.lax.bitwise_or),
             (xb, True, lax.bitwise_and, jax.lax.bitwise_and)]
    for arr, init, f, jf in cases:
        dims = (0, 1) if arr.ndim == 2 else (0, 2)
        check(lax.reduce(arr, arr.dtype.type(init), f, dims),
              jax.lax.reduce(arr, arr.dtype.type(init), jf, dims), rtol=1e-5)
    check(mjax.jit(lambda x, v: lax.reduce(x, v, lax.max, (1,)))(x, np.float32(0.5)),
          jax.lax.reduce(x, np.float32(0.5), jax.lax.max, (1,)))
    check(mjax.grad(lambda x: lax.reduce(x, 0.0, lax.add, (0, 1)).sum())(x), np.ones_like(x))
    check(lax.reduce_xor(xi, (1,)), jax.lax.reduce_xor(xi, (1,)))


# ---- mjax.ops.segment_* ------------------------------------------------------------------
@pytest.mark.parametrize("name", ["segment_sum", "segment_prod", "segment_max",
                                  "segment_min"])
def test_segment_ops_match_jax(name):
    data = rand(8, 3)
    ids = np.array([0, 2, 2, -1, 5, 1, 0, 9])  # -1 and 9 are out of range for 6 segments
    fn, jfn = getattr(mjax.ops, name), getattr(jax.ops, name)
    check(fn(data, ids, num_segments=6), jfn(data, ids, num_segments=6), rtol=1e-5)
    check(fn(data, ids, 6, mode="clip"), jfn(data, ids, 6, mode="clip"), rtol=1e-5)
    sorted_ids = np.array([0, 0, 1, 1, 1, 3, 3, 3])
    check(fn(data, sorted_ids), jfn(data, sorted_ids), rtol=1e-5)
    check(fn(data, sorted_ids, 4, bucket_size=3), jfn(data, sorted_ids, 4, bucket_size=3),
          rtol=1e-5)
    di = RNG.integers(-5, 5, (8,)).astype(np.int32)
    check(fn(di, sorted_ids, 5), jfn(di, sorted_ids, 5))
    check(mjax.jit(lambda d, i: fn(d, i, num_segments=4))(data, sorted_ids),
          jfn(data, sorted_ids, num_segments=4), rtol=1e-5)


def test_segment_sum_grad_and_errors():
    data = rand(6, 2)
    ids = np.array([0, 1, 1, 2, 0, 2])
    w = rand(3, 2)
    check(mjax.grad(lambda d: (mjax.ops.segment_sum(d, ids, 3) * w).sum())(data),
          jax.grad(lambda d: (jax.ops.segment_sum(d, ids, 3) * w).sum())(data))
    check(mjax.grad(lambda d: (mjax.ops.segment_max(d, ids, 3) * w).sum())(data),
          jax.grad(lambda d: (jax.ops.segment_max(d, ids, 3) * w).sum())(data))
    with pytest.raises(ValueError, match="non-negative"):
        mjax.ops.segment_sum(data, ids, -1)
    with pytest.raises(TypeError, match="num_segments"):
        mjax.jit(lambda d, i: mjax.ops.segment_sum(d, i))(data, ids)


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


# ---- custom computations (jaxpr.reduce / jaxpr.reduce_window regions) ---------------------------
def _argmax_pair(np_):
    def f(a, b):
        pick = a[0] >= b[0]
        return np_.where(pick, a[0], b[0]), np_.where(pick, a[1], b[1])
    return f


def test_reduce_with_custom_computations():
    x = rand(3, 5)
    i = np.arange(15, dtype=np.int32).reshape(3, 5)
    f = lambda a, b: a * 0.5 + b  # noqa: E731
    check(lax.reduce(x, np.float32(0), f, (1,)), jax.lax.reduce(x, np.float32(0), f, (1,)))
    got = lax.reduce((x, i), (np.float32(-np.inf), np.int32(0)), _argmax_pair(jnp), (0,))
    want = jax.lax.reduce((x, i), (np.float32(-np.inf), np.int32(0)), _argmax_pair(jjnp), (0,))
    check(got[0], want[0])
    check(got[1], want[1])
    got = mjax.jit(lambda x, v: lax.reduce(x, v, f, (0, 1)))(x, np.float32(2))
    check(got, jax.lax.reduce(x, np.float32(2), f, (0, 1)), rtol=1e-5)
    with pytest.raises(ValueError, match="tree structure"):
        lax.reduce((x, i), (np.float32(0), np.int32(0)), lambda a, b: a[0], (0,))


def test_reduce_window_with_custom_computations():
    x = rand(2, 7, 6)
    kw = dict(window_dimensions=(1, 3, 2), window_strides=(1, 2, 1), padding="SAME",
              base_dilation=(1, 1, 2))
    check(lax.reduce_window(x, 1.0, lax.mul, **kw),
          jax.lax.reduce_window(x, 1.0, jax.lax.mul, **kw), rtol=1e-5)
    f = lambda a, b: a * 0.9 + b  # noqa: E731
    check(lax.reduce_window(x, 0.0, f, **kw), jax.lax.reduce_window(x, 0.0, f, **kw),
          rtol=1e-5)
    i = np.arange(84, dtype=np.int32).reshape(2, 7, 6)
    args = ((1, 2, 2), (1, 2, 2), "VALID")
    got = lax.reduce_window((x, i), (-np.inf, 0), _argmax_pair(jnp), *args)
    want = jax.lax.reduce_window((x, i), (-np.inf, 0), _argmax_pair(jjnp), *args)
    check(got[0], want[0])
    check(got[1], want[1])
    with pytest.raises(Exception, match="no JVP rule yet"):
        mjax.grad(lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2, 2)).sum())(x)


# ---- more jax.lax names (lax/extras.py) -----------------------------------------------------------
def test_more_lax_names_match_jax():
    x = np.arange(24.0, dtype=np.float32).reshape(2, 3, 4)
    y = np.arange(40.0, dtype=np.float32).reshape(2, 4, 5)
    v = np.arange(6.0, dtype=np.float32)
    idx = np.array([[1], [1], [4]])

    def dn(L):
        return L.ScatterDimensionNumbers(update_window_dims=(), inserted_window_dims=(0,),
                                         scatter_dims_to_operand_dims=(0,))
    cases = {
        "batch_matmul": lambda L: L.batch_matmul(x, y),
        "collapse": lambda L: (L.collapse(x, 1), L.collapse(x, 0, 2)),
        "split": lambda L: L.split(x, (1, 3), axis=2),
        "stack": lambda L: L.stack([x[0], x[1]], axis=1),
        "unstack": lambda L: L.unstack(x, 1),
        "tile": lambda L: L.tile(x[0], (2, 3)),
        "dynamic_index": lambda L: L.dynamic_index_in_dim(x, -1, 1, keepdims=False),
        "dynamic_update": lambda L: L.dynamic_update_index_in_dim(
            x, np.ones((2, 4), np.float32), 1, 1),
        "index_take": lambda L: L.index_take(x, (np.array([0, 1, 1]), np.array([2, 0, 1])),
                                             (0, 2)),
        "scatter_sub": lambda L: L.scatter_sub(v, idx, np.array([1.0, 2.0, 3.0], np.float32),
                                               dn(L)),
        "scatter_apply": lambda L: L.scatter_apply(v, idx, lambda t: t * 10, dn(L),
                                                   update_shape=(3,)),
        "broadcast_like": lambda L: L.broadcast_like(np.float32(2), x),
        "empty": lambda L: L.empty((2, 3), np.int32),
        "nextafter": lambda L: L.nextafter(np.float32(1), np.float32(2)),
    }
    for name, f in cases.items():
        got, want = f(lax), f(jax.lax)
        got = got if isinstance(got, (tuple, list)) else (got,)
        want = want if isinstance(want, (tuple, list)) else (want,)
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            check(g, w)
    assert lax.broadcast_shapes((2, 1), (3,)) == jax.lax.broadcast_shapes((2, 1), (3,))
    assert lax.dtype(1.0) == jax.lax.dtype(1.0)


@pytest.mark.parametrize("dtype", [np.int32, np.uint32, np.int8, np.uint16])
def test_mulhi_matches_jax(dtype):
    info = np.iinfo(dtype)
    a = RNG.integers(info.min, info.max, 40, dtype=dtype, endpoint=True)
    b = RNG.integers(info.min, info.max, 40, dtype=dtype, endpoint=True)
    a[:3] = [info.min, info.max, 0]
    b[:3] = [info.min, -1 if info.min < 0 else info.max, 5]
    check(lax.mulhi(a, b), jax.lax.mulhi(a, b))


def test_custom_reductions_vmap_matches_jax():
    xs = rand(4, 3, 5)
    f = lambda a, b: a * 0.5 + b  # noqa: E731
    for axis in (0, 2):
        check(mjax.vmap(lambda x: lax.reduce(x, np.float32(0), f, (1,)), axis)(xs),
              jax.vmap(lambda x: jax.lax.reduce(x, np.float32(0), f, (1,)), axis)(xs),
              rtol=1e-5)
        check(mjax.vmap(lambda x: lax.reduce_window(x, 1.0, lax.mul, (2, 2), (1, 2), "SAME"),
                        axis)(xs),
              jax.vmap(lambda x: jax.lax.reduce_window(x, 1.0, jax.lax.mul, (2, 2), (1, 2),
                                                       "SAME"), axis)(xs), rtol=1e-5)
    i = np.arange(15, dtype=np.int32).reshape(3, 5)
    got = mjax.vmap(lambda x, k: lax.reduce((x, k), (np.float32(-np.inf), np.int32(0)),
                                            _argmax_pair(jnp), (0,)), (0, None))(xs, i)
    want = jax.vmap(lambda x, k: jax.lax.reduce((x, k), (np.float32(-np.inf), np.int32(0)),
                                                _argmax_pair(jjnp), (0,)), (0, None))(xs, i)
    check(got[0], want[0])
    check(got[1], want[1])
