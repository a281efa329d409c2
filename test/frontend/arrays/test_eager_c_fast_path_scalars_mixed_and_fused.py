"""Eager ops' C fast path (runtime/_eagerpath.c) on the operands and functions it takes
beyond two arrays of one aval (measured in docs/performance.md): NumPy scalar operands
(np.float32(2) * x), jnp.maximum/minimum and the bitwise functions, operands of
different avals (int32 + float32, x * weak), and fused_when_eager functions (x / y, x //
y, x % y, x.sum(axis=0), jnp.max(x, axis=1)) give what the Python path and jax give
(values, dtypes, weak types, errors, warnings), on every call, across config changes
(x64, promotion modes, disable_jit). The same script runs in a subprocess with
MJAX_NO_C_FASTPATH=1 (the Python path only) and must print the same."""
import os
import pathlib
import subprocess
import sys
import warnings

import jax
import jax.numpy as jjnp
import ml_dtypes
import numpy as np
import pytest

from frontend_util import python_calls
import mjax
import mjax.numpy as jnp
from mjax.arrays import eager_fast
from mjax.arrays.array import Array
from mjax.config import config
from mjax.numpy import elementwise
from mjax.runtime import c_fast_path

C_ON = eager_fast.C_EAGER is not None
OPS = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b,
       "<": lambda a, b: a < b, ">=": lambda a, b: a >= b, "==": lambda a, b: a == b,
       "!=": lambda a, b: a != b}
METHODS = {"+": "__add__", "-": "__sub__", "*": "__mul__", "<": "__lt__", ">=": "__ge__",
           "==": "__eq__", "!=": "__ne__"}
ROOT = pathlib.Path(__file__).resolve().parents[3]


def _py(f):
    """The Python function a C-wrapped one stands for."""
    return getattr(f, "fallback", f)


def _same(got, want):
    assert type(got) is Array, type(got)
    assert (got.dtype, got.shape, got.weak_type) == (want.dtype, want.shape, want.weak_type)
    g, w = np.asarray(got), np.asarray(want)
    if g.dtype == ml_dtypes.bfloat16:
        g, w = g.astype(np.float32), w.astype(np.float32)
    np.testing.assert_array_equal(g, w)
    if g.dtype.kind == "f":    # (signs of zero too)
        np.testing.assert_array_equal(np.signbit(g), np.signbit(w))


def _arr(dtype, lib, shape=(4,)):
    values = np.array([0.5, -1.5, 2.0, -0.0, 3.0, 7.25], np.float64)
    if np.dtype(dtype).kind in "iub":
        values = np.array([1, 2, 3, 0, 5, 1])
    n = int(np.prod(shape))
    return lib.asarray(np.resize(values, n).reshape(shape).astype(dtype))


_BASES = (TypeError, ValueError, OverflowError)


def _raises_alike(mcall, jcall):
    """mjax's call raises as jax's (the class, by name and builtin base), on every call;
    else the same result."""
    try:
        want = jcall()
    except _BASES as e:
        for _ in range(3):
            with pytest.raises(_BASES) as info:
                mcall()
            assert type(info.value).__name__ == type(e).__name__ or \
                isinstance(info.value, type(e))   # (numpy's AxisError is a ValueError)
            assert all(isinstance(info.value, b) for b in _BASES if isinstance(e, b))
        return None
    for _ in range(3):
        _same(mcall(), want)
    return want


NP_SCALARS = [np.float32(2.5), np.float32(-0.0), np.float32("nan"), np.float16(1.5),
              np.int32(3), np.uint8(7), np.int8(-2), np.float64(0.25), np.bool_(True),
              np.complex64(1 + 2j)]


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32, np.uint8, np.int8,
                                   np.bool_, np.complex64], ids=lambda d: np.dtype(d).name)
def test_numpy_scalar_operands(dtype):
    x, jx = _arr(dtype, jnp), _arr(dtype, jjnp)
    for s in NP_SCALARS:
        for sym, op in OPS.items():
            if dtype is np.bool_ and sym == "*" and np.dtype(type(s)).kind in "fc":
                continue   # (known, not on the C path: mjax's False * -0.0 is -0.0)
            method = getattr(Array, METHODS[sym])
            before = getattr(method, "hits", 0)
            _raises_alike(lambda: op(x, s), lambda: op(jx, s))
            want = _raises_alike(lambda: op(s, x), lambda: op(s, jx))
            if want is not None:
                _same(_py(method)(x, s), op(jx, s))
            same_dtype = np.dtype(type(s)) == np.dtype(dtype)
            arith = sym in "+-*"
            if C_ON and same_dtype and want is not None and not (
                    arith and dtype is np.bool_) and not (
                    sym in ("<", ">=") and dtype is np.complex64):
                assert method.hits > before, (sym, s)


def test_numpy_scalar_constants_are_not_live_arrays():
    x = _arr(np.float32, jnp)
    n = len(mjax.live_arrays())
    for _ in range(3):
        y = x * np.float32(3)
        z = np.float32(4) - x
    assert len(mjax.live_arrays()) == n + 2   # (y and z; not the C memos' constants)
    del y, z
    assert len(mjax.live_arrays()) == n


BINARY = ["maximum", "minimum", "bitwise_and", "bitwise_or", "bitwise_xor", "left_shift"]


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.uint8, np.bool_, np.complex64,
                                   ml_dtypes.bfloat16], ids=lambda d: np.dtype(d).name)
def test_binary_functions(dtype):
    x, y = _arr(dtype, jnp), _arr(dtype, jnp)[::-1]
    jx, jy = _arr(dtype, jjnp), _arr(dtype, jjnp)[::-1]
    nan = jnp.asarray(np.array([np.nan, 1, -np.inf, -0.0], np.float32))
    jnan = jjnp.asarray(np.asarray(nan))
    for name in BINARY:
        if name == "left_shift" and dtype is np.bool_:
            continue   # (known, not on the C path: mjax refuses bool shifts, jax takes them)
        f, jf = getattr(jnp, name), getattr(jjnp, name)
        inner = getattr(elementwise, name)
        before = getattr(inner, "hits", 0)
        for args, jargs in (((x, y), (jx, jy)), ((x, 2), (jx, 2)), ((3, x), (3, jx)),
                            ((x, -0.0), (jx, -0.0))):
            want = _raises_alike(lambda: f(*args), lambda: jf(*jargs))
            if want is not None:
                _same(_py(inner)(*args), want)
        if dtype is np.float32 and name in ("maximum", "minimum"):   # (NaN propagates)
            _raises_alike(lambda: f(nan, nan[::-1]), lambda: jf(jnan, jnan[::-1]))
        kinds = "biu" if name != "left_shift" else "iu"
        if C_ON and (name in ("maximum", "minimum") or np.dtype(dtype).kind in kinds):
            assert inner.hits > before, name
    # shapes that do not broadcast: jax's TypeError, on every call
    _raises_alike(lambda: jnp.maximum(x, x[:3]), lambda: jjnp.maximum(jx, jx[:3]))


PAIRS = [(np.int32, np.float32), (np.int8, np.uint8), (np.float16, np.float32),
         (np.uint8, np.int32), (np.int32, np.complex64), (np.int16, ml_dtypes.bfloat16),
         (np.int8, np.float16)]
# (bool with another dtype takes the Python path: a jit may compile x * convert(b) as a
# select, whose zero has another sign: the known -0.0 * False of test_eager_c_fast_path)
BOOL_PAIRS = [(np.bool_, np.int32), (np.float32, np.bool_)]
HALF = (np.float16, ml_dtypes.bfloat16)


@pytest.mark.parametrize("d1,d2", PAIRS, ids=lambda d: np.dtype(d).name)
def test_mixed_dtype_operands(d1, d2):
    for shape in ((4,), (2, 3), ()):
        x, y = _arr(d1, jnp, shape), _arr(d2, jnp, shape)
        jx, jy = _arr(d1, jjnp, shape), _arr(d2, jjnp, shape)
        for sym, op in OPS.items():
            method = getattr(Array, METHODS[sym])
            before = getattr(method, "hits", 0)
            want = _raises_alike(lambda: op(x, y), lambda: op(jx, jy))
            _raises_alike(lambda: op(y, x), lambda: op(jy, jx))
            if want is not None:
                _same(_py(method)(x, y), want)
                # (promotion to a 16-bit float: the Python path)
                if C_ON and jnp.result_type(x, y) not in HALF:
                    assert method.hits > before, (sym, shape)
            # (bool pairs: the Python path, the same as the operator's fallback)
            for b1, b2 in BOOL_PAIRS:
                bx, by = _arr(b1, jnp, shape), _arr(b2, jnp, shape)
                for _ in range(2):
                    _same(op(bx, by), _py(method)(bx, by))
    # different shapes (broadcasting) and shapes that do not broadcast
    x, jx = _arr(d1, jnp, (2, 4)), _arr(d1, jjnp, (2, 4))
    y, jy = _arr(d2, jnp), _arr(d2, jjnp)
    _raises_alike(lambda: x + y, lambda: jx + jy)
    _raises_alike(lambda: x * y[:3], lambda: jx * jy[:3])


def test_weak_operands():
    w, jw = mjax.jit(lambda: 2.5)(), jax.jit(lambda: 2.5)()   # weakly typed float32
    wi, jwi = mjax.jit(lambda: 3)(), jax.jit(lambda: 3)()       # weakly typed int32
    assert w.weak_type and wi.weak_type
    cases = [(_arr(np.float32, jnp, ()), _arr(np.float32, jjnp, ())),
             (_arr(np.float16, jnp, ()), _arr(np.float16, jjnp, ())),
             (_arr(np.int32, jnp, ()), _arr(np.int32, jjnp, ())),
             (_arr(np.uint8, jnp, ()), _arr(np.uint8, jjnp, ()))]
    for x, jx in cases:
        for a, ja in ((w, jw), (wi, jwi)):
            for op in OPS.values():
                _raises_alike(lambda: op(x, a), lambda: op(jx, ja))
                _raises_alike(lambda: op(a, x), lambda: op(ja, jx))
    _raises_alike(lambda: w * wi, lambda: jw * jwi)   # (weak result: the Python path)


def _fused_cases(lib):
    f32 = lambda *s: _arr(np.float32, lib, s)   # noqa: E731
    i32 = lambda *s: _arr(np.int32, lib, s)     # noqa: E731
    # (lib: mjax.numpy or jax.numpy)
    m, mi, x, y = f32(3, 4), i32(3, 4), f32(4), f32(4)[::-1] + 1
    xi, yi = i32(4), i32(4)[::-1] + 1   # (no zero divisor: mjax's int x % 0 is x, jax's 0)
    return [lambda: x / y, lambda: x // y, lambda: x % y, lambda: xi // yi,
            lambda: xi % yi, lambda: xi / yi, lambda: m.sum(axis=0),
            lambda: m.sum(axis=1, keepdims=True), lambda: lib.max(m, axis=1),
            lambda: lib.min(m, axis=-1), lambda: m.max(axis=0, keepdims=True),
            lambda: m.prod(axis=0), lambda: m.mean(axis=1), lambda: mi.sum(axis=0),
            lambda: mi.sum(axis=1), lambda: lib.argmax(m, axis=1),
            lambda: (m > 0).any(axis=0), lambda: (m > 0).all(axis=1), lambda: lib.sum(m),
            lambda: lib.cumsum(m, axis=1), lambda: lib.arctan2(x, y)]


def test_fused_functions():
    mine, theirs = _fused_cases(jnp), _fused_cases(jjnp)
    before = (jnp.sum.hits, jnp.max.hits, jnp.floor_divide.hits) if C_ON else None
    for mcall, jcall in zip(mine, theirs):
        _raises_alike(mcall, jcall)
    if C_ON:
        assert jnp.sum.hits > before[0] and jnp.max.hits > before[1] and \
            jnp.floor_divide.hits > before[2]
    m, jm = _arr(np.float32, jnp, (2, 3)), _arr(np.float32, jjnp, (2, 3))
    _raises_alike(lambda: m.sum(axis=2), lambda: jm.sum(axis=2))   # (jax's ValueError)
    for call, py in ((lambda: m.sum(axis=2), lambda: _py(jnp.sum)(m, axis=2)),
                     (lambda: m // m[:, :2], lambda: _py(jnp.floor_divide)(m, m[:, :2]))):
        with pytest.raises(Exception) as want:
            py()
        for _ in range(3):   # (the C path's error is the Python path's, message and all)
            with pytest.raises(type(want.value)) as got:
                call()
            # (the message names the user's line and column: the two lambdas' differ)
            assert str(got.value).split(" (at ")[0] == str(want.value).split(" (at ")[0]
    x, jx = _arr(np.float32, jnp), _arr(np.float32, jjnp)
    _raises_alike(lambda: x / x[:3], lambda: jx / jx[:3])
    # a data-dependent shape: the Python path (op by op), on every call
    for _ in range(3):
        got, = jnp.nonzero(x > 0)
        np.testing.assert_array_equal(np.asarray(got), np.asarray(jjnp.nonzero(jx > 0)[0]))
    # deleted arrays: the Array's RuntimeError
    d = _arr(np.float32, jnp, (2, 2))
    d.sum(axis=0), d // d
    d.delete()
    for call in (lambda: d.sum(axis=0), lambda: d // d, lambda: d * np.float32(2),
                 lambda: d + _arr(np.int32, jnp, (2, 2))):
        with pytest.raises(RuntimeError, match="deleted"):
            call()


def test_config_changes_between_calls():
    x, y, xi = _arr(np.float32, jnp), _arr(np.float32, jnp)[::-1], _arr(np.int32, jnp)
    mi = _arr(np.int32, jnp, (3, 4))
    jx, jy, jxi = _arr(np.float32, jjnp), _arr(np.float32, jjnp)[::-1], _arr(np.int32, jjnp)
    jmi = _arr(np.int32, jjnp, (3, 4))
    calls = [(lambda: xi + x, lambda: jxi + jx), (lambda: x * np.float32(2),
                                                   lambda: jx * np.float32(2)),
             (lambda: mi.sum(axis=0), lambda: jmi.sum(axis=0)),
             (lambda: x // y, lambda: jx // jy), (lambda: xi * 2, lambda: jxi * 2),
             (lambda: jnp.maximum(x, y), lambda: jjnp.maximum(jx, jy))]
    for mc, jc in calls:
        _raises_alike(mc, jc)
    # x64 on: the int32 sum is int64, as jax's; int32 + float32 stays float32
    config.update("jax_enable_x64", True)
    jax.config.update("jax_enable_x64", True)
    try:
        for mc, jc in calls:
            _raises_alike(mc, jc)
        assert mi.sum(axis=0).dtype == np.int64
        x64 = jnp.asarray(np.arange(4.0))
        jx64 = jjnp.asarray(np.arange(4.0))
        _raises_alike(lambda: x64 * np.float64(3), lambda: jx64 * np.float64(3))
        _raises_alike(lambda: xi + x64, lambda: jxi + jx64)
    finally:
        config.update("jax_enable_x64", False)
        jax.config.update("jax_enable_x64", False)
    for mc, jc in calls:
        _raises_alike(mc, jc)
    assert mi.sum(axis=0).dtype == np.int32
    # strict promotion: int32 + float32 is jax's TypeError on every call (no stale entry)
    config.update("jax_numpy_dtype_promotion", "strict")
    jax.config.update("jax_numpy_dtype_promotion", "strict")
    try:
        _raises_alike(lambda: xi + x, lambda: jxi + jx)
        _raises_alike(lambda: x * np.float32(2), lambda: jx * np.float32(2))
    finally:
        config.update("jax_numpy_dtype_promotion", "standard")
        jax.config.update("jax_numpy_dtype_promotion", "standard")
    _raises_alike(lambda: xi + x, lambda: jxi + jx)
    # rank promotion "warn": the warning on every call, as the Python path gives it
    m = _arr(np.float32, jnp, (3, 4))
    config.update("jax_numpy_rank_promotion", "warn")
    try:
        for _ in range(3):   # (m // x is a jit, in mjax as in jax: it warns when traced)
            with pytest.warns(UserWarning, match="rank promotion"):
                m + xi
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            xi + x, x // y     # (same shapes: no warning)
    finally:
        config.update("jax_numpy_rank_promotion", "allow")
    # disable_jit: fused functions run op by op, with the same results
    config.update("jax_disable_jit", True)
    try:
        hits = jnp.sum.hits if C_ON else 0
        for mc, jc in calls:
            _raises_alike(mc, jc)
        assert not C_ON or jnp.sum.hits == hits
    finally:
        config.update("jax_disable_jit", False)
    with config.override(jax_enable_x64=True):
        assert mi.sum(axis=0).dtype == np.int64
    mjax.clear_caches()
    for mc, jc in calls:
        _raises_alike(mc, jc)


def test_cached_calls_run_no_mjax_python():
    if not C_ON:
        pytest.skip("no C module")
    x, y = _arr(np.float32, jnp), _arr(np.float32, jnp)[::-1] + 1
    xi, m = _arr(np.int32, jnp), _arr(np.float32, jnp, (3, 4))
    s = np.float32(2)
    # (mjax's sources wherever its subpackages live: an editable install keeps dialect/,
    # runtime/ and passes/ beside frontend/, a wheel under mjax/)
    pkg = tuple(os.path.dirname(m.__file__) + os.sep
                for m in (mjax, mjax.dialect, mjax.runtime, mjax.passes))
    calls = [lambda: x * s, lambda: s * x, lambda: s - x, lambda: x < s,
             lambda: elementwise.maximum(x, y), lambda: elementwise.minimum(x, 2.0),
             lambda: xi + x, lambda: x * xi, lambda: jnp.floor_divide(x, y),
             lambda: jnp.true_divide(x, y), lambda: jnp.sum(m, axis=0),
             lambda: jnp.max(m, axis=1, keepdims=True)]
    for call in calls:
        call(), call()
        assert python_calls(call, lambda f: f.startswith(pkg)) == []


SCRIPT = r"""
import numpy as np, mjax, mjax.numpy as jnp
from mjax.config import config
x = jnp.asarray(np.array([0.5, -1.5, 2.0, -0.0], np.float32)); y = x[::-1] + 1
xi = jnp.asarray(np.array([1, 2, 3, 0], np.int32)); m = jnp.reshape(x, (2, 2))
w = mjax.jit(lambda: 2.5)()
def cases():
    return [np.float32(2) * x, x - np.float32(-0.0), xi * np.int32(3), x < np.float32(0),
            jnp.maximum(x, y), jnp.minimum(xi, 2), jnp.bitwise_xor(xi, xi[::-1]),
            xi + x, x * w, xi < x, x / y, x // y, x % y, m.sum(axis=0), jnp.max(m, axis=1),
            m.sum(axis=1, keepdims=True), xi.sum(axis=0), xi // 2]
for flip in (False, True, False):
    config.update("jax_enable_x64", flip)
    for _ in range(3):
        out = cases()
    for r in out:
        print(r.dtype, r.weak_type, np.asarray(r).tobytes().hex())
"""


def test_python_path_only_in_a_subprocess():
    outs = []
    for no_c in ("1", "0"):
        env = dict(os.environ, MJAX_NO_C_FASTPATH=no_c)
        out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True,
                             text=True, timeout=300, cwd=str(ROOT))
        assert out.returncode == 0, out.stderr
        outs.append(out.stdout)
    assert outs[0] == outs[1] and outs[0].count("\n") == 54


def test_shared_header_is_built_and_shipped():
    runtime = ROOT / "runtime"
    header = runtime / "_mjax_fast.h"
    assert header.exists()
    for src in ("_fastpath.c", "_eagerpath.c"):
        text = (runtime / src).read_text()
        assert '#include "_mjax_fast.h"' in text
        assert "static Py_ssize_t slot_offset" not in text   # (one definition: the header)
    assert "_mjax_fast.h" in (ROOT / "setup.py").read_text()
    assert "runtime/*.h" in (ROOT / "MANIFEST.in").read_text()
    if C_ON:
        assert c_fast_path("_eagerpath") is not None and c_fast_path("_fastpath") is not None
