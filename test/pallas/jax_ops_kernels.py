"""The kernels of JAX 0.10.2's tests/pallas/ops_test.py and indexing_test.py (the
`*InterpretTest` classes: `pallas_call(..., interpret=True)` on the CPU), written once for
both libraries: each takes (jax-like module, its pallas module, *case) and returns
(function, NumPy arguments). Inputs are NumPy arrays made here (JAX's tests draw them
from jax.random or hypothesis), so both libraries see the same values."""
from __future__ import annotations

import functools
import itertools

import ml_dtypes
import numpy as np


def fn_of(J, name: str):
    """'jnp.sign' / 'lax.erf_inv' / 'nn.relu' looked up in library J."""
    mod, attr = name.split(".")
    return getattr({"jnp": J.numpy, "lax": J.lax, "nn": J.nn}[mod], attr)


def _np_dtype(dtype: str):
    return np.dtype(getattr(ml_dtypes, dtype) if dtype in ("bfloat16",) else dtype)


def _full(shape, values, dtype):
    """`values` tiled over `shape`, cast as jnp.array(...).astype(dtype) would."""
    n = int(np.prod(shape))
    v = np.resize(np.asarray(values, np.float64), n).reshape(shape)
    return v.astype(_np_dtype(dtype))


def _rand(seed, shape, dtype):
    r = np.random.default_rng(seed)
    d = _np_dtype(dtype)
    if d.kind in "iu":
        return r.integers(-100 if d.kind == "i" else 0, 100, shape).astype(d)
    return r.standard_normal(shape).astype(d)


def _smem(T):
    return T.SMEM


# ---- elementwise -------------------------------------------------------------------------
def binary_weak(J, P, T, fn, dtype):               # test_weak_dtype
    f = fn_of(J, fn)

    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = f(x_ref[...], y_ref[...])
    call = P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((8, 128), dtype),
                         interpret=True)
    return call, (_full((8, 128), 4, dtype), _full((8, 128), 2, dtype))


def scalar_compare(J, P, T, x, y):                 # test_scalar_compare
    lax = J.lax

    def kernel(x_ref, y_ref, o_ref):
        a, b = x_ref[0, 0], y_ref[0, 0]
        for i, c in enumerate((a == b, a != b, a < b, a <= b, a > b, a >= b)):
            o_ref[0, i] = lax.select(c, 1, 0)
    call = P.pallas_call(
        kernel, out_shape=J.ShapeDtypeStruct([1, 128], "int32"),
        in_specs=[P.BlockSpec(memory_space=T.SMEM)] * 2,
        out_specs=P.BlockSpec((1, 128), lambda i: (0, 0), memory_space=T.SMEM),
        grid=(1,), interpret=True)
    dt = "int32" if isinstance(x, int) else "float32"
    return (lambda a, b: call(a, b)[..., :6]), (np.array([[x]], dt), np.array([[y]], dt))


def array_compare(J, P, T, x, y):                  # test_array_compare
    jnp, lax = J.numpy, J.lax

    def kernel(x_ref, y_ref, o_ref):
        a, b = x_ref[:], y_ref[:]
        one, zero = jnp.ones([8, 128], jnp.int32), jnp.zeros([8, 128], jnp.int32)
        for i, c in enumerate((a == b, a != b, a < b, a <= b, a > b, a >= b)):
            o_ref[i] = lax.select(c, one, zero)
    call = P.pallas_call(
        kernel, out_shape=J.ShapeDtypeStruct([6, 8, 128], jnp.int32),
        in_specs=[P.BlockSpec((8, 128), lambda *_: (0, 0))] * 2,
        out_specs=P.BlockSpec((6, 8, 128), lambda *_: (0, 0, 0)), grid=(1,),
        interpret=True)
    dt = "int32" if isinstance(x, int) else "float32"
    return call, (np.full((8, 128), x, dt), np.full((8, 128), y, dt))


def reduce_boolean(J, P, T, input_type, op):       # test_reduce_boolean
    jnp = J.numpy
    red = fn_of(J, op)

    def kernel(x_ref, ones_ref, o_ref):
        r = red(x_ref[...] == ones_ref[...], keepdims=True)
        o_ref[0, 0] = jnp.where(r, 1.0, 0.0)[0, 0]
    call = P.pallas_call(
        kernel, in_specs=[P.BlockSpec((8, 128), lambda *_: (0, 0))] * 2,
        out_specs=P.BlockSpec(block_shape=(1, 1), memory_space=T.SMEM),
        out_shape=J.ShapeDtypeStruct([1, 1], "float32"), grid=(1,), interpret=True)
    x = np.full((8, 128), 0.0 if input_type == "all_false" else 1.0, np.float32)
    if input_type == "one_false":
        x[0, 0] = 0.0
    return call, (x, np.ones_like(x))


def reduce_scalar(J, P, T, op, shape, dtype):      # test_reduce_float / _int32
    red = fn_of(J, op)

    def kernel(x_ref, o_ref):
        o_ref[0, 0] = red(x_ref[...])
    call = P.pallas_call(
        kernel, in_specs=[P.BlockSpec(shape, lambda *_: (0, 0))],
        out_specs=P.BlockSpec((1, 1), memory_space=T.SMEM),
        out_shape=J.ShapeDtypeStruct([1, 1], dtype), grid=(1,), interpret=True)
    return call, (_rand(0, shape, dtype),)


def select_n(J, P, T, scalar_pred, n, dtype):      # test_select_n (one drawn case each)
    lax = J.lax
    r = np.random.default_rng(n)
    shape = (4, 8)
    cases = [_rand(i, shape, dtype) for i in range(n)]
    pred = (np.int32(1) if scalar_pred else r.integers(0, n, shape).astype(np.int32))

    def kernel(*refs):
        if scalar_pred:
            *case_refs, o_ref = refs
            p = pred
        else:
            pred_ref, *case_refs, o_ref = refs
            p = pred_ref[...]
        o_ref[...] = lax.select_n(p, *[c[...] for c in case_refs])
    call = P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct(shape, dtype),
                         interpret=True)
    return call, tuple(cases if scalar_pred else [pred, *cases])


def unary(J, P, T, fn, dtype, shape=(8, 128), values=(0.42, 2.4)):
    """test_elementwise_array, test_sign, test_erf_inv, test_is_finite, test_add_constant,
    test_unary_primitives' functions: o = fn(x) on a (8, 128) block."""
    f = fn_of(J, fn) if isinstance(fn, str) else fn(J)
    x = _full(shape, values, dtype)
    out = J.eval_shape(f, J.ShapeDtypeStruct(shape, dtype))

    def kernel(x_ref, o_ref):
        o_ref[...] = f(x_ref[...])
    return P.pallas_call(kernel, out_shape=out, interpret=True), (x,)


def unary_scalar(J, P, T, fn, dtype, values=(0.42, 1.4)):   # test_elementwise_scalar
    f = fn_of(J, fn)
    x = _full((len(values),), values, dtype)
    out = J.eval_shape(f, J.ShapeDtypeStruct(x.shape, dtype))

    def kernel(x_ref, o_ref):
        for i in range(len(values)):
            o_ref[i] = f(x_ref[i])
    call = P.pallas_call(kernel, in_specs=(P.BlockSpec(memory_space=T.SMEM),),
                         out_specs=P.BlockSpec(memory_space=T.SMEM), out_shape=out,
                         interpret=True)
    return call, (x,)


def clamp(J, P, T, dtype):                          # test_clamp
    a, b, x = (_rand(i, (8, 128), dtype) for i in range(3))
    lo, hi = np.minimum(a, b), np.maximum(a, b)

    def kernel(lo_ref, x_ref, hi_ref, o_ref):
        o_ref[...] = J.lax.clamp(lo_ref[...], x_ref[...], hi_ref[...])
    call = P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((8, 128), dtype),
                         interpret=True)
    return call, (lo, x, hi)


def binary(J, P, T, fn, x, y, dtype, y_dtype=None, out_dtype=None, shape=None):
    """test_binary_array, test_pow, test_nextafter, test_true_divide, test_comparison
    (out_dtype: the kernel casts the result to it)."""
    f = fn_of(J, fn)
    xs = _full(shape or (len(x),), x, dtype)
    ys = _full(shape or (len(y),), y, y_dtype or dtype)
    out = J.eval_shape(f, J.ShapeDtypeStruct(xs.shape, xs.dtype),
                       J.ShapeDtypeStruct(ys.shape, ys.dtype))
    if out_dtype:
        out = J.ShapeDtypeStruct(out.shape, out_dtype)

    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = f(x_ref[...], y_ref[...]).astype(o_ref.dtype)
    return P.pallas_call(kernel, out_shape=out, interpret=True), (xs, ys)


def binary_scalar(J, P, T, fn, x, y, dtype, out_dtype=None):
    """test_binary_scalar, test_comparison_scalar: element by element in SMEM."""
    f = fn_of(J, fn)
    xs, ys = _full((len(x),), x, dtype), _full((len(y),), y, dtype)
    out = J.eval_shape(f, J.ShapeDtypeStruct(xs.shape, xs.dtype),
                       J.ShapeDtypeStruct(ys.shape, ys.dtype))
    if out_dtype:
        out = J.ShapeDtypeStruct(out.shape, out_dtype)

    def kernel(x_ref, y_ref, o_ref):
        for i in range(len(x)):
            o_ref[i] = f(x_ref[i], y_ref[i]).astype(o_ref.dtype)
    call = P.pallas_call(kernel, in_specs=[P.BlockSpec(memory_space=T.SMEM)] * 2,
                         out_specs=P.BlockSpec(memory_space=T.SMEM), out_shape=out,
                         interpret=True)
    return call, (xs, ys)


def integer_pow(J, P, T, y):                        # test_integer_pow
    def kernel(x_ref, o_ref):
        o_ref[:] = J.lax.integer_pow(x_ref[...], y)
    call = P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((4,), "float32"),
                         interpret=True)
    return call, (np.array([1, 2, 3, 4], np.float32) / np.float32(10),)


def cast(J, P, T, from_dtype, to_dtype, shape=(8, 128)):   # test_cast_from_32/sub_32bit
    jnp = J.numpy
    bits = _np_dtype(from_dtype).itemsize * 8 if from_dtype != "bool" else 32
    r = np.random.default_rng(1234)
    if from_dtype == "bool":
        x = r.integers(0, 2, shape).astype(np.int32)
    else:
        x = r.integers(0, 1 << bits, shape, dtype=np.uint64).astype(f"uint{bits}").view(
            _np_dtype(from_dtype))
        if x.dtype.kind in "fV":
            x = np.where(np.isnan(x.astype(np.float32)), 0, x).astype(x.dtype)
            if _np_dtype(to_dtype).kind in "iub":   # (out of range: unspecified)
                x = np.clip(x.astype(np.float32), -100, 100).astype(x.dtype)

    def kernel(x_ref, y_ref):
        v = x_ref[...]
        if from_dtype == "bool":
            v = v.astype(jnp.bool_)
        v = v.astype(to_dtype)
        y_ref[...] = v.astype(jnp.int32) if to_dtype == "bool" else v
    y_dtype = "int32" if to_dtype == "bool" else to_dtype
    return P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct(shape, y_dtype),
                         interpret=True), (x,)


def scalar_downcast(J, P, T, dtype):               # test_scalar_downcast_float32
    def kernel(x_ref, o_ref):
        o_ref[0, 0] = x_ref[:][0, 0].astype(dtype)
    call = P.pallas_call(kernel, in_specs=[P.BlockSpec((8, 128), lambda *_: (0, 0))],
                         out_specs=P.BlockSpec((1, 1), memory_space=T.SMEM),
                         out_shape=J.ShapeDtypeStruct([1, 1], dtype), grid=(1,),
                         interpret=True)
    return call, (_rand(0, (8, 128), "float32"),)


def scalar_map(J, P, T, shape, dtype):              # test_scalar_map
    jnp = J.numpy

    def kernel(x_ref, y_ref):
        for idx in np.ndindex(shape):
            v = x_ref[idx].astype(jnp.int32)
            y_ref[idx] = (v * v).astype(y_ref.dtype)
    call = P.pallas_call(kernel, in_specs=[P.BlockSpec(memory_space=T.SMEM)],
                         out_specs=P.BlockSpec(memory_space=T.SMEM),
                         out_shape=J.ShapeDtypeStruct(shape, dtype), interpret=True)
    return call, (np.arange(np.prod(shape), dtype=dtype).reshape(shape),)


def extract_scalar(J, P, T):                        # test_extract_scalar
    def kernel(x_ref, y_ref):
        y_ref[0, 0] = x_ref[:][0, 0]
    call = P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((1, 1), "float32"),
                         out_specs=P.BlockSpec(memory_space=T.SMEM), interpret=True)
    return call, (np.arange(1024, dtype=np.float32).reshape(8, 128) + 10,)


def concat_constant(J, P, T):                       # test_concat_constant
    jnp = J.numpy

    def kernel(out):
        parts = [jnp.full((1, 128), i, jnp.float32) for i in range(16)]
        out[:] = jnp.stack(parts, axis=0).reshape(16, 128)
    return P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((16, 128), "float32"),
                         out_specs=P.BlockSpec(memory_space=T.VMEM), interpret=True), ()


# ---- shapes, layout, reductions ----------------------------------------------------------
def block_op(J, P, T, op, x, out=None):
    """o = op(jnp, lax, x) over whole blocks: test_iota (x=None), test_reshape*,
    test_broadcast_in_dim, test_triu, test_jnp_diagonal_pallas, test_jnp_swapaxes_major_minor,
    test_transpose, test_arbitrary_padding_jnp_pad, test_cumsum, test_bitcast_convert_type_array,
    test_array_reduce (grid=())."""
    jnp, lax = J.numpy, J.lax
    if x is None:
        shape = J.eval_shape(lambda: op(jnp, lax, None))

        def kernel(o_ref):
            o_ref[...] = op(jnp, lax, None)
        return P.pallas_call(kernel, out_shape=shape, interpret=True), ()
    shape = out or J.eval_shape(lambda v: op(jnp, lax, v),
                                J.ShapeDtypeStruct(x.shape, x.dtype))
    specs = {} if x.ndim else {"in_specs": [P.BlockSpec(memory_space=T.SMEM)]}

    def kernel(x_ref, o_ref):
        o_ref[...] = op(jnp, lax, x_ref[...])
    return P.pallas_call(kernel, out_shape=shape, interpret=True, **specs), (x,)


def reshape_to_scalar(J, P, T):                      # test_reshape_to_scalar
    jnp = J.numpy

    def kernel(x_ref, o_ref):
        o_ref[...] = jnp.zeros_like(o_ref)
        s = jnp.reshape(x_ref[1:2, 0:1], ())
        o_ref[s] = jnp.ones_like(o_ref[0]) * s
    call = P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((8, 128), jnp.int32),
                         interpret=True)
    return call, (np.arange(16, dtype=np.int32).reshape(4, 4),)


def num_programs(J, P, T):                           # test_num_programs
    def kernel(o_ref):
        o_ref[P.program_id(0)] = P.num_programs(0)
    return P.pallas_call(kernel, out_specs=P.BlockSpec(memory_space=T.SMEM),
                         out_shape=J.ShapeDtypeStruct((4,), "int32"), grid=4,
                         interpret=True), ()


def where_broadcasting(J, P, T, ii, oi):              # test_where_broadcasting
    jnp = J.numpy

    def copyitem(x_ref, in_idx_ref, out_idx_ref, o_ref):
        mask = (jnp.arange(o_ref.shape[0]) == out_idx_ref[()])[:, None, None]
        o_ref[...] = jnp.where(mask, x_ref[in_idx_ref[()]], 0)
    call = P.pallas_call(copyitem, in_specs=[P.BlockSpec(),
                                             P.BlockSpec(memory_space=T.SMEM),
                                             P.BlockSpec(memory_space=T.SMEM)],
                         out_shape=J.ShapeDtypeStruct((4, 2, 2), "float32"),
                         interpret=True)
    x = np.arange(7 * 2 * 2.0, dtype=np.float32).reshape(7, 2, 2)
    return call, (x, np.int32(ii), np.int32(oi))


def dot(J, P, T, lhs, rhs, dtype, trans_x, trans_y):  # test_dot
    jnp = J.numpy
    fl, fr = (lhs[::-1] if trans_x else lhs), (rhs[::-1] if trans_y else rhs)

    def kernel(x_ref, y_ref, o_ref):
        lp, rp = ("km" if trans_x else "mk"), ("nk" if trans_y else "kn")
        o_ref[:, :] = jnp.einsum(f"{lp},{rp}->mn", x_ref[:, :], y_ref[:, :],
                                 preferred_element_type=jnp.float32).astype(o_ref.dtype)
    call = P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((fl[0], fr[1]), dtype),
                         interpret=True)
    return call, (_rand(0, lhs, dtype), _rand(1, rhs, dtype))


def broadcasted_load_store(J, P, T):                  # test_broadcasted_load_store
    jnp = J.numpy
    m, n = 16, 32

    def kernel(x_ref, o_ref):
        idx = (jnp.arange(m)[:, None], jnp.arange(n)[None, :])
        o_ref[idx] = x_ref[idx] + 1.0
    return P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((m, n), "float32"),
                         interpret=True), (_rand(0, (m, n), "float32"),)


def swap(J, P, T, masked):                            # test_swap / test_masked_swap
    sw = _swap_of(P)
    m, n = 16, 32

    def kernel(*refs):
        if masked:
            _, _2, mask_ref, x_ref, y_ref = refs
            y = sw(y_ref, (slice(None),), x_ref[:], mask=mask_ref[:])
        else:
            _, _2, x_ref, y_ref = refs
            y = sw(y_ref, (slice(None),), x_ref[:])
        x_ref[:] = y
    call = P.pallas_call(kernel, out_shape=(J.ShapeDtypeStruct((m, n), "float32"),) * 2,
                         input_output_aliases={0: 0, 1: 1}, interpret=True)
    x, y = _rand(0, (m, n), "float32"), _rand(1, (m, n), "float32")
    mask = np.random.default_rng(2).integers(0, 2, (m, n)).astype(bool)
    return call, ((x, y, mask) if masked else (x, y))


def _swap_of(P):
    """JAX's test calls jax._src.pallas.primitives.swap (mjax: pl.swap)."""
    if P.__name__.startswith("jax."):
        from jax._src.pallas import primitives
        return primitives.swap
    return P.swap


def masked_oob_swap_slice(J, P, T, start):            # test_masked_oob_swap_slice
    sw = _swap_of(P)
    m, n = 32, 16

    def kernel(_, _2, mask_ref, start_ref, x_ref, y_ref):
        x, mask = x_ref[:], mask_ref[:]
        x_ref[:] = sw(y_ref, (P.dslice(start_ref[()], n)), x, mask=mask)
    call = P.pallas_call(
        kernel, in_specs=[P.BlockSpec(), P.BlockSpec(), P.BlockSpec(),
                          P.BlockSpec(memory_space=T.SMEM)],
        out_shape=(J.ShapeDtypeStruct((n,), "float32"),
                   J.ShapeDtypeStruct((m,), "float32")),
        input_output_aliases={0: 0, 1: 1}, interpret=True)
    x, y = _rand(0, (n,), "float32"), _rand(1, (m,), "float32")
    mask = np.arange(n) + start < m
    return call, (x, y, mask, np.int32(start))


def reduce_only_dim(J, P, T):                         # test_reduce_only_dim
    jnp = J.numpy

    def kernel(x_ref, y_ref):
        y_ref[...] = jnp.sum(x_ref[...], axis=-1)
    return P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((), "float32"),
                         out_specs=P.BlockSpec(memory_space=T.SMEM),
                         interpret=True), (_rand(0, (32,), "float32"),)


def array_reduce(J, P, T, op, dtype, axis):           # test_array_reduce (one key)
    f = fn_of(J, op)
    m, n = 32, 8
    if _np_dtype(dtype).kind in "iu":
        x = np.random.default_rng(0).permutation(m * n).astype(dtype).reshape(m, n)
    else:
        x = _rand(0, (m, n), dtype)
    out = J.eval_shape(lambda v: f(v, axis=axis), J.ShapeDtypeStruct(x.shape, x.dtype))
    ax = (axis,) if isinstance(axis, int) else axis
    grid = tuple(a for i, a in enumerate((m, n)) if i not in ax)

    def kernel(x_ref, y_ref):
        y_ref[...] = f(x_ref[...], axis=axis)
    return P.pallas_call(kernel, out_shape=out, grid=grid, interpret=True), (x,)


def bitcast_scalar(J, P, T):                          # test_bitcast_convert_type_scalar
    def kernel(x_ref, y_ref):
        y_ref[...] = J.lax.bitcast_convert_type(x_ref[...], "float32")
    return P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((), "float32"),
                         in_specs=[P.BlockSpec(memory_space=T.SMEM)],
                         out_specs=P.BlockSpec(memory_space=T.SMEM),
                         interpret=True), (np.int32(42),)


def debug_print(J, P, T):                             # OpsInterpretTest.test_debug_print
    def kernel(x_ref, o_ref):
        J.debug.print("x = {}", x_ref)
    return P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((2,), "float32"),
                         interpret=True), (np.array([4.2, 2.4], np.float32),)


def dot_general(J, P, T, xs, ys, dims, dtype="float32", perms=(None, None), pet=None):
    """test_dot_dims_batched_simple_dot_general, test_dot_general_* ,
    test_matrix_array_like_dot_general, test_dot_general_with_1d_lhs,
    test_jnp_einsum_grad_y_pallas (dims=None: einsum 'mk,mn->kn')."""
    jnp, lax = J.numpy, J.lax
    xp, yp = perms

    def f(x, y):
        if dims is None:
            return jnp.einsum("mk,mn->kn", x, y)
        x = jnp.transpose(x, xp) if xp else x
        y = jnp.transpose(y, yp) if yp else y
        return lax.dot_general(x, y, dimension_numbers=dims, preferred_element_type=pet)
    out = J.eval_shape(f, J.ShapeDtypeStruct(xs, dtype), J.ShapeDtypeStruct(ys, dtype))

    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = f(x_ref[...], y_ref[...])
    if dims is None:
        args = (np.arange(np.prod(xs), dtype=np.float32).reshape(xs),
                np.arange(np.prod(ys), dtype=np.float32).reshape(ys))
    else:   # (bfloat16-exact values: the products are exact, the sums' order aside)
        args = tuple(_rand(i, s, "bfloat16").astype(dtype) for i, s in enumerate((xs, ys)))
    return P.pallas_call(kernel, out_shape=out, interpret=True), args


def strided_load(J, P, T):                            # test_strided_load
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[::4]
    return P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((4, 4), "float32"),
                         interpret=True), (np.arange(64, dtype=np.float32).reshape(16, 4),)


# ---- indexing_test.py (IndexerOpsInterpretTest, AdvancedIndexerOpsInterpretTest) --------
def multi_indexing(J, P, T):                          # test_multi_indexing_interpreter_only
    jnp = J.numpy

    def permute(left, right, left_out_ref, right_out_ref):
        lo = jnp.zeros_like(left)
        lo = lo.at[:, 0].set(left[:, 0]).at[:, 1].set(right[:, 0])
        lo = lo.at[:, 2:].set(left[:, 1:-1])
        ro = jnp.zeros_like(right)
        ro = ro.at[:, :-1].set(right[:, 1:]).at[:, -1].set(left[:, -1])
        left_out_ref[...] = lo
        right_out_ref[...] = ro

    def invoke(x_ref, y_ref, xo_ref, yo_ref):
        n = x_ref.shape[-1]
        permute(*(r.at[: n // 2, : n // 2] for r in (x_ref, y_ref, xo_ref, yo_ref)))
    spec = P.BlockSpec((8, 8), lambda i: (0, 0))
    call = P.pallas_call(J.jit(invoke), grid=(1,),
                         out_shape=[J.ShapeDtypeStruct((8, 8), "float32")] * 2,
                         in_specs=[spec, spec], out_specs=[spec, spec], interpret=True)
    x = _rand(0, (8, 8), "float32")
    y = _rand(1, (8, 8), "float32")
    return (lambda a, b: [o[:4, :4] for o in call(a, b)]), (x, y)


def multi_indexing_destination_ref(J, P, T):         # test_multi_indexing_destination_ref
    jnp = J.numpy

    def kernel(x_ref, o_ref):
        o_ref[...] = jnp.zeros_like(o_ref)
        o_ref.at[P.ds(0, 8)].at[0].at[P.ds(0, 4), P.ds(0, 4)][...] = x_ref[...]
    return P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct((16, 16, 16), "float32"),
                         interpret=True), (_rand(0, (4, 4), "float32"),)


def ellipsis_indexing(J, P, T):                       # test_ellipsis_indexing_iterpret_only
    jnp = J.numpy

    def kernel(left, right, new_left, new_right):
        k = left.shape[-1]
        new_left[...] = jnp.concatenate([left[..., :1], right[..., :1], left[..., 1:k - 1]],
                                        axis=1)
        new_right[...] = jnp.concatenate([right[..., 1:k], left[..., k - 1:k]], axis=1)
    spec = P.BlockSpec((2, 3), lambda i: (0, 0))
    call = P.pallas_call(kernel, grid=(1,),
                         out_shape=[J.ShapeDtypeStruct((2, 3), "float32")] * 2,
                         in_specs=[spec, spec], out_specs=[spec, spec], interpret=True)
    return call, (np.arange(1, 7, dtype=np.float32).reshape(2, 3),
                  np.arange(7, 13, dtype=np.float32).reshape(2, 3))


def dynamic_2nd_minor(J, P, T, which):
    """test_{load,store}[_one_row]_with_dynamic_2nd_minor_index."""
    jnp = J.numpy
    shapes = {"load": ((32, 128), (10, 128)), "store": ((10, 128), (32, 128)),
              "load_row": ((4, 16, 256), (4, 1, 256)),
              "store_row": ((4, 1, 256), (4, 16, 256))}
    xs, os_ = shapes[which]
    start = 3 if "row" in which else 2

    def kernel(x_ref, idx, y_ref):
        if which == "load":
            y_ref[...] = x_ref[P.ds(idx[0], 10)]
        elif which == "store":
            y_ref[P.ds(idx[0], 10)] = x_ref[...]
        elif which == "load_row":
            y_ref[...] = x_ref[:, P.ds(idx[0], 1), :]
        else:
            y_ref[:, P.ds(idx[0], 1), :] = x_ref[...]
    call = P.pallas_call(kernel, out_shape=J.ShapeDtypeStruct(os_, jnp.int32),
                         grid_spec=T.PrefetchScalarGridSpec(
                             num_scalar_prefetch=0,
                             in_specs=[P.BlockSpec(memory_space=T.VMEM),
                                       P.BlockSpec(memory_space=T.SMEM)]),
                         interpret=True)
    x = np.arange(np.prod(xs), dtype=np.int32).reshape(xs)
    if which.startswith("store"):   # (the rest of the output is not written: JAX's test
        sl = (slice(start, start + 10),) if which == "store" else \
            (slice(None), slice(start, start + 1))    # reads only the window)
        return (lambda a, i: call(a, i)[sl]), (x, np.array([start], np.int32))
    return call, (x, np.array([start], np.int32))


ADVANCED = [   # (JAX's in_shape, indexing function): _ADVANCED_INDEXER_TEST_CASES
    ((3, 2), lambda r, a, b, c: r[2]),
    ((12, 12), lambda r, a, b, c: r[::4, ::4]),
    ((16, 16), lambda r, a, b, c: r[1:14:2, 2:13:4]),
    ((8, 2), lambda r, a, b, c: r[1::3, :]),
    ((4, 3), lambda r, a, b, c: r[a]),
    ((4, 3, 2), lambda r, a, b, c: r[c, c]),
    ((4, 3), lambda r, a, b, c: r[2, a]),
    ((4, 3), lambda r, a, b, c: r[a, 2]),
    ((4, 3), lambda r, a, b, c: r[a, :]),
    ((4, 3), lambda r, a, b, c: r[:, a]),
    ((6, 8, 3), lambda r, a, b, c: r[c, ::3]),
    ((8, 6, 3), lambda r, a, b, c: r[::3, c]),
    ((8, 8, 3), lambda r, a, b, c: r[::4, ::2, a]),
    ((8, 8, 3), lambda r, a, b, c: r[::4, a, ::2]),
    ((8, 8, 3, 7), lambda r, a, b, c: r[b, ::4, a, ::2]),
    ((3, 8, 8, 7), lambda r, a, b, c: r[b, a, ::4, ::2]),
    ((16, 3, 6, 2), lambda r, a, b, c: r[::4, a, 1::2, b]),
    ((8, 8, 3, 6), lambda r, a, b, c: r[b, ::4, a, a]),
    ((8, 8, 3, 6), lambda r, a, b, c: r[b[:, None], ::4, a[None], a[:, None]]),
    ((5, 8, 8, 3), lambda r, a, b, c: r[2, ::4, ::2, a]),
    ((5, 8, 8, 3), lambda r, a, b, c: r[2, ::4, a, ::2]),
]


def advanced_indexer(J, P, T, case):                  # test_advanced_indexer
    shape, f = ADVANCED[case]
    x = np.arange(np.prod(shape), dtype=np.float32).reshape(shape)
    a, b = np.array([1] * 5, np.int32), np.array([1, 2, 2, 2, 2], np.int32)
    c = np.array([1, 0, 2, 2, -1, 1], np.int32)
    out = J.eval_shape(lambda *v: f(*v), *(J.ShapeDtypeStruct(v.shape, v.dtype)
                                          for v in (x, a, b, c)))

    def kernel(x_ref, a_ref, b_ref, c_ref, o_ref):
        o_ref[...] = f(x_ref, a_ref[...], b_ref[...], c_ref[...])
    return P.pallas_call(kernel, out_shape=out, interpret=True), (x, a, b, c)
