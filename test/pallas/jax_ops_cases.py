"""The cases of JAX 0.10.2's tests/pallas/ops_test.py (OpsInterpretTest) that run on the
CPU, as (JAX's test, kernel of jax_ops_kernels.py, its arguments): JAX's parameters, less
its CPU skips (64-bit types without x64, float8, int2/uint2 in interpret mode, float16
casts, the slow hypothesis unary test)."""
from __future__ import annotations

import itertools

_INF, _NAN = float("inf"), float("nan")
_CMP_PARAMS = [(1, 1), (1, 16), (16, 1), (-1, 1), (1, -1), (1.0, 1.0), (1.0, 16.0),
               (16.0, 1.0), (-1.0, 1.0), (1.0, -1.0), (1.0, _INF), (_INF, 1.0), (_INF, _INF),
               (1.0, _NAN), (_NAN, 1.0), (_NAN, _NAN), (_INF, _NAN), (_INF, _INF)]
_ELEMENTWISE = [
    (["abs", "negative", "sign"], ["int16", "int32", "bfloat16", "float16", "float32"]),
    (["ceil", "floor"], ["bfloat16", "float32", "int32"]),
    (["exp", "exp2", "sin", "cos", "log", "sqrt"], ["bfloat16", "float16", "float32"]),
    (["expm1", "log1p", "cbrt", "lax.rsqrt", "tan", "asin", "acos", "atan", "sinh",
      "cosh", "tanh", "asinh", "acosh", "atanh"], ["bfloat16", "float32"]),
    (["lax.population_count", "lax.clz", "invert"], ["int32"]),
    (["logical_not"], ["bool"]),
]
_BINARY = [
    (["floor_divide"], ["int32", "uint32"]),
    (["add", "subtract", "multiply"], ["int16", "int32", "uint32", "float16", "float32"]),
    (["remainder"], ["int32", "uint32", "float32"]),
    (["bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_left_shift",
      "bitwise_right_shift"], ["int32", "uint32"]),
]
_COMPARE = ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"]
_D32 = ("float32", "int32", "uint32")
_DSUB = ("bfloat16", "int16", "int8", "int4", "uint16", "uint8", "uint4", "bool")
_NEXT = (-3.2, -0.0, 0.0, 5.1, _NAN, _INF, -_INF)
_CMP_X, _CMP_Y = [0, 3, -4, -6, 0, 5, 4, -7], [3, 1, -4, -5, 0, -2, 2, 4]


def _q(name):
    return name if "." in name else "jnp." + name


def _add_one(J):
    return lambda x: x + 1


def _abs(J):
    return J.numpy.abs


def _arange(shape, dtype="float32"):
    import numpy as np
    return np.arange(int(np.prod(shape))).astype(dtype).reshape(shape)


def _block_cases():
    """(JAX test, (op(jnp, lax, x), x)) of the block_op kernel."""
    import ml_dtypes
    import numpy as np
    c = []
    for shape, dim in (((32,), 0), ((8, 4), 0), ((8, 4), 1), ((8, 16, 2), 0),
                       ((8, 16, 2), 1), ((8, 16, 2), 2)):
        for dt in ("float32", "int32", "int16", "int8"):
            c.append(("test_iota", (lambda jnp, lax, x, s=shape, d=dim, t=dt:
                                    lax.broadcasted_iota(t, s, d), None)))
    for i, o in (((2, 4), (8,)), ((2, 4), (8, 1)), ((2, 4), (1, 8)), ((64,), (32, 2))):
        c.append(("test_reshape", (lambda jnp, lax, x, o=o: x.reshape(o), _arange(i))))
    for i, o in (((), (1,)), ((), (1, 1)), ((2, 4), (2, 4)), ((2, 4), (2, 4, 1)),
                 ((2, 4, 1), (2, 4)), ((2, 4), (1, 2, 4)), ((1, 2, 4), (2, 4)),
                 ((2, 4), (2, 1, 4)), ((1, 2, 1, 4, 1), (2, 4)), ((2, 4), (1, 2, 1, 4)),
                 ((2, 4), (1, 2, 4, 1)), ((1, 2, 4, 1), (1, 2, 1, 4, 1))):
        x = np.float32(42) if not i else _arange(i)
        c.append(("test_reshape_noop_or_singleton_dims",
                  (lambda jnp, lax, x, o=o: x.reshape(o), x)))
    for i, o, dims in (((), (2,), ()), ((1,), (2,), (0,)), ((1, 128), (8, 128), (0, 1)),
                       ((), (2, 2), ())):
        for dt in ("int32", "int16", "int8", "bool"):
            x = np.array(42).astype(dt) if not i else _arange(i, "int32").astype(dt)
            c.append(("test_broadcast_in_dim", (lambda jnp, lax, x, o=o, d=dims:
                                                lax.broadcast_in_dim(x, o, d), x)))
    for k in (0, 1, -1):
        for dt in ("float32", "bfloat16"):
            x = np.arange(128 * 256).astype(np.dtype(getattr(ml_dtypes, dt, dt)))
            c.append(("test_triu", (lambda jnp, lax, x, k=k: jnp.triu(x, k=k),
                                    x.reshape(128, 256))))
    for i, o in (("float16", "float16"), ("int16", "bfloat16"), ("int16", "float16"),
                 ("uint16", "float16"), ("float32", "int32"), ("float32", "uint32"),
                 ("uint32", "int32"), ("int32", "uint32")):
        o = np.dtype(getattr(ml_dtypes, o, o))
        c.append(("test_bitcast_convert_type_array",
                  (lambda jnp, lax, x, o=o: lax.bitcast_convert_type(x, o),
                   np.arange(16).astype(i).reshape(4, 4))))
    for shape in ((4, 128), (10, 100), (8, 128), (17, 257)):
        for pad in (((5, 8), (0, 0)), ((0, 0), (5, 100)), ((1, 1), (1, 1)), ((0, 0), (0, 0))):
            for mode in ("constant", "wrap"):
                for dt in ("float32", "bfloat16"):
                    x = np.arange(np.prod(shape)).astype(
                        np.dtype(getattr(ml_dtypes, dt, dt))).reshape(shape)
                    c.append(("test_arbitrary_padding_jnp_pad",
                              (lambda jnp, lax, x, p=pad, m=mode: jnp.pad(x, p, mode=m), x)))
    for n in (128, 256):
        c.append(("test_jnp_diagonal_pallas", (lambda jnp, lax, x: jnp.diagonal(x),
                                               _arange((n, n)))))
    for a, b, z in itertools.product((8, 16, 24, 32), (8, 16, 24, 32), (128, 256)):
        c.append(("test_jnp_swapaxes_major_minor", (lambda jnp, lax, x: jnp.swapaxes(x, 0, 1),
                                                    _arange((a, b, z)))))
    for s, p in ([((8, 16, 128), (0, 2, 1)), ((16, 128, 128), (1, 0, 2)),
                  ((8, 16, 128), (1, 2, 0)), ((8, 16, 128), (2, 0, 1)),
                  ((8, 16, 128), (2, 1, 0)), ((1, 2, 16, 128), (0, 1, 2, 3)),
                  ((1, 2, 16, 128), (1, 0, 3, 2)), ((8, 16, 8, 128), (0, 2, 1, 3)),
                  ((2, 8, 8, 3), (0, 2, 1, 3)), ((2, 8, 16, 8, 128), (0, 1, 3, 2, 4)),
                  ((1, 2, 8, 8, 1), (0, 1, 3, 2, 4)), ((3, 2, 8, 8, 8), (1, 0, 3, 2, 4))]
                 + [((1, 2, 9, 3, 4), p) for p in itertools.permutations(range(5))]):
        c.append(("test_transpose", (lambda jnp, lax, x, p=p: jnp.transpose(x, axes=p),
                                     _arange(s))))
    for axis in (0, 1):
        for dt in ("float16", "float32", "int32", "uint32"):
            r = np.random.default_rng(axis)
            x = (r.permutation(256).astype(dt) if dt[0] in "iu"
                 else r.standard_normal(256).astype(dt)).reshape(32, 8)
            c.append(("test_cumsum", (lambda jnp, lax, x, a=axis: jnp.cumsum(x, axis=a), x)))
    return c


def cases():
    """[(JAX test, kernel, args)]."""
    c = []
    for fn, dt in [("lax.pow", "float32")] + [(f"lax.{n}", "int32") for n in (
            "bitwise_and", "bitwise_or", "bitwise_xor", "shift_left",
            "shift_right_arithmetic", "shift_right_logical")]:
        c.append(("test_weak_dtype", "binary_weak", (fn, dt)))
    c += [("test_scalar_compare", "scalar_compare", p) for p in _CMP_PARAMS]
    c += [("test_array_compare", "array_compare", p) for p in _CMP_PARAMS]
    c += [("test_reduce_boolean", "reduce_boolean", (t, op)) for op in ("jnp.all", "jnp.any")
          for t in ("all_true", "all_false", "one_false")]
    c += [("test_reduce_float", "reduce_scalar", (f"jnp.{op}", (8, 128), "float32"))
          for op in ("sum", "max", "min")]
    c += [("test_reduce_int32", "reduce_scalar", (f"jnp.{op}", s, "int32"))
          for s in ((32, 256), (31, 300)) for op in ("sum", "max", "min")]
    c += [("test_select_n", "select_n", (sp, n, dt)) for sp, n, dt in
          ((True, 2, "int32"), (False, 1, "float32"), (False, 2, "int32"),
           (False, 3, "float32"), (False, 4, "int32"))]
    c += [("test_cast_from_32bit", "cast", (f, t, (128, 128) if t.endswith("int2") else
                                             (8, 128)))
          for f in _D32 for t in _D32 + _DSUB if f != t]
    c += [("test_cast_from_sub_32bit", "cast", (f, t, (128, 128)))
          for f in _DSUB for t in _D32 + _DSUB if f != t and not (
              f == "bool" and t not in _D32 + ("bfloat16",))]
    c.append(("test_scalar_downcast_float32", "scalar_downcast", ("bfloat16",)))
    c += [("test_scalar_map", "scalar_map", (s, d)) for s in ((64,), (8, 8))
          for d in ("int32", "int16", "int8")]
    c.append(("test_extract_scalar", "extract_scalar", ()))
    c.append(("test_concat_constant", "concat_constant", ()))
    for dts, vals in ((("uint16", "uint32"), (0, 5)), (("int16", "int32"), (-3, 0, 5)),
                      (("bfloat16", "float16", "float32"),
                       (-3.2, -0., 0., 5.1, _NAN, _INF, -_INF))):
        c += [("test_sign", "unary", ("jnp.sign", d, (8, 128), (v,)))
              for d in dts for v in vals]
    c += [("test_add_constant", "unary", (_add_one, d, (256, 256), (0,)))
          for d in ("float32", "bfloat16", "int32")]
    c += [("test_erf_inv", "unary", ("lax.erf_inv", "float32", (8, 128), (v,))) for v in
          (-3.2, -1.0, -0.999517, -0.4, 0., 0.72, 0.999517, 1.0, 2.4)]
    fin = (-0.2, _INF, -_INF, _NAN, 0.0, 1.0, -1.0, 0.5)
    c += [("test_is_finite", "unary", ("lax.is_finite", d, (8,), fin))
          for d in ("float32", "float16", "bfloat16")]
    c += [("test_is_finite_scalar", "unary_scalar", ("jnp.isfinite", d, fin))
          for d in ("float32", "float16", "bfloat16")]
    c += [("test_clamp", "clamp", (d,)) for d in ("float32", "bfloat16", "int32", "int16")]
    for fns, dts in _ELEMENTWISE:
        for fn, dt in itertools.product(fns, dts):
            vals = (0.42, 1.26) if fn in ("exp", "exp2") and dt == "bfloat16" else (0.42, 2.4)
            c.append(("test_elementwise_array", "unary", (_q(fn), dt, (8, 128), vals)))
            c.append(("test_elementwise_scalar", "unary_scalar", (_q(fn), dt, (0.42, 1.4))))
    c.append(("test_abs_weak_type", "unary", (_abs, "float32", (4, 4), (-3.2,))))
    c += [("test_pow", "binary", ("lax.pow", [1, 2, 3, 4], [1, 2, 3, 4], "float32", yd))
          for yd in ("int32", "float32")]
    c += [("test_integer_pow", "integer_pow", (y,)) for y in (0, 1, 2, 3, 4, 5, -1, -2, -3)]
    c += [("test_nextafter", "binary", ("jnp.nextafter", [x] * 4, [y] * 4, "float32"))
          for x in _NEXT for y in _NEXT]
    c += [("test_comparison", "binary", (f"jnp.{f}", _CMP_X * 16, _CMP_Y * 16, d, None,
                                             "int32"))
          for f in _COMPARE for d in ("int32", "uint32", "float16", "float32", "bool")]
    c += [("test_comparison_scalar", "binary_scalar", (f"jnp.{f}", _CMP_X * 16,
                                                        _CMP_Y * 16, d, "int32"))
          for f in _COMPARE for d in ("int32", "uint32", "float16", "float32", "bool")]
    c += [("test_true_divide", "binary", ("jnp.true_divide", [1, 3, -4, -6, 2, 5, 4, -7] * 8,
                                          [3, 1, -4, -5, 2, -2, 2, 4] * 8, d, None, o))
          for d, o in (("int32", "float32"), ("float32", "float32"),
                       ("bfloat16", "bfloat16"))]
    for fns, dts in _BINARY:
        for fn, dt in itertools.product(fns, dts):
            y = [3, 1, 4, 5, 2, 2, 2, 4] if "shift" in fn else [3, 1, -4, -5, 2, -2, 2, 4]
            c.append(("test_binary_array", "binary", (_q(fn), [1, 3, -4, -6, 2, 5, 4, -7],
                                                      y, dt)))
            c.append(("test_binary_scalar", "binary_scalar", (_q(fn), [1], [18], dt)))
    c.append(("test_isnan", "unary", ("jnp.isnan", "float32", (8,),
                                       (0, 1, 2, _NAN, 4, 5, 6, 7))))
    c.append(("test_jnp_einsum_grad_y_pallas", "dot_general", ((128, 256), (128, 256),
                                                                None)))
    for dt in ("float32", "bfloat16"):
        c.append(("test_dot_dims_batched_simple_dot_general", "dot_general",
                  ((11, 16, 256), (11, 256, 128), (([2], [1]), ([0], [0])), dt, (None, None),
                   "float32")))
    for xs, ys, d in (((8, 8, 256), (256, 128), ([2], [0])),
                      ((256, 8, 128), (256, 128), ([0], [0])),
                      ((8, 128), (128, 8, 128), ([1], [0])),
                      ((2, 128, 128), (2, 128, 128), ([1], [1]))):
        for b in (None, 2):
            if b is None:
                c.append(("test_dot_general_multiple_non_contracting_dims", "dot_general",
                          (xs, ys, (tuple(d), ([], [])))))
            else:
                c.append(("test_dot_general_multiple_non_contracting_dims", "dot_general",
                          ((b,) + xs, (b,) + ys, (([d[0][0] + 1], [d[1][0] + 1]),
                                                  ([0], [0])))))
    for xs, ys, dn in (((3, 4, 128), (4, 2, 128), (((2,), (2,)), ((1,), (0,)))),
                       ((4, 3, 2, 32), (2, 128, 32, 2), (((3,), (2,)), ((2,), (3,))))):
        c.append(("test_dot_general_non_front_batch_dims", "dot_general", (xs, ys, dn)))
    c.append(("test_dot_general_multiple_non_contracting_dims_with_transposes",
              "dot_general", ((4, 3, 2, 6), (4, 6), (([2], [1]), ([], [])), "float32",
                              ((2, 1, 3, 0), None))))
    c.append(("test_dot_general_multiple_non_contracting_dims_with_transposes",
              "dot_general", ((2, 3, 2, 6, 4), (2, 4, 6), (([3], [2]), ([0], [0])),
                              "float32", ((0, 1, 2, 4, 3), (0, 2, 1)))))
    for xs, ys, dn in (((8, 128), (128,), (([1], [0]), ([], []))),
                       ((2, 8, 128), (2, 1, 128), (([2], [2]), ([0], [0])))):
        c.append(("test_matrix_array_like_dot_general", "dot_general",
                  (xs, ys, dn, "float32", (None, None), "float32")))
    for xs, ys, dn in (((256,), (1024, 256), (([0], [1]), ([], []))),
                       ((2, 256), (2, 256, 1024), (([1], [1]), ([0], [0])))):
        c.append(("test_dot_general_with_1d_lhs", "dot_general",
                  (xs, ys, dn, "float32", (None, None), "float32")))
    c += [(t, "block_op", a) for t, a in _block_cases()]
    c.append(("test_reshape_to_scalar", "reshape_to_scalar", ()))
    c.append(("test_num_programs", "num_programs", ()))
    c += [("test_where_broadcasting", "where_broadcasting", (ii, oi))
          for ii, oi in ((0, 0), (3, 1), (6, 3))]
    for (ls, rs), dt, tx, ty in (
            (((16, 16), (16, 16)), "float32", False, False),
            (((8, 128), (128, 256)), "float32", False, False),
            (((8, 128), (256, 128)), "bfloat16", False, True),
            (((128, 8), (128, 256)), "float16", True, False),
            (((128, 24), (256, 128)), "float32", True, True)):
        c.append(("test_dot", "dot", (ls, rs, dt, tx, ty)))
    c.append(("test_broadcasted_load_store", "broadcasted_load_store", ()))
    c.append(("test_swap", "swap", (False,)))
    c.append(("test_masked_swap", "swap", (True,)))
    c += [("test_masked_oob_swap_slice", "masked_oob_swap_slice", (s,)) for s in (17, 25, 31)]
    c.append(("test_reduce_only_dim", "reduce_only_dim", ()))
    c += [("test_array_reduce", "array_reduce", (f"jnp.{op}", dt, ax))
          for op in ("sum", "max", "min", "argmax", "argmin") for ax in (0, 1)
          for dt in ("float16", "bfloat16", "float32", "int32", "uint32")]
    c.append(("test_bitcast_convert_type_scalar", "bitcast_scalar", ()))
    c.append(("test_strided_load", "strided_load", ()))
    return c


def indexing_cases():
    """indexing_test.py's interpret-mode kernels: [(JAX test, kernel, args)]."""
    c = [("test_multi_indexing_interpreter_only", "multi_indexing", ()),
         ("test_multi_indexing_destination_ref", "multi_indexing_destination_ref", ()),
         ("test_ellipsis_indexing_iterpret_only", "ellipsis_indexing", ())]
    for w, t in (("load", "test_load_with_dynamic_2nd_minor_index"),
                 ("store", "test_store_with_dynamic_2nd_minor_index"),
                 ("load_row", "test_load_one_row_with_dynamic_2nd_minor_index"),
                 ("store_row", "test_store_one_row_with_dynamic_2nd_minor_index")):
        c.append((t, "dynamic_2nd_minor", (w,)))
    c += [("test_advanced_indexer", "advanced_indexer", (i,)) for i in range(21)]
    return c
