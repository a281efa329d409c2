"""jax.numpy's scalar types and constants: the dtype classes (`jnp.float32(3)` is a
strongly typed 0-d Array), NumPy's abstract scalar classes, `pi`/`e`/`inf`/`nan`, `ndarray`,
`finfo`/`iinfo`, and the type predicates (`iscomplexobj`, `isscalar`, ...)."""
from __future__ import annotations

import numpy as _onp

from mjax.specs import dtypes as _dt
from mjax.specs.basearray import Array
from mjax.numpy.arguments import is_array
from mjax.numpy.conversion import asarray


# dtypes, as jax.numpy exports them: usable as dtypes, and callable like JAX's scalar
# types (`jnp.float32(3)` is a strongly typed 0-d mjax Array, not a NumPy scalar).
class _ScalarMeta(type):
    def __hash__(cls):
        return hash(cls.dtype.type)

    def __eq__(cls, other):
        return cls is other or other == cls.dtype.type

    def __ne__(cls, other):
        return not cls == other

    def __call__(cls, x):
        return asarray(x, dtype=cls.dtype)

    def __instancecheck__(cls, instance):
        return isinstance(instance, cls.dtype.type)

    def __repr__(cls):
        return f"<class 'mjax.numpy.{cls.__name__}'>"


def _scalar_type(np_type, name=None):
    name = name or _onp.dtype(np_type).name
    return _ScalarMeta(name, (object,), {"dtype": _onp.dtype(np_type)})


bool_ = _scalar_type(_onp.bool_, "bool_")
int8, int16, int32, int64 = (_scalar_type(t) for t in (_onp.int8, _onp.int16, _onp.int32,
                                                        _onp.int64))
uint8, uint16, uint32, uint64 = (_scalar_type(t) for t in (_onp.uint8, _onp.uint16,
                                                           _onp.uint32, _onp.uint64))
float16, float32, float64 = (_scalar_type(t) for t in (_onp.float16, _onp.float32,
                                                       _onp.float64))
complex64, complex128 = _scalar_type(_onp.complex64), _scalar_type(_onp.complex128)
bfloat16 = _scalar_type(_dt.bfloat16, "bfloat16")
# ml_dtypes' narrow types, as jax.numpy exports them (not int1/uint1 and the float6 types:
# mjax.dtypes maps no MLIR element type to them).
float4_e2m1fn = _scalar_type(_dt.float4_e2m1fn, "float4_e2m1fn")
float8_e3m4 = _scalar_type(_dt.float8_e3m4, "float8_e3m4")
float8_e4m3 = _scalar_type(_dt.float8_e4m3, "float8_e4m3")
float8_e8m0fnu = _scalar_type(_dt.float8_e8m0fnu, "float8_e8m0fnu")
float8_e4m3b11fnuz = _scalar_type(_dt.float8_e4m3b11fnuz, "float8_e4m3b11fnuz")
float8_e4m3fn = _scalar_type(_dt.float8_e4m3fn, "float8_e4m3fn")
float8_e4m3fnuz = _scalar_type(_dt.float8_e4m3fnuz, "float8_e4m3fnuz")
float8_e5m2 = _scalar_type(_dt.float8_e5m2, "float8_e5m2")
float8_e5m2fnuz = _scalar_type(_dt.float8_e5m2fnuz, "float8_e5m2fnuz")
int2 = _scalar_type(_dt.int2, "int2")
int4 = _scalar_type(_dt.int4, "int4")
uint2 = _scalar_type(_dt.uint2, "uint2")
uint4 = _scalar_type(_dt.uint4, "uint4")
float_ = float64
int_ = int64
complex_ = complex128
uint = uint64
single, double, csingle, cdouble = float32, float64, complex64, complex128
dtype = _onp.dtype
ndarray = Array
pi, e, inf, nan, newaxis = _onp.pi, _onp.e, _onp.inf, _onp.nan, None


def issubdtype(arg1, arg2):
    """JAX: jnp.issubdtype (see mjax.dtypes.issubdtype)."""
    return _dt.issubdtype(arg1, arg2)


finfo, iinfo = _dt.finfo, _dt.iinfo
integer, floating, inexact, number, complexfloating, signedinteger, unsignedinteger = (
    _onp.integer, _onp.floating, _onp.inexact, _onp.number, _onp.complexfloating,
    _onp.signedinteger, _onp.unsignedinteger)


def iscomplexobj(x):
    """Whether x's dtype is complex; x may be anything with a dtype (an array, a
    ShapeDtypeStruct, a scalar type such as jnp.float32) or array-like. JAX:
    jnp.iscomplexobj."""
    if x is None:
        return False
    dtype = getattr(x, "dtype", None)
    if dtype is None or not isinstance(dtype, _onp.dtype):
        dtype = asarray(x).dtype
    return _dt.issubdtype(dtype, _onp.complexfloating)


def isscalar(element):
    """Whether `element` is a scalar or a zero-dimensional array (a NumPy one too,
    unlike np.isscalar). JAX: jnp.isscalar."""
    return _onp.isscalar(element) or ((is_array(element) or isinstance(element, _onp.ndarray))
                                      and element.ndim == 0)


euler_gamma = _onp.euler_gamma


def isrealobj(x):
    """Whether x is not of a complex dtype. JAX: jnp.isrealobj."""
    return not iscomplexobj(x)


def iterable(y):
    try:
        iter(y)
    except TypeError:
        return False
    return True


# NumPy's abstract scalar classes, warnings and printing controls, as jax.numpy re-exports
# them (printing of mjax arrays goes through NumPy, so NumPy's print options apply).
generic, character, flexible, object_ = (_onp.generic, _onp.character, _onp.flexible,
                                         _onp.object_)
ComplexWarning = _onp.exceptions.ComplexWarning
