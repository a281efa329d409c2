"""Eager ops' cache hit in C (runtime/_eagerpath.c, installed by frontend/arrays/eager_fast.py on
core.bind, the one-op jnp functions and x + y, x - y, x * y) gives what the Python path
and jax give: values, dtypes, weak types, signs of zero, errors; it steps aside under
traces, config changes and context managers. The same checks run in a subprocess with
MJAX_NO_C_FASTPATH=1 (the Python path only)."""
import math
import os
import pathlib
import subprocess
import sys

import jax
import jax.numpy as jjnp
import ml_dtypes
import numpy as np
import pytest

from frontend_util import python_calls
import mjax
import mjax.numpy as jnp
from mjax import core
from mjax.arrays import eager, eager_fast
from mjax.arrays.array import Array
from mjax.config import config
from mjax.dialect.ops.elementwise import SinOp

C_ON = eager_fast.C_EAGER is not None
NO_C = os.environ.get("MJAX_NO_C_FASTPATH", "") not in ("", "0")
OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
       "<": lambda a, b: a < b, "<=": lambda a, b: a <= b, ">": lambda a, b: a > b,
       ">=": lambda a, b: a >= b, "==": lambda a, b: a == b, "!=": lambda a, b: a != b,
       "r+": lambda a, b: b + a, "r-": lambda a, b: b - a, "r*": lambda a, b: b * a}
METHODS = {"+": "__add__", "-": "__sub__", "*": "__mul__", "<": "__lt__", "<=": "__le__",
           ">": "__gt__", ">=": "__ge__", "==": "__eq__", "!=": "__ne__", "r+": "__radd__",
           "r-": "__rsub__", "r*": "__rmul__"}
# (mjax's sources wherever its subpackages live: an editable install keeps dialect/,
# runtime/ and passes/ beside frontend/, a wheel under mjax/)
PKG = tuple(os.path.dirname(m.__file__) + os.sep
            for m in (mjax, mjax.dialect, mjax.runtime, mjax.passes))


def _py(f):
    """The Python function a C-wrapped one stands for."""
    return getattr(f, "fallback", f)


def _same(got, want):
    assert type(got) is Array
    assert (got.dtype, got.shape, got.weak_type) == (want.dtype, want.shape, want.weak_type)
    g, w = np.asarray(got), np.asarray(want)
    if g.dtype == ml_dtypes.bfloat16:   # (NumPy's NaN test needs a NumPy float)
        g, w = g.astype(np.float32), w.astype(np.float32)
    np.testing.assert_array_equal(g, w)
    if g.dtype.kind == "f":    # (signs of zero too)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


def _arr(dtype, lib):
    values = np.array([0.5, -1.5, 2.0, 0.0], np.float64)
    if np.dtype(dtype).kind in "iu":
        values = np.array([1, 2, 3, 0])
    return lib.asarray(values.astype(dtype))


def test_c_module_is_built_and_used():
    if NO_C:
        assert not C_ON and not hasattr(jnp.sin, "fallback")
        return
    built = list(pathlib.Path(eager_fast.__file__).parent.parent.glob("runtime/_eagerpath*"))
    if not any(p.suffix in (".so", ".pyd") for p in built):
        pytest.skip("the C extension was not built (no compiler at install time)")
    assert C_ON and hasattr(jnp.sin, "fallback") and hasattr(core.bind, "fallback")
    assert hasattr(Array.__mul__, "fallback")
    assert jnp.sin.__name__ == "sin" and "sin" in jnp.sin.__doc__


UNARY = ["sin", "cos", "exp", "log", "tanh", "sqrt", "negative", "sign", "arctan"]
DTYPES = [np.float32, np.float16, ml_dtypes.bfloat16, np.complex64, np.int32, np.int8,
          np.uint32]


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_unary_same_as_python_path_and_jax(dtype):
    for name in UNARY:
        f, jf = getattr(jnp, name), getattr(jjnp, name)
        x = _arr(dtype, jnp)
        try:
            want = jf(_arr(dtype, jjnp))
        except TypeError:
            with pytest.raises(TypeError):
                f(x)
            continue
        for _ in range(3):            # (the second and later calls take the C path)
            _same(f(x), want)
            _same(_py(f)(x), want)


@pytest.mark.parametrize("dtype", DTYPES + [np.bool_], ids=lambda d: np.dtype(d).name)
def test_binary_same_as_python_path_and_jax(dtype):
    x, y = _arr(dtype, jnp), _arr(dtype, jnp)[::-1]
    jx, jy = _arr(dtype, jjnp), _arr(dtype, jjnp)[::-1]
    for sym, op in OPS.items():
        method = getattr(Array, METHODS[sym])
        # (Array op Array never calls __rXX__; called directly, a.__rsub__(b) is b - a)
        a, b, ja, jb = x, y, jx, jy
        try:
            want = op(ja, jb)
        except TypeError:
            with pytest.raises(TypeError):
                op(a, b)
            continue
        before = getattr(method, "hits", 0)
        for _ in range(3):
            _same(op(a, b), want)
            _same(method(a, b), want)
            _same(_py(method)(a, b), want)
        if C_ON and sym[0] != "r" and (dtype is not np.bool_ or sym in ("==", "!=", "<")) \
                and not (np.dtype(dtype).kind == "c" and sym in ("<", "<=", ">", ">=")):
            assert method.hits > before


SCALARS = [1.0, -0.0, 0.0, 2, -3, 0, 1e30, float("inf"), float("nan"), True, 1 + 2j]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_array_with_python_scalar(dtype):
    x, jx = _arr(dtype, jnp), _arr(dtype, jjnp)
    for s in SCALARS:
        for sym, op in OPS.items():
            if dtype is np.bool_ and sym in ("*", "r*") and type(s) is float and (
                    not math.isfinite(s) or math.copysign(1, s) < 0):
                continue   # (known, not on the C path: mjax's False * -0.0 is -0.0,
                #             False * inf nan)
            try:
                want = op(jx, s)
            except (TypeError, OverflowError) as e:
                with pytest.raises(type(e)):
                    op(x, s)
                continue
            for _ in range(3):
                _same(op(x, s), want)
                m = _py(getattr(Array, METHODS[sym]))
                _same(m(x, s), want)
    # (an int outside int32: JAX's OverflowError, on every call)
    for _ in range(2):
        with pytest.raises(OverflowError):
            jx + 2 ** 40
        with pytest.raises(OverflowError):
            _arr(np.int32, jnp) + 2 ** 40


def test_weak_and_mixed_operands_take_the_python_path():
    w = mjax.jit(lambda: 2.0)()                     # a weakly typed float32 scalar array
    jw = jax.jit(lambda: 2.0)()
    x, jx = _arr(np.float32, jnp), _arr(np.float32, jjnp)
    h, jh = _arr(np.float16, jnp), _arr(np.float16, jjnp)
    for _ in range(3):
        _same(jnp.sin(w), jjnp.sin(jw))
        _same(w * w, jw * jw)
        _same(x * w, jx * jw)
        _same(x * h, jx * jh)
        _same(x + np.float32(1.5), jx + np.float32(1.5))
        _same(1.5 + x, 1.5 + jx)
        _same(x[:2] * x[1:3], jx[:2] * jx[1:3])


def test_sum_fast_branch():
    x, jx = _arr(np.float32, jnp), _arr(np.float32, jjnp)
    for _ in range(3):
        _same(jnp.sum(x), jjnp.sum(jx))
        _same(jnp.max(x), jjnp.max(jx))
    with config.override(jax_disable_jit=True):
        _same(jnp.sum(x), jjnp.sum(jx))
    x.sharding    # (a sharding object set: the general path)
    _same(jnp.sum(x), jjnp.sum(jx))


def test_config_changes_and_contexts():
    x = jnp.asarray(np.array([1.0, -1.0], np.float32))
    for _ in range(2):
        jnp.log(x), x * x
    with config.override(jax_debug_nans=True):
        with pytest.raises(FloatingPointError):
            jnp.log(x)
    config.update("jax_debug_nans", True)
    try:
        with pytest.raises(FloatingPointError):
            jnp.log(x)
        with pytest.raises(FloatingPointError):
            x * math.nan
    finally:
        config.update("jax_debug_nans", False)
    assert np.isnan(np.asarray(jnp.log(x))[1])
    with config.override(jax_enable_x64=True):
        y = jnp.asarray(np.array([1.0, 2.0]))
        assert (y * y).dtype == np.float64 and (y + 1.0).dtype == np.float64
    assert (x + 1).dtype == np.float32
    with mjax.default_device(mjax.devices()[0]):
        _same(jnp.sin(x), jjnp.sin(jjnp.asarray(np.asarray(x))))


def test_clear_caches_recompiles():
    x = _arr(np.float32, jnp)
    jnp.cos(x), jnp.cos(x)
    mjax.clear_caches()
    assert not eager._CACHE
    _same(jnp.cos(x), jjnp.cos(_arr(np.float32, jjnp)))
    assert eager._CACHE


def test_errors_and_traces():
    d = _arr(np.float32, jnp)
    x = _arr(np.float32, jnp)
    jnp.sin(d), d * x, d + 1.0
    d.delete()
    for call in (lambda: jnp.sin(d), lambda: d * x, lambda: x * d, lambda: d + 1.0):
        with pytest.raises(RuntimeError, match="Array has been deleted"):
            call()
    # Under traces the C path steps aside (tracers are not Arrays; the stack is set).
    g = mjax.grad(lambda v: jnp.sum(jnp.sin(v) * v + 1.0))
    jg = jax.grad(lambda v: jjnp.sum(jjnp.sin(v) * v + 1.0))
    _same(g(x), jg(_arr(np.float32, jjnp)))
    _same(mjax.jit(lambda v: jnp.exp(v) - v)(x),
          jax.jit(lambda v: jjnp.exp(v) - v)(_arr(np.float32, jjnp)))
    assert "sin" in str(mjax.make_jaxpr(jnp.sin)(x))


def test_cached_ops_run_no_python():
    if not C_ON:
        pytest.skip("no C module")
    x = jnp.ones(3)
    y = jnp.ones(3)
    calls = [lambda: jnp.sin(x), lambda: x * y, lambda: x - y, lambda: x + 1.0,
             lambda: x * -0.0, lambda: core.bind(SinOp, x), lambda: 1.0 - x,
             lambda: x < y, lambda: x >= 0.5]
    for call in calls:
        call(), call()
        assert python_calls(call, lambda f: f.startswith(PKG)) == []


def test_python_path_only_in_a_subprocess():
    env = dict(os.environ, MJAX_NO_C_FASTPATH="1")
    code = ("import mjax.numpy as jnp; from mjax import core; from mjax.arrays import eager_fast; "
            "assert eager_fast.C_EAGER is None and not hasattr(core.bind, 'fallback'); "
            "x = jnp.arange(3.0); r = [(x * x, jnp.sin(x), x + 1.0) for _ in range(3)]; "
            "print((x * x).tolist(), (x - 1.0).tolist(), jnp.sign(x).tolist())")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.split() == ["[0.0,", "1.0,", "4.0]", "[-1.0,", "0.0,", "1.0]",
                                  "[0.0,", "1.0,", "1.0]"]


def test_ops_with_params():
    x, jx = (lib.asarray(np.arange(6, dtype=np.float32).reshape(2, 3)) for lib in (jnp, jjnp))
    cases = [lambda a: a.reshape(3, 2), lambda a: a.T, lambda a: a.astype(np.int32),
             lambda a: a[1], lambda a: a[1, 2], lambda a: a[-1], lambda a: a[:, 1:],
             lambda a: a.astype(ml_dtypes.bfloat16), lambda a: a.sum(axis=0),
             lambda a: a.max(axis=1, keepdims=True), lambda a: a.reshape(-1)[::2]]
    before = getattr(core.bind, "hits", 0)
    for case in cases:
        want = case(jx)
        for _ in range(3):
            _same(case(x), want)
    if C_ON:
        assert core.bind.hits > before
    with pytest.raises(TypeError):
        x.reshape(4, 2)


BY_NAME = ["add", "subtract", "multiply", "less", "less_equal", "greater", "greater_equal",
           "equal", "not_equal"]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.complex64, np.bool_],
                         ids=lambda d: np.dtype(d).name)
def test_jnp_binary_functions_by_name(dtype):
    x, y = _arr(dtype, jnp), _arr(dtype, jnp)[::-1]
    jx, jy = _arr(dtype, jjnp), _arr(dtype, jjnp)[::-1]
    for name in BY_NAME:
        f, jf = getattr(jnp, name), getattr(jjnp, name)
        for args, jargs in (((x, y), (jx, jy)), ((x, 2), (jx, 2)), ((x, -0.0), (jx, -0.0)),
                            ((1.5, x), (1.5, jx))):
            if dtype is np.bool_ and name == "multiply" and type(args[1]) is float:
                continue   # (known, see test_array_with_python_scalar)
            try:
                want = jf(*jargs)
            except TypeError:
                with pytest.raises(TypeError):
                    f(*args)
                continue
            for _ in range(3):
                _same(f(*args), want)
