"""The kernels of JAX 0.10.2's tests/pallas/pallas_test.py and pallas_vmap_test.py (their
*InterpretTest classes: interpret=True on the CPU), written once for both libraries: each
case is `case(J, P)` (J: jax or mjax, P its pallas module) returning (f, args, want):
f the program, args NumPy arrays, want NumPy's answer (None where JAX's test checks only
a shape or a raise). test_jax_pallas_tests.py runs them in both and compares."""
from __future__ import annotations

import functools

import numpy as np


def _rand(shape, seed=0, dtype=np.float32):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def _sds(J, shape, dtype):
    return J.ShapeDtypeStruct(shape, dtype)


def _call(P, kernel, out_shape, **kw):
    return P.pallas_call(kernel, out_shape=out_shape, interpret=True, **kw)


def _add_one_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1.0


def _scalar_add_one(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


def _copy_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


# ---- PallasTest ------------------------------------------------------------------------
def add_one(J, P):
    x = np.ones((128,), np.float32)
    return _call(P, _add_one_kernel, _sds(J, x.shape, x.dtype)), [x], x + 1


def add_one_1d(J, P):
    x = np.ones((8 * 128,), np.float32)
    f = _call(P, _add_one_kernel, _sds(J, x.shape, x.dtype), grid=(8,),
              in_specs=[P.BlockSpec((128,), lambda i: (i,))],
              out_specs=P.BlockSpec((128,), lambda i: (i,)))
    return f, [x], x + 1


def add_one_2d(J, P):
    x = np.ones((64, 128), np.float32)
    f = _call(P, _add_one_kernel, _sds(J, x.shape, x.dtype), grid=(8,),
              in_specs=[P.BlockSpec((8, 128), lambda i: (i, 0))],
              out_specs=P.BlockSpec((8, 128), lambda i: (i, 0)))
    return f, [x], x + 1


def add_first(J, P):
    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = x_ref[...] + y_ref[0]
    x = np.arange(128, dtype=np.float32)
    y = np.flip(x).reshape(1, 128).copy()
    return _call(P, kernel, _sds(J, (128,), np.float32)), [x, y], x + y[0]


def add_xy_indexed(J, P):
    def kernel(x_ref, y_ref, o_ref):
        idx = y_ref[...].sum(dtype=y_ref.dtype)
        o_ref[...] = x_ref[idx]
    x = np.arange(4 * 128, dtype=np.float32).reshape(4, 128)
    y = np.zeros(128, np.int32)
    return _call(P, kernel, _sds(J, (128,), np.float32)), [x, y], x[0]


def bool_array(J, P):
    def kernel(x_ref, o_ref):
        o_ref[...] = J.numpy.logical_or(x_ref[...], True)
    x = np.ones((8, 128), bool)
    return _call(P, kernel, _sds(J, x.shape, bool)), [x], np.ones_like(x)


def no_outputs(J, P):
    return _call(P, lambda x_ref: None, ()), [np.arange(256, dtype=np.int32)], ()


def out_shape_is_singleton_tuple(J, P):
    x = np.arange(1024, dtype=np.int32).reshape((8, 128))
    f = _call(P, _scalar_add_one, (_sds(J, x.shape, x.dtype),))
    return f, [x], (x + 1,)


def out_shape_is_list(J, P):
    x = np.arange(1024, dtype=np.int32).reshape((8, 128))
    f = _call(P, _scalar_add_one, [_sds(J, x.shape, x.dtype)])
    return f, [x], (x + 1,)


def _pid_kernel(J, P):
    def kernel(o_ref):
        o_ref[...] = J.numpy.full(o_ref.shape, P.program_id(0))
    return kernel


def out_shape_no_grid(J, P):
    def kernel(o_ref):
        o_ref[...] = J.numpy.zeros_like(o_ref)
    return _call(P, kernel, _sds(J, (128,), np.int32)), [], np.zeros(128, np.int32)


def block_spec_variants(J, P, which):
    spec = {"none": None, "no_shape_no_map": P.BlockSpec(),
            "no_shape": P.BlockSpec(None, lambda i: i),
            "no_index_map": P.BlockSpec((128,))}[which]
    kw = {} if spec is None else {"out_specs": spec}
    f = _call(P, _pid_kernel(J, P), _sds(J, (128,), np.int32), grid=(1,), **kw)
    return f, [], np.zeros(128, np.int32)


# ---- PallasCallTest --------------------------------------------------------------------
def block_spec_with_padding(J, P, shape, block):
    f = _call(P, _pid_kernel(J, P), _sds(J, shape, np.int32),
              grid=((shape[0] + block[0] - 1) // block[0],),
              out_specs=P.BlockSpec(block, lambda i: i))
    return f, [], np.arange(shape[0], dtype=np.int32) // block[0]


def block_spec_padding_is_nan(J, P, dtype):
    f = _call(P, _copy_kernel, _sds(J, (6,), dtype), grid=(1,),
              in_specs=[P.BlockSpec((6,), lambda i: 0)])
    pad = np.iinfo(np.int32).min if dtype == "int32" else np.nan
    return f, [np.full((3,), 42, dtype)], np.array([42] * 3 + [pad] * 3, dtype)


def block_spec_mapped_dimension(J, P):
    def kernel(x_ref, y_ref, o_ref):
        o_ref[:] = x_ref[:] + y_ref[:]
    f = _call(P, kernel, _sds(J, (4,), np.float32), grid=1,
              in_specs=[P.BlockSpec((None, 4), lambda _: (0, 0)),
                        P.BlockSpec((None, 4), lambda _: (1, 0))])
    xy = np.arange(8., dtype=np.float32).reshape((2, 4))
    return f, [xy, xy], xy[0] + xy[1]


def block_spec_valid_block_shapes(J, P, shape, block, dtype="int32"):
    grid = [(s + b - 1) // b for s, b in zip(shape, block)]
    x = np.arange(int(np.prod(shape)), dtype=dtype).reshape(shape)
    f = _call(P, _copy_kernel, _sds(J, shape, dtype), grid=grid,
              in_specs=[P.BlockSpec(block, lambda *ix: ix)],
              out_specs=P.BlockSpec(block, lambda *ix: ix))
    return f, [x], x


def const_args(J, P):
    to_store = np.arange(128, dtype=np.float32).reshape((1, 128))

    def kernel(src, dst):
        dst[0:1] = to_store
    f = _call(P, kernel, _sds(J, (64, 128), np.float32), grid=(2,),
              in_specs=[P.BlockSpec((8, 128), lambda i: (i, 0))],
              out_specs=P.BlockSpec((32, 128), lambda i: (i, 0)))
    return f, [np.arange(16 * 128, dtype=np.float32).reshape((16, 128))], ValueError


def matmul_block_spec(J, P, m, n, k, dtype, bm, bn, bk):
    jnp = J.numpy

    def kernel(x_ref, y_ref, o_ref):
        def body(i, acc):
            xb = x_ref[:, P.ds(i * bk, bk)]
            yb = y_ref[P.ds(i * bk, bk), :]
            return acc + jnp.dot(xb, yb, preferred_element_type=jnp.float32)
        acc = J.lax.fori_loop(0, k // bk, body, jnp.zeros(o_ref.shape, jnp.float32))
        o_ref[:, :] = acc.astype(o_ref.dtype)
    f = _call(P, kernel, _sds(J, (m, n), np.float32), grid=(m // bm, n // bn),
              in_specs=[P.BlockSpec((bm, k), lambda i, _: (i, 0)),
                        P.BlockSpec((k, bn), lambda _, j: (0, j))],
              out_specs=P.BlockSpec((bm, bn), lambda i, j: (i, j)))
    x, y = _rand((m, k), 1, dtype), _rand((k, n), 2, dtype)
    return f, [x, y], x.astype(np.float32) @ y.astype(np.float32)


def unused_ref(J, P):
    m, n = 16, 32
    jnp = J.numpy

    def kernel(_, o_ref):
        o_ref[jnp.arange(m)[:, None], jnp.arange(n)[None, :]] = jnp.ones_like(o_ref)
    f = _call(P, kernel, _sds(J, (m, n), np.float32))
    return f, [_rand((m, n))], np.ones((m, n), np.float32)


def using_pallas_slice(J, P):
    def kernel(x_ref, y_ref):
        y_ref[:4, :4] = x_ref[:4, :4]
    x = _rand((32, 4))
    return _call(P, kernel, _sds(J, (4, 4), np.float32)), [x], x[:4]


def pallas_call_under_disable_jit(J, P):
    f = _call(P, _add_one_kernel, _sds(J, (8,), np.float32))

    def run(x):
        with J.disable_jit():
            return f(x)
    x = np.arange(8, dtype=np.float32)
    return run, [x], x + 1


def integer_dot(J, P):
    def kernel(x_ref, y_ref, o_ref):
        o_ref[()] = J.numpy.dot(x_ref[()], y_ref[()], preferred_element_type=o_ref.dtype)
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, (32, 128)).astype(np.int8)
    y = rng.integers(-128, 128, (128, 64)).astype(np.int8)
    return (_call(P, kernel, _sds(J, (32, 64), np.int32)), [x, y],
            x.astype(np.int32) @ y.astype(np.int32))


def split(J, P, shape, parts, axis):
    x = _rand(shape)
    want = tuple(np.split(x, parts, axis))

    def kernel(x_ref, *o_refs):
        for o, part in zip(o_refs, J.numpy.split(x_ref[()], parts, axis)):
            o[...] = part
    out = [_sds(J, w.shape, w.dtype) for w in want]
    return _call(P, kernel, out), [x], list(want)


# ---- PallasCallElementIndexingTest ------------------------------------------------------
def block_spec_element(J, P, shape, block, want_rows):
    def kernel(o_ref):
        o_ref[...] = J.numpy.full(o_ref.shape, P.program_id(0))
    f = _call(P, kernel, _sds(J, shape, np.int32), grid=(2,),
              out_specs=P.BlockSpec(tuple(P.Element(*b) for b in block),
                                    lambda i: (8 * i, 0)))
    return f, [], np.repeat(np.array(want_rows, np.int32)[:, None], 128, axis=1)


def block_spec_element_padding_is_nan(J, P, dtype):
    f = _call(P, _copy_kernel, _sds(J, (6,), dtype), grid=(1,),
              in_specs=[P.BlockSpec((P.Element(6, (1, 2)),), lambda i: 0)])
    pad = np.iinfo(np.int32).min if dtype == "int32" else np.nan
    return f, [np.full((3,), 42, dtype)], np.array([pad, 42, 42, 42, pad, pad], dtype)


def element_indexing(J, P):
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[P.ds(0, 8)] + x_ref[P.ds(8, 8)]
    x = np.arange(128 * 128, dtype=np.float32).reshape(128, 128)
    f = _call(P, kernel, _sds(J, (120, 128), np.float32), grid=(15,),
              in_specs=(P.BlockSpec((P.Element(16), P.Element(128)),
                                    lambda i: (i * 8, 0)),),
              out_specs=P.BlockSpec((8, 128), lambda i: (i, 0)))
    want = np.concatenate([x[i * 8:i * 8 + 8] + x[i * 8 + 8:i * 8 + 16]
                           for i in range(15)])
    return f, [x], want


def unblocked_indexing_with_padding(J, P):
    def kernel(x_ref, y_ref):
        y_ref[...] = x_ref[P.ds(0, 8)]
    x = np.arange(8 * 128, dtype=np.float32).reshape(8, 128)
    f = _call(P, kernel, _sds(J, (8, 128), np.float32), grid=(1,),
              in_specs=(P.BlockSpec((P.Element(16, (0, 8)), P.Element(128)),
                                    lambda i: (0, 0)),),
              out_specs=P.BlockSpec((8, 128), lambda i: (0, 0)))
    return f, [x], x


# ---- ApiErrorTest: each returns (f, args, the exception class JAX raises) -----------------
_A = np.arange(256, dtype=np.int32)
_X = np.arange(8 * 128, dtype=np.int32).reshape((8, 128))


def _nothing(*refs):
    return None


def api_error(J, P, which):
    a, x, BS = _A, _X, P.BlockSpec

    def my_kernel(x_ref, o1_ref, o2_ref):
        return 0

    def two_results():
        return 0, 0

    cases = {
        "kernel_args_mismatch": (lambda: _call(P, lambda x_ref: None, a), [a], TypeError),
        "kernel_returns_something": (lambda: _call(P, my_kernel, (a, a)), [a], ValueError),
        "kernel_no_signature_returns": (lambda: _call(P, lambda *r: 0, a), [a],
                                        ValueError),
        "in_specs_not_a_sequence": (lambda: _call(P, _nothing, a,
                                                  in_specs=BS((4,), lambda: 0)),
                                    [a], ValueError),
        "in_specs_mismatch_inputs": (
            lambda: _call(P, lambda x_ref, o_ref: None, a,
                          in_specs=[BS((4,), lambda: 0), BS((4,), lambda: 0)]),
            [a, {"a": a}], ValueError),
        "index_map_wrong_number_of_arguments": (
            lambda: _call(P, _nothing, a, in_specs=[BS((4,), lambda i, j: 0)]), [a],
            TypeError),
        "index_map_wrong_number_of_results": (
            lambda: _call(P, _nothing, a, in_specs=[BS((4,), two_results)]), [a],
            ValueError),
        "index_map_pytree_wrong_number_of_results": (
            lambda: _call(P, _nothing, a, in_specs=[
                {"one": BS((4,), two_results), "two": BS((8,), two_results)}]),
            [{"one": a, "two": a}], ValueError),
        "index_map_wrong_return_type": (
            lambda: _call(P, _nothing, a, grid=(1,),
                          in_specs=[BS((4,), lambda i: 5.)]), [a], ValueError),
        "index_map_wrong_return_shape": (
            lambda: _call(P, _nothing, a, grid=(1,), in_specs=[
                BS((4,), lambda i: J.numpy.arange(4, dtype=np.int32))]), [a], ValueError),
        "index_map_captures_consts": (
            lambda: _call(P, _nothing, a, grid=(1,), in_specs=[
                BS((4,), lambda i: J.numpy.array(np.array([0], np.int32))[i])]),
            [a], ValueError),
        "out_specs_mismatch_shape": (
            lambda: _call(P, _nothing, [a, a], out_specs=[BS((6,), lambda i: i)]), [a],
            ValueError),
        "block_shape_ndim_mismatch_in": (
            lambda: _call(P, _nothing, [a], in_specs=[BS((1, 1), lambda: (0, 0))]), [a],
            ValueError),
        "block_shape_ndim_mismatch_out": (
            lambda: _call(P, _nothing, [a], out_specs=[BS((1, 1), lambda: 0)]), [a],
            ValueError),
        "aliases_input_out_of_range": (
            lambda: _call(P, _nothing, [x], input_output_aliases={2: 0}), [x, x],
            ValueError),
        "aliases_output_out_of_range": (
            lambda: _call(P, _nothing, [x], input_output_aliases={1: 1}), [x, x],
            ValueError),
        "aliases_shape_mismatch": (
            lambda: _call(P, _nothing, [x], input_output_aliases={1: 0}),
            [x, np.concatenate([x, x])], ValueError),
        "aliases_dtype_mismatch": (
            lambda: _call(P, _nothing, [_sds(J, x.shape, np.float32)],
                          input_output_aliases={1: 0}), [x, x], ValueError),
        "ref_to_jax": (lambda: _call(P, _ref_to_jax(J), _sds(J, (8, 16), np.float32)),
                       [_rand((8, 32), 1), _rand((32, 16), 2)], ValueError),
        "writing_ref_to_ref": (lambda: _call(P, _ref_to_ref, _sds(J, (8, 128), np.float32)),
                               [np.ones((8, 128), np.float32)], ValueError),
    }
    make, args, exc = cases[which]
    return (lambda *xs: make()(*xs)), args, exc


def _ref_to_jax(J):
    def kernel(x_ref, y_ref, o_ref):
        o_ref[...] = J.lax.dot_general(x_ref, y_ref, (((2), (1)), ((1,), (2,))))
    return kernel


def _ref_to_ref(x_ref, o_ref):
    o_ref[...] = x_ref


# ---- PallasCallAutodifferentiationTest -----------------------------------------------------
AD_IMPLS = ["square", "square_pow", "square_fn", "add_one", "exp", "reciprocal",
            "one_over_x", "recip_exp_sq", "exp_neg_sq", "sin", "tanh"]


def _ad_impl(J, name):
    jnp = J.numpy
    return {"square": lambda x: x * x, "square_pow": lambda x: x ** 2,
            "square_fn": jnp.square, "add_one": lambda x: x + 1.0, "exp": jnp.exp,
            "reciprocal": jnp.reciprocal, "one_over_x": lambda x: 1.0 / x,
            "recip_exp_sq": lambda x: jnp.reciprocal(jnp.exp(x) ** 2),
            "exp_neg_sq": lambda x: jnp.exp(-x) ** 2, "sin": jnp.sin,
            "tanh": jnp.tanh}[name]


def jvp(J, P, name):
    impl = _ad_impl(J, name)

    def kernel(x_ref, o_ref):
        o_ref[()] = impl(x_ref[()])
    f = _call(P, kernel, _sds(J, (), np.float32))
    x, t = np.float32(0.7), np.float32(-1.3)
    return (lambda x, t: J.jvp(f, (x,), (t,))), [x, t], None


def pallas_around_grad(J, P, name):
    impl = _ad_impl(J, name)

    def kernel(x_ref, o_ref):
        o_ref[()] = J.grad(impl)(x_ref[()])
    return _call(P, kernel, _sds(J, (), np.float32)), [np.float32(0.7)], None


def jvp_slice(J, P, name):
    impl, jnp = _ad_impl(J, name), J.numpy

    def kernel(x_ref, o_ref):
        x = x_ref[jnp.arange(2)]
        o_ref[jnp.arange(2)] = jnp.zeros(2)
        o_ref[2 + jnp.arange(2)] = impl(x)
    f = _call(P, kernel, _sds(J, (4,), np.float32))
    return (lambda x, t: J.jvp(f, (x,), (t,))), [_rand((8,), 1), _rand((8,), 2)], None


def custom_jvp_call(J, P):
    jnp = J.numpy

    @functools.partial(J.custom_jvp, nondiff_argnums=(1,))
    def softmax(x, axis=-1):
        e = jnp.exp(x - jnp.max(x, axis, keepdims=True))
        return e / jnp.sum(e, axis, keepdims=True)

    @softmax.defjvp
    def _(axis, primals, tangents):
        (x,), (t,) = primals, tangents
        y = softmax(x, axis)
        return y, y * (t - (y * t).sum(axis, keepdims=True))

    def kernel(x_ref, y_ref):
        y_ref[:] = softmax(x_ref[:])
    x = _rand((16, 32))
    e = np.exp(x - x.max(-1, keepdims=True))
    return _call(P, kernel, _sds(J, x.shape, x.dtype)), [x], e / e.sum(-1, keepdims=True)


# ---- PallasOutOfBoundsInterpretTest ----------------------------------------------------------
def out_of_bounds_matmul(J, P, masked):
    jnp, b = J.numpy, 32
    x, y = _rand((b, b + 1), 1), _rand((b + 1, b), 2)

    def kernel(x_ref, y_ref, o_ref):
        @P.when(P.program_id(2) == 0)
        def _():
            o_ref[...] = jnp.zeros_like(o_ref)
        if not masked:
            o_ref[...] += x_ref[...] @ y_ref[...]
            return
        n = jnp.minimum(x.shape[1] - P.program_id(2) * b, b)
        mask = jnp.repeat(jnp.tril(jnp.ones_like(x_ref[:, :]))[n - 1][None, :], b, axis=0)
        o_ref[:, :] += jnp.where(mask, x_ref[:, :], 0.0) @ jnp.where(mask.T, y_ref[:, :],
                                                                       0.0)
    f = _call(P, kernel, _sds(J, (b, b), np.float32), grid=(1, 1, 2),
              in_specs=[P.BlockSpec((b, b), lambda i, j, k: (i, k)),
                        P.BlockSpec((b, b), lambda i, j, k: (k, j))],
              out_specs=P.BlockSpec((b, b), lambda i, j, k: (i, j)))
    return f, [x, y], (x @ y if masked else np.full((b, b), np.nan, np.float32))


# ---- PallasCallNamedGridTest ------------------------------------------------------------------
def named_grid(J, P, reordered, query_size=False):
    lax = J.lax

    def kernel(x_ref, y_ref):
        if query_size:      # (JAX's test asserts these while tracing)
            assert (lax.axis_size("i"), lax.axis_size("j")) == (2, 4)
        y_ref[...] = x_ref[...]
    if reordered:
        x = np.arange(4 * 16 * 128, dtype=np.int32).reshape((4, 16, 128))
        spec = P.BlockSpec((None, 8, 128), lambda i, j: (i, j, 0))
        grid = (("j", 4), ("i", 2))
    else:
        x = np.arange(2 * 8 * 128, dtype=np.int32).reshape((2, 8, 128))
        spec = P.BlockSpec((None, 8, 128), lambda i: (i, 0, 0))
        grid = (("i", 2),)
    f = _call(P, kernel, _sds(J, x.shape, x.dtype), in_specs=[spec], out_specs=spec,
              grid=grid)
    return f, [x], x


# ---- pallas_vmap_test.py: PallasCallVmapTest ---------------------------------------------
def _pid_add_one(P):
    def kernel(x_ref, o_ref):
        i = P.program_id(0)
        o_ref[i] = x_ref[i] + 1
    return kernel


def vmap_case(J, P, which):
    V, jnp, i32 = J.vmap, J.numpy, np.int32
    add_one = _call(P, _scalar_add_one, _sds(J, (), i32))
    r = np.arange
    if which == "simple":
        return V(add_one), [r(8, dtype=i32)], r(1, 9, dtype=i32)
    if which == "in_axes_None":
        def add(x_ref, y_ref, o_ref):
            o_ref[()] = x_ref[()] + y_ref[()]
        f = V(_call(P, add, _sds(J, (), i32)), in_axes=(0, None))
        return f, [r(8, dtype=i32), np.int32(1)], r(1, 9, dtype=i32)
    if which == "double":
        x = r(8, dtype=i32).reshape((4, 2))
        return V(V(add_one)), [x], x + 1
    if which == "quadruple":
        x = r(15 * 8, dtype=i32).reshape((5, 3, 4, 2))
        return V(V(V(V(add_one)))), [x], x + 1
    if which == "quadruple_batched":
        f = _call(P, _pid_add_one(P), _sds(J, (7,), i32), grid=(7,))
        x = r(15 * 8 * 7, dtype=i32).reshape((5, 3, 4, 2, 7))
        return V(V(V(V(f)))), [x], x + 1
    if which == "slicing":
        f = _call(P, _pid_add_one(P), _sds(J, (2,), i32), grid=(2,))
        x = r(8, dtype=i32).reshape((4, 2))
        return V(f), [x], x + 1
    if which in ("slicing_axes_1_1", "slicing_axes_1_0"):
        f = _call(P, _pid_add_one(P), _sds(J, (2,), i32), grid=(2,))
        x = r(8, dtype=i32).reshape((2, 4))
        out_axes = int(which[-1])
        return V(f, in_axes=1, out_axes=out_axes), [x], (x + 1 if out_axes else (x + 1).T)
    if which == "double_slicing_sin":
        def sin(x_ref, o_ref):
            i = P.program_id(0)
            o_ref[i] = jnp.sin(x_ref[i])
        f = _call(P, sin, _sds(J, (4,), np.float32), grid=(4,))
        x = r(64, dtype=np.float32).reshape((8, 4, 2))
        return V(V(f, in_axes=1), in_axes=0), [x], np.sin(x).transpose(0, 2, 1)
    if which == "aliases":
        def add(x_ref, _, o_ref):
            o_ref[()] = x_ref[()] + o_ref[()] + 1
        f = _call(P, add, _sds(J, (), i32), input_output_aliases={1: 0}, grid=())
        return V(f, in_axes=(0, None)), [r(8, dtype=i32), np.int32(1)], r(2, 10, dtype=i32)
    if which == "aliases_different_axes":
        f = _call(P, _scalar_add_one, _sds(J, (4,), i32), input_output_aliases={0: 0},
                  grid=())
        x = r(8, dtype=i32).reshape((4, 2))
        return V(f, in_axes=1), [x], (x + 1).T
    if which == "const_args":
        to_store = np.arange(128, dtype=np.float32).reshape((1, 128))

        def kernel(src, dst):
            dst[0:1] = to_store
        f = V(_call(P, kernel, _sds(J, (64, 128), np.float32), grid=(2,),
                    in_specs=[P.BlockSpec((8, 128), lambda i: (i, 0))],
                    out_specs=P.BlockSpec((32, 128), lambda i: (i, 0))))
        return f, [np.arange(4 * 16 * 128, dtype=np.float32).reshape((4, 16, 128))], \
            ValueError
    raise KeyError(which)


VMAP_CASES = ["simple", "in_axes_None", "double", "quadruple", "quadruple_batched",
              "slicing", "slicing_axes_1_1", "slicing_axes_1_0", "double_slicing_sin",
              "aliases", "aliases_different_axes", "const_args"]


# ---- beyond JAX's tests: integer-array ref indexing (a gather and a scatter) -------------
def ref_gather_scatter(J, P):
    jnp = J.numpy
    perm = np.array([5, 0, 7, 2, 2, 1], np.int32)

    def kernel(x_ref, i_ref, o_ref):
        idx = i_ref[...]
        o_ref[...] = jnp.zeros_like(o_ref)
        o_ref[idx[:3], 1:] = x_ref[idx[3:], 1:] * 2.0     # (rows 5, 0, 7 from 2, 2, 1)
        o_ref[idx, 0] = x_ref[1, idx]
    x = _rand((8, 8), 3)
    want = np.zeros((8, 8), np.float32)
    want[perm[:3], 1:] = x[perm[3:], 1:] * 2
    want[perm, 0] = x[1, perm]
    return _call(P, kernel, _sds(J, (8, 8), np.float32)), [x, perm], want
