"""Differential sweep of mjax.lax (and mjax.tree_util / mjax.tree) against jax: values,
dtypes, weak types and error classes, eager and under jit, grad and vmap."""
import collections

import numpy as np
import pytest

import jax
import mjax
from sweep_util import compare

R = np.random.default_rng(3)
F = R.normal(size=(3, 4)).astype(np.float32)
I = R.integers(-100, 100, (3, 4)).astype(np.int32)
U8 = R.integers(0, 255, (3, 4)).astype(np.uint8)
POSF = np.abs(F) + 0.1
C1 = R.normal(size=(2, 4, 5, 5)).astype(np.float32)
C2 = R.normal(size=(6, 2, 3, 3)).astype(np.float32)
C3 = R.normal(size=(4, 2, 5, 5)).astype(np.float32)
C4 = R.normal(size=(4, 2, 3, 3)).astype(np.float32)
DN = (((1,), (0,)), ((), ()))

# name: (function of (lax, *args), args, differentiable)
CASES = {
    "reduce_precision": (lambda L, x: L.reduce_precision(x * 1000, 5, 10), (F,), True),
    "reduce_precision_bf16": (lambda L, x: L.reduce_precision(x, 8, 7), (F,), True),
    "population_count": (lambda L, x: L.population_count(x), (I,), False),
    "population_count_u8": (lambda L, x: L.population_count(x), (U8,), False),
    "clz_u8": (lambda L, x: L.clz(x), (U8,), False),
    "cumsum_reverse": (lambda L, x: L.cumsum(x, axis=1, reverse=True), (F,), True),
    "cumprod": (lambda L, x: L.cumprod(x, axis=0), (F,), True),
    "cummax_reverse": (lambda L, x: L.cummax(x, axis=1, reverse=True), (F,), True),
    "cummin_int": (lambda L, x: L.cummin(x, axis=1), (I,), False),
    "cumlogsumexp_reverse": (lambda L, x: L.cumlogsumexp(x, axis=1, reverse=True), (F,), True),
    "top_k": (lambda L, x: L.top_k(x, 2), (F,), False),
    "top_k_int": (lambda L, x: L.top_k(x, 3), (I,), False),
    "approx_max_k": (lambda L, x: L.approx_max_k(x, 2), (F,), False),
    "approx_min_k": (lambda L, x: L.approx_min_k(x, 2), (F,), False),
    "sort_multi_num_keys": (lambda L, a, b, c: L.sort((a, b, c), num_keys=2),
                            (np.int32([1, 0, 1, 0, 1]), np.float32([3, 1, 2, 1, 0]),
                             np.arange(5, dtype=np.int32)), False),
    "sort_dim0": (lambda L, x: L.sort(x, dimension=0), (F,), True),
    "sort_stable_ties": (lambda L, k, v: L.sort((k, v), num_keys=1),
                         (np.float32([1, 0, 1, 0, 1, np.nan, -0.0, 0.0]),
                          np.arange(8, dtype=np.int32)), False),
    "sort_key_val": (lambda L, k, v: L.sort_key_val(k, v), (I[0], F[0]), False),
    "erf_inv": (lambda L, x: L.erf_inv(x), (np.float32([0.1, -0.5, 0.99, 1.0]),), False),
    "lgamma": (lambda L, x: L.lgamma(x), (POSF,), True),
    "digamma": (lambda L, x: L.digamma(x), (POSF,), True),
    "igamma": (lambda L, a, x: L.igamma(a, x), (POSF, POSF[::-1]), False),
    "igammac": (lambda L, a, x: L.igammac(a, x), (POSF, POSF[::-1]), False),
    "betainc": (lambda L, a, b, x: L.betainc(a, b, x), (POSF, POSF[::-1], POSF / 3.5), False),
    "bessel_i0e": (lambda L, x: L.bessel_i0e(x), (F * 5,), True),
    "bessel_i1e": (lambda L, x: L.bessel_i1e(x), (F * 5,), True),
    "zeta": (lambda L, x, q: L.zeta(x, q), (POSF + 1.5, POSF), False),
    "polygamma": (lambda L, m, x: L.polygamma(m, x), (np.float32([1, 2, 3]),
                                                      np.float32([0.5, 1, 2])), False),
    "random_gamma_grad": (lambda L, a, x: L.random_gamma_grad(a, x), (POSF, POSF[::-1]),
                          False),
    "nextafter": (lambda L, x, y: L.nextafter(x, y), (F, np.zeros_like(F)), False),
    "round_even": (lambda L, x: L.round(x, L.RoundingMethod.TO_NEAREST_EVEN),
                   (np.float32([0.5, 1.5, 2.5, -0.5]),), False),
    "round_away": (lambda L, x: L.round(x), (np.float32([0.5, 1.5, 2.5, -0.5]),), False),
    "round_int_method": (lambda L, x: L.round(x, 1), (np.float32([0.5, 1.5, 2.5]),), False),
    "integer_pow": (lambda L, x: L.integer_pow(x, 3), (F,), True),
    "integer_pow_neg": (lambda L, x: L.integer_pow(x, -2), (F,), True),
    "integer_pow_int": (lambda L, x: L.integer_pow(x, 2), (I,), False),
    "rsqrt": (lambda L, x: L.rsqrt(x), (POSF,), True),
    "cbrt": (lambda L, x: L.cbrt(x), (F,), True),
    "tan": (lambda L, x: L.tan(x), (F,), True),
    "logistic": (lambda L, x: L.logistic(x), (F,), True),
    "exp2": (lambda L, x: L.exp2(x), (F,), True),
    "atan2": (lambda L, x, y: L.atan2(x, y), (F, F[::-1]), True),
    "select_n": (lambda L, p, a, b, c: L.select_n(p, a, b, c),
                 (np.abs(I) % 3, F, F * 2, F * 3), False),
    "select_n_bool": (lambda L, p, a, b: L.select_n(p, a, b), (F > 0, F, -F), False),
    "expand_dims": (lambda L, x: L.expand_dims(x, (0, 3)), (F,), True),
    "squeeze": (lambda L, x: L.squeeze(x[None, :, None], (0, 2)), (F,), True),
    "dynamic_slice_in_dim": (lambda L, x: L.dynamic_slice_in_dim(x, 2, 2, axis=1), (F,), True),
    "dynamic_slice_negative": (lambda L, x, i: L.dynamic_slice_in_dim(x, i, 2, axis=1),
                               (F, np.int32(-1)), False),
    "dynamic_slice_clamped": (lambda L, x: L.dynamic_slice(x, (5, 3), (2, 2)), (F,), True),
    "dynamic_update_negative": (lambda L, x, u: L.dynamic_update_slice(x, u, (-1, -3)),
                                (F, F[:1, :2] * 0), True),
    "dynamic_index_in_dim": (lambda L, x: L.dynamic_index_in_dim(x, 1, axis=0,
                                                                 keepdims=False), (F,), True),
    "index_in_dim": (lambda L, x: L.index_in_dim(x, -1, axis=1), (F,), True),
    "slice_in_dim": (lambda L, x: L.slice_in_dim(x, 1, None, 2, axis=1), (F,), True),
    "slice_in_dim_negative": (lambda L, x: L.slice_in_dim(x, -3, -1, axis=1), (F,), True),
    "pad_negative": (lambda L, x: L.pad(x, np.float32(0), [(-1, 2, 0), (1, -2, 1)]), (F,),
                     True),
    "pad_interior_int": (lambda L, x: L.pad(x, np.int32(7), [(0, 0, 2), (2, 1, 1)]), (I,),
                         False),
    "reduce_window_max_same": (lambda L, x: L.reduce_window(x, -np.inf, L.max, (2, 2),
                                                            (1, 1), "SAME"), (F,), True),
    "reduce_window_add_pads": (lambda L, x: L.reduce_window(x, 0.0, L.add, (2, 3), (1, 2),
                                                            [(1, 0), (0, 1)]), (F,), True),
    "conv_feature_groups": (lambda L, a, b: L.conv_general_dilated(
        a, b, (1, 1), "SAME", feature_group_count=2), (C1, C2), True),
    "conv_batch_groups": (lambda L, a, b: L.conv_general_dilated(
        a, b, (1, 1), "VALID", batch_group_count=2), (C3, C4), True),
    "conv_dilated": (lambda L, a, b: L.conv_general_dilated(
        a, b, (2, 1), [(1, 2), (0, 1)], lhs_dilation=(1, 2), rhs_dilation=(2, 1),
        feature_group_count=2), (C1, C2), True),
    "dot_general_int8_to_int32": (lambda L, a, b: L.dot_general(
        a, b, DN, preferred_element_type=np.int32), (I.astype(np.int8), I.T.astype(np.int8)),
        False),
    "dot_general_f16_to_f32": (lambda L, a, b: L.dot_general(
        a, b, DN, preferred_element_type=np.float32),
        (F.astype(np.float16), F.T.astype(np.float16)), False),
    "dot_general_batch": (lambda L, a, b: L.dot_general(a, b, (((2,), (1,)), ((0,), (0,)))),
                          (np.stack([F, F * 2]), np.stack([F.T, F.T])), True),
    "shift_right_logical": (lambda L, x: L.shift_right_logical(x, np.int32(2)), (I,), False),
    "shift_left_oversized": (lambda L, x: L.shift_left(x, np.int32(40)), (I,), False),
    "rem_int": (lambda L, x: L.rem(x, np.int32(7)), (I,), False),
    "div_int": (lambda L, x: L.div(x, np.int32(7)), (I,), False),
    "clamp": (lambda L, x: L.clamp(np.float32(-0.5), x, np.float32(0.5)), (F,), True),
    "argmax": (lambda L, x: L.argmax(x, 1, np.int32), (F,), False),
    "bitcast": (lambda L, x: L.bitcast_convert_type(x, np.int32), (F,), False),
    "bitcast_narrow": (lambda L, x: L.bitcast_convert_type(x, np.uint8), (F,), False),
    "convert_float_to_int": (lambda L, x: L.convert_element_type(x, np.int32),
                             (np.float32([1.7, -1.7, 1e10, -1e10, np.nan]),), False),
    "reduce_and": (lambda L, x: L.reduce_and(x > 0, (1,)), (F,), False),
    "reduce_xor": (lambda L, x: L.reduce_xor(x, (0,)), (I,), False),
    "reduce_multi": (lambda L, a, b: L.reduce((a, b), (np.float32(0), np.int32(0)),
                                              lambda x, y: (x[0] + y[0], x[1] + y[1]), (1,)),
                     (F, I), False),
    "broadcast_in_dim": (lambda L, x: L.broadcast_in_dim(x[:, :1], (3, 2, 4), (0, 2)), (F,),
                         True),
    "broadcasted_iota": (lambda L: L.broadcasted_iota(np.int32, (2, 3), 1), (), False),
    "collapse": (lambda L, x: L.collapse(x[None], 0, 2), (F,), True),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_lax(name):
    fn, args, differentiable = CASES[name]
    modes = ("eager", "jit") + (("grad",) if differentiable else ())
    if args and name not in ("broadcasted_iota",):
        modes += ("vmap",)
    compare(lambda *a: fn(mjax.lax, *a), lambda *a: fn(jax.lax, *a), args, modes=modes,
            rtol=1e-5, atol=1e-6, vmap_stack=True)


@pytest.mark.parametrize("name", ["cumsum_reverse", "lgamma", "tan", "reduce_precision",
                                  "integer_pow", "dot_general_batch", "nextafter"])
def test_lax_x64(name, x64_mode):
    fn, args, _ = CASES[name]
    args = tuple(a.astype(np.float64) if x64_mode and a.dtype == np.float32 else a
                 for a in args)
    compare(lambda *a: fn(mjax.lax, *a), lambda *a: fn(jax.lax, *a), args, modes=("jit",),
            rtol=1e-12 if x64_mode else 1e-5, atol=1e-12 if x64_mode else 1e-6)


ERRORS = {
    "add_dtype_mismatch": (lambda L: L.add(np.float32(1), np.int32(1))),
    "add_shape_mismatch": (lambda L: L.add(F, F[:2])),
    "lgamma_int": (lambda L: L.lgamma(I)),
    "igamma_int": (lambda L: L.igamma(I, I)),
    "top_k_too_big": (lambda L: L.top_k(F, 5)),
    "squeeze_non_unit": (lambda L: L.squeeze(F, (0,))),
    "slice_out_of_range": (lambda L: L.slice(F, (0, 0), (4, 4))),
    "pad_rank": (lambda L: L.pad(F, np.float32(0), [(0, 0, 0)])),
    "integer_pow_float": (lambda L: L.integer_pow(F, 1.5)),
    "dynamic_slice_too_big": (lambda L: L.dynamic_slice(F, (0, 0), (4, 4))),
    "dynamic_slice_negative_disallowed": (
        lambda L: L.dynamic_slice(F, (-1, 0), (1, 1), allow_negative_indices=False)),
    "select_n_bad_predicate": (lambda L: L.select_n(F, F, F)),
    "reduce_precision_bad_bits": (lambda L: L.reduce_precision(F, 0, 3)),
    "sort_num_keys": (lambda L: L.sort((F[0], F[1]), num_keys=3)),
    "dot_general_contracting_mismatch": (lambda L: L.dot_general(F, F, DN)),
    "conv_groups": (lambda L: L.conv_general_dilated(C1, C2, (1, 1), "SAME",
                                                     feature_group_count=3)),
    "bitcast_width": (lambda L: L.bitcast_convert_type(F[0], np.int64)),
    "clz_float": (lambda L: L.clz(F)),
    "cumsum_axis": (lambda L: L.cumsum(F[0], axis=1)),
    "index_in_dim_axis": (lambda L: L.index_in_dim(F[0], 0, axis=1)),
    "slice_in_dim_axis": (lambda L: L.slice_in_dim(F[0], 0, 1, axis=1)),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_lax_errors(name):
    fn = ERRORS[name]
    compare(lambda: fn(mjax.lax), lambda: fn(jax.lax), (), modes=("eager",))


def test_lax_public_names():
    """Every public jax.lax function a user calls exists (the *_p primitive objects and a
    few JAX-internal helpers are out of scope)."""
    allowed = {"AccuracyMode", "DotAlgorithm", "DotAlgorithmPreset", "RaggedDotDimensionNumbers",
               "Tolerance", "after_all", "composite", "create_token", "dce_sink", "pbroadcast",
               "pcast", "platform_dependent", "precv", "psend", "ragged_all_to_all",
               "scaled_dot", "shape_as_value", "stage"}
    missing = {n for n in dir(jax.lax) if not n.startswith("_") and not n.endswith("_p")
               and not hasattr(mjax.lax, n)}
    assert missing <= allowed, sorted(missing - allowed)


@pytest.mark.parametrize("sizes", [[2, 1, 2], [0, 6, 0], [1, 1, 1]])
def test_ragged_dot(sizes):
    lhs = R.normal(size=(6, 2)).astype(np.float32)
    rhs = R.normal(size=(3, 2, 4)).astype(np.float32)
    g = np.int32(sizes)
    compare(lambda a, b: mjax.lax.ragged_dot(a, b, g), lambda a, b: jax.lax.ragged_dot(a, b, g),
            (lhs, rhs), modes=("eager", "jit", "grad"))


# ---- tree_util / tree ---------------------------------------------------------------
Point = collections.namedtuple("Point", ["x", "y"])
TREES = [
    {"b": [1, (2, None)], "a": Point(3.0, np.float32(4))},
    [(), {}, None, [[]], {"k": ()}],
    (1, [2, {"z": 3, "y": [4, 5]}]),
]


@pytest.mark.parametrize("tree", TREES)
def test_tree_util(tree):
    for mod in ("tree_util", "tree"):
        m, j = getattr(mjax, mod), getattr(jax, mod)
        pre = "tree_" if mod == "tree_util" else ""
        ml, mdef = getattr(m, pre + "flatten")(tree)
        jl, jdef = getattr(j, pre + "flatten")(tree)
        assert ml == jl
        assert mdef.num_leaves == jdef.num_leaves and mdef.num_nodes == jdef.num_nodes
        assert getattr(m, pre + "unflatten")(mdef, ml) == getattr(j, pre + "unflatten")(jdef, jl)
        assert (getattr(m, pre + "map")(lambda v: v * 2, tree)
                == getattr(j, pre + "map")(lambda v: v * 2, tree))
        assert getattr(m, pre + "leaves")(tree, is_leaf=lambda v: v is None) == getattr(
            j, pre + "leaves")(tree, is_leaf=lambda v: v is None)
        assert getattr(m, pre + "structure")(tree).num_leaves == getattr(
            j, pre + "structure")(tree).num_leaves
    mp = [(mjax.tree_util.keystr(k), v) for k, v in mjax.tree_util.tree_flatten_with_path(tree)[0]]
    jp = [(jax.tree_util.keystr(k), v) for k, v in jax.tree_util.tree_flatten_with_path(tree)[0]]
    assert mp == jp
    assert mjax.tree_util.tree_reduce(lambda a, b: a + b, tree, 0) == \
        jax.tree_util.tree_reduce(lambda a, b: a + b, tree, 0)
    assert mjax.tree.all(tree) == jax.tree.all(tree)


def test_tree_transpose_and_errors():
    outer = mjax.tree_util.tree_structure([0, 0])
    inner = mjax.tree_util.tree_structure((0, 0, 0))
    t = [(1, 2, 3), (4, 5, 6)]
    want = jax.tree_util.tree_transpose(jax.tree_util.tree_structure([0, 0]),
                                        jax.tree_util.tree_structure((0, 0, 0)), t)
    assert mjax.tree_util.tree_transpose(outer, inner, t) == want
    for fn in (lambda tu: tu.tree_map(lambda a, b: a + b, [1, 2], [1, 2, 3]),
               lambda tu: tu.tree_map(lambda a, b: a + b, {"a": 1}, {"b": 1}),
               lambda tu: tu.tree_unflatten(tu.tree_structure([0, 0]), [1])):
        compare(lambda: fn(mjax.tree_util), lambda: fn(jax.tree_util), (), modes=("eager",))


@pytest.mark.parametrize("which", range(3))
def test_is_leaf_takes_path(which):
    tree = {"a": [1, (2, None)], "b": Point(3, {"c": 4}), "d": None}
    pred = [lambda p, x: len(p) == 2, lambda p, x: isinstance(x, tuple) and len(p) > 0,
            lambda p, x: x is None][which]
    got = mjax.tree_util.tree_flatten_with_path(tree, pred, is_leaf_takes_path=True)[0]
    want = jax.tree_util.tree_flatten_with_path(tree, pred, is_leaf_takes_path=True)[0]
    assert [(mjax.tree_util.keystr(p), v) for p, v in got] == \
        [(jax.tree_util.keystr(p), v) for p, v in want]
    assert mjax.tree.map_with_path(lambda p, x: len(p), tree, is_leaf=pred,
                                   is_leaf_takes_path=True) == \
        jax.tree.map_with_path(lambda p, x: len(p), tree, is_leaf=pred, is_leaf_takes_path=True)
