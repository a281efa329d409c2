"""vmap of the structural and reductions families: every op, several in_axes (batched
operands at 0, 1, -1, unbatched operands with None) and out_axes, eagerly and under jit,
against a Python loop of the unbatched function stacked with NumPy and against jax.vmap;
vmap of vmap with different axes; and the batched IR keeps unbatched operands unbatched.
"""
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp
from mjax import lax as mlax
from mjax.passes.opt import process_chunk

RNG = np.random.default_rng(0)
N = 7  # batch size (no per-example dim has it, so a misplaced batch axis shows)


def _batched(per_example_shape, axis, dtype=np.float32, values=None):
    """A batch of N arrays of `per_example_shape`, batched along `axis` (None: one array)."""
    if values is None:
        shape = per_example_shape if axis is None else (N, *per_example_shape)
        if np.dtype(dtype) == np.bool_:
            x = RNG.random(shape) < 0.5
        elif np.issubdtype(dtype, np.integer):
            x = RNG.integers(-5, 6, shape).astype(dtype)
        else:
            # Small integers: ties (max, sort) and exact sums in every order.
            x = RNG.integers(-4, 5, shape).astype(dtype)
    else:
        x = np.asarray(values, dtype)
    return x if axis is None else np.moveaxis(x, 0, axis)


def _loop(f, args, in_axes, out_axes):
    """A Python loop of `f` over the batch, its results stacked at `out_axes` by NumPy."""
    outs = [f(*[a if d is None else np.take(a, k, axis=d) for a, d in zip(args, in_axes)])
            for k in range(N)]
    leaves = [jax.tree_util.tree_leaves(o) for o in outs]
    treedef = jax.tree_util.tree_structure(outs[0])
    stacked = [np.stack([np.asarray(l[i]) for l in leaves], axis=out_axes)
               for i in range(len(leaves[0]))]
    return jax.tree_util.tree_unflatten(treedef, stacked)


def _same(got, want, what):
    got_l, want_l = jax.tree_util.tree_leaves(got), jax.tree_util.tree_leaves(want)
    assert len(got_l) == len(want_l), (what, got, want)
    for g, w in zip(got_l, want_l):
        assert isinstance(g, mjax.Array), (what, type(g))
        w = np.asarray(w)
        assert g.shape == w.shape and g.dtype == w.dtype, (what, g.shape, g.dtype, w.shape,
                                                          w.dtype)
        np.testing.assert_allclose(np.asarray(g), w, rtol=1e-5, atol=1e-6, err_msg=what)


def _scalar_axis(d):
    """in_axes entry for a rank-0 example batched like an operand batched at `d`."""
    return None if d is None else 0


def check(make, args, in_axes, out_axes=0, oracle=True):
    """vmap(f) of mjax, eager and jitted, equals the loop (and jax.vmap when `oracle`);
    `make(lax, numpy)` builds f from either library."""
    f = make(mlax, mnp)
    want = _loop(f, args, in_axes, out_axes)
    vf = mjax.vmap(f, in_axes=in_axes, out_axes=out_axes)
    _same(vf(*args), want, "eager vmap")
    _same(mjax.jit(vf)(*args), want, "jit(vmap)")
    if oracle:
        jf = jax.vmap(make(jax.lax, jnp), in_axes=in_axes, out_axes=out_axes)
        _same(vf(*args), jf(*map(jnp.asarray, args)), "jax.vmap")


# ---- dtype conversion and identities -------------------------------------------------
@pytest.mark.parametrize("axis,out_axes", [(0, 0), (1, 1), (-1, 0)])
def test_elementwise_like(axis, out_axes):
    x = _batched((2, 3), axis) + 0.25
    check(lambda L, _: lambda x: L.convert_element_type(x, np.int32), [x], (axis,), out_axes)
    check(lambda L, _: lambda x: L.reduce_precision(x * 1.001, 5, 2), [x], (axis,), out_axes)
    check(lambda L, _: lambda x: L.stop_gradient(x) + 1, [x], (axis,), out_axes)
    check(lambda L, N_: lambda x: N_.copy(x), [x], (axis,), out_axes)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_bitcast_convert_type(axis):
    x = _batched((2, 3), axis)
    check(lambda L, _: lambda x: L.bitcast_convert_type(x, np.int32), [x], (axis,))
    # Narrowing adds a minor dim; jax's rule is only the vectorized one, so the loop rules.
    check(lambda L, _: lambda x: L.bitcast_convert_type(x, np.uint8), [x], (axis,), -1,
          oracle=False)
    # Widening consumes the minor dim, which may hold the batch axis (axis -1).
    u = np.moveaxis(np.ascontiguousarray(np.moveaxis(x, axis, 0)).view(np.uint8)
                    .reshape(N, 2, 3, 4), 0, axis if axis >= 0 else 3)
    check(lambda L, _: lambda u: L.bitcast_convert_type(u, np.float32), [u],
          (axis if axis >= 0 else 3,), oracle=False)


def test_optimization_barrier_keeps_unbatched_operands():
    x, w = _batched((2,), 0), _batched((3,), None)
    check(lambda L, _: lambda x, w: L.optimization_barrier((x, w)), [x, w], (0, None))
    check(lambda L, _: lambda x, w: L.optimization_barrier((x * 2, w)), [x, w], (0, None),
          out_axes=1, oracle=False)


# ---- shape manipulation ----------------------------------------------------------------
@pytest.mark.parametrize("axis,out_axes", [(0, 0), (1, -1), (2, 1)])
def test_broadcast_in_dim(axis, out_axes):
    x = _batched((2, 1), axis)
    check(lambda L, _: lambda x: L.broadcast_in_dim(x, (2, 4, 3), (0, 2)), [x], (axis,),
          out_axes)
    check(lambda L, _: lambda x: L.broadcast_in_dim(x, (4, 2, 5), (1, 2)), [x], (axis,),
          out_axes)
    s = _batched((), 0)
    check(lambda L, _: lambda s: L.broadcast_in_dim(s, (2, 3), ()), [s], (0,), out_axes)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_reshape_squeeze_expand_dims(axis):
    x = _batched((2, 3), axis)
    check(lambda L, _: lambda x: L.reshape(x, (3, 2)), [x], (axis,))
    check(lambda L, _: lambda x: L.reshape(x, (6,), dimensions=(1, 0)), [x], (axis,), 1)
    check(lambda L, N_: lambda x: N_.reshape(x, (3, 1, 2)), [x], (axis,))
    check(lambda L, _: lambda x: L.expand_dims(x, (0, 2)), [x], (axis,), -1)
    check(lambda L, _: lambda x: L.expand_dims(x, (2,)), [x], (axis,))
    y = _batched((2, 1, 3, 1), axis)
    check(lambda L, _: lambda y: L.squeeze(y, (1, 3)), [y], (axis,))
    check(lambda L, _: lambda y: L.squeeze(y, (3,)), [y], (axis,), 1)


@pytest.mark.parametrize("axis", [0, 2, -1])
def test_transpose_rev_slice(axis):
    x = _batched((2, 3, 4), axis)
    check(lambda L, _: lambda x: L.transpose(x, (2, 0, 1)), [x], (axis,))
    check(lambda L, _: lambda x: L.transpose(x, (1, 0, 2)), [x], (axis,), 2)
    check(lambda L, _: lambda x: L.rev(x, (0, 2)), [x], (axis,), 1)
    check(lambda L, _: lambda x: L.slice(x, (1, 0, 1), (2, 3, 4), (1, 2, 2)), [x], (axis,))
    check(lambda L, _: lambda x: x[:, 1:, ::-2], [x], (axis,))
    check(lambda L, _: lambda x: L.tile(x, (2, 1, 3)), [x], (axis,))
    check(lambda L, N_: lambda x: N_.tile(x, (2, 1)), [x], (axis,), 1)


@pytest.mark.parametrize("in_axes", [(0, None, 1), (None, 1, None), (1, 0, -1)], ids=str)
def test_concatenate(in_axes):
    a = _batched((2, 3), in_axes[0])
    b = _batched((1, 3), in_axes[1])
    c = _batched((2, 3), in_axes[2])
    check(lambda L, _: lambda a, b, c: L.concatenate([a, b, c], 0), [a, b, c], in_axes)
    check(lambda L, N_: lambda a, b, c: N_.concatenate([a.T, c.T], axis=1), [a, b, c],
          in_axes, out_axes=1)


@pytest.mark.parametrize("in_axes", [(0, None), (1, 0), (None, 0), (-1, 0)], ids=str)
def test_pad(in_axes):
    x = _batched((2, 3), in_axes[0])
    v = _batched((), in_axes[1])
    config = ((1, 2, 1), (0, -1, 0))
    check(lambda L, _: lambda x, v: L.pad(x, v, config), [x, v], in_axes)
    check(lambda L, _: lambda x, v: L.pad(x, v, ((0, 0, 0), (-1, 1, 2))), [x, v], in_axes, 1)
    xb, vb = x.astype(np.int32) > 0, v > 0
    check(lambda L, _: lambda x, v: L.pad(x, v, config), [xb, vb], in_axes)


# ---- selection -------------------------------------------------------------------------
@pytest.mark.parametrize("in_axes", [(0, None, None), (None, 0, None), (1, None, 0),
                                     (0, 1, 0), (None, 1, -1)], ids=str)
def test_select_n(in_axes):
    which = _batched((2, 3), in_axes[0], np.bool_)
    cases = [_batched((2, 3), d) for d in in_axes[1:]]
    check(lambda L, _: lambda w, a, b: L.select_n(w, a, b), [which, *cases], in_axes)
    scalar_axes = (_scalar_axis(in_axes[0]), *in_axes[1:])
    scalar = _batched((), scalar_axes[0], np.bool_)
    check(lambda L, _: lambda w, a, b: L.select_n(w, a, b), [scalar, *cases], scalar_axes, 1)
    three = np.abs(_batched((2, 3), in_axes[0], np.int32)) % 3
    check(lambda L, _: lambda w, a, b: L.select_n(w, a, b, a * b), [three, *cases], in_axes)
    check(lambda L, N_: lambda w, a, b: N_.where(w, a, b), [which, *cases], in_axes, -1)


@pytest.mark.parametrize("in_axes", [(None, 0, None), (0, 1, None), (None, None, 0),
                                     (1, None, 0), (0, -1, 1)], ids=str)
def test_clamp(in_axes):
    lo, x, hi = (_batched((2, 3), d) for d in in_axes)
    hi = hi + 1
    check(lambda L, _: lambda lo, x, hi: L.clamp(lo, x, hi), [lo, x, hi], in_axes)
    # Scalar bounds: an unbatched one stays a scalar, a batched one is broadcast.
    scalar_axes = (_scalar_axis(in_axes[0]), in_axes[1], _scalar_axis(in_axes[2]))
    slo, shi = _batched((), scalar_axes[0]), _batched((), scalar_axes[2]) + 1
    check(lambda L, _: lambda lo, x, hi: L.clamp(lo, x, hi), [slo, x, shi], scalar_axes, 1)
    check(lambda L, N_: lambda lo, x, hi: N_.clip(x, lo, hi), [lo, x, hi], in_axes)


# ---- dot_general ---------------------------------------------------------------------
MATMUL = (((1,), (0,)), ((), ()))
BMM = (((2,), (1,)), ((0,), (0,)))  # per example (2, 3, 4) x (2, 4, 5) -> (2, 3, 5)


@pytest.mark.parametrize("in_axes", [(0, 0), (2, None), (None, 0), (1, -1)], ids=str)
def test_dot_general(in_axes):
    x, y = _batched((3, 4), in_axes[0]), _batched((4, 5), in_axes[1])
    check(lambda L, _: lambda x, y: L.dot_general(x, y, MATMUL), [x, y], in_axes)
    check(lambda L, _: lambda x, y: L.dot_general(y, x, (((0,), (1,)), ((), ()))), [x, y],
          in_axes, 2)
    vec_axes = (in_axes[0], _scalar_axis(in_axes[1]))
    v = _batched((4,), vec_axes[1])
    check(lambda L, N_: lambda x, v: N_.dot(x, v), [x, v], vec_axes, 1)
    if vec_axes[1] is not None:
        check(lambda L, N_: lambda x, v: N_.dot(v, v), [x, v], (None, vec_axes[1]))
    a, b = _batched((2, 3, 4), in_axes[0]), _batched((2, 4, 5), in_axes[1])
    check(lambda L, _: lambda a, b: L.dot_general(a, b, BMM), [a, b], in_axes)
    check(lambda L, _: lambda a, b: L.dot_general(a, b, BMM, preferred_element_type=np.float32),
          [a.astype(np.int8), b.astype(np.int8)], in_axes, -1)


# ---- reductions ------------------------------------------------------------------------
@pytest.mark.parametrize("axis,out_axes", [(0, 0), (1, 0), (-1, 1)])
def test_reductions(axis, out_axes):
    x = _batched((2, 3, 4), axis)
    for name in ("reduce_sum", "reduce_max", "reduce_min", "reduce_prod"):
        for axes in ((1,), (0, 2)):
            check(lambda L, _: lambda x: getattr(L, name)(x, axes), [x], (axis,), out_axes)
    bits = _batched((2, 3, 4), axis, np.int32)
    bools = bits > 0
    for name in ("reduce_and", "reduce_or", "reduce_xor"):
        check(lambda L, _: lambda x: getattr(L, name)(x, (0, 1)), [bits], (axis,), out_axes)
        check(lambda L, _: lambda x: getattr(L, name)(x, (2,)), [bools], (axis,), out_axes)
    check(lambda L, N_: lambda x: N_.mean(x, axis=(0, 2)), [x], (axis,), out_axes)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_argmin_argmax(axis):
    x = _batched((3, 4), axis)
    for name in ("argmax", "argmin"):
        for a in (0, 1):
            check(lambda L, _: lambda x: getattr(L, name)(x, a, np.int32), [x], (axis,))
    check(lambda L, N_: lambda x: N_.argmax(x, axis=-1), [x], (axis,), 1)


@pytest.mark.parametrize("axis", [0, 1, -1])
def test_cumulative(axis):
    x = _batched((3, 4), axis) / 4
    for name in ("cumsum", "cumprod", "cummax", "cummin", "cumlogsumexp"):
        for a, reverse in ((0, False), (1, True)):
            check(lambda L, _: lambda x: getattr(L, name)(x, a, reverse), [x], (axis,))
    check(lambda L, N_: lambda x: N_.cumsum(x, axis=0), [x], (axis,), 1)


@pytest.mark.parametrize("in_axes", [(0, None), (None, 0), (1, 0), (-1, None)], ids=str)
def test_sort(in_axes):
    k, v = _batched((3, 4), in_axes[0]), _batched((3, 4), in_axes[1])
    check(lambda L, _: lambda k, v: L.sort(k, dimension=0), [k, v], in_axes)
    check(lambda L, _: lambda k, v: L.sort((k, v), dimension=1, num_keys=1), [k, v], in_axes)
    check(lambda L, _: lambda k, v: L.sort((k, v), dimension=0, num_keys=2), [k, v], in_axes,
          -1)
    check(lambda L, N_: lambda k, v: N_.sort(k + v, axis=-1), [k, v], in_axes, 1)


# ---- vmap of vmap ----------------------------------------------------------------------
def test_nested_vmap():
    x = RNG.integers(-4, 5, (2, 3, 4, 5)).astype(np.float32)
    y = RNG.integers(-4, 5, (5, 2, 6)).astype(np.float32)

    def f(L, x, y):
        z = L.dot_general(x, y, MATMUL)                     # (3, 6)
        z = L.pad(z, np.float32(0), ((1, 0, 0), (0, 0, 1)))  # (4, 11)
        s = L.sort(L.transpose(z, (1, 0)), dimension=0)     # (11, 4)
        return L.reduce_max(s, (0,)), L.cumsum(z, 1, True)

    # x: outer axis 0, then inner axis 1 of the rest (x[i, :, j] is (3, 5)); y is batched by
    # the outer vmap only (y[:, i] is (5, 6)).
    m = mjax.vmap(mjax.vmap(lambda x, y: f(mlax, x, y), in_axes=(1, None), out_axes=(0, 1)),
                  in_axes=(0, 1), out_axes=(1, 0))
    j = jax.vmap(jax.vmap(lambda x, y: f(jax.lax, x, y), in_axes=(1, None), out_axes=(0, 1)),
                 in_axes=(0, 1), out_axes=(1, 0))
    want = j(jnp.asarray(x), jnp.asarray(y))
    _same(m(x, y), want, "vmap(vmap)")
    _same(mjax.jit(m)(x, y), want, "jit(vmap(vmap))")
    outer = []
    for i in range(2):
        inner = [f(mlax, x[i, :, j], y[:, i]) for j in range(4)]
        outer.append((np.stack([np.asarray(a) for a, _ in inner], 0),
                      np.stack([np.asarray(c) for _, c in inner], 1)))
    _same(m(x, y), (np.stack([a for a, _ in outer], 1), np.stack([c for _, c in outer], 0)),
          "loop of loops")


def _per_example_loss(np_, L):
    def loss(params, x, y):
        w1, w2 = params
        z = np_.tanh(x @ w1) @ w2
        z = z - L.stop_gradient(np_.max(z))
        lse = np_.log(np_.sum(np_.exp(z)))
        reg = np_.sum(np_.cumsum(w1, axis=0)[::-1, :2] ** 2)
        return lse - z[y] + 0.1 * reg + np_.sort(z)[0]
    return loss


def test_per_example_gradients():
    """vmap of grad and grad of vmap batch the JVP and transposed programs of dot_general,
    reductions, cumsum, sort, slicing and padding (the transpose of slice)."""
    w1, w2 = (RNG.normal(size=s).astype(np.float32) for s in ((4, 5), (5, 3)))
    x, y = RNG.normal(size=(6, 4)).astype(np.float32), RNG.integers(0, 3, 6)
    m, j = _per_example_loss(mnp, mlax), _per_example_loss(jnp, jax.lax)
    got = mjax.vmap(mjax.grad(m), in_axes=(None, 0, 0))((w1, w2), x, y)
    want = jax.vmap(jax.grad(j), in_axes=(None, 0, 0))((w1, w2), x, y)
    loop = [mjax.grad(m)((w1, w2), x[k], y[k]) for k in range(6)]
    for i in range(2):
        np.testing.assert_allclose(np.asarray(got[i]), np.asarray(want[i]), rtol=1e-4,
                                   atol=1e-5)
        np.testing.assert_allclose(np.asarray(got[i]), np.stack([g[i] for g in loop]),
                                   rtol=1e-4, atol=1e-5)
    got = mjax.grad(lambda p: mjax.vmap(m, in_axes=(None, 0, 0))(p, x, y).sum())((w1, w2))
    want = jax.grad(lambda p: jax.vmap(j, in_axes=(None, 0, 0))(p, x, y).sum())((w1, w2))
    for g, w in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-4, atol=1e-5)


# ---- the batched IR keeps unbatched operands unbatched ---------------------------------
def _bodies(f, args, in_axes):
    """The texts of f and of the batched copy that --jaxpr-batch makes for vmap(f)."""
    text = mjax.jit(mjax.vmap(f, in_axes=in_axes)).trace(*args).as_text()
    out, diags = process_chunk(text, [("jaxpr-batch", "")])
    assert out is not None, diags
    fns = re.findall(r'func\.func private @"?([^"(]*)"?\(.*?\n  }', out, re.S)
    bodies = dict(zip(fns, re.findall(r'func\.func private @.*?\n  }', out, re.S)))
    batched = [name for name in bodies if name.endswith("_batched")]
    assert len(batched) == 1, out
    return bodies[batched[0][:-len("_batched")]], bodies[batched[0]]


def _assert_no_new_moves(f, args, in_axes):
    """Batching f added no broadcast_in_dim and no transpose."""
    body, batched = _bodies(f, args, in_axes)
    for op in ("jaxpr.broadcast_in_dim", "jaxpr.transpose"):
        assert batched.count(op) == body.count(op), batched
    return batched


@pytest.mark.parametrize("in_axes", [(0, None), (None, 1), (1, 0)], ids=str)
def test_dot_general_ir_has_no_broadcast_or_transpose(in_axes):
    x, y = _batched((3, 4), in_axes[0]), _batched((4, 5), in_axes[1])
    batched = _assert_no_new_moves(lambda x, y: mlax.dot_general(x, y, MATMUL), [x, y],
                                   in_axes)
    assert batched.count("jaxpr.dot_general") == 1, batched


@pytest.mark.parametrize("make,shapes,in_axes", [
    (lambda x, v: mlax.pad(x, v, ((1, 1, 0),)), [(3,), ()], (0, None)),
    (lambda x, lo: mlax.clamp(lo, x, np.float32(2)), [(3,), ()], (0, None)),
    (lambda x, w: mlax.select_n(w > 0, x, x + 1), [(2, 3), ()], (1, None)),
    (lambda x, w: mlax.reduce_sum(x, (0,)) + mlax.argmax(x, 0, np.int32).astype(np.float32),
     [(2, 3), ()], (1, None)),
    (lambda x, w: mlax.cumsum(x, 0, True), [(2, 3), ()], (1, None)),
    (lambda x, w: mlax.slice(mlax.rev(x, (0,)), (1, 0), (2, 3)), [(2, 3), ()], (1, None)),
], ids=["pad", "clamp", "select_n", "reduce_argmax", "cumsum", "slice_rev"])
def test_unbatched_operands_stay_unbatched(make, shapes, in_axes):
    args = [_batched(s, d) for s, d in zip(shapes, in_axes)]
    _assert_no_new_moves(make, args, in_axes)


@pytest.mark.parametrize("make,jmake,shape,axis", [
    (lambda x: mlax.broadcast_in_dim(x, (4, 2, 3), (1, 2)),
     lambda x: jax.lax.broadcast_in_dim(x, (4, 2, 3), (1, 2)), (2, 3), 1),
    (lambda x: mlax.expand_dims(mlax.squeeze(x, (1,)), (0,)),
     lambda x: jax.lax.expand_dims(jax.lax.squeeze(x, (1,)), (0,)), (2, 1, 3), 2),
], ids=["broadcast_in_dim", "squeeze_expand_dims"])
def test_broadcast_in_dim_moves_the_batch_axis_in_front_as_jax(make, jmake, shape, axis):
    # (JAX's broadcast_in_dim batcher transposes the batch axis to the front first: one
    # transpose, as in JAX's jaxpr)
    x = _batched(shape, axis)
    _, batched = _bodies(lambda x, w: make(x), [x, np.float32(0)], (axis, None))
    want = str(jax.make_jaxpr(jax.vmap(jmake, axis))(x))
    assert batched.count("jaxpr.transpose") == want.count("transpose[") == 1, batched


@pytest.fixture(autouse=True)
def _x64_off_in_both():
    """These checks compare dtypes with x64 off; a test elsewhere may leave the jax
    oracle's x64 on, so start from off in both (and restore what was there)."""
    old_m, old_j = mjax.config.read("jax_enable_x64"), jax.config.jax_enable_x64
    mjax.config.update("jax_enable_x64", False)
    jax.config.update("jax_enable_x64", False)
    try:
        yield
    finally:
        mjax.config.update("jax_enable_x64", old_m)
        jax.config.update("jax_enable_x64", old_j)
