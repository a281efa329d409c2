"""The API fuzzer's findings, against jax: dtypes of identity-like jnp functions under vmap
for 64-bit NumPy inputs with x64 off, inputs JAX rejects (and the builtin class of its
error), hypot's IEEE special cases, and integer power with negative exponents."""
import jax
import jax.numpy as jnp
import numpy as np
import pytest

import mjax
import mjax.numpy as mnp
from frontend_util import ON_TPU


def _outcome(f):
    try:
        r = f()
    except Exception as e:  # noqa: BLE001
        return type(e)
    r = np.asarray(r)
    return (r.dtype, r.shape, r.tobytes())


def _agree(make, outcome=_outcome):
    """make(jnp-like module, jax-like module) -> thunk; jax's outcome (its value and dtype
    to the bit, or its exception class) is mjax's, an mjax exception being an instance of
    jax's class."""
    want = outcome(make(jnp, jax))
    got = outcome(make(mnp, mjax))
    if isinstance(want, type):
        assert isinstance(got, type) and issubclass(got, want), (got, want)
    else:
        assert got == want


X64 = np.arange(6, dtype=np.int64).reshape(2, 3)

IDENTITY_LIKE = {
    "positive": lambda n, l: n.positive,
    "squeeze": lambda n, l: n.squeeze,
    "expand_dims()": lambda n, l: lambda x: n.expand_dims(x, ()),
    "ravel": lambda n, l: n.ravel,
    "atleast_1d": lambda n, l: n.atleast_1d,
    "real": lambda n, l: n.real,
    "conj": lambda n, l: n.conj,
    "round": lambda n, l: n.round,
    "floor": lambda n, l: n.floor,
    "ceil": lambda n, l: n.ceil,
    "trunc": lambda n, l: n.trunc,
    "nan_to_num": lambda n, l: n.nan_to_num,
    "clip": lambda n, l: n.clip,
    "moveaxis": lambda n, l: lambda x: n.moveaxis(x, 0, 0),
    "roll0": lambda n, l: lambda x: n.roll(x, 0),
    "lax.expand_dims": lambda n, l: lambda x: l.lax.expand_dims(x, ()),
    "swapaxes": lambda n, l: lambda x: n.swapaxes(x, 0, -2),
    "pad0": lambda n, l: lambda x: n.pad(x, 0),
    # (these return the very tracer in JAX too: vmap hands back the argument)
    "identity": lambda n, l: lambda x: x,
    "transpose": lambda n, l: n.transpose,
    "getitem": lambda n, l: lambda x: x[...],
    "lax.squeeze": lambda n, l: lambda x: l.lax.squeeze(x, ()),
}


@pytest.mark.parametrize("name", sorted(IDENTITY_LIKE))
@pytest.mark.parametrize("mode", ["eager", "vmap", "jit"])
def test_int64_numpy_input_dtype(name, mode):
    def make(n, l):
        f = IDENTITY_LIKE[name](n, l)
        g = {"eager": f, "vmap": l.vmap(f), "jit": l.jit(f)}[mode]
        return lambda: g(X64)
    _agree(make)


def test_vmap_positive_int64_is_int32():
    assert mjax.vmap(mnp.positive)(np.arange(3, dtype=np.int64)).dtype == np.int32


def test_scatter_add_index_shapes_that_do_not_broadcast():
    z = np.zeros(0, int)
    with pytest.raises(ValueError, match="Incompatible shapes for broadcasting"):
        mnp.zeros((3, 3, 3, 3)).at[z, z, np.zeros(2, int), z].add(1.0)


@pytest.mark.parametrize("shapes", [((3,), (4,)), ((2, 3), (3, 2)), ((5,), (2, 5), (3,))])
def test_where_shapes_that_do_not_broadcast_raise_value_error(shapes):
    c, x, y = (shapes + ((),))[:3] if len(shapes) == 2 else shapes
    _agree(lambda n, l: lambda: n.where(np.ones(c) > 0, np.ones(x), np.ones(y)))


SPECIAL = [np.inf, -np.inf, np.nan, 0.0, -0.0, 3.0, 1e30, 1e-30, 5e-324, 1.7e308]


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_hypot_special_values(dtype):
    a, b = np.meshgrid(SPECIAL, SPECIAL)
    with np.errstate(all="ignore"):
        a, b = a.astype(dtype).ravel(), b.astype(dtype).ravel()
        want = np.hypot(a, b)
    got = np.asarray(mnp.hypot(a, b))
    # IEEE: hypot(+-inf, nan) = hypot(nan, +-inf) = inf.
    assert np.all(got[np.isinf(a) | np.isinf(b)] == np.inf)
    _agree(lambda n, l: lambda: n.hypot(a, b))
    if dtype is not np.float64:
        np.testing.assert_allclose(got, want.astype(got.dtype), rtol=2e-3)


def test_hypot_complex_raises_value_error():
    _agree(lambda n, l: lambda: n.hypot(np.array([1 + 1j]), np.array([1.0])))
    with pytest.raises(ValueError):
        mnp.hypot(np.array([1 + 1j]), np.array([1.0]))


INT_POWER_CASES = [
    (np.array([3]), np.array([-8])),
    (np.array([3, 2, -2, 0, 1, -1, 0, 7]), np.array([-8, -1, -3, -1, -5, -3, 0, 70])),
    (np.array([3, 5], np.int32), np.array([20, 30], np.int32)),
    (np.array([3, 5, 2], np.uint8), np.array([5, 9, 200], np.uint8)),
    (np.array([3, -5, 2], np.int8), np.array([-1, 64, 65], np.int8)),
    (np.array([True, False]), np.array([True, True])),
    (3, np.array([-8, 2])),
    (np.array([2, 3]), True),
    (3, -8), (np.array(3), -8), (3, np.array(-8)), (np.array([3]), -8),
    (np.int32(3), np.int64(-2)), (2.0, -2), (np.array([2.0]), np.array(-2)),
]


@pytest.mark.parametrize("case", range(len(INT_POWER_CASES)))
def test_integer_power_negative_exponents(case):
    a, b = INT_POWER_CASES[case]
    _agree(lambda n, l: lambda: n.power(a, b))
    _agree(lambda n, l: lambda: l.jit(n.power)(a, b))


def test_integer_power_issue_value():
    assert int(mnp.power(np.array([3]), np.array([-8]))[0]) == 295544673
    with pytest.raises(TypeError, match="negative powers"):
        mnp.power(3, -8)


@pytest.mark.parametrize("fn", ["swapaxes", "pad"])
def test_vmap_unmapped_identity_like_gives_an_array(fn):
    """vmap(in_axes=None, out_axes=None) of a jitted-in-JAX jnp function that leaves its
    operand as it is returns an Array (JAX's function makes a new one), not the NumPy
    argument."""
    x = np.ones((1, 2), np.int16)
    f = {"swapaxes": lambda n: lambda x: n.swapaxes(x, 0, -2),
         "pad": lambda n: lambda x: n.pad(x, 0)}[fn]
    got = mjax.vmap(f(mnp), in_axes=None, axis_size=2, out_axes=None)(x)
    want = jax.vmap(f(jnp), in_axes=None, axis_size=2, out_axes=None)(x)
    assert isinstance(want, jax.Array) and isinstance(got, mjax.Array)
    assert got.dtype == want.dtype and got.shape == want.shape


# ---- seed 5702 of the fuzzer: inputs JAX rejects, and what it accepts ---------------------

Z = np.zeros((1, 0, 1), np.complex128)
REJECTED_OR_EDGE = {
    "argmax of an empty complex array": lambda n, l: lambda: n.argmax(Z, keepdims=True),
    "argmin of an empty complex array": lambda n, l: lambda: n.argmin(Z),
    "argmax under vmap": lambda n, l: lambda: l.vmap(lambda x: n.argmax(x), in_axes=None,
                                                     axis_size=3)(Z),
    "diff past an empty axis": lambda n, l: lambda: n.diff(Z, n=3, axis=1),
    "diff past an empty axis, vmap": lambda n, l: lambda: l.vmap(
        lambda x: n.diff(x, n=3, axis=1))(Z),
    "diff n > size": lambda n, l: lambda: n.diff(np.arange(3.0), n=5),
    "signbit of complex": lambda n, l: lambda: n.signbit(1 + 2j),
    "spacing of complex": lambda n, l: lambda: n.spacing(np.array([1 + 2j])),
    "ldexp of complex": lambda n, l: lambda: n.ldexp(1 + 2j, np.array(3, np.uint8)),
}


@pytest.mark.parametrize("name", sorted(REJECTED_OR_EDGE))
def test_rejected_and_edge_inputs(name):
    _agree(REJECTED_OR_EDGE[name])


LOGICAL_ARGS = [(True, True), (1.0, 2), (1 + 2j, np.array(3, np.uint8)),
                (1.0, np.array(3, np.uint8)), (2, np.array(3, np.int8)),
                (np.float32(1), 2.0), (np.array([np.nan, 0.0, -0.0]), 1),
                # (a weakly typed array is compared with a strong zero: a strong bool)
                (np.arange(3, dtype=np.int32), 2.5), (np.arange(3, dtype=np.uint8), 1j),
                (np.arange(3), 2.5)]


@pytest.mark.parametrize("fn", ["logical_and", "logical_or", "logical_xor"])
@pytest.mark.parametrize("case", range(len(LOGICAL_ARGS)))
def test_logical_weak_types(fn, case):
    """A weakly typed operand that is not bool gives a weakly typed bool (x != 0), as in
    JAX; values and dtypes agree too."""
    args = LOGICAL_ARGS[case]
    want = getattr(jnp, fn)(*args)
    got = getattr(mnp, fn)(*args)
    assert got.weak_type == want.weak_type
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))
    assert mnp.logical_not(args[0]).weak_type == jnp.logical_not(args[0]).weak_type


# ---- seed 5703 of the fuzzer (lax, scipy.special) -----------------------------------------

DOT_DTYPES = [(np.int32, np.uint16), (np.int8, np.int32), (np.float32, np.int32),
              (np.float16, np.float32), (np.bool_, np.int32), (np.uint8, np.int8),
              (np.bool_, np.int8), (np.complex64, np.float32), (np.int8, np.uint8)]


@pytest.mark.parametrize("dts", DOT_DTYPES, ids=lambda d: f"{d[0].__name__}-{d[1].__name__}")
def test_dot_general_of_two_dtypes(dts):
    """JAX's dot_general takes operands of two dtypes (the result's is the one that ranks
    higher: complex, exponent range, mantissa, width, signedness; a tie of two dtypes is a
    TypeError), under vmap too."""
    a = np.arange(4).reshape(2, 2).astype(dts[0])
    b = np.arange(4).reshape(2, 2).astype(dts[1])
    dn = (((1,), (0,)), ((), ()))
    _agree(lambda n, l: lambda: l.lax.dot_general(a, b, dn))
    _agree(lambda n, l: lambda: l.vmap(lambda x, y: l.lax.dot_general(x, y, dn),
                                       in_axes=(0, None))(np.stack([a, a]), b))


def test_xlogy_grad_with_an_integer_x_raises_as_jax():
    """JAX promotes xlogy's arguments inside its custom-derivative function: an integer x
    has a float0 tangent, which its derivative cannot multiply (TypeError)."""
    for L in (jax, mjax):
        with pytest.raises(TypeError, match="float0"):
            L.grad(lambda y: L.scipy.special.xlogy(np.array([2], np.int32), y).sum())(
                np.array([1.0], np.float32))


def test_float0_operands_raise_type_error():
    z = np.zeros((1,), dtype=mjax.dtypes.float0)
    for f in (lambda: mnp.multiply(z, 1.0), lambda: z * mnp.ones(1), lambda: mnp.add(1, z)):
        with pytest.raises(TypeError, match="float0"):
            f()


@pytest.mark.parametrize("p", [0.3, 1e-300, 0.999, 0.9, 0.1, 0.5, np.nan, -1.0, 1.0, 0.0])
def test_ndtri_of_a_numpy_float64_with_x64_off(p):
    """JAX compares and complements a NumPy float64 in NumPy before canonicalizing it."""
    want = np.asarray(jax.scipy.special.ndtri(np.float64(p)))
    got = np.asarray(mjax.scipy.special.ndtri(np.float64(p)))
    assert got.dtype == want.dtype
    np.testing.assert_allclose(got, want, rtol=1e-6)


@pytest.mark.parametrize("fn", ["power", "divmod", "nextafter"])
def test_vmap_of_broadcasting_binary_ops_lowers(fn):
    """(seed 5704) vmap over axis 1 of an int64 (4, 3, 4) and an int8 (3, 1) array: the
    broadcast-per-use pass raised KeyError for a user it had not indexed."""
    x = np.arange(48, dtype=np.int64).reshape(4, 3, 4)
    y = np.full((3, 1), 2, np.int8)
    xb, yb = np.stack([x, x], 1), np.stack([y, y], 1)
    _agree(lambda n, l: lambda: jax.tree_util.tree_leaves(
        l.vmap(getattr(n, fn), in_axes=(1, 1))(xb, yb))[0])


# ---- seeds 5701 and 5704: integer overflow, promotion order, weak types --------------------

def test_lcm_wraps_as_jax():
    """JAX computes |x1| * (|x2| // gcd): an overflow wraps (int32 with x64 off)."""
    x = np.array([[2 ** 20 + 3, -6, 0, 7, -2 ** 30]], np.int64)
    y = np.array([[2 ** 12 + 5], [-4], [0], [21], [3]], np.int64)
    _agree(lambda n, l: lambda: n.lcm(x, y))
    _agree(lambda n, l: lambda: n.lcm(-4, 6))


def test_isclose_promotes_as_jax():
    """A Python int with an unsigned array wraps into its dtype first (-4 -> 252)."""
    _agree(lambda n, l: lambda: n.isclose(-4, np.array(254, np.uint8), rtol=0.5))
    _agree(lambda n, l: lambda: n.isclose(np.array([1, 2]), 2))


@pytest.mark.parametrize("fn", ["angle", "signbit"])
@pytest.mark.parametrize("arg", [-4, 0.0, 2.5, True, "int8", "array"])
def test_angle_and_signbit_weak_types(fn, arg):
    a = {"int8": np.int8(3), "array": np.array([1, -2])}.get(arg, arg)
    want = getattr(jnp, fn)(a)
    got = getattr(mnp, fn)(a)
    assert (got.dtype, got.weak_type) == (want.dtype, want.weak_type)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


# ---- the long tier, issue 57 (MJAX_FUZZ_EXAMPLES=40, every function) ------------------------

def _typed_outcome(f):
    """_outcome of each result, with its weak type and whether it is an Array."""
    try:
        r = f()
    except Exception as e:  # noqa: BLE001
        return type(e)
    r = r if isinstance(r, (tuple, list)) else (r,)
    return [(np.asarray(x).dtype, np.asarray(x).shape, np.asarray(x).tobytes(),
             getattr(x, "weak_type", None), isinstance(x, (jax.Array, mjax.Array)))
            for x in r]


def _agree_typed(make):
    """As _agree, weak types and Array-ness of the results compared too."""
    _agree(make, _typed_outcome)

SAME_SHAPE = {
    "broadcast_in_dim": lambda n, l: lambda a: l.lax.broadcast_in_dim(a, a.shape, (0,)),
    "lax.broadcast()": lambda n, l: lambda a: l.lax.broadcast(a, ()),
    "broadcast_arrays": lambda n, l: lambda a: n.broadcast_arrays(a)[0],
    "nested": lambda n, l: lambda a: l.vmap(
        lambda b: l.lax.broadcast_in_dim(a, a.shape, (0,)) + b)(a),
}


@pytest.mark.parametrize("name", sorted(SAME_SHAPE))
@pytest.mark.parametrize("in_axes", [0, 1])
def test_same_shape_broadcasts_under_vmap(name, in_axes):
    """JAX binds broadcast_in_dim to the operand's own shape (only a scalar comes back
    as it is): under vmap an int64 NumPy argument gives a new int32 Array. (lax.broadcast
    by no sizes returns its operand in both; over axis 1 mjax's vmap then moves the axis
    of an Array, JAX's of the NumPy argument: left out.)"""
    if name == "lax.broadcast()" and in_axes == 1:
        pytest.skip("vmap of an identity over axis 1: jax moves the NumPy argument's axis")
    _agree_typed(lambda n, l: lambda: l.vmap(SAME_SHAPE[name](n, l), in_axes=in_axes)(
        X64))


POWER_ARGS = {"int": 3, "float": 1.5, "complex": 1 + 2j, "bool": True,
              "f32": np.array([1.5, 2], np.float32), "i8": np.array([1, 2], np.int8),
              "u8": np.array([1, 2], np.uint8), "b": np.array([True, False]),
              "i64": np.array([1, 2], np.int64)}


@pytest.mark.parametrize("jit", [False, True])
@pytest.mark.parametrize("base", sorted(POWER_ARGS))
def test_power_weak_types(base, jit):
    """An integer result is strong (JAX builds it on strong constants); an inexact base
    with an integer exponent array is weak only when both are."""
    for e in POWER_ARGS:
        _agree_typed(lambda n, l: lambda: (l.jit(n.power) if jit else n.power)(
            POWER_ARGS[base], POWER_ARGS[e]))


ANGLE_ARGS = [1.5, 2, True, -0.5j, 1 + 2j, np.float32(1), np.float16(2),
              np.array([1, 2], np.float16), np.array([1 + 1j], np.complex64),
              np.array([1, 2]), np.array(3, np.uint8), np.complex128(1j)]


@pytest.mark.parametrize("arg", range(len(ANGLE_ARGS)))
@pytest.mark.parametrize("deg", [False, True])
def test_angle_weak_types(arg, deg):
    """A Python complex's angle is weak (atan2 of its weak parts); a real scalar's or an
    integer's parts are converted to the default float (strong)."""
    x = ANGLE_ARGS[arg]
    _agree_typed(lambda n, l: lambda: n.angle(x, deg))
    _agree_typed(lambda n, l: lambda: l.jit(lambda a: n.angle(a, deg))(x))


def test_frexp_jvp_and_grad_of_a_python_float():
    """jvp gives the rule a Python float primal (it raised AttributeError); the
    gradient of a weak input is weak, as JAX's."""
    _agree_typed(lambda n, l: lambda: l.jvp(lambda a: n.frexp(a)[0], (1.5,), (1.0,)))
    _agree_typed(lambda n, l: lambda: l.grad(lambda a: n.frexp(a)[0])(1.5))


@pytest.mark.parametrize("strong_primal", [False, True])
@pytest.mark.parametrize("two_outputs", [False, True])
@pytest.mark.parametrize("strong_tangent", [False, True])
def test_custom_jvp_gradient_weak_types(strong_primal, two_outputs, strong_tangent):
    """JAX's jvp rules see weak tangents for weak primals, and the gradient is the
    transpose of the rule's own tangent computation (a strong constant mixed in stages a
    conversion whose transpose gives back the input's weak type)."""
    def make(n, l):
        @l.custom_jvp
        def g(x):
            y = x * n.float32(2) if strong_primal else x * 2
            return (y, n.int32(1)) if two_outputs else y

        @g.defjvp
        def g_jvp(p, t):
            (x,), (tx,) = p, t
            tt = tx * n.float32(3) if strong_tangent else tx * 3
            return g(x), ((tt, np.zeros((), l.dtypes.float0)) if two_outputs else tt)
        f = (lambda a: g(a)[0]) if two_outputs else g
        return lambda: l.grad(f)(1.5)
    _agree_typed(make)


BITCASTS = [(np.array(-4, np.int8), np.float32), (np.array([1, 2, 3], np.uint16), np.uint32),
            (np.array([True, False, True]), np.complex64), (np.array(1, np.int32), np.complex64),
            (np.array([True]), np.uint8), (np.array(1.5, np.float32), np.bool_)]


@pytest.mark.parametrize("case", range(len(BITCASTS)))
@pytest.mark.parametrize("jit", [False, True])
def test_bitcast_convert_type_error_classes(case, jit):
    """A widening bitcast without the minor dimension it consumes is a shape error
    (ValueError), checked before the bool/complex dtype error (TypeError), as JAX's."""
    x, dt = BITCASTS[case]
    _agree(lambda n, l: lambda: (l.jit if jit else (lambda f: f))(
        lambda a: l.lax.bitcast_convert_type(a, dt))(x))


CONVERTS = [(np.array([2**40 + 5, -1, 2**33 - 1], np.int64), np.float32),
            (np.array([2**63 + 5, 2**32 + 7], np.uint64), np.float32),
            (np.array([16777217.0, -3.5]), np.int32),
            (np.array([np.inf, 3e38, -np.inf, np.nan, 5], "bfloat16"), np.int16),
            (1 + 2j, np.float32), (1 + 2j, np.int32), (1 + 2j, np.bool_),
            (np.complex64(1 + 2j), np.float32), (np.complex128(-1 + 3j), np.int64)]


@pytest.mark.parametrize("case", range(len(CONVERTS)))
@pytest.mark.parametrize("jit", [False, True])
def test_convert_element_type_of_constants(case, jit):
    """A NumPy value is canonicalized first (int64 wraps to int32, float64 rounds to
    float32 with x64 off); a bfloat16 array saturates as other floats do; a Python complex
    converted to a real dtype (not bool) is NumPy's TypeError, eagerly or folded in a
    trace."""
    x, dt = CONVERTS[case]
    def make(n, l):
        def f():
            return l.lax.convert_element_type(x, dt)
        return l.jit(f) if jit else f
    _agree(make)


@pytest.mark.parametrize("f", [lambda l: lambda x: l.lax.bitcast_convert_type(x, np.float32),
                               lambda l: lambda x: l.lax.bitcast_convert_type(x, "float32") * x,
                               lambda l: lambda x: l.lax.stop_gradient(x) * np.float32(2) + x])
def test_grad_through_a_zero_derivative_op_keeps_the_weak_type(f):
    """A zero-derivative op (bitcast_convert_type, stop_gradient) gives its operand no
    cotangent (JAX's symbolic zero), so a Python float's gradient stays weak."""
    _agree_typed(lambda n, l: lambda: l.grad(f(l))(1.5))


NN_WEAK_ARGS = [1 + 2j, True, np.array([True, False]), 2, np.array([1, 2], np.int8),
                np.array([1 + 1j], np.complex64)]


@pytest.mark.parametrize("arg", range(len(NN_WEAK_ARGS)))
@pytest.mark.parametrize("name", ["softplus", "log_sigmoid", "mish", "soft_sign"])
def test_nn_activation_weak_types(name, arg):
    """JAX's compositions: logaddexp of a Python complex wraps its phase with constants
    weak beside a weak scalar (softplus, log_sigmoid, mish are weak); soft_sign and mish
    of bool promote it beside Python scalars (weak)."""
    x = NN_WEAK_ARGS[arg]
    _agree_typed(lambda n, l: lambda: getattr(l.nn, name)(x))
    _agree_typed(lambda n, l: lambda: n.logaddexp(x, 0.5))


@pytest.mark.parametrize("name", ["softmax", "log_softmax"])
@pytest.mark.parametrize("x,axis", [(True, -1), (np.array(True), 0), (np.array([True]), 1),
                                    (np.array([True]), -1), (np.array(True), None)])
def test_softmax_of_bool_checks_the_axis_first(name, x, axis):
    """JAX's max runs before the subtraction bool refuses: a bad axis is a ValueError."""
    _agree(lambda n, l: lambda: getattr(l.nn, name)(x, axis=axis))


@pytest.mark.parametrize("f", [
    lambda n, l: lambda a: n.max(a, axis=0, initial=-np.inf).sum(),
    lambda n, l: lambda a: n.min(a, keepdims=True, initial=np.inf).sum(),
    lambda n, l: lambda a: (l.nn.softmax(a, axis=None) * np.arange(2.0)).sum()])
def test_grad_of_max_over_an_empty_axis(f):
    """The max/min JVP compares x with the answer broadcast from its kept 1s: to x's
    size 0, not to 1 (an InferError)."""
    _agree_typed(lambda n, l: lambda: l.grad(f(n, l))(np.zeros((0, 2), np.float32)))


@pytest.mark.parametrize("f", [
    lambda n, l: lambda a: l.lax.reshape(a, ()),
    lambda n, l: lambda a: l.lax.reshape(a, (), dimensions=()),
    lambda n, l: lambda a: l.lax.select_n(np.int32(0), a),
    lambda n, l: lambda a: l.lax.select_n(True, a),
    lambda n, l: lambda a: n.abs(a.astype(np.uint8)),
    lambda n, l: lambda a: n.abs(a.astype(np.bool_))])
@pytest.mark.parametrize("x", [np.arange(2, dtype=np.float32), np.arange(2, dtype=np.uint8)])
def test_ops_jax_binds_on_an_unchanged_operand(f, x):
    """JAX binds a reshape of a scalar to () and a select_n of one case, and its jnp.abs
    of unsigned or bool is jitted: under vmap a new Array, not the NumPy argument."""
    _agree_typed(lambda n, l: lambda: l.vmap(f(n, l))(x))
    _agree_typed(lambda n, l: lambda: f(n, l)(x[0]))


def test_select_n_without_cases():
    _agree(lambda n, l: lambda: l.lax.select_n(np.int32(0)))


@pytest.mark.parametrize("padding", [((0, -1), (2, 2)), ((-2, -2), (0, 0)),
                                     ((-1, -1), (0, 0)), ((1, -1), (0, 0))])
@pytest.mark.parametrize("mode", ["eager", "jvp", "grad"])
def test_reduce_window_negative_padding(padding, mode):
    """A negative padded size has no windows (JAX's stride_dim); the max-pool gradient
    on the CPU pads the operand and slices it back, as JAX's: ValueError where the padded
    size is negative, TypeError for the slice otherwise."""
    if mode == "grad" and ON_TPU:
        pytest.skip("TPU: JAX's gradient there is a select_and_scatter_add with negative "
                    "padding, on which XLA's TPU compiler aborts the process")
    def make(n, l):
        def f(a):
            return l.lax.reduce_window(a, -np.inf, l.lax.max, (2, 1), (1, 1), padding)
        x = np.zeros((0 if padding[0] == (0, -1) else 3, 5), np.float32)
        if mode == "jvp":
            return lambda: l.jvp(f, (x,), (x,))
        if mode == "grad":
            return lambda: l.grad(lambda a: f(a).sum())(x)
        return lambda: f(x)
    _agree_typed(make)


def test_max_pool_gradient_with_a_negative_padded_size_is_refused_for_the_tpu():
    """Lowered for a TPU, such a gradient is a select_and_scatter_add with the padding
    (JAX's too), and XLA's TPU compiler aborts the process on a negative padded size:
    mjax raises the CPU's ValueError before handing it over."""
    def loss(a):
        return mjax.lax.reduce_window(a, -np.inf, mjax.lax.max, (2, 1), (1, 1),
                                      ((-2, -2), (0, 0))).sum()
    x = np.zeros((3, 5), np.float32)
    with pytest.raises(ValueError, match=r"padded operand \(-1, 5\) has a negative size"):
        mjax.jit(mjax.grad(loss)).trace(x).lower(lowering_platforms=("tpu",))
    ok = mjax.jit(mjax.grad(lambda a: mjax.lax.reduce_window(
        a, -np.inf, mjax.lax.max, (2, 1), (1, 1), ((1, 0), (0, 0))).sum()))
    assert "select_and_scatter" in ok.trace(x).lower(lowering_platforms=("tpu",)).as_text()


@pytest.mark.parametrize("f", [
    lambda n, l: lambda: n.trace(np.zeros((1, 4, 3), np.int8), 2, 1, -2),
    lambda n, l: lambda: n.trace([[1, 2], [3, 4]]),
    lambda n, l: lambda: l.vmap(lambda a: n.diff(a, n=0, axis=0))(np.zeros(2, np.float32)),
    lambda n, l: lambda: n.diff(np.float32(2), n=1),
    lambda n, l: lambda: n.diff(np.zeros(3), n=-1),
    lambda n, l: lambda: n.iscomplex(False),
    lambda n, l: lambda: n.isreal(np.array([True])),
    lambda n, l: lambda: n.isreal(2.5),
    lambda n, l: lambda: n.ldexp(np.array([2, 0], np.uint64), np.uint64(5929059149329981494)),
    lambda n, l: lambda: n.ldexp(np.float32(0), np.int32(2**31 - 1)),
    lambda n, l: lambda: n.ldexp(1.5, True),
    lambda n, l: lambda: n.geomspace(np.int8(-1), 2 + 0j, 5, dtype=np.uint8),
    lambda n, l: lambda: n.geomspace(-1, -16.0, 5),
    lambda n, l: lambda: n.bitwise_count(np.array([True, False])),
    lambda n, l: lambda: n.bitwise_count(True)])
def test_numpy_findings_of_the_unrun_functions(f):
    """trace refuses one axis twice (ValueError); diff with n=0 is a new value, its checks
    in JAX's order; iscomplex/isreal compare with lax._const's zero (strong beside a
    strong bool); ldexp is JAX's frexp-based formula (a huge exponent saturates, 0 stays
    0); geomspace is JAX's sign * logspace (no NumPy endpoints or errors); bitwise_count
    counts a bool as an integer."""
    _agree_typed(f)


@pytest.mark.parametrize("f", [
    lambda n, l: lambda: n.median(np.uint64(3), keepdims=True),
    lambda n, l: lambda: n.quantile(np.float32(3), np.array([0.5, 0.2]), keepdims=True),
    lambda n, l: lambda: n.transpose(np.zeros(1), []),
    lambda n, l: lambda: l.lax.transpose(np.zeros((1, 2)), (0,)),
    lambda n, l: lambda: n.square(False),
    lambda n, l: lambda: n.square(np.array([True, False])),
    lambda n, l: lambda: n.spacing(np.array([1.5, -1.5, -1.0, 0.0, np.inf, -65504], np.float16)),
    lambda n, l: lambda: n.spacing(np.array([0.0, -0.0, np.inf, 3e38], np.float32)),
    lambda n, l: lambda: n.array_split(np.zeros((2, 1, 1), np.float32), [1, -1, 3]),
    lambda n, l: lambda: n.array_split(np.arange(6), [4, 2])])
def test_numpy_findings_of_the_unrun_functions_2(f):
    """A 0-d quantile with keepdims keeps its ravel's axis; a permutation of another
    length is transpose's TypeError; square of bool squares the default integer; spacing
    is JAX's formula (float16 steps towards +inf; a zero step is the smallest
    subnormal); array_split refuses negative sizes as split does."""
    _agree_typed(f)


@pytest.mark.parametrize("name", ["max", "min", "sum", "prod", "any", "all", "mean"])
@pytest.mark.parametrize("axis", [0, -1, (0,), ()])
def test_reduction_of_a_scalar_over_axis_0(name, axis):
    """A 0-d array has no axis 0: ValueError (max/min raised IndexError)."""
    _agree(lambda n, l: lambda: getattr(n, name)(np.array(2.0), axis=axis))


@pytest.mark.parametrize("a,b", [(np.arange(2), 0.5), (2.0, 0.5), (np.float32(2), 0.5),
                                 (1.5, np.array([2.0, 3.0])), (np.array(2.0), 1)])
def test_hypot_weak_types(a, b):
    """hypot's last select takes lax._const's infinity (strong beside an array), so a
    weakly typed array's result, and the gradient of a Python float beside an integer
    array, are strong, as JAX's (a final conversion kept the cotangent weak)."""
    _agree_typed(lambda n, l: lambda: n.hypot(a, b))
    if isinstance(b, float):
        _agree_typed(lambda n, l: lambda: l.grad(lambda y: n.hypot(a, y).sum())(b))


@pytest.mark.parametrize("f", [
    lambda n, l: lambda: l.nn.softmax(np.array([0, 1, 2, 4294967294], np.uint32)),
    lambda n, l: lambda: l.nn.log_softmax(np.array([[1, -2**31], [5, 2**31 - 1]], np.int32),
                                          axis=0),
    lambda n, l: lambda: n.triu(np.arange(4.0), 1),
    lambda n, l: lambda: n.tril(np.float32(1)),
    lambda n, l: lambda: n.tril([[1, 2], [3, 4]]),
    lambda n, l: lambda: n.logaddexp2(1 + 2j, np.array(3, np.uint16)),
    lambda n, l: lambda: n.logaddexp2(1.0, np.array(1, np.uint16)),
    lambda n, l: lambda: n.logaddexp2(np.arange(2), 2.5)])
def test_findings_of_seed_1(f):
    """softmax/log_softmax shift an integer array by its max in its own dtype (the
    difference wraps, as JAX's, before exp promotes); triu/tril refuse fewer than two
    dimensions and lists; logaddexp2 is JAX's formula with lax._const's constants (weak
    beside weak promoted scalars, a Python float beside a NumPy integer included)."""
    _agree_typed(f)
