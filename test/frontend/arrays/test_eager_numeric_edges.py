"""Numeric edge cases checked against JAX, eagerly (twice: the second call may be a C
fast path cache hit) and under jit: integer division and remainder by zero, shifts of
bools, a float times a bool (the sign of the zero), and reductions' axis errors."""
import operator

import numpy as np
import pytest

import mjax
import mjax.numpy as mnp

import jax  # (the test-only oracle: missing, these tests fail)
import jax.numpy as jnp

_MODULES = {"mjax": (mjax, mnp), "jax": (jax, jnp)}


def _results(make, args):
    """{name: [eager, eager again, jit]} of make(numpy_module)(*args) in mjax and JAX."""
    out = {}
    for name, (top, np_mod) in _MODULES.items():
        fn = make(np_mod)
        xs = [np_mod.asarray(a) for a in args]
        out[name] = [fn(*xs), fn(*xs), top.jit(fn)(*xs)]
    return out


def _same(got, want, what):
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), what
        for g, w in zip(got, want):
            _same(g, w, what)
        return
    g, w = np.asarray(got), np.asarray(want)
    assert g.dtype == w.dtype, (what, g.dtype, w.dtype)
    assert g.shape == w.shape, (what, g.shape, w.shape)
    assert getattr(got, "weak_type", False) == getattr(want, "weak_type", False), what
    np.testing.assert_array_equal(g, w, err_msg=str(what))
    if g.dtype.kind in "fc":    # (and the signs of zeros and NaNs' places)
        for part in ((np.real, np.imag) if g.dtype.kind == "c" else (np.asarray,)):
            np.testing.assert_array_equal(np.signbit(part(g)), np.signbit(part(w)),
                                          err_msg=f"sign of zero: {what}")


def _check(make, *args):
    res = _results(make, args)
    want = res["jax"][0]
    for i, got in enumerate(res["mjax"]):
        _same(got, want, ("eager", "eager again", "jit")[i])


_A = np.array([7, -7, 0, 5, -5, 3, -128, 1], np.int32)
_B = np.array([0, 0, 0, 2, 2, -2, -1, 0], np.int32)
_DIVISION = {
    "remainder": lambda m: m.remainder, "mod": lambda m: m.mod,
    "%": lambda m: operator.mod, "fmod": lambda m: m.fmod,
    "floor_divide": lambda m: m.floor_divide, "//": lambda m: operator.floordiv,
    "divmod": lambda m: m.divmod,
}


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.uint8, np.uint32])
@pytest.mark.parametrize("name", sorted(_DIVISION))
def test_integer_division_by_zero_matches_jax(name, dtype):
    _check(_DIVISION[name], _A.astype(dtype), _B.astype(dtype))


@pytest.mark.parametrize("name", sorted(_DIVISION))
def test_integer_division_by_a_python_zero_and_of_a_python_int(name):
    op = _DIVISION[name]
    _check(lambda m: lambda x: op(m)(x, 0), _A)
    _check(lambda m: lambda x: op(m)(5, x), _B)
    _check(lambda m: lambda x: op(m)(x, 0), _A.astype(np.uint8))


@pytest.mark.parametrize("name", sorted(_DIVISION))
def test_bool_division_matches_jax(name):
    x = np.array([True, False, True, False])
    y = np.array([False, False, True, True])
    _check(_DIVISION[name], x, y)


@pytest.mark.parametrize("name", ["remainder", "fmod", "floor_divide", "divmod"])
def test_float_division_by_zero_matches_jax(name):
    x = np.array([7.5, -7.5, 0.0, -0.0, np.inf, 3.0], np.float32)
    y = np.array([0.0, -0.0, 0.0, -0.0, 2.0, -np.inf], np.float32)
    _check(_DIVISION[name], x, y)


_SHIFTS = {"left_shift": lambda m: m.left_shift, "right_shift": lambda m: m.right_shift,
           "bitwise_left_shift": lambda m: m.bitwise_left_shift,
           "bitwise_right_shift": lambda m: m.bitwise_right_shift,
           "<<": lambda m: operator.lshift, ">>": lambda m: operator.rshift}
_BOOLS = np.array([True, False, True, False])


@pytest.mark.parametrize("name", sorted(_SHIFTS))
@pytest.mark.parametrize("other", [np.array([True, True, False, False]),
                                   np.array([1, 2, 3, 0], np.int8),
                                   np.array([1, 2, 200, 7], np.uint8),
                                   np.array([-8, 2, 3, 31], np.int32)],
                         ids=["bool", "int8", "uint8", "int32"])
def test_shifts_take_bools_like_jax(name, other):
    op = _SHIFTS[name]
    _check(op, _BOOLS, other)
    _check(op, other, _BOOLS)


@pytest.mark.parametrize("name", sorted(_SHIFTS))
def test_shifts_of_bools_by_python_scalars(name):
    op = _SHIFTS[name]
    _check(lambda m: lambda x: op(m)(x, True), _BOOLS)
    _check(lambda m: lambda x: op(m)(x, 1), _BOOLS)
    _check(lambda m: lambda x: op(m)(1, x), _BOOLS)


_FLOATS = np.array([[-0.0, 1.5, np.inf], [np.nan, -2.0, -0.0]], np.float32)
_MASK = np.array([[False, True, False], [False, False, True]])
_MUL = {"multiply": lambda m: m.multiply, "*": lambda m: operator.mul}


@pytest.mark.parametrize("name", sorted(_MUL))
@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.complex64, np.int32, np.uint8])
def test_number_times_bool_array_matches_jax(name, dtype):
    op = _MUL[name]
    _check(op, _FLOATS.astype(dtype) if np.dtype(dtype).kind in "fc"
           else np.arange(6, dtype=dtype).reshape(2, 3), _MASK)
    _check(op, _MASK, _FLOATS.astype(dtype) if np.dtype(dtype).kind in "fc"
           else np.arange(6, dtype=dtype).reshape(2, 3))


@pytest.mark.parametrize("name", sorted(_MUL))
def test_float_times_bool_scalars_and_broadcasts_match_jax(name):
    op = _MUL[name]
    _check(lambda m: lambda x: op(m)(x, False), _FLOATS)
    _check(lambda m: lambda x: op(m)(True, x), _FLOATS)
    _check(lambda m: lambda x: op(m)(x, np.bool_(False)), _FLOATS)
    _check(lambda m: lambda b: op(m)(b, -0.0), _MASK)
    _check(lambda m: lambda b: op(m)(-np.inf, b), _MASK)
    _check(op, _FLOATS, np.array(False))
    _check(op, _FLOATS[:1], _MASK)
    _check(op, _FLOATS, _MASK[:1])
    _check(op, _MASK, _MASK)


def test_float_array_times_numpy_bool_array_eagerly():
    got = mnp.multiply(mnp.asarray(_FLOATS), _MASK)
    want = jnp.multiply(jnp.asarray(_FLOATS), _MASK)
    _same(got, want, "eager, a NumPy mask")
    _same(mnp.multiply(_FLOATS, mnp.asarray(_MASK)),
          jnp.multiply(_FLOATS, jnp.asarray(_MASK)), "eager, a NumPy float array")


_X = np.arange(6, dtype=np.float32).reshape(2, 3)
_AXIS_CASES = {
    "sum": lambda m, a, ax: m.sum(a, axis=ax), "method sum": lambda m, a, ax: a.sum(axis=ax),
    "prod": lambda m, a, ax: m.prod(a, axis=ax), "max": lambda m, a, ax: m.max(a, axis=ax),
    "min": lambda m, a, ax: a.min(axis=ax), "all": lambda m, a, ax: m.all(a, axis=ax),
    "any": lambda m, a, ax: m.any(a, axis=ax), "mean": lambda m, a, ax: m.mean(a, axis=ax),
    "var": lambda m, a, ax: m.var(a, axis=ax), "std": lambda m, a, ax: a.std(axis=ax),
    "argmax": lambda m, a, ax: m.argmax(a, axis=ax),
    "argmin": lambda m, a, ax: a.argmin(axis=ax),
    "cumsum": lambda m, a, ax: m.cumsum(a, axis=ax),
    "cumprod": lambda m, a, ax: a.cumprod(axis=ax),
    "nansum": lambda m, a, ax: m.nansum(a, axis=ax),
    "nanmean": lambda m, a, ax: m.nanmean(a, axis=ax),
    "ptp": lambda m, a, ax: m.ptp(a, axis=ax),
    "count_nonzero": lambda m, a, ax: m.count_nonzero(a, axis=ax),
    "average": lambda m, a, ax: m.average(a, axis=ax),
    "median": lambda m, a, ax: m.median(a, axis=ax),
    "sort": lambda m, a, ax: m.sort(a, axis=ax),
    "argsort": lambda m, a, ax: m.argsort(a, axis=ax),
}


def _error(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 (the error is the result compared)
        return e
    raise AssertionError("no error raised")


def _clauses(e):
    """The `except` clauses among these that catch e."""
    return {c for c in (ValueError, IndexError, TypeError) if isinstance(e, c)}


def _first_line(e):
    return str(e).split(" (at ")[0].split(" (in ")[0]


@pytest.mark.parametrize("axis", [2, -3, (0, 2)])
@pytest.mark.parametrize("name", sorted(_AXIS_CASES))
def test_out_of_range_axis_errors_are_caught_like_jax(name, axis):
    if not isinstance(axis, int) and name in ("argmax", "argmin", "cumsum", "cumprod",
                                              "sort", "argsort"):
        pytest.skip("takes an int axis only")
    case = _AXIS_CASES[name]
    want = _error(lambda: case(jnp, jnp.asarray(_X), axis))
    for how, run in (("eager", lambda: case(mnp, mnp.asarray(_X), axis)),
                     ("jit", lambda: mjax.jit(lambda a: case(mnp, a, axis))(mnp.asarray(_X)))):
        got = _error(run)
        # (mjax raises NumPy's AxisError, a ValueError and an IndexError, where JAX raises
        # one of those: every clause that catches JAX's error catches mjax's)
        assert _clauses(want) <= _clauses(got), (how, got, want)
        if "out of bounds" in str(want):
            assert _first_line(got) == str(want), (how, got, want)


@pytest.mark.parametrize("name", ["sum", "prod", "max", "all", "mean", "var", "std",
                                  "nansum", "nanmean", "ptp", "count_nonzero"])
@pytest.mark.parametrize("axis", [(0, 0), (0, -2)])
def test_duplicate_reduction_axes_raise_jax_value_error(name, axis):
    case = _AXIS_CASES[name]
    want = _error(lambda: case(jnp, jnp.asarray(_X), axis))
    for run in (lambda: case(mnp, mnp.asarray(_X), axis),
                lambda: mjax.jit(lambda a: case(mnp, a, axis))(mnp.asarray(_X))):
        got = _error(run)
        assert type(got) is type(want) is ValueError
        assert _first_line(got) == str(want)


def test_duplicate_axes_of_expand_dims_and_squeeze_raise_jax_value_error():
    for make in (lambda m: m.expand_dims(m.ones((2, 3)), (0, -4)),
                 lambda m: m.squeeze(m.ones((1, 3)), (0, -2))):
        want, got = _error(lambda: make(jnp)), _error(lambda: make(mnp))
        assert type(got) is type(want) is ValueError
        assert _first_line(got) == str(want)


def test_duplicate_axes_given_as_a_list():
    want = _error(lambda: jnp.sum(jnp.asarray(_X), axis=[1, 1]))
    got = _error(lambda: mnp.sum(mnp.asarray(_X), axis=[1, 1]))
    assert type(got) is type(want) is ValueError
    assert _first_line(got) == str(want)
