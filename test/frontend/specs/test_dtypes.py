"""Type promotion and weak types against real JAX (the test-only oracle)."""
import itertools
import typing

import numpy as np
import pytest

import jax
import jax.numpy as jjnp
import jax.typing
import ml_dtypes

import mjax
import mjax.numpy as jnp
import mjax.typing

from frontend_util import skip_where_the_tpu_lacks

DTYPES = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32,
          np.uint64, jnp.bfloat16, np.float16, np.float32, np.float64, np.complex64,
          np.complex128]
SCALARS = [True, 3, 2.5, 1 + 2j]


def _zeros(lib, dt):
    return lib.zeros((2,), dtype=dt)


def test_result_type_grid_of_dtypes(x64_mode):
    for a, b in itertools.product(DTYPES, DTYPES):
        want = jjnp.result_type(a, b)
        got = jnp.result_type(a, b)
        assert np.dtype(got) == np.dtype(want), (a, b, x64_mode)


def test_result_type_arrays_and_python_scalars(x64_mode):
    for a in DTYPES:
        for s in SCALARS:
            want = jjnp.result_type(_zeros(jjnp, a), s)
            got = jnp.result_type(_zeros(jnp, a), s)
            assert np.dtype(got) == np.dtype(want), (a, s, x64_mode)


@pytest.mark.parametrize("a", [np.int8, np.uint8, np.int32, np.float16, jnp.bfloat16,
                               np.float32, np.complex64])
@pytest.mark.parametrize("s", [True, 3, 2.5, 1 + 2j])
def test_binary_op_output_dtype_and_weak_type(a, s, x64_mode):
    jx, mx = _zeros(jjnp, a), _zeros(jnp, a)
    # (the scalar enters the program as an argument of its own dtype: complex128 under x64,
    # though the result is complex64; on a TPU JAX's compile aborts on that argument)
    skip_where_the_tpu_lacks(jjnp.result_type(jx, s), jjnp.result_type(s))
    want = jjnp.add(jx, s)
    got = jnp.add(mx, s)
    assert got.dtype == want.dtype
    assert got.weak_type == want.weak_type
    want2 = jjnp.multiply(s, jx)
    got2 = mx.__rmul__(s)
    assert got2.dtype == want2.dtype


@pytest.mark.parametrize("s1,s2", list(itertools.product(SCALARS, SCALARS)))
def test_scalar_scalar_promotion_is_weak(s1, s2, x64_mode):
    skip_where_the_tpu_lacks(jjnp.result_type(s1, s2))
    want = jjnp.add(s1, s2)
    got = jnp.add(s1, s2)
    assert got.dtype == want.dtype
    assert got.weak_type == want.weak_type


def test_weak_type_propagates_through_jit(x64_mode):
    f = lambda x: x * 2  # noqa: E731
    got = mjax.jit(f)(3.0)
    want = jax.jit(f)(3.0)
    assert got.dtype == want.dtype and got.weak_type == want.weak_type
    got = mjax.jit(f)(np.float32(3.0))
    assert got.dtype == np.float32 and not got.weak_type


@pytest.mark.parametrize("fn", ["sin", "sqrt", "exp", "true_divide", "arctan2", "mean"])
@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.int32, np.uint16, np.float16,
                                np.float32])
def test_inexact_functions_promote_ints_to_float(fn, dt, x64_mode):
    args = (1,) if fn not in ("true_divide", "arctan2") else (2,)
    jx = jjnp.ones((3,), dt)
    mx = jnp.ones((3,), dt)
    want = getattr(jjnp, fn)(*([jx] * args[0]))
    got = getattr(jnp, fn)(*([mx] * args[0]))
    assert got.dtype == want.dtype, (fn, dt)


@pytest.mark.parametrize("fn", ["sum", "prod", "max", "argmax", "cumsum", "mean"])
@pytest.mark.parametrize("dt", [np.bool_, np.int8, np.uint8, np.int32, np.uint32, np.float16])
def test_reduction_dtypes(fn, dt, x64_mode):
    want = getattr(jjnp, fn)(jjnp.ones((2, 3), dt), axis=0)
    got = getattr(jnp, fn)(jnp.ones((2, 3), dt), axis=0)
    assert got.dtype == want.dtype, (fn, dt)


def test_x64_canonicalizes_creation(x64_mode):
    for make in (lambda m: m.arange(3), lambda m: m.zeros(2), lambda m: m.array([1.5]),
                 lambda m: m.asarray(np.arange(3, dtype=np.int64)),
                 lambda m: m.array(3), lambda m: m.linspace(0, 1, 3),
                 lambda m: m.full((2,), 7), lambda m: m.eye(2, dtype=np.int64)):
        want, got = make(jjnp), make(jnp)
        assert got.dtype == want.dtype, (make, x64_mode)
        assert got.weak_type == want.weak_type, (make, x64_mode)


def test_x64_changes_jit_trace():
    from frontend_util import x64
    traces = []

    @mjax.jit
    def f(x):
        traces.append(1)
        return x + 1

    with x64(False):
        assert f(1).dtype == np.int32
    with x64(True):
        assert f(1).dtype == np.int64
    assert len(traces) == 2


def test_promote_types_and_incompatible_key():
    assert jnp.promote_types(np.int8, np.uint8) == np.int16
    assert jnp.promote_types(np.float16, jnp.bfloat16) == np.float32


# ---- the whole lattice against JAX ----------------------------------------------------
ML_NARROW = [np.dtype(getattr(ml_dtypes, n)) for n in (
    "float8_e4m3fn", "float8_e5m2", "float8_e4m3b11fnuz", "float8_e8m0fnu", "float4_e2m1fn",
    "int4", "uint4", "int2", "uint2")]
ALL_DTYPES = [np.dtype(d) for d in DTYPES] + ML_NARROW
# Narrow types that arrays can hold so far (the others have no element type in dialect/).
ARRAY_NARROW = ("bfloat16", "float8_e4m3fn", "float8_e5m2", "float8_e4m3fnuz",
                "float8_e5m2fnuz", "float8_e4m3b11fnuz", "int4", "uint4")
PY_TYPES = [int, float, complex, bool]


def _outcome(fn, *args):
    """fn(*args) as a comparable value: the result, or the exception class and message."""
    try:
        return ("ok", fn(*args))
    except Exception as e:  # noqa: BLE001 - both libraries must fail the same way
        return ("error", type(e).__name__)


@pytest.mark.parametrize("mode", ["standard", "strict"])
def test_promote_types_every_pair_matches_jax(x64_mode, mode):
    with mjax.numpy_dtype_promotion(mode), jax.numpy_dtype_promotion(mode):
        for a, b in itertools.product(ALL_DTYPES + PY_TYPES, repeat=2):
            want = _outcome(jjnp.promote_types, a, b)
            got = _outcome(jnp.promote_types, a, b)
            assert got == want, (a, b, x64_mode, mode)


@pytest.mark.parametrize("mode", ["standard", "strict"])
def test_result_type_every_pair_matches_jax(x64_mode, mode):
    with mjax.numpy_dtype_promotion(mode), jax.numpy_dtype_promotion(mode):
        for a, b in itertools.product(ALL_DTYPES + PY_TYPES + [None], repeat=2):
            want = _outcome(lambda *x: jjnp.result_type(*x), a, b)
            got = _outcome(lambda *x: jnp.result_type(*x), a, b)
            assert got == want, (a, b, x64_mode, mode)
            want = _outcome(lambda *x: jax.dtypes.result_type(
                *x, return_weak_type_flag=True), a, b)
            got = _outcome(lambda *x: mjax.dtypes.result_type(
                *x, return_weak_type_flag=True), a, b)
            assert got == want, (a, b, x64_mode, mode)


@pytest.mark.parametrize("mode", ["standard", "strict"])
def test_result_type_arrays_and_weak_scalars_match_jax(x64_mode, mode):
    """Arrays of every dtype against weak scalars (Python values and weak arrays)."""
    scalars = [3, 2.5, 1 + 2j, True]
    with mjax.numpy_dtype_promotion(mode), jax.numpy_dtype_promotion(mode):
        for a in [np.dtype(d) for d in DTYPES]:
            jx, mx = _zeros(jjnp, a), _zeros(jnp, a)
            for s in scalars:
                for args_j, args_m in (((jx, s), (mx, s)), ((s, jx), (s, mx)),
                                       ((jx, jjnp.asarray(s)), (mx, jnp.asarray(s)))):
                    want = _outcome(lambda *x: jax.dtypes.result_type(
                        *x, return_weak_type_flag=True), *args_j)
                    got = _outcome(lambda *x: mjax.dtypes.result_type(
                        *x, return_weak_type_flag=True), *args_m)
                    assert got == want, (a, s, x64_mode, mode)
        for s1, s2 in itertools.product(scalars, repeat=2):
            want = _outcome(lambda *x: jax.dtypes.result_type(
                *x, return_weak_type_flag=True), s1, s2)
            got = _outcome(lambda *x: mjax.dtypes.result_type(
                *x, return_weak_type_flag=True), s1, s2)
            assert got == want, (s1, s2, x64_mode, mode)


def test_three_way_result_type_matches_jax(x64_mode):
    for a, b, c in itertools.product([np.int8, np.uint32, np.float16, jnp.bfloat16, int, float],
                                     repeat=3):
        assert _outcome(jnp.result_type, a, b, c) == _outcome(jjnp.result_type, a, b, c)


def test_can_cast_every_pair_matches_jax():
    for a, b in itertools.product(ALL_DTYPES, repeat=2):
        for casting in ("no", "equiv", "safe", "same_kind", "unsafe"):
            assert _outcome(jnp.can_cast, a, b, casting) == \
                _outcome(jjnp.can_cast, a, b, casting), (a, b, casting)
    assert jnp.can_cast(jnp.ones(2, jnp.int8), jnp.int16)
    assert not jnp.can_cast(jnp.ones(2, jnp.float32), jnp.int32)
    for a, b in itertools.product([1, 2.5, True, int, float, np.float32(1)], ALL_DTYPES[:6]):
        assert _outcome(jnp.can_cast, a, b) == _outcome(jjnp.can_cast, a, b), (a, b)


def test_issue_examples():
    assert jnp.promote_types(jnp.bool_, jnp.uint64) == np.uint64
    assert jnp.promote_types(jnp.int8, int) == np.int8
    assert jnp.promote_types(jnp.int8, jnp.uint64) == np.float64
    assert jnp.promote_types(jnp.bfloat16, jnp.float64) == np.float64


ABSTRACT = [np.generic, np.number, np.integer, np.signedinteger, np.unsignedinteger,
            np.inexact, np.floating, np.complexfloating]


def test_issubdtype_matches_jax():
    for a in ALL_DTYPES + [int, float, complex, bool]:
        for b in ABSTRACT + ALL_DTYPES:
            assert jnp.issubdtype(a, b) == jjnp.issubdtype(a, b), (a, b)
    assert jnp.issubdtype(jnp.bfloat16, jnp.floating)
    assert jnp.issubdtype(jnp.float8_e4m3fn, jnp.inexact)
    assert jnp.issubdtype(jnp.int4, jnp.signedinteger)
    assert not jnp.issubdtype(jnp.int4, jnp.floating)


def test_extended_and_float0_dtypes():
    from mjax.dialect.types import KeyType
    key = KeyType("threefry2x32")
    d = mjax.dtypes
    assert d.issubdtype(key, d.extended) and d.issubdtype(key, d.prng_key)
    assert not d.issubdtype(key, np.integer) and not d.issubdtype(np.int32, d.extended)
    assert d.issubdtype(d.prng_key, d.extended)
    # float0 is a NumPy void dtype, not extended (as in JAX).
    for cls in (d.extended, np.void, np.number):
        assert d.issubdtype(d.float0, cls) == jax.dtypes.issubdtype(jax.dtypes.float0, cls)


def test_dtype_names_as_jax_exposes_them():
    for name in dir(jjnp):
        if name.startswith(("float8_", "float4_", "int2", "int4", "uint2", "uint4")) or \
                name == "bfloat16":
            assert np.dtype(getattr(jnp, name)) == np.dtype(getattr(jjnp, name)), name
            if name in ARRAY_NARROW:
                assert jnp.zeros(2, getattr(jnp, name)).dtype == np.dtype(getattr(jjnp, name))
    for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2", "int4", "uint4"):
        assert np.dtype(getattr(mjax.dtypes, name)) == np.dtype(getattr(jax.dtypes, name)
                                                              if hasattr(jax.dtypes, name)
                                                              else getattr(jjnp, name))


def test_finfo_iinfo_match_jax():
    for t in [np.float16, np.float32, np.float64, jnp.bfloat16, jnp.float8_e4m3fn, float]:
        got, want = jnp.finfo(t), jjnp.finfo(t if t is not jnp.bfloat16 else jjnp.bfloat16)
        assert (got.eps, got.max, got.tiny, got.bits, got.dtype) == \
            (want.eps, want.max, want.tiny, want.bits, want.dtype), t
    for t in [np.int8, np.uint16, np.int32, np.uint64, jnp.int4, int]:
        got, want = jnp.iinfo(t), jjnp.iinfo(t if t is not jnp.int4 else jjnp.int4)
        assert (got.min, got.max, got.bits) == (want.min, want.max, want.bits), t


def test_canonicalize_dtype_matches_jax(x64_mode):
    for t in [int, float, complex, bool, np.int64, np.uint64, np.float64, np.complex128,
              np.int8, jnp.bfloat16, "float64"]:
        assert mjax.dtypes.canonicalize_dtype(t) == jax.dtypes.canonicalize_dtype(
            jjnp.bfloat16 if t is jnp.bfloat16 else t), t


@pytest.mark.parametrize("make,name", [
    (lambda m: m.zeros(3, dtype=m.float64), "zeros"),
    (lambda m: m.ones(3, dtype=m.complex128), "ones"),
    (lambda m: m.arange(3, dtype=m.uint64), "arange"),
    (lambda m: m.array([1.0], dtype="int64"), "array"),
    (lambda m: m.full((2,), 1, dtype=m.int64), "full"),
    (lambda m: m.zeros(2).astype(m.float64), "astype"),
    (lambda m: m.zeros_like(m.ones(2), dtype=m.float64), "zeros_like"),
    (lambda m: m.full_like(m.ones(2), 3, dtype=m.int64), "full_like"),
    (lambda m: m.empty(2, dtype=m.float64), "empty"),
    (lambda m: m.identity(2, dtype=m.float64), "identity"),
    (lambda m: m.tri(2, dtype=m.float64), "tri"),
    (lambda m: m.float64(1.5), "asarray"),
    (lambda m: m.linspace(0, 1, 3, dtype=m.float64), "linspace"),
    (lambda m: m.eye(2, dtype=m.float64), "eye"),
    (lambda m: (mjax if m is jnp else jax).lax.convert_element_type(m.ones(2), m.float64),
     "convert_element_type"),
    (lambda m: (mjax if m is jnp else jax).lax.full((2,), 1, m.float64), "full"),
])
def test_explicit_64_bit_dtype_warns_as_jax(make, name):
    import warnings
    with warnings.catch_warnings(record=True) as got:
        warnings.simplefilter("always")
        out = make(jnp)
    with warnings.catch_warnings(record=True) as want:
        warnings.simplefilter("always")
        ref = make(jjnp)
    assert out.dtype == ref.dtype
    got = [w for w in got if "Explicitly requested dtype" in str(w.message)]
    want = [w for w in want if "Explicitly requested dtype" in str(w.message)]
    assert [str(w.message) for w in got] == [str(w.message) for w in want]
    assert got[0].category is UserWarning and got[0].filename == __file__


def test_explicit_64_bit_dtype_does_not_warn_with_x64():
    import warnings
    from frontend_util import x64
    with x64(True), warnings.catch_warnings():
        warnings.simplefilter("error")
        assert jnp.zeros(3, dtype=jnp.float64).dtype == np.float64


def test_strict_promotion_raises_type_promotion_error():
    with mjax.numpy_dtype_promotion("strict"):
        with pytest.raises(mjax.dtypes.TypePromotionError,
                           match=r"jax_numpy_dtype_promotion=strict") as e:
            jnp.ones(3, jnp.int32) + jnp.ones(3, jnp.float32)
        assert __file__ in str(e.value)        # the user's line
        assert isinstance(e.value, ValueError)  # as JAX's
        assert (jnp.ones(3) + 1.0).dtype == np.float32   # weak scalars still promote
        assert jnp.add(jnp.ones(3, jnp.int8), 2).dtype == np.int8
    assert (jnp.ones(3, jnp.int32) + jnp.ones(3, jnp.float32)).dtype == np.float32


def test_narrow_float_promotion_error_matches_jax():
    a, b = jnp.float8_e4m3fn, jnp.float32
    with pytest.raises(mjax.dtypes.TypePromotionError) as got:
        jnp.promote_types(a, b)
    with pytest.raises(jax.dtypes.TypePromotionError) as want:
        jjnp.promote_types(jjnp.float8_e4m3fn, jjnp.float32)
    assert str(got.value) == str(want.value)


def test_isdtype_matches_jax():
    kinds = ["bool", "signed integer", "unsigned integer", "integral", "real floating",
             "complex floating", "numeric", ("integral", "real floating"), np.float32]
    for d in ALL_DTYPES:
        for k in kinds:
            assert jnp.isdtype(d, k) == jjnp.isdtype(d, k), (d, k)
    with pytest.raises(ValueError, match="Unrecognized kind"):
        jnp.isdtype(np.float32, "floating")


@pytest.mark.parametrize("a,b", [("int4", "int4"), ("bool_", "int4"), ("uint4", "uint4"),
                                 ("int4", "int8"), ("float8_e4m3fn", "float32"),
                                 ("bfloat16", "float16"), ("uint8", "int4")])
def test_arithmetic_on_narrow_types_matches_jax(a, b):
    def run(lib):
        try:
            r = lib.add(lib.zeros(2, getattr(lib, a)), lib.ones(2, getattr(lib, b)))
            return str(r.dtype), np.asarray(r).astype(float).tolist()
        except Exception as e:  # noqa: BLE001 - both must fail alike
            return type(e).__name__
    assert run(jnp) == run(jjnp)


def test_key_dtype_scalar_type_and_array_like_as_jax():
    """What annotation checkers (jaxtyping) read: a key array's dtype has JAX's scalar
    type (`dtype.type` is jax.dtypes.prng_key), and jax.typing.ArrayLike names jax.Array
    itself (so a key, an instance of jax.Array, is array-like)."""
    for lib, typing_mod in ((mjax, mjax.typing), (jax, jax.typing)):
        key = lib.random.key(0)
        assert key.dtype.type is lib.dtypes.prng_key
        assert key.dtype.type.__name__ == "prng_key"
        assert issubclass(key.dtype.type, lib.dtypes.extended)
        assert lib.Array in typing.get_args(typing_mod.ArrayLike)
        assert isinstance(key, lib.Array)
