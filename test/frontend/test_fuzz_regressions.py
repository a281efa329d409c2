"""Regression tests of what the differential fuzzer (test_differential_fuzz.py) found,
each against jax: values, dtypes, weak types and error classes, eagerly and under jit,
grad and vmap."""
import numpy as np
import pytest

import jax
import mjax
from sweep_util import compare

RNG = np.random.default_rng(26)


def _complex(*shape):
    return (RNG.normal(size=shape) + 1j * RNG.normal(size=shape)).astype(np.complex64)


# ---- lax ---------------------------------------------------------------------------


@pytest.mark.parametrize("fn", [
    lambda L, x: L.lax.reshape(x, np.shape(x)),
    lambda L, x: L.lax.broadcast_in_dim(x, np.shape(x), tuple(range(np.ndim(x)))),
    lambda L, x: L.lax.squeeze(x, ()),
    lambda L, x: L.lax.expand_dims(x, ()),
    lambda L, x: L.lax.transpose(x, tuple(range(np.ndim(x)))),
    lambda L, x: L.lax.concatenate([x], 0) if np.ndim(x) else L.lax.select_n(True, x),
    lambda L, x: L.lax.select_n(np.int32(0), x),
], ids=["reshape", "broadcast_in_dim", "squeeze", "expand_dims", "transpose",
        "concatenate", "select_n"])
@pytest.mark.parametrize("x", [np.float32([1, 2]), np.float32(3), 2.5, 7],
                         ids=["array", "numpy_scalar", "float", "int"])
def test_unchanging_lax_ops_return_arrays(fn, x):
    # An op that leaves its operand as it is still returns an Array (weak for a Python
    # scalar), never the NumPy value it was given.
    got, want = fn(mjax, x), fn(jax, x)
    assert isinstance(got, mjax.Array) and isinstance(want, jax.Array)
    compare(lambda x: fn(mjax, x), lambda x: fn(jax, x), (x,))


def test_top_k_and_approx_k_return_lists():
    x = RNG.normal(size=(3, 5)).astype(np.float32)
    for name in ("top_k", "approx_max_k", "approx_min_k"):
        got, want = getattr(mjax.lax, name)(x, 2), getattr(jax.lax, name)(x, 2)
        assert type(got) is type(want) is list
        compare(lambda x: getattr(mjax.lax, name)(x, 2),
                lambda x: getattr(jax.lax, name)(x, 2), (x,), modes=("eager", "jit", "vmap"))


@pytest.mark.parametrize("lhs_dtype, rhs_dtype, pet", [
    (np.complex64, np.complex64, np.int32),    # the product's real part, then converted
    (np.int8, np.int8, np.int32),
    (np.float16, np.float16, np.float32),
    (np.float32, np.int32, np.float32),
])
def test_dot_general_preferred_type_computes_like_jax(lhs_dtype, rhs_dtype, pet):
    # Operands of one dtype go to XLA's dot as they are (JAX's CPU lowering); converting
    # complex operands to int first gave zeros.
    lhs = (RNG.normal(size=(2, 3, 4)) * 3).astype(lhs_dtype)
    rhs = (RNG.normal(size=(2, 4, 2)) * 3).astype(rhs_dtype)
    if np.issubdtype(lhs_dtype, np.complexfloating):
        lhs, rhs = lhs + 2.5j * lhs.real, rhs - 1.5j * rhs.real
    dims = (((2,), (1,)), ((0,), (0,)))
    compare(lambda a, b: mjax.lax.dot_general(a, b, dims, preferred_element_type=pet),
            lambda a, b: jax.lax.dot_general(a, b, dims, preferred_element_type=pet),
            (lhs, rhs), modes=("eager", "jit", "vmap"), rtol=1e-3)


@pytest.mark.parametrize("kw", [dict(window_strides=(1, 2), padding="SAME",
                                     rhs_dilation=(2, 1)),
                                dict(window_strides=(2, 1), padding=((1, 0), (0, 2)),
                                     lhs_dilation=(1, 2), feature_group_count=3)])
def test_complex_convolution_is_jaxs_three_real_ones(kw):
    # Bit for bit JAX's lowering (Gauss's product of three real convolutions), infinities
    # and NaNs included; XLA's complex convolution rounded (and propagated them) otherwise.
    x, w = _complex(2, 3, 6, 5), _complex(6, 3 // kw.get("feature_group_count", 1), 3, 2)
    x[0, 0, 0, 0], w[1, 0, 1, 1] = np.inf, np.nan + 1j
    m = lambda a, b: mjax.lax.conv_general_dilated(a, b, **kw)  # noqa: E731
    j = lambda a, b: jax.lax.conv_general_dilated(a, b, **kw)  # noqa: E731
    for got, want in ((m(x, w), j(x, w)), (mjax.jit(m)(x, w), jax.jit(j)(x, w))):
        np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    x[0, 0, 0, 0] = 1.0
    w[1, 0, 1, 1] = 0.5j
    loss = lambda L, f: lambda a, b: L.numpy.sum(L.numpy.real(f(a, b) * (1 + 2j)))  # noqa
    got = mjax.jit(mjax.grad(loss(mjax, m), argnums=(0, 1)))(x, w)
    want = jax.jit(jax.grad(loss(jax, j), argnums=(0, 1)))(x, w)
    for g, v in zip(got, want):
        np.testing.assert_allclose(np.asarray(g), np.asarray(v), rtol=1e-5, atol=1e-5)


# ---- vmap --------------------------------------------------------------------------


@pytest.mark.parametrize("fn, args", [
    (lambda L, x, m: x[m], (np.arange(6.0).reshape(2, 3), np.array([True, False, True]))),
    (lambda L, x, c: x * 2 if c > 0 else -x, (np.arange(6.0).reshape(2, 3), -1.5)),
    (lambda L, x, n: L.numpy.nonzero(x > n.sum())[0], (np.arange(6.0), np.float32([1, 2]))),
], ids=["boolean_mask", "python_branch", "nonzero_without_size"])
def test_vmap_keeps_unmapped_arguments_concrete(fn, args):
    # JAX passes in_axes=None arguments in unbatched: outside jit they are concrete, so a
    # boolean mask or a Python branch on them works (mjax made them tracers and raised).
    def each(L):
        return L.vmap(lambda *a: fn(L, *a), in_axes=(0, None))
    compare(lambda *a: each(mjax)(*a), lambda *a: each(jax)(*a), args, modes=("eager",))
    # Under jit they are tracers in both: the same error.
    compare(lambda *a: each(mjax)(*a), lambda *a: each(jax)(*a), args, modes=("jit",))


UNMAPPED_CASES = {
    # a 0-d integer exponent (NumPy's, as the fuzzer found: int16 ** uint16 was int32)
    "power_0d_uint16": (lambda L, x, e: L.numpy.power(x, e),
                        np.arange(6, dtype=np.int16).reshape(2, 3), np.array(2, np.uint16)),
    "power_numpy_scalar": (lambda L, x, e: x ** e,
                           np.arange(6, dtype=np.int8).reshape(2, 3), np.int64(3)),
    "power_float_base": (lambda L, x, e: L.numpy.power(x, e),
                         np.linspace(-2, 2, 6, dtype=np.float16).reshape(2, 3),
                         np.array(3, np.int8)),
    "power_negative": (lambda L, x, e: L.numpy.power(x, e),
                       np.arange(6, dtype=np.int32).reshape(2, 3), np.array(-2)),
    # the function sees the NumPy value itself: its dtype, NumPy's operations on it
    "int64_dtype": (lambda L, x, e: x.astype(e.dtype) + e,
                    np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, 2, 3])),
    "numpy_result": (lambda L, x, e: (x, np.sum(e)),
                     np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, 2, 3])),
    "static_count": (lambda L, x, e: L.numpy.repeat(x, e),
                     np.arange(6, dtype=np.float32).reshape(2, 3), np.array([1, 0, 2])),
    "float64_array": (lambda L, x, e: x * e,
                      np.arange(6, dtype=np.float32).reshape(2, 3), np.array([0.5, 1, 2])),
}


@pytest.mark.parametrize("case", list(UNMAPPED_CASES))
def test_vmap_hands_unmapped_numpy_arguments_through(case):
    # JAX's vmap passes in_axes=None arguments to the function as they are: a concrete
    # integer exponent makes power integer_pow in the base's dtype (mjax's vmap traced
    # unmapped NumPy arrays, so power promoted), and an out_axes=None output that NumPy
    # computed comes back as NumPy's value. Under jit both trace them.
    fn, x, e = UNMAPPED_CASES[case]
    out_axes = (0, None) if case == "numpy_result" else 0

    def each(L):
        return L.vmap(lambda x, e: fn(L, x, e), in_axes=(0, None), out_axes=out_axes)
    compare(lambda *a: each(mjax)(*a), lambda *a: each(jax)(*a), (x, e),
            modes=("eager", "jit"))
    if case == "power_negative":
        return      # (both raise TypeError eagerly: integer_pow of -2)
    got, want = each(mjax)(x, e), each(jax)(x, e)
    kinds = [[type(v).__name__ if isinstance(v, np.generic) else isinstance(v, L.Array)
              for v in L.tree_util.tree_leaves(r)] for r, L in ((got, mjax), (want, jax))]
    assert kinds[0] == kinds[1]


def test_vmap_unmapped_integer_array_exponent_is_static():
    # As JAX: an unmapped 0-d integer Array reaches the function as it is, concrete.
    x = np.arange(6, dtype=np.int16).reshape(2, 3)
    got = mjax.vmap(mjax.numpy.power, in_axes=(0, None))(x, mjax.numpy.uint16(2))
    want = jax.vmap(jax.numpy.power, in_axes=(0, None))(x, jax.numpy.uint16(2))
    assert got.dtype == want.dtype == np.int16
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def test_vmap_mapped_mask_stays_abstract():
    x, m = np.arange(6.0).reshape(2, 3), np.array([[True, False, True], [False] * 3])
    compare(lambda x, m: mjax.vmap(lambda x, m: x[m])(x, m),
            lambda x, m: jax.vmap(lambda x, m: x[m])(x, m), (x, m))


# ---- numpy: wrong answers the fuzzer found --------------------------------------------


_C_INF = np.complex64(complex(np.inf, 0))


@pytest.mark.parametrize("fn", [
    lambda L: L.numpy.prod(np.complex128(-2 + 1.5j), initial=np.inf, where=np.False_),
    lambda L: L.numpy.divide(_C_INF, np.complex64(1)),
    lambda L: L.numpy.mean(_C_INF, where=np.True_),
    lambda L: L.numpy.multiply(_C_INF, np.complex64(1)),
], ids=["prod_where", "divide", "mean_where", "multiply"])
def test_eager_numpy_float_scalars_are_arguments_not_constants(fn):
    # A jnp function called eagerly on NumPy bool/float/complex scalars takes them as
    # arguments of its program, as JAX's jitted functions do; made constants, XLA folded
    # them: (inf+0j) * (1+0j) gave inf+0j for JAX's inf+nanj (seed 1 found prod's).
    got, want = fn(mjax), fn(jax)
    assert got.dtype == want.dtype and got.weak_type == want.weak_type
    assert repr(complex(np.asarray(got))) == repr(complex(np.asarray(want)))



@pytest.mark.parametrize("x", [np.uint8([3, 250, 0, 7, 250]),
                               np.int32([np.iinfo(np.int32).min, 0, 5, 0, -1]),
                               np.float32([1, np.nan, 3, 2, -np.inf, 3]),
                               np.array([True, False, True, False])],
                         ids=["uint8", "int_min", "nan", "bool"])
@pytest.mark.parametrize("stable", [True, False])
def test_argsort_descending_reverses_the_ascending_order(x, stable):
    # Negating the keys was wrong for unsigned ints, INT_MIN and NaN, and raised for bool.
    compare(lambda x: mjax.numpy.argsort(x, descending=True, stable=stable),
            lambda x: jax.numpy.argsort(x, descending=True, stable=stable), (x,),
            modes=("eager", "jit", "vmap"), vmap_stack=True)


def test_grad_of_out_of_range_gather_is_zero_at_the_clamped_element():
    # Indexing gathers with "promise_in_bounds" as JAX: the value is clamped, but the
    # transpose drops the out-of-range cotangents (mjax clamped them onto the last one).
    x = np.arange(5.0, dtype=np.float32)
    for idx in (np.array([1, 7]), np.array([[1, -9], [7, 4]]), np.array([9])):
        compare(lambda x: x[idx] * 2.0, lambda x: x[idx] * 2.0, (x,),
                modes=("eager", "jit", "grad"))
    m = mjax.vmap(mjax.grad(lambda a, i: a[i].sum()), in_axes=(None, 0))
    j = jax.vmap(jax.grad(lambda a, i: a[i].sum()), in_axes=(None, 0))
    i = np.array([[1, 9], [-7, 2]])
    np.testing.assert_array_equal(np.asarray(m(x, i)), np.asarray(j(x, i)))


@pytest.mark.parametrize("fn", [
    lambda L, x: L.numpy.round(x, -1), lambda L, x: L.numpy.round(x, 2),
    lambda L, x: L.numpy.rint(x), lambda L, x: L.numpy.floor(x), lambda L, x: L.numpy.ceil(x),
    lambda L, x: L.numpy.trunc(x), lambda L, x: L.numpy.fabs(x)],
    ids=["round-1", "round2", "rint", "floor", "ceil", "trunc", "fabs"])
@pytest.mark.parametrize("x", [np.int32([15, -35, 125]), np.uint8([15, 245]),
                               np.array([True, False]), _complex(3),
                               np.float16([1.25, -2.375, 0.015])],
                         ids=["int32", "uint8", "bool", "complex", "float16"])
def test_rounding_by_dtype(fn, x):
    # Integers with negative decimals and floor/ceil/trunc/fabs of complex raise as JAX
    # (mjax returned the input); rint of complex rounds each part; rint of ints is float.
    compare(lambda x: fn(mjax, x), lambda x: fn(jax, x), (x,))


@pytest.mark.parametrize("dtype", [np.int32, np.uint8, np.int16, np.float16, None])
@pytest.mark.parametrize("endpoint", [True, False])
def test_linspace_floors_to_integer_dtypes(dtype, endpoint):
    for start, stop, num in ((-3, 2, 7), (0.5, 7.5, 5), (np.float16(1.5), 9, 4), (2, 2, 1)):
        compare(lambda: mjax.numpy.linspace(start, stop, num, endpoint, dtype=dtype),
                lambda: jax.numpy.linspace(start, stop, num, endpoint, dtype=dtype), (),
                rtol=1e-3)


@pytest.mark.parametrize("mode", ["wrap", "clip", "fill", None, "drop", "raise"])
@pytest.mark.parametrize("axis", [1, -1, 2, -3, None])
def test_take_modes_and_axes(mode, axis):
    # mode="wrap" raised KeyError and an out-of-range axis wrapped; JAX raises ValueError
    # for the axis and for modes other than fill/clip/wrap.
    x, i = np.arange(6.0, dtype=np.float32).reshape(2, 3), np.array([0, 4, -5, 2])
    compare(lambda x, i: mjax.numpy.take(x, i, axis=axis, mode=mode),
            lambda x, i: jax.numpy.take(x, i, axis=axis, mode=mode), (x, i),
            modes=("eager", "jit"))


def test_integer_array_index_before_ellipsis():
    x, i = np.arange(12.0).reshape(2, 3, 2), np.array([1, 0, 1])
    for fn in (lambda x, i: x[i, ...], lambda x, i: x[..., i, :], lambda x, i: x[i, ..., 0]):
        compare(fn, fn, (x, i), modes=("eager", "jit", "grad"))


@pytest.mark.parametrize("parts", [2, 3, 0, [1, 1], [2, 1], [], [0, 0, 3]])
@pytest.mark.parametrize("name", ["split", "array_split"])
def test_split_of_zero_size_and_decreasing_indices(name, parts):
    # JAX's rule, split's and array_split's: the sizes are the differences of
    # [0, *indices, size] (never clamped; a negative one is a ValueError).
    for x, axis in ((np.zeros((0, 3)), 0), (np.zeros((0, 3)), -1), (np.arange(6.0), 0)):
        compare(lambda x: getattr(mjax.numpy, name)(x, parts, axis=axis),
                lambda x: getattr(jax.numpy, name)(x, parts, axis=axis), (x,))


@pytest.mark.parametrize("spec, shapes", [("ij->", [(0, 3)]), ("i,i->", [(0,), (0,)]),
                                          ("ij,jk->ik", [(2, 0), (0, 3)]),
                                          ("ij,j->", [(0, 1), (1,)])])
def test_einsum_of_zero_size_operands(spec, shapes):
    ops = [np.zeros(s, np.float32) for s in shapes]
    compare(lambda *o: mjax.numpy.einsum(spec, *o), lambda *o: jax.numpy.einsum(spec, *o),
            ops, modes=("eager", "jit", "grad"))


@pytest.mark.parametrize("fill", [-3, 300, 2**40, 7, np.int64(-3)])
@pytest.mark.parametrize("dtype", [np.uint8, np.int8, np.uint32])
def test_full_wraps_python_ints_as_jax(fill, dtype):
    compare(lambda: mjax.numpy.full((2,), fill, dtype), lambda: jax.numpy.full((2,), fill, dtype),
            ())
    compare(lambda: mjax.lax.convert_element_type(fill, dtype),
            lambda: jax.lax.convert_element_type(fill, dtype), ())


@pytest.mark.parametrize("fn", [
    lambda L, x: L.nn.softmax(x), lambda L, x: L.nn.log_softmax(x),
    lambda L, x: L.numpy.asarray(x).at[1].multiply(True),
    lambda L, x: L.numpy.zeros((3, 4)).at[np.array([0, 1]), np.array([0, 1, 2])].set(1.0),
    lambda L, x: L.numpy.zeros((3, 4))[np.array([0, 1]), np.array([0, 1, 2])]],
    ids=["softmax", "log_softmax", "at_multiply", "at_set_not_broadcasting",
         "getitem_not_broadcasting"])
def test_rejected_as_jax(fn):
    x = np.array([True, False, True])
    compare(lambda x: fn(mjax, x), lambda x: fn(jax, x), (x,))


@pytest.mark.parametrize("fn", [
    lambda L, x: L.numpy.sum(x, axis=2), lambda L, x: L.numpy.argmax(x, axis=3),
    lambda L, x: L.numpy.moveaxis(x, 2, 0), lambda L, x: L.numpy.reshape(x, (4, 2)),
    lambda L, x: L.numpy.where(x > 1, np.ones(4), 0.0), lambda L, x: L.numpy.cumsum(x, 3)],
    ids=["sum", "argmax", "moveaxis", "reshape", "where", "cumsum"])
def test_error_classes_are_jaxs(fn):
    # An out-of-range axis raises NumPy's AxisError (a ValueError and an IndexError: JAX
    # raises either, by function); a reshape to another size a TypeError that is also a
    # ValueError (JAX's for NumPy arguments).
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    compare(lambda x: fn(mjax, x), lambda x: fn(jax, x), (x,))
    compare(lambda x: fn(mjax, x), lambda x: fn(jax, x), (np.asarray(jax.numpy.asarray(x)),))


def test_isclose_of_infinities_and_nans():
    a = np.float32([np.inf, -np.inf, np.inf, np.nan, 1.0, 0.0, np.inf])
    b = np.float32([np.inf, np.inf, 1.0, np.nan, np.inf, -0.0, np.nan])
    for equal_nan in (False, True):
        compare(lambda a, b: mjax.numpy.isclose(a, b, equal_nan=equal_nan),
                lambda a, b: jax.numpy.isclose(a, b, equal_nan=equal_nan), (a, b),
                modes=("eager", "jit", "vmap"))


@pytest.mark.parametrize("fn", [
    lambda L, x: L.numpy.cos(x), lambda L, x: L.numpy.expm1(x), lambda L, x: L.numpy.add(x, 1.5),
    lambda L, x: L.nn.elu(x), lambda L, x: L.nn.celu(x), lambda L, x: L.nn.leaky_relu(x),
    lambda L, x: L.nn.selu(x)],
    ids=["cos", "expm1", "add", "elu", "celu", "leaky_relu", "selu"])
def test_int64_numpy_arguments_wrap_to_int32_first(fn):
    # x64 off: a NumPy int64 argument is canonicalized (wrapped) to int32 before it is
    # promoted, as jax.numpy does (mjax cast it to float directly, eagerly); JAX's
    # elu/celu/leaky_relu of integers are weakly typed floats.
    x = np.array([3173333790166223068, -5, 2**40 + 5, 7], np.int64)
    compare(lambda x: fn(mjax, x), lambda x: fn(jax, x), (x,), modes=("eager", "jit"))


@pytest.mark.parametrize("fn", [
    lambda L: L.numpy.gcd(1.5, 2), lambda L: L.numpy.lcm(np.float32(1), 2),
    lambda L: L.numpy.ldexp(1.0, 2.0), lambda L: L.numpy.moveaxis(np.float32(2), 0, 0)],
    ids=["gcd", "lcm", "ldexp", "moveaxis_of_scalar"])
def test_more_error_classes_are_jaxs(fn):
    compare(lambda: fn(mjax), lambda: fn(jax), ())


# ---- found by the long tier (MJAX_FUZZ_EXAMPLES=40) -----------------------------------


def test_lax_binary_ops_take_python_scalars_of_their_own_default_dtype_only():
    # JAX's lax does not promote: a Python scalar has its default dtype (int32, float32,
    # complex64) and must match the array's (mjax cast it to the array's dtype).
    f32, i8, bf16 = (np.ones(3, d) for d in (np.float32, np.int8, jax.numpy.bfloat16))
    cases = [("add", f32, 2), ("add", f32, 2.0), ("add", 2.0, f32), ("add", i8, 2),
             ("mul", bf16, 2.0), ("max", f32, 0), ("eq", f32, 1), ("lt", i8, 1),
             ("rem", f32, 2), ("pow", f32, 2), ("pow", f32, 2.0), ("shift_left", i8, 1),
             ("add", f32, True), ("bitwise_and", np.ones(3, np.uint32), 1),
             ("complex", f32, 0.0), ("add", 2, 3), ("add", 2, 3.0), ("atan2", f32, 1.0)]
    for name, x, y in cases:
        compare(lambda x, y: getattr(mjax.lax, name)(x, y),
                lambda x, y: getattr(jax.lax, name)(x, y), (x, y))
    for lo, hi in ((0.0, 1.0), (0, 1)):
        compare(lambda x: mjax.lax.clamp(lo, x, hi), lambda x: jax.lax.clamp(lo, x, hi),
                (f32,))
        compare(lambda x: mjax.lax.clamp(lo, x, hi), lambda x: jax.lax.clamp(lo, x, hi),
                (bf16,))


def test_lax_binary_ops_under_x64_take_64_bit_python_scalars():
    with mjax.enable_x64(True), jax.enable_x64(True):
        for x, y in ((np.ones(3, np.float32), 2.0), (np.ones(3), 2.0),
                     (np.ones(3, np.int32), 2)):
            compare(lambda x: mjax.lax.add(x, y), lambda x: jax.lax.add(x, y), (x,))


@pytest.mark.parametrize("x", [np.float64(0.5), np.complex128(0.5 + 1j)],
                         ids=["float64", "complex128"])
def test_numpy_float64_and_complex128_scalars_are_strongly_typed(x):
    # They subclass Python's float and complex, but NumPy scalars are strong in JAX.
    for fn in (lambda L, x: L.numpy.sort(x, axis=None), lambda L, x: L.numpy.ravel(x),
               lambda L, x: L.numpy.subtract(6, x), lambda L, x: L.numpy.less(6, x.real)):
        compare(lambda x: fn(mjax, x), lambda x: fn(jax, x), (x,))


def test_reductions_with_initial_and_broadcasting_where():
    # initial takes the reduced array's dtype; `where` broadcasting a scalar adds no axes
    # to reduce over.
    u, i8 = np.uint32(3), np.ones(2, np.int8)
    for fn in (lambda L: L.numpy.sum(u, keepdims=True, initial=3.25),
               lambda L: L.numpy.sum(i8, initial=3.25),
               lambda L: L.numpy.max(np.arange(3), initial=2.5),
               lambda L: L.numpy.sum(np.ones(3), initial=np.ones(2)),
               lambda L: L.numpy.any(np.float16(1), keepdims=True,
                                     where=np.array([True, False, True])),
               lambda L: L.numpy.all(np.ones(2), keepdims=True,
                                     where=np.array([[True], [False], [True]]))):
        compare(lambda: fn(mjax), lambda: fn(jax), ())


def test_correlate_same_with_the_longer_second_operand():
    # NumPy centres the 'same' window of correlate(a, v) on the swapped correlation.
    for a, v in ((np.float32([1.5, -2]), np.arange(1, 5)),
                 (np.float32([1.5, -2, 3]), np.arange(1, 7)),
                 (np.complex64([1.5j, -2]), np.array([1, 2, 3j, 4, 5]))):
        compare(lambda a, v: mjax.numpy.correlate(a, v, mode="same"),
                lambda a, v: jax.numpy.correlate(a, v, mode="same"), (a, v),
                modes=("eager", "jit", "grad"))


def test_complex_infinity_tests_and_real_only_functions():
    z = np.complex64([complex(np.nan, np.inf), complex(1, np.inf), 1 + 1j,
                      complex(-np.inf, 0)])
    compare(mjax.numpy.isinf, jax.numpy.isinf, (z,))
    for name in ("isposinf", "isneginf", "i0"):
        compare(getattr(mjax.numpy, name), getattr(jax.numpy, name), (z,))


def _bits(x):
    x = np.asarray(x)
    return x.view({2: np.uint16, 4: np.uint32, 8: np.uint64}[x.dtype.itemsize])


def test_logarithms_round_as_jax():
    # log2 divides by log(2) computed at run time, log10 multiplies by 1/log(10): JAX's
    # roundings, with strongly typed constants (a Python scalar's log2 is not weak).
    x = np.float32([1, 2, 3, 8, 1000, 1e-3, 0.1, 7.5])
    for name in ("log2", "log10"):
        m, j = getattr(mjax.numpy, name), getattr(jax.numpy, name)
        np.testing.assert_array_equal(_bits(m(x)), _bits(j(x)))
        np.testing.assert_array_equal(_bits(mjax.jit(m)(x)), _bits(jax.jit(j)(x)))
        compare(m, j, (2.0,))
        compare(m, j, (np.complex64([1 + 2j, -3j]),))


def test_logaddexp_and_softplus_match_jax_bitwise_and_in_gradients():
    x1 = np.float32([1, 2, -3, np.inf, -np.inf, 0, np.nan, 30, -0.5])
    x2 = np.float32([0, 2, -3, np.inf, -np.inf, -np.inf, 1, -30, 0.25])
    np.testing.assert_array_equal(_bits(mjax.numpy.logaddexp(x1, x2)),
                                  _bits(jax.numpy.logaddexp(x1, x2)))
    for argnums in (0, 1):
        compare(mjax.numpy.logaddexp, jax.numpy.logaddexp, (x1, x2), modes=("grad",),
                argnums=argnums)
    compare(mjax.nn.softplus, jax.nn.softplus, (np.linspace(-20, 20, 9, dtype=np.float32),),
            modes=("eager", "jit", "grad"))
    for x in (True, np.array([True]), 1, np.array([1, 2])):
        compare(mjax.nn.softplus, jax.nn.softplus, (x,))
        compare(mjax.nn.log_sigmoid, jax.nn.log_sigmoid, (x,))
        compare(mjax.nn.elu, jax.nn.elu, (x,))
        compare(mjax.nn.celu, jax.nn.celu, (x,))


def test_normal_cdf_functions_take_float32_or_float64_only():
    for name in ("ndtr", "log_ndtr", "ndtri"):
        m, j = getattr(mjax.scipy.special, name), getattr(jax.scipy.special, name)
        for x in (np.ones(3, np.float16), np.ones(3, jax.numpy.bfloat16), np.ones(3, np.int32),
                  1, 0.3):
            compare(m, j, (x,))
    x = np.linspace(-3, 3, 13, dtype=np.float32)
    np.testing.assert_array_equal(_bits(mjax.scipy.special.ndtr(x)),
                                  _bits(jax.scipy.special.ndtr(x)))


def test_bessel_and_nanvar_gradients_at_the_edges():
    # i0e' and i1e' at 0 are 0 and 1/2 (not sign(0)'s products); nanvar with no degrees of
    # freedom left has gradient 0, not 0 * inf.
    x = np.float32([0, 1, -2, 25, -30])
    for name in ("i0e", "i1e"):
        compare(getattr(mjax.scipy.special, name), getattr(jax.scipy.special, name), (x,),
                modes=("eager", "grad"), rtol=1e-4)
        compare(getattr(mjax.scipy.special, name), getattr(jax.scipy.special, name),
                (np.zeros((1, 1), np.float16),), modes=("grad",), rtol=1e-3)
    compare(lambda x: mjax.numpy.nanvar(x, keepdims=True, ddof=1),
            lambda x: jax.numpy.nanvar(x, keepdims=True, ddof=1), (np.float32(2),),
            modes=("eager", "grad"))


def test_frexp_of_bfloat16():
    x = np.array([3, 0.1, -7, 0], jax.numpy.bfloat16)
    compare(mjax.numpy.frexp, jax.numpy.frexp, (x,))


@pytest.mark.parametrize("dtype", [np.float32, np.float16, jax.numpy.bfloat16, np.float64])
def test_frexp_of_subnormals_is_jaxs(dtype):
    # JAX's frexp scales a value below the smallest normal by 2**nmant and reads the bits
    # of that product; where XLA flushes subnormals (the CPU) that gives 0.5 * 2**-149 for
    # every float32 subnormal and leaves a bfloat16 one as it is (it compares equal to 0).
    # mjax's exact bit arithmetic gave NumPy's 0.544 * 2**-132 for 1e-40.
    fi = jax.numpy.finfo(dtype)
    x = np.array([1e-40, -1e-40, float(fi.smallest_subnormal), -3 * float(fi.smallest_subnormal),
                  0.75 * float(fi.tiny), float(fi.tiny), 0.0, -0.0, np.inf, -np.inf, np.nan,
                  1.5, -3.0, float(fi.max)]).astype(dtype)
    for got, want in ((mjax.numpy.frexp(x), jax.numpy.frexp(x)),
                      (mjax.jit(mjax.numpy.frexp)(x), jax.jit(jax.numpy.frexp)(x))):
        np.testing.assert_array_equal(_bits(got[0]), _bits(want[0]))
        np.testing.assert_array_equal(np.asarray(got[1]), np.asarray(want[1]))
        assert got[1].dtype == want[1].dtype
    # (sweep_util's compare takes bfloat16 for exact: no NaN there)
    compare(mjax.numpy.frexp, jax.numpy.frexp, (x[~np.isnan(x.astype(np.float64))],),
            modes=("eager", "jit", "vmap"), rtol=0, atol=0)
    finite = x[np.isfinite(x.astype(np.float64))]
    compare(lambda a: mjax.numpy.frexp(a)[0], lambda a: jax.numpy.frexp(a)[0], (finite,),
            modes=("grad",), rtol=0, atol=0)
    x = x.astype(np.float64)[:6]
    compare(lambda a: mjax.numpy.ldexp(a, 3), lambda a: jax.numpy.ldexp(a, 3), (x,),
            rtol=0, atol=0)


def test_geomspace_of_python_scalars_is_jaxs_bit_for_bit():
    # JAX's geomspace jits its computation with start and stop traced; mjax folded Python
    # endpoints as constants, and XLA's folded log10s and power differed in the last bit
    # (geomspace(-9, -9, 3, endpoint=False) was [-9, -8.999999, -8.999999]).
    for start, stop in ((-9, -9), (2, 7), (1.0, 1000.0), (-3, -8.0), (5, 1)):
        for num, endpoint in ((3, False), (7, True), (50, True)):
            got = mjax.numpy.geomspace(start, stop, num, endpoint=endpoint)
            want = jax.numpy.geomspace(start, stop, num, endpoint=endpoint)
            np.testing.assert_array_equal(_bits(got), _bits(want))
            assert got.dtype == want.dtype and got.weak_type == want.weak_type
    compare(lambda a: mjax.numpy.geomspace(a, 10.0, 4, axis=1),
            lambda a: jax.numpy.geomspace(a, 10.0, 4, axis=1), (np.float32([1.5, -2]),),
            modes=("eager", "jit", "grad", "vmap"), rtol=0, atol=0)
    for kw in (dict(dtype=np.int32), dict(dtype=np.float16), dict(axis=2), dict(num=-1)):
        compare(lambda: mjax.numpy.geomspace(2, 50, **{"num": 6, **kw}),
                lambda: jax.numpy.geomspace(2, 50, **{"num": 6, **kw}), (), rtol=0, atol=0)


def test_eager_logaddexp2_is_one_program_as_jaxs():
    # Op by op, mjax's eager logaddexp2 of NumPy float32 scalars rounded its last bit
    # otherwise (jax's, eager and jitted, is one program's; so was mjax's under jit).
    rng = np.random.default_rng(3)
    pairs = [(np.float32(0.001), np.float32(0.3))] + [
        (np.float32(a), np.float32(b)) for a, b in rng.normal(size=(20, 2)) * 3]
    for x, y in pairs:
        got, want = mjax.numpy.logaddexp2(x, y), jax.numpy.logaddexp2(x, y)
        np.testing.assert_array_equal(_bits(got), _bits(want))
        assert got.dtype == want.dtype and got.weak_type == want.weak_type


def test_eager_ufuncs_of_python_numbers_trace_them_as_jaxs():
    # JAX's jitted ufuncs take Python numbers as weakly typed program arguments; mjax's
    # fused calls made them constants, which XLA folded with its own arithmetic:
    # log2(13), log2(0.3), log10(7) and logaddexp2(0.001, 0.3) were an ulp off.
    for name, args in (("log2", (13,)), ("log2", (0.3,)), ("log10", (7,)), ("log10", (True,)),
                       ("logaddexp2", (0.001, 0.3)), ("logaddexp2", (2, np.float32(0.5))),
                       ("arctan2", (13, 0.7)), ("arctan2", (1.5, np.float16(2))),
                       # (an integer converted and arctan'd in one program rounds otherwise
                       # than a float's arctan, in a size-1 array)
                       ("arctan", (13,)), ("arctan", (np.int32(3),)),
                       ("arctan", (np.array([13], np.int32),)), ("sin", (np.uint8(200),))):
        got, want = getattr(mjax.numpy, name)(*args), getattr(jax.numpy, name)(*args)
        np.testing.assert_array_equal(_bits(got), _bits(want))
        assert got.dtype == want.dtype and got.weak_type == want.weak_type


def test_masked_reductions_apply_initial_once_and_nanvar_keeps_inf_minus_inf():
    for fn in (lambda L: L.numpy.sum(np.uint32(3), keepdims=True, initial=3.25, where=False),
               lambda L: L.numpy.prod(np.arange(1.0, 4), initial=2,
                                      where=np.array([True, False, True])),
               lambda L: L.numpy.max(np.arange(3), initial=1,
                                     where=np.array([True, False, False])),
               lambda L: L.numpy.nanvar(np.float32([1, np.inf, -np.inf]), axis=()),
               lambda L: L.numpy.nanvar(np.float32([1, np.inf, np.nan, 2]))):
        compare(lambda: fn(mjax), lambda: fn(jax), ())


def test_repeat_with_numpy_repeats_under_jit_and_lists_refused():
    x = np.ones((4, 1), np.float32)
    compare(lambda x: mjax.numpy.repeat(x, np.array([2]), axis=1),
            lambda x: jax.numpy.repeat(x, np.array([2]), axis=1), (x,), modes=("jit",))
    compare(lambda x: mjax.numpy.repeat(x, [1, 2, 0, 1], axis=0),
            lambda x: jax.numpy.repeat(x, [1, 2, 0, 1], axis=0), (x,))
    compare(lambda x: mjax.numpy.repeat(x, np.ones(4, np.int32), axis=4, total_repeat_length=4),
            lambda x: jax.numpy.repeat(x, np.ones(4, np.int32), axis=4, total_repeat_length=4),
            (x,))


def test_isfinite_and_isinf_of_complex_and_python_scalars():
    z = np.complex64([complex(np.inf, 0), 1j, complex(0, np.nan), complex(np.nan, np.inf)])
    for name in ("isfinite", "isinf", "isnan"):
        m, j = getattr(mjax.numpy, name), getattr(jax.numpy, name)
        compare(m, j, (z,))
        for x in (-0.5j, 1.5, 2):  # (isinf's result is strong, isfinite's weak: as JAX)
            compare(m, j, (x,))


def test_convolutions_promote_to_inexact_unless_a_preferred_type_is_given():
    a, v = np.arange(6), np.arange(2, dtype=np.uint32)
    for kw in ({}, {"preferred_element_type": np.float32}, {"preferred_element_type": np.int32}):
        for name in ("convolve", "correlate"):
            for mode in ("full", "same", "valid"):
                compare(lambda a, v: getattr(mjax.numpy, name)(a, v, mode, **kw),
                        lambda a, v: getattr(jax.numpy, name)(a, v, mode, **kw), (a, v))
    compare(mjax.numpy.convolve, jax.numpy.convolve, (np.array([True, False]), np.array([True])))


def test_i0_is_jaxs_composition():
    x = np.float32([0, 1, -2, 30, 100, 1e3])
    compare(mjax.numpy.i0, jax.numpy.i0, (x,), modes=("eager", "jit", "grad"), rtol=1e-5)
    compare(mjax.numpy.i0, jax.numpy.i0, (x.astype(jax.numpy.bfloat16),))
    compare(mjax.numpy.i0, jax.numpy.i0, (np.complex64([1]),))
    # (i0e's asymptotic form divides by sqrt(x) sqrt(2 pi): 2 pi x overflows near f32's max)
    compare(mjax.numpy.i0, jax.numpy.i0, (np.array([3e38, 1e38], jax.numpy.bfloat16),))
    compare(mjax.scipy.special.i0e, jax.scipy.special.i0e, (np.float32([3e38, -3e38]),),
            rtol=1e-5, atol=0)


def test_static_index_updates_have_unique_indices():
    # x.at[int/slice/()].multiply/divide/power differentiate with respect to the values (JAX
    # marks static indices unique); repeated array indices raise JAX's NotImplementedError.
    x = np.arange(1.0, 7.0, dtype=np.float32).reshape(2, 3)
    for idx in ((), 1, (slice(1, None),), (Ellipsis, 0), (1, None, slice(None)), -1):
        for method in ("multiply", "divide", "power"):
            compare(lambda x, u: getattr(mjax.numpy.asarray(x).at[idx], method)(u),
                    lambda x, u: getattr(jax.numpy.asarray(x).at[idx], method)(u),
                    (x, np.float32(3)), modes=("eager", "grad"), argnums=1)
    compare(lambda x, u: mjax.numpy.asarray(x).at[np.array([1, 1])].multiply(u),
            lambda x, u: jax.numpy.asarray(x).at[np.array([1, 1])].multiply(u),
            (x[0], np.float32(3)), modes=("grad",), argnums=1)
