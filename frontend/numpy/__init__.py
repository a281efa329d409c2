"""`mjax.numpy`: NumPy's API over `mjax.lax` (JAX's `jax.numpy`).

Arguments are promoted with JAX's rules (weak Python scalars, x64 canonicalization) and
broadcast NumPy-style, then handed to `lax`. No new primitives are defined here.
"""
from __future__ import annotations

import builtins
import math
import operator as _operator

import numpy as _onp

from mjax import dtypes as _dt
from mjax.config import config as _config
from mjax import lax
from mjax.array import Array as _Array
from mjax.core import Tracer, at_user_line, aval_of_value
from mjax.core import current_trace as _current_trace
from mjax.dialect import ShapedArray as _ShapedArray
from mjax import prng as _prng
from mjax.numpy.indexing import getitem as _getitem, take, take_along_axis  # noqa: F401
# Imported now so that the submodule cannot later replace the `einsum` function below as
# an attribute of this package (importing a submodule sets it on its parent).
from mjax.numpy import einsum as _einsum_module

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
# ml_dtypes' narrow types, as jax.numpy exports them (jnp.float8_e4m3fn, jnp.int4, ...).
globals().update({_n: _scalar_type(getattr(_dt, _n), _n) for _n in _dt.ML_DTYPE_NAMES
                  if _n not in ("bfloat16", "int1", "uint1", "float6_e2m3fn",
                                "float6_e3m2fn")})
float_ = float64
int_ = int64
complex_ = complex128
uint = uint64
single, double, csingle, cdouble = float32, float64, complex64, complex128
dtype = _onp.dtype
pi, e, inf, nan, newaxis = _onp.pi, _onp.e, _onp.inf, _onp.nan, None
ndarray = None  # set below to mjax.Array
def issubdtype(arg1, arg2):
    """JAX: jnp.issubdtype (see mjax.dtypes.issubdtype)."""
    return _dt.issubdtype(arg1, arg2)
finfo, iinfo = _dt.finfo, _dt.iinfo
integer, floating, inexact, number, complexfloating, signedinteger, unsignedinteger = (
    _onp.integer, _onp.floating, _onp.inexact, _onp.number, _onp.complexfloating,
    _onp.signedinteger, _onp.unsignedinteger)


def result_type(*args, return_weak_type_flag=False):
    return _dt.result_type(*args, return_weak_type_flag=return_weak_type_flag)


promote_types = _dt.numpy_promote_types
can_cast = _dt.can_cast
isdtype = _dt.isdtype


# ---- conversion -----------------------------------------------------------------
def _is_array(x):
    return isinstance(x, Tracer) or hasattr(x, "_buf")


def from_dlpack(x, /, *, device=None, copy=None):
    """JAX: jnp.from_dlpack (see mjax.dlpack)."""
    from mjax.dlpack import from_dlpack as _from_dlpack
    return _from_dlpack(x, device=device, copy=copy)


def asarray(a, dtype=None, order=None, *, copy=None):
    """Array from an array, scalar, NumPy array or (nested) list/tuple."""
    if _is_array(a) or isinstance(a, lax._LiteralArray):  # (a literal keeps its weak type)
        return a if dtype is None else astype(a, dtype)
    if isinstance(a, _prng.PRNGKeyArray) or isinstance(a, (list, tuple)) and a and \
            _prng.any_keys(a):
        return _prng.asarray_keys(a, dtype)
    if isinstance(a, (list, tuple)):
        leaves = _nested_leaves(a)
        if a and builtins.any(_is_array(v) for v in leaves):
            # (as JAX: each element converted to the strongly typed result dtype, then
            # stacked; `jnp.array([x, 1])` of a weak x is not weak)
            dtype = (_dt.result_type(*leaves) if dtype is None
                     else _dt.check_user_dtype(dtype, "asarray"))
            return concatenate([expand_dims(asarray(v, dtype), 0) for v in a])
    if hasattr(a, "__jax_array__"):
        return asarray(a.__jax_array__(), dtype)
    if isinstance(a, (bool, int, float, complex)) and dtype is None:
        return lax.convert_element_type(a, _dt.python_scalar_dtype(a),
                                        weak_type=not isinstance(a, bool))
    if a is None:
        raise ValueError("None is not a valid value for jnp.array")   # (JAX's error)
    value = _onp.asarray(a, dtype=dtype)
    if value.dtype == object:
        raise TypeError(f"mjax.numpy.asarray: cannot convert {a!r} to an array")
    target = (_dt.canonicalize_dtype(value.dtype) if dtype is None
              else _dt.check_user_dtype(dtype, "asarray"))
    return lax.convert_element_type(value, target)


def _check_arraylike(fname, *args):
    """JAX's TypeError for a list or tuple given where jax.numpy wants arrays
    (`jnp.sum([1, 2])`; only jnp.array/asarray convert sequences)."""
    for i, a in enumerate(args):
        if isinstance(a, (list, tuple)):
            raise TypeError(at_user_line(f"{fname} requires ndarray or scalar arguments, "
                                         f"got {type(a)} at position {i}."))


def _nested_leaves(a) -> list:
    # (Not through NumPy: an object array would call a tracer's __array__.)
    out = []
    for v in a:
        out.extend(_nested_leaves(v) if isinstance(v, (list, tuple)) else [v])
    return out


def array(object, dtype=None, *, copy=True, order="K", ndmin=0):  # noqa: A002
    if dtype is not None:
        dtype = _dt.check_user_dtype(dtype, "array")
    out = asarray(object, dtype)
    if ndmin > out.ndim:
        out = lax.broadcast_to_rank(out, ndmin)
    return out


def astype(x, dtype, /, *, copy=False):
    return lax.convert_element_type(x, _dt.check_user_dtype(dtype, "astype"))


# ---- broadcasting and promotion -----------------------------------------------------
def broadcast_shapes(*shapes):
    try:
        return tuple(_onp.broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(at_user_line(f"Incompatible shapes for broadcasting: "
                         f"{', '.join(str(tuple(s)) for s in shapes)}")) from None


def broadcast_to(array, shape):  # noqa: A002 (JAX's name)
    x = asarray(array)
    shape = (shape,) if isinstance(shape, int) else tuple(shape)
    xs = x.shape
    if xs == shape:
        return x
    if len(shape) < len(xs) or builtins.any(
            a not in (1, b) for a, b in zip(xs, shape[len(shape) - len(xs):])):
        raise ValueError(at_user_line(
            f"Incompatible shapes for broadcasting: {xs} and requested shape "
            f"{shape}"))
    n = len(shape) - len(xs)
    keep = [i for i, (a, b) in enumerate(zip(xs, shape[n:])) if a == b]
    squeeze_dims = [i for i, (a, b) in enumerate(zip(xs, shape[n:])) if a != b]
    if squeeze_dims:
        x = lax.reshape(x, [xs[i] for i in keep])
    return lax.broadcast_in_dim(x, shape, [n + i for i in keep])


def broadcast_arrays(*args):
    args = [asarray(a) for a in args]
    shape = broadcast_shapes(*(a.shape for a in args))
    return [broadcast_to(a, shape) for a in args]


# dtype -> (64-bit: canonical only with x64, inexact), for the dtypes promotion leaves
# alone when every operand has it (filled on first sight; extended dtypes excluded).
_FAST_DTYPES: dict = {}


def _keeps_dtype(dtype, inexact) -> bool:
    """Whether promoting non-weak operands that all have `dtype` leaves them as they are:
    a NumPy dtype, canonical under the current x64 setting (and inexact if asked)."""
    kind = _FAST_DTYPES.get(dtype)
    if kind is None:
        if not isinstance(dtype, _onp.dtype):
            return False
        kind = _FAST_DTYPES[dtype] = (dtype in _dt._X64_NARROW, _dt.is_inexact(dtype))
    return (kind[1] or not inexact) and (not kind[0] or _config.read("jax_enable_x64"))


# The dtypes _keeps_dtype accepts whatever the x64 setting (any / inexact functions): a
# set lookup on the one-operand hot path. Others (64-bit ones) ask _keeps_dtype.
_KEEP_ANY = frozenset(
    d for d in map(_onp.dtype, [bool, _onp.int8, _onp.int16, _onp.int32, _onp.uint8,
                                _onp.uint16, _onp.uint32, _onp.float16, _onp.float32,
                                _onp.complex64, _dt.bfloat16])
    if _keeps_dtype(d, False) and d not in _dt._X64_NARROW)
_KEEP_INEXACT = frozenset(d for d in _KEEP_ANY if _dt.is_inexact(d))


def _unchanged_pair(av0, av1, inexact, same_shape=True) -> bool:
    """Whether two operands with avals av0, av1 (None: not an array) come out of
    promotion (and broadcasting, if same_shape) as they are."""
    return type(av0) is _ShapedArray and type(av1) is _ShapedArray and not (
        av0.weak_type or av1.weak_type) and (not same_shape or av0.shape == av1.shape) and (
        av0.dtype is av1.dtype or av0.dtype == av1.dtype) and _keeps_dtype(av0.dtype,
                                                                          inexact)


def _same_dtype_avals(args, inexact):
    """The operands' avals when promotion is the identity for them, else None: every
    operand an array (or tracer) of one canonical dtype and none weakly typed (inexact:
    an inexact dtype). The lattice, canonicalization and conversions then change
    nothing, so the common NumPy-level call skips them."""
    avals = []
    dtype = None
    for a in args:
        av = getattr(a, "aval", None)
        if type(av) is not _ShapedArray or av.weak_type:
            return None
        if dtype is None:
            dtype = av.dtype
        elif av.dtype is not dtype and av.dtype != dtype:
            return None
        avals.append(av)
    return avals if _keeps_dtype(dtype, inexact) else None


# Eager `array <op> Python scalar`: the scalar's promoted, broadcast constant, by (scalar,
# its sign, dtype, weak type, shape, placement). Making it costs a host-to-device copy
# and a broadcast op, several times the op itself. Bounded: small constants, few entries.
_SCALAR_CONSTS: dict = {}
_SCALAR_CONSTS_MAX = 128
_SCALAR_CONST_MAX_SIZE = 1024
_PY_SCALAR_TYPES = (bool, int, float, complex)
_BOOL = _onp.dtype(bool)   # (comparing with a dtype is cheaper than with np.bool_)
_PY_SCALAR_PROMOTION = {bool: (_onp.dtype(bool), False), int: (_onp.dtype(_onp.int64), True),
                        float: (_onp.dtype(_onp.float64), True),
                        complex: (_onp.dtype(_onp.complex128), True)}


def _scalar_with_array(fname, args, inexact):
    """_promote of (Array, Python scalar) in either order, run eagerly, with the scalar's
    constant from _SCALAR_CONSTS; None where that does not apply. Only for operands that
    go straight into a new op (numpy's binary functions): a cached constant must never
    reach the user, who could delete or donate it."""
    a, b = args
    if type(b) in _PY_SCALAR_TYPES and type(a) is _Array:
        arr, scalar, scalar_first = a, b, False
    elif type(a) in _PY_SCALAR_TYPES and type(b) is _Array:
        arr, scalar, scalar_first = b, a, True
    else:
        return None
    aval = arr.aval
    if type(aval) is not _ShapedArray or _current_trace() is not None or \
            _config.read("jax_debug_nans") or _config.read("jax_debug_infs"):
        return None  # (debug checks: the constant's broadcast is an op they look at)
    if math.prod(aval.shape) > _SCALAR_CONST_MAX_SIZE:
        return None
    if type(scalar) is float:
        if scalar != scalar:
            return None                      # NaN: no key equals it
        sign = math.copysign(1.0, scalar)    # 0.0 == -0.0, but x + -0.0 differs
    elif type(scalar) is complex:
        if scalar != scalar:
            return None
        sign = (math.copysign(1.0, scalar.real), math.copysign(1.0, scalar.imag))
    else:
        sign = None
    if type(scalar) is int and not -2 ** 31 <= scalar < 2 ** 31:
        aval_of_value(scalar)                # (the range check: OverflowError)
    # The config in the key: trace_state() holds x64, the promotion mode, the default
    # device and backend (the promoted dtype and the constant's placement follow them).
    key = (type(scalar), scalar, sign, aval.dtype, aval.weak_type, aval.shape, inexact,
           _config.trace_state(), _config.read("jax_platforms"))
    hit = _SCALAR_CONSTS.get(key)
    if hit is None:
        try:
            # (promote_types canonicalizes: a Python float stands for a weak float64.)
            dtype, weak = _dt.promote_types((aval.dtype, aval.weak_type),
                                            _PY_SCALAR_PROMOTION[type(scalar)])
        except _dt.TypePromotionError as e:
            raise _dt.TypePromotionError(at_user_line(str(e))) from None
        if inexact:
            dtype = _dt.to_inexact_dtype(dtype)
        const = lax.convert_element_type(scalar, dtype, weak_type=weak)
        if aval.shape:
            const = broadcast_to(const, aval.shape)
        if len(_SCALAR_CONSTS) >= _SCALAR_CONSTS_MAX:
            try:
                del _SCALAR_CONSTS[next(iter(_SCALAR_CONSTS))]  # the oldest
            except (KeyError, StopIteration, RuntimeError):  # (another thread's edit)
                pass
        hit = _SCALAR_CONSTS[key] = (const, dtype, weak)
    const, dtype, weak = hit
    if aval.dtype != dtype or aval.weak_type != weak:
        arr = lax.convert_element_type(arr, dtype, weak_type=weak)
    return [const, arr] if scalar_first else [arr, const]


def _promote(fname, *args, inexact=False, broadcast=True, scalar_consts=False):
    """Promote dtypes (JAX rules) and, unless broadcast=False, broadcast shapes.
    scalar_consts: the operands only feed a new op (see _scalar_with_array)."""
    # One and two operands, spelled out: the hot path of every elementwise function.
    if len(args) == 2:
        av0, av1 = getattr(args[0], "aval", None), getattr(args[1], "aval", None)
        if _unchanged_pair(av0, av1, inexact, same_shape=False):
            if not broadcast or av0.shape == av1.shape:
                return list(args)
            return _broadcast_promoted(fname, list(args), [av0, av1])
    elif len(args) == 1:
        av0 = getattr(args[0], "aval", None)
        if type(av0) is _ShapedArray and not av0.weak_type and _keeps_dtype(av0.dtype,
                                                                            inexact):
            return list(args)
    if len(args) == 2:   # (an array with a Python scalar: traced, or eager into a new op)
        out = _traced_float_with_scalar(args, broadcast)
        if out is None and scalar_consts and broadcast:
            out = _scalar_with_array(fname, args, inexact)
        if out is not None:
            return out
    avals = _same_dtype_avals(args, inexact)
    if avals is not None:
        out = list(args)
        if not broadcast:
            return out
        first = avals[0].shape
        for av in avals:
            if av.shape != first:
                break
        else:
            return out
        return _broadcast_promoted(fname, out, avals)
    avals = [aval_of_value(a) if _is_array(a) or isinstance(a, (bool, int, float, complex))
             else aval_of_value(asarray(a)) for a in args]
    try:
        dtype, weak = _dt.promote_types(*[(a.dtype, a.weak_type) for a in avals])
    except _dt.TypePromotionError as e:
        raise _dt.TypePromotionError(at_user_line(str(e))) from None
    if inexact:
        dtype = _dt.to_inexact_dtype(dtype)
    out = [lax.convert_element_type(a, dtype, weak_type=weak) for a in args]
    if not broadcast:
        return out
    first = avals[0].shape
    if builtins.all(av.shape == first for av in avals):
        return out  # nothing to broadcast (the common case; skip NumPy's shape logic)
    return _broadcast_promoted(fname, out, avals)


_TRACED_FLOATS = frozenset(map(_onp.dtype, [_onp.float16, _onp.float32, _onp.float64,
                                            _dt.bfloat16]))


def _traced_float_with_scalar(args, broadcast):
    """[tracer, literal] (in the operands' order) for a traced, strongly typed float array
    and a Python int/float: the result type is the array's, so the scalar becomes a
    literal of that dtype (broadcast to the array's shape) without the promotion lattice,
    exactly as the general path makes it. The commonest traced pair (`x * 2.0`); None for
    anything else."""
    a, b = args
    if isinstance(a, Tracer):
        t, v, first = a, b, False
    elif isinstance(b, Tracer):
        t, v, first = b, a, True
    else:
        return None
    tv = type(v)
    if tv is not float and not (tv is int and -2**31 <= v < 2**31):
        return None
    av = t.aval
    if type(av) is not _ShapedArray or av.weak_type or av.dtype not in _TRACED_FLOATS:
        return None
    value = _onp.asarray(v).astype(av.dtype)
    if broadcast and av.shape:
        value = _onp.broadcast_to(value, av.shape)
    literal = lax._LiteralArray(value, False)
    return [literal, t] if first else [t, literal]


def _broadcast_promoted(fname, out, avals):
    """The promoted operands `out` (avals: their shapes) broadcast to one shape."""
    _check_rank_promotion(fname, [av.shape for av in avals])
    try:
        shape = broadcast_shapes(*(av.shape for av in avals))
    except ValueError:
        shapes = [tuple(av.shape) for av in avals]
        if len({len(s) for s in shapes if s}) > 1:
            # (JAX: ranks that differ fail in jnp's rank promotion, others in the lax op)
            raise ValueError(at_user_line(
                f"Incompatible shapes for broadcasting: shapes={shapes}")) from None
        raise TypeError(at_user_line(f"{fname} got incompatible shapes for broadcasting: "
                                     f"{', '.join(map(str, shapes))}.")) from None
    if len({av.ndim for av in avals if av.shape}) > 1:
        # JAX: leading 1s up to the result's rank, then lax's implicit broadcast.
        out = [lax.broadcast_to_rank(o, len(shape)) for o in out]
    return [lax.implicit_broadcast(o, shape) for o in out]


def _check_rank_promotion(fname, shapes):
    """jax_numpy_rank_promotion: 'warn'/'raise' when non-scalar operands differ in rank."""
    mode = _config.read("jax_numpy_rank_promotion")
    if mode == "allow" or len({len(s) for s in shapes if s}) < 2:
        return
    shown = " ".join(str(tuple(s)) for s in shapes)
    if mode == "raise":
        raise ValueError(at_user_line(
            f"Operands could not be broadcast together for {fname} on shapes {shown} and "
            f"with the config option jax_numpy_rank_promotion='raise'. For more "
            f"information, see https://docs.jax.dev/en/latest/rank_promotion_warning.html."))
    import warnings
    warnings.warn(f"Following NumPy automatic rank promotion for {fname} on shapes {shown}. "
                  f"Set the jax_numpy_rank_promotion config option to 'allow' to disable "
                  f"this warning; for more information, see "
                  f"https://docs.jax.dev/en/latest/rank_promotion_warning.html.",
                  stacklevel=_dt._user_stacklevel())


def _unary(name, lax_fn, inexact=False, doc=None):
    keep = _KEEP_INEXACT if inexact else _KEEP_ANY

    def f(x, /):
        av = getattr(x, "aval", None)
        if type(av) is not _ShapedArray or av.weak_type or av.dtype not in keep:
            _check_arraylike(name, x)
            (x,) = _promote(name, x, inexact=inexact)
        return lax_fn(x)
    f.__name__ = name
    f.__doc__ = doc or f"Elementwise {name} (NumPy semantics). JAX: jax.numpy.{name}."
    return f


def _binary(name, lax_fn, inexact=False):
    def f(x1, x2, /):
        if not _unchanged_pair(getattr(x1, "aval", None), getattr(x2, "aval", None),
                               inexact):
            _check_arraylike(name, x1, x2)
            x1, x2 = _promote(name, x1, x2, inexact=inexact, scalar_consts=True)
        return lax_fn(x1, x2)
    f.__name__ = name
    f.__doc__ = f"Elementwise {name} (NumPy semantics). JAX: jax.numpy.{name}."
    return f


add = _binary("add", lambda a, b: lax.or_(a, b) if a.dtype == _BOOL else lax.add(a, b))
subtract = _binary("subtract", lax.sub)
multiply = _binary("multiply",
                   lambda a, b: lax.and_(a, b) if a.dtype == _BOOL else lax.mul(a, b))
true_divide = divide = _binary("true_divide", lax.div, inexact=True)
maximum = _binary("maximum", lax.max)
minimum = _binary("minimum", lax.min)
arctan2 = _binary("arctan2", lax.atan2, inexact=True)
equal = _binary("equal", lax.eq)
not_equal = _binary("not_equal", lax.ne)


def _lexicographic(lax_fn):
    """An ordering comparison that orders complex numbers by real part, then imaginary
    part (as jax.numpy does; lax's comparisons reject complex operands)."""
    def compare(x1, x2):
        if not _dt.issubdtype(x1.dtype, _onp.complexfloating):
            return lax_fn(x1, x2)
        r1, r2 = lax.real(x1), lax.real(x2)
        return lax.select(lax.eq(r1, r2), lax_fn(lax.imag(x1), lax.imag(x2)), lax_fn(r1, r2))
    return compare


less = _binary("less", _lexicographic(lax.lt))
less_equal = _binary("less_equal", _lexicographic(lax.le))
greater = _binary("greater", _lexicographic(lax.gt))
greater_equal = _binary("greater_equal", _lexicographic(lax.ge))
bitwise_and = _binary("bitwise_and", lax.and_)
bitwise_or = _binary("bitwise_or", lax.or_)
bitwise_xor = _binary("bitwise_xor", lax.xor)
left_shift = _binary("left_shift", lax.shift_left)


def _right_shift(a, b):
    if _dt.issubdtype(a.dtype, _onp.unsignedinteger):
        return lax.shift_right_logical(a, b)
    return lax.shift_right_arithmetic(a, b)


right_shift = _binary("right_shift", _right_shift)


def _logical(name, fn):
    def f(*args):
        return fn(*[astype(a, bool_) if asarray(a).dtype != _onp.bool_ else asarray(a)
                    for a in _promote(name, *args)])
    f.__name__ = name
    return f


logical_and = _logical("logical_and", lax.and_)
logical_or = _logical("logical_or", lax.or_)
logical_xor = _logical("logical_xor", lax.xor)
_logical_not = _logical("logical_not", lax.not_)


def logical_not(x, /):
    return _logical_not(x)

negative = _unary("negative", lax.neg)
positive = _unary("positive", lambda x: x)
sign = _unary("sign", lax.sign)
floor = _unary("floor", lambda x: x if not _dt.is_float(x.dtype) else lax.floor(x))
ceil = _unary("ceil", lambda x: x if not _dt.is_float(x.dtype) else lax.ceil(x))
_trunc = _unary("trunc", lambda x: x if not _dt.is_float(x.dtype) else
                lax.select(lax.lt(x, lax.full_like(x, 0)), lax.ceil(x), lax.floor(x)))


def trunc(x):
    """Rounds toward zero elementwise. JAX: jnp.trunc."""
    return _trunc(x)
rint = _unary("rint", lambda x: x if not _dt.is_float(x.dtype) else lax.round(x, 1))
exp = _unary("exp", lax.exp, True)
exp2 = _unary("exp2", lax.exp2, True)
expm1 = _unary("expm1", lax.expm1, True)
log = _unary("log", lax.log, True)
log1p = _unary("log1p", lax.log1p, True)
log2 = _unary("log2", lambda x: lax.div(lax.log(x), lax.full_like(x, math.log(2))), True)
log10 = _unary("log10", lambda x: lax.div(lax.log(x), lax.full_like(x, math.log(10))), True)
sqrt = _unary("sqrt", lax.sqrt, True)
cbrt = _unary("cbrt", lax.cbrt, True)
sin = _unary("sin", lax.sin, True)
cos = _unary("cos", lax.cos, True)
tan = _unary("tan", lax.tan, True)
arcsin = _unary("arcsin", lax.asin, True)
arccos = _unary("arccos", lax.acos, True)
arctan = _unary("arctan", lax.atan, True)
sinh = _unary("sinh", lax.sinh, True)
cosh = _unary("cosh", lax.cosh, True)
tanh = _unary("tanh", lax.tanh, True)
arcsinh = _unary("arcsinh", lax.asinh, True)
arccosh = _unary("arccosh", lax.acosh, True)
arctanh = _unary("arctanh", lax.atanh, True)
isfinite = _unary("isfinite", lambda x: lax.is_finite(x) if _dt.is_float(x.dtype) else
                  lax.full_like(x, True, bool_))
isnan = _unary("isnan", lambda x: lax.ne(x, x))
isinf = _unary("isinf", lambda x: lax.eq(lax.abs(x), lax.full_like(lax.abs(x), _onp.inf))
               if _dt.is_inexact(x.dtype) else lax.full_like(x, False, bool_))
square = _unary("square", lambda x: lax.integer_pow(x, 2))
reciprocal = _unary("reciprocal", lambda x: lax.div(lax.full_like(x, 1), x), True)
conjugate = conj = _unary("conjugate", lambda x: lax.conj(x) if _dt.issubdtype(
    x.dtype, _onp.complexfloating) else x)
real = _unary("real", lambda x: lax.real(x) if _dt.issubdtype(x.dtype, _onp.complexfloating)
              else x)
imag = _unary("imag", lambda x: lax.imag(x) if _dt.issubdtype(x.dtype, _onp.complexfloating)
              else lax.full_like(x, 0))
deg2rad = radians = _unary("deg2rad", lambda x: lax.mul(x, lax.full_like(x, pi / 180)), True)
rad2deg = degrees = _unary("rad2deg", lambda x: lax.mul(x, lax.full_like(x, 180 / pi)), True)


def abs(x, /):  # noqa: A001
    (x,) = _promote("abs", x)
    if x.dtype == _onp.bool_ or _dt.issubdtype(x.dtype, _onp.unsignedinteger):
        return x
    return lax.abs(x)


absolute = abs


def invert(x, /):
    (x,) = _promote("invert", x)
    return lax.not_(x)


bitwise_not = bitwise_invert = invert


def round(a, decimals=0, out=None):  # noqa: A001
    _no_out("round", out)
    (a,) = _promote("round", a)
    if not _dt.is_inexact(a.dtype):
        return a
    if decimals == 0:
        return lax.round(a, 1)
    factor = lax.full_like(a, 10.0 ** decimals)
    return lax.div(lax.round(lax.mul(a, factor), 1), factor)


around = round


def _numeric(fname, x1, x2):
    """Promoted operands, booleans as the default integer (JAX: promote_args_numeric)."""
    x1, x2 = _promote(fname, x1, x2)
    if x1.dtype == _onp.bool_:
        x1, x2 = x1.astype(_dt.default_int()), x2.astype(_dt.default_int())
    return x1, x2


def _float_divmod(x1, x2):
    # As CPython's float_divmod (and JAX): the quotient is exact (x1 - mod) / x2, rounded,
    # so signed zeros, infinities and NaNs come out as in JAX.
    mod = lax.rem(x1, x2)
    zero = lax.full_like(x2, 0)
    corrected = lax.select(lax.eq(x2, zero), x1, lax.sub(x1, mod))
    div = lax.div(corrected, x2)
    fix = lax.and_(lax.ne(mod, lax.full_like(mod, 0)), lax.ne(lax.sign(x2), lax.sign(mod)))
    mod = lax.select(fix, lax.add(mod, x2), mod)
    div = lax.select(fix, lax.sub(div, lax.full_like(div, 1)), div)
    return lax.round(div, 1), mod


def floor_divide(x1, x2, /):
    x1, x2 = _numeric("floor_divide", x1, x2)
    if _dt.issubdtype(x1.dtype, _onp.unsignedinteger):
        return lax.div(x1, x2)
    if _dt.issubdtype(x1.dtype, _onp.integer):
        # Integer division rounds toward zero; numpy rounds toward -inf.
        q = lax.div(x1, x2)
        fix = lax.and_(lax.ne(lax.sign(x1), lax.sign(x2)),
                       lax.ne(lax.rem(x1, x2), lax.full_like(x1, 0)))
        return lax.select(fix, lax.sub(q, lax.full_like(q, 1)), q)
    if _dt.issubdtype(x1.dtype, _onp.complexfloating):
        raise TypeError("floor_divide does not support complex-valued inputs")
    return _float_divmod(x1, x2)[0]


def remainder(x1, x2, /):
    """x1 mod x2 with the sign of x2 (NumPy's %)."""
    x1, x2 = _promote("remainder", x1, x2)
    r = lax.rem(x1, x2)
    zero = lax.full_like(r, 0)
    fix = lax.and_(lax.ne(r, zero), lax.ne(lax.lt(r, zero), lax.lt(x2, zero)))
    return lax.select(fix, lax.add(r, x2), r)


mod = remainder


def fmod(x1, x2, /):
    x1, x2 = _promote("fmod", x1, x2)
    return lax.rem(x1, x2)


def divmod(x1, x2, /):  # noqa: A001
    x1, x2 = _numeric("divmod", x1, x2)
    if _dt.issubdtype(x1.dtype, _onp.integer):
        return floor_divide(x1, x2), remainder(x1, x2)
    return _float_divmod(x1, x2)


def power(x1, x2, /):
    """x1 ** x2; a static integer exponent becomes integer_pow."""
    if isinstance(x2, int) and not isinstance(x2, bool) and _is_array(x1) or (
            isinstance(x2, int) and not isinstance(x2, bool)):
        (x1,) = _promote("power", x1)
        if _dt.issubdtype(x1.dtype, _onp.integer) and x2 < 0:
            raise ValueError("Integers cannot be raised to negative integer powers")
        return lax.integer_pow(x1, x2)
    x1, x2 = _promote("power", x1, x2)
    if _dt.issubdtype(x1.dtype, _onp.integer) or x1.dtype == _onp.bool_:
        return _integer_power(x1, x2)
    return lax.pow(x1, x2)


def _integer_power(x, y):
    # Square-and-multiply over the bits of an integer array exponent.
    acc = lax.full_like(x, 1)
    bits = _onp.iinfo(x.dtype).bits if x.dtype != _onp.bool_ else 1
    for _ in range(bits):
        odd = lax.ne(lax.and_(y, lax.full_like(y, 1)), lax.full_like(y, 0))
        acc = lax.select(odd, lax.mul(acc, x), acc)
        x = lax.mul(x, x)
        y = lax.shift_right_logical(y, lax.full_like(y, 1))
    return acc


def float_power(x1, x2, /):
    x1, x2 = _promote("float_power", x1, x2, inexact=True)
    return lax.pow(x1, x2)


def _strong(x):
    """x without its weak type: where JAX's function builds its result from strongly
    typed constants, its result is strong even for weak operands."""
    return lax.convert_element_type(x, x.dtype)


def hypot(x1, x2, /):
    x1, x2 = _promote("hypot", x1, x2, inexact=True)
    return _strong(lax.sqrt(lax.add(lax.mul(x1, x1), lax.mul(x2, x2))))


def logaddexp(x1, x2, /):
    x1, x2 = _promote("logaddexp", x1, x2, inexact=True)
    m = lax.max(x1, x2)
    if _dt.issubdtype(m.dtype, _onp.complexfloating):
        # amax + log1p(exp(x1 + x2 - 2 amax)), the phase wrapped into [-pi, pi] (as JAX)
        out = lax.add(m, lax.log1p(lax.exp(lax.sub(lax.add(x1, x2), lax.add(m, m)))))
        return lax.complex(lax.real(out), _wrap_phase(lax.imag(out)))
    safe_m = lax.select(lax.is_finite(m), m, lax.full_like(m, 0))
    return lax.add(safe_m, lax.log(lax.add(lax.exp(lax.sub(x1, safe_m)),
                                           lax.exp(lax.sub(x2, safe_m)))))


def _wrap_phase(x):
    """x wrapped into [-pi, pi). (Strong constants, as JAX's: the result is not weak.)"""
    pi, two_pi = lax.full(x.shape, _onp.pi, x.dtype), lax.full(x.shape, 2 * _onp.pi, x.dtype)
    rem = lax.rem(lax.add(x, pi), two_pi)
    rem = lax.select(lax.lt(rem, lax.full(x.shape, 0, x.dtype)), lax.add(rem, two_pi), rem)
    return lax.sub(rem, pi)


def fmax(x1, x2):
    x1, x2 = _promote("fmax", x1, x2)
    return where(isnan(x1), x2, where(isnan(x2), x1, lax.max(x1, x2)))


def fmin(x1, x2):
    x1, x2 = _promote("fmin", x1, x2)
    return where(isnan(x1), x2, where(isnan(x2), x1, lax.min(x1, x2)))


def heaviside(x1, x2, /):
    x1, x2 = _promote("heaviside", x1, x2, inexact=True)
    zero = lax.full_like(x1, 0)
    # x1 == 0 (either sign) gives x2; a NaN x1 stays NaN, as in JAX.
    return where(lax.lt(x1, zero), zero, where(lax.gt(x1, zero), lax.full_like(x1, 1),
                                               where(lax.ne(x1, x1), x1, x2)))


def sinc(x, /):
    (x,) = _promote("sinc", x, inexact=True)
    pix = lax.mul(x, lax.full_like(x, pi))
    is_zero = lax.eq(x, lax.full_like(x, 0))
    safe = lax.select(is_zero, lax.full_like(x, 1), pix)
    return lax.select(is_zero, lax.full_like(x, 1), lax.div(lax.sin(safe), safe))


def fabs(x, /):
    (x,) = _promote("fabs", x, inexact=True)
    return lax.abs(x)


_SAME_WIDTH_INT = {2: _onp.dtype(_onp.int16), 4: _onp.dtype(_onp.int32),
                   8: _onp.dtype(_onp.int64)}


def signbit(x, /):
    """True where the sign bit is set (also for -0.0 and negative NaNs)."""
    (x,) = _promote("signbit", x)
    if _dt.issubdtype(x.dtype, _onp.integer):
        return lax.lt(x, lax.full_like(x, 0))
    if x.dtype == _onp.bool_:
        return lax.full_like(x, False, bool_)
    if not _dt.is_float(x.dtype):
        raise TypeError(f"mjax.numpy.signbit: not defined for dtype {x.dtype}")
    bits = lax.bitcast_convert_type(x, _SAME_WIDTH_INT[x.dtype.itemsize])
    return lax.lt(bits, lax.full_like(bits, 0))


def copysign(x1, x2, /):
    x1, x2 = _promote("copysign", x1, x2, inexact=True)
    if _dt.issubdtype(x1.dtype, _onp.complexfloating):
        raise TypeError("mjax.numpy.copysign does not support complex inputs")
    mag = lax.abs(x1)
    return lax.select(signbit(x2), lax.neg(mag), mag)


def ldexp(x1, x2, /):
    """x1 * 2**x2 for an integer x2 (two steps, so that 2**x2 itself cannot overflow)."""
    x2 = asarray(x2)
    if not _dt.issubdtype(x2.dtype, _onp.integer):
        raise TypeError(f"mjax.numpy.ldexp: x2 must be an integer array, got {x2.dtype}")
    (x1,) = _promote("ldexp", x1, inexact=True)
    x1, x2 = broadcast_arrays(x1, x2)
    half = floor_divide(x2, 2)
    e1 = lax.exp2(lax.convert_element_type(half, x1.dtype))
    e2 = lax.exp2(lax.convert_element_type(lax.sub(x2, half), x1.dtype))
    return lax.mul(lax.mul(x1, e1), e2)


def nextafter(x1, x2, /):
    """The next representable float after x1 towards x2."""
    x1, x2 = _promote("nextafter", x1, x2, inexact=True)
    if not _dt.is_float(x1.dtype):
        raise TypeError(f"mjax.numpy.nextafter: not defined for dtype {x1.dtype}")
    itype = _SAME_WIDTH_INT[x1.dtype.itemsize]
    bits = lax.bitcast_convert_type(x1, itype)
    one = lax.full_like(bits, 1)
    zero = lax.full_like(x1, 0)
    # Moving away from zero increments the magnitude bits; towards zero decrements them.
    away = lax.eq(lax.lt(x1, x2), lax.gt(x1, zero))
    stepped = lax.bitcast_convert_type(lax.select(away, lax.add(bits, one), lax.sub(bits, one)),
                                       x1.dtype)
    tiny = lax.bitcast_convert_type(one, x1.dtype)       # smallest subnormal
    from_zero = lax.select(lax.lt(x2, zero), lax.neg(tiny), tiny)
    out = lax.select(lax.eq(x1, zero), from_zero, stepped)
    out = lax.select(lax.eq(x1, x2), x2, out)
    nan = lax.full_like(x1, _onp.nan)
    out = lax.select(lax.or_(lax.ne(x1, x1), lax.ne(x2, x2)), nan, out)
    # (JAX's result is weak when both operands are: the constants above are not.)
    return lax.convert_element_type(out, out.dtype, weak_type=x1.weak_type and x2.weak_type)


def gcd(x1, x2):
    """Greatest common divisor (Euclid's algorithm, unrolled to the dtype's worst case)."""
    x1, x2 = _promote("gcd", x1, x2)
    if not _dt.issubdtype(x1.dtype, _onp.integer):
        raise TypeError(f"mjax.numpy.gcd: arguments must be integers, got {x1.dtype}")
    a, b = abs(x1), abs(x2)
    zero, one = lax.full_like(a, 0), lax.full_like(a, 1)
    # Consecutive Fibonacci numbers are the worst case: about 1.44 * bits steps.
    for _ in range(int(1.45 * 8 * a.dtype.itemsize) + 2):
        b_zero = lax.eq(b, zero)
        r = lax.rem(a, lax.select(b_zero, one, b))
        a, b = lax.select(b_zero, a, b), lax.select(b_zero, b, r)
    return _strong(a)


def lcm(x1, x2):
    x1, x2 = _promote("lcm", x1, x2)
    g = gcd(x1, x2)
    zero = lax.full_like(g, 0)
    safe = lax.select(lax.eq(g, zero), lax.full_like(g, 1), g)
    return _strong(lax.select(lax.eq(g, zero), zero, abs(lax.mul(lax.div(x1, safe), x2))))


def isclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    a, b = _promote("isclose", a, b, inexact=True)
    out = less_equal(abs(a - b), atol + rtol * abs(b))
    if equal_nan:
        out = logical_or(out, logical_and(isnan(a), isnan(b)))
    return _strong(out)


def allclose(a, b, rtol=1e-05, atol=1e-08, equal_nan=False):
    return all(isclose(a, b, rtol, atol, equal_nan))


def array_equal(a1, a2, equal_nan=False):
    a1, a2 = asarray(a1), asarray(a2)
    if a1.shape != a2.shape:
        return asarray(False)
    eq = equal(a1, a2)
    if equal_nan:
        eq = logical_or(eq, logical_and(isnan(a1), isnan(a2)))
    return all(eq)


def where(condition, x=None, y=None, /, *, size=None, fill_value=None):
    """condition ? x : y, broadcast; the one-argument form is nonzero(condition, size=,
    fill_value=) (a concrete condition unless size is given)."""
    if x is None and y is None:
        return nonzero(condition, size=size, fill_value=fill_value)
    if size is not None or fill_value is not None:
        raise ValueError("size and fill_value are only valid for jnp.where(condition)")
    if x is None or y is None:
        raise ValueError("mjax.numpy.where: either both or neither of x and y should be given")
    condition = asarray(condition)
    if condition.dtype != _onp.bool_:
        condition = astype(condition, bool_)
    x, y = _promote("where", x, y)
    shape = broadcast_shapes(condition.shape, x.shape, y.shape)
    return lax.select(broadcast_to(condition, shape), broadcast_to(x, shape),
                      broadcast_to(y, shape))


def select(condlist, choicelist, default=0):
    out = default
    for c, v in reversed(list(zip(condlist, choicelist))):
        out = where(c, v, out)
    return asarray(out)


def clip(arr=None, /, min=None, max=None):  # noqa: A002  (JAX's and the array API's names)
    a, a_min, a_max = asarray(arr), min, max
    if builtins.any(v is not None and iscomplexobj(v) for v in (a, a_min, a_max)):
        raise ValueError("Clip received a complex value either through the input or the "
                         "min/max keywords. Complex values have no ordering and cannot be "
                         "clipped. Please convert to a real value or array by taking the "
                         "real or imaginary components via jax.numpy.real/imag "
                         "respectively.")
    if a_min is not None:
        a = maximum(a, a_min)
    if a_max is not None:
        a = minimum(a, a_max)
    return a


def nonzero(a, *, size=None, fill_value=None):
    """Indices of the nonzero entries, one array per dimension. With `size`, exactly `size`
    entries: the first ones found, padded with fill_value (default 0; a scalar or one value
    per dimension); this also works on traced arrays. JAX: jnp.nonzero."""
    a = asarray(a)
    if a.ndim == 0:
        raise ValueError("Calling nonzero on 0d arrays is not allowed. Use "
                         "jnp.atleast_1d(scalar).nonzero() instead.")
    if size is None:
        from mjax.numpy.concrete_values import concrete_or_error
        host = concrete_or_error(a, "nonzero/where with one argument needs a concrete array "
                                    "(its output shape depends on the values); pass size=")
        return tuple(asarray(i.astype(_dt.default_int())) for i in _onp.nonzero(host))
    from mjax.numpy.searching import _flat_nonzero, _unravel
    flat = _flat_nonzero(a, int(size), None, "nonzero")
    cols = list(_unravel(flat, a.shape))
    if fill_value is not None:
        fills = _onp.broadcast_to(_onp.asarray(fill_value), (a.ndim,)) if _onp.ndim(
            fill_value) == 0 else tuple(fill_value)
        if len(fills) != a.ndim:
            raise ValueError(f"fill_value must be a scalar or a tuple of length {a.ndim}; "
                             f"got {fill_value}")
        valid = greater_equal(_flat_nonzero(a, int(size), -1, "nonzero"), 0)
        cols = [where(valid, c, asarray(f).astype(c.dtype)) for c, f in zip(cols, fills)]
    return tuple(cols)


# ---- creation -------------------------------------------------------------------
def _shape(shape):
    if isinstance(shape, (int, _onp.integer)) or _onp.ndim(shape) == 0:
        return (_operator.index(shape),)     # (a traced int JAX knows works too)
    return tuple(int(d) for d in shape)


def zeros(shape, dtype=None):
    return lax.full(_shape(shape), 0, _dt.default_float() if dtype is None
                    else _dt.check_user_dtype(dtype, "zeros"))


def ones(shape, dtype=None):
    return lax.full(_shape(shape), 1, _dt.default_float() if dtype is None
                    else _dt.check_user_dtype(dtype, "ones"))


def empty(shape, dtype=None):
    return zeros(shape, None if dtype is None else _dt.check_user_dtype(dtype, "empty"))


def full(shape, fill_value, dtype=None):
    if dtype is not None:
        dtype = _dt.check_user_dtype(dtype, "full")
    if dtype is None:
        fill_value = asarray(fill_value)
        return broadcast_to(fill_value, _shape(shape))
    return broadcast_to(asarray(fill_value, dtype=dtype), _shape(shape))


def zeros_like(a, dtype=None, shape=None):
    a = asarray(a)
    dtype = None if dtype is None else _dt.check_user_dtype(dtype, "zeros_like")
    return lax.full(a.shape if shape is None else _shape(shape), 0, dtype or a.dtype)


def ones_like(a, dtype=None, shape=None):
    a = asarray(a)
    dtype = None if dtype is None else _dt.check_user_dtype(dtype, "ones_like")
    return lax.full(a.shape if shape is None else _shape(shape), 1, dtype or a.dtype)


def full_like(a, fill_value, dtype=None, shape=None):
    a = asarray(a)
    dtype = None if dtype is None else _dt.check_user_dtype(dtype, "full_like")
    return lax.full(a.shape if shape is None else _shape(shape), fill_value, dtype or a.dtype)


def empty_like(prototype, dtype=None, shape=None):
    """zeros_like (XLA has no uninitialized memory). JAX: jnp.empty_like."""
    return zeros_like(prototype, dtype, shape)


def arange(start, stop=None, step=None, dtype=None):
    """Evenly spaced values; start/stop/step must be concrete (static shape)."""
    from mjax.numpy.concrete_values import concrete_array
    start, stop, step = (concrete_array(v, "arange's arguments determine its output shape "
                                           "and must be concrete") for v in (start, stop, step))
    if stop is None:
        start, stop = 0, start
    step = 1 if step is None else step
    values = [_onp.asarray(v).item() if hasattr(v, "shape") else v for v in (start, stop, step)]
    if dtype is None:
        dtype = (_dt.default_float() if builtins.any(isinstance(v, float) for v in values)
                 else _dt.default_int())
    dtype = _dt.check_user_dtype(dtype, "arange")
    n = builtins.max(0, int(math.ceil((values[1] - values[0]) / values[2])))
    if values[0] == 0 and values[2] == 1:
        return lax.iota(dtype, n)
    base = lax.iota(dtype, n)
    return lax.add(lax.mul(base, lax.full_like(base, values[2])),
                   lax.full_like(base, values[0]))


def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0):
    num = int(num)
    dtype = _dt.default_float() if dtype is None else _dt.check_user_dtype(dtype, "linspace")
    start, stop = asarray(start), asarray(stop)
    compute = _dt.default_float() if not _dt.is_inexact(dtype) else dtype
    start_c, stop_c = astype(start, compute), astype(stop, compute)
    div = (num - 1) if endpoint else num
    step = (stop_c - start_c) / builtins.max(div, 1)
    i = lax.iota(compute, num)
    shape = broadcast_shapes(start.shape, stop.shape)
    i = lax.broadcast_in_dim(i, (num,) + shape, (0,))
    out = broadcast_to(start_c, (num,) + shape) + i * broadcast_to(step, (num,) + shape)
    if endpoint and num > 1:
        out = concatenate([out[:-1], broadcast_to(stop_c, (1,) + shape)], axis=0)
    out = moveaxis(out, 0, axis) if shape else out
    out = astype(out, dtype)
    return (out, step) if retstep else out


def eye(N, M=None, k=0, dtype=None):
    M = N if M is None else M
    dtype = _dt.default_float() if dtype is None else _dt.check_user_dtype(dtype, "eye")
    r = lax.broadcasted_iota(_dt.int32, (N, M), 0)
    c = lax.broadcasted_iota(_dt.int32, (N, M), 1)
    return astype(lax.eq(lax.add(r, _diagonal_offset(r, k)), c), dtype)


def _diagonal_offset(r, k):
    # A Python int stays a scalar operand (JAX's jaxpr: `add b 0:i32[]`)
    return k if type(k) is int else lax.full_like(r, k)


def identity(n, dtype=None):
    return eye(n, dtype=None if dtype is None else _dt.check_user_dtype(dtype, "identity"))


def tri(N, M=None, k=0, dtype=None):
    M = N if M is None else M
    dtype = None if dtype is None else _dt.check_user_dtype(dtype, "tri")
    r = lax.broadcasted_iota(_dt.int32, (N, M), 0)
    r = lax.add(r, _diagonal_offset(r, k))    # (before the column iota: JAX's order)
    c = lax.broadcasted_iota(_dt.int32, (N, M), 1)
    return astype(lax.ge(r, c), dtype or _dt.default_float())


def tril(m, k=0):
    m = asarray(m)
    mask = tri(*m.shape[-2:], k=k, dtype=bool_)
    return where(mask, m, zeros_like(m))


def triu(m, k=0):
    m = asarray(m)
    mask = tri(*m.shape[-2:], k=k - 1, dtype=bool_)
    return where(mask, zeros_like(m), m)


# ---- shape manipulation ---------------------------------------------------------
def _axis(axis, ndim):
    if not -ndim <= axis < builtins.max(ndim, 1):
        raise ValueError(f"axis {axis} is out of bounds for array of dimension {ndim}")
    return axis % ndim if ndim else 0


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (int, _onp.integer)) or _onp.ndim(axis) == 0:
        axis = (axis,)
    from mjax.numpy.concrete_values import concrete_int
    return tuple(_axis(concrete_int(a, "an axis argument must be static"), ndim)
                 for a in axis)


def ndim(a):
    return aval_of_value(asarray(a) if not _is_array(a) else a).ndim


def shape(a):
    return aval_of_value(asarray(a) if not _is_array(a) else a).shape


def size(a, axis=None):
    s = shape(a)
    return math.prod(s) if axis is None else s[axis]


def reshape(a, shape, order="C", *, copy=None):
    # (copy: accepted as JAX does; mjax arrays are immutable, so a copy is never visible)
    a = asarray(a)
    shape = _shape(shape)
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = math.prod(d for d in shape if d != -1)
        if known == 0 or a.size % known:
            raise TypeError(at_user_line(
                f"cannot reshape array of shape {a.shape} (size {a.size}) into "
                f"shape {shape}"))
        shape = tuple(a.size // known if d == -1 else d for d in shape)
    if math.prod(shape) != a.size:
        raise TypeError(at_user_line(
            f"cannot reshape array of shape {a.shape} (size {a.size}) into shape "
            f"{shape} (size {math.prod(shape)})"))
    if order == "F":
        return transpose(lax.reshape(transpose(a), shape[::-1]))
    return lax.reshape(a, shape)


def ravel(a, order="C"):  # (out_sharding: array_api.OUT_SHARDING_FUNCTIONS)
    return reshape(a, (-1,), order)


def transpose(a, axes=None):
    a = asarray(a)
    axes = tuple(range(a.ndim))[::-1] if axes is None else tuple(_axis(x, a.ndim) for x in axes)
    return lax.transpose(a, axes)


def permute_dims(a, /, axes):
    """JAX: jnp.permute_dims (the array API's transpose)."""
    return transpose(a, axes)


def swapaxes(a, axis1, axis2):
    a = asarray(a)
    perm = list(range(a.ndim))
    i, j = _axis(axis1, a.ndim), _axis(axis2, a.ndim)
    perm[i], perm[j] = perm[j], perm[i]
    return lax.transpose(a, perm)


def moveaxis(a, source, destination):
    a = asarray(a)
    src = _axes(source, a.ndim)
    dst = _axes(destination, a.ndim)
    order = [i for i in range(a.ndim) if i not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return lax.transpose(a, order)


def expand_dims(a, axis):
    a = asarray(a)
    axes = (axis,) if isinstance(axis, int) or _onp.ndim(axis) == 0 else tuple(axis)
    rank = a.ndim + len(axes)
    from mjax.numpy.concrete_values import concrete_int
    return lax.expand_dims(a, [_axis(concrete_int(x, "expand_dims: axis must be static"),
                                     rank) for x in axes])


def squeeze(a, axis=None):
    a = asarray(a)
    if axis is None:
        axes = [i for i, d in enumerate(a.shape) if d == 1]
    else:
        axes = list(_axes(axis, a.ndim))
        for ax in axes:
            if a.shape[ax] != 1:
                raise ValueError(f"cannot select an axis to squeeze out which has size not "
                                 f"equal to one, got shape={a.shape} and dimensions={tuple(axes)}")
    return lax.squeeze(a, axes)


def atleast_1d(*arys):
    out = [reshape(a, (1,)) if asarray(a).ndim == 0 else asarray(a) for a in arys]
    return out[0] if len(out) == 1 else out


def atleast_2d(*arys):
    out = []
    for a in arys:
        a = asarray(a)
        out.append(reshape(a, (1,) * (2 - a.ndim) + a.shape) if a.ndim < 2 else a)
    return out[0] if len(out) == 1 else out


def concatenate(arrays, axis=0, dtype=None):
    if _prng.any_keys(arrays):
        return _prng.concatenate_keys(list(arrays), axis)
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    if axis is None:
        arrays, axis = [ravel(a) for a in arrays], 0
    if builtins.any(a.ndim == 0 for a in arrays):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    arrays = _promote("concatenate", *arrays, broadcast=False) if len(arrays) > 1 and len(
        {a.dtype for a in arrays}) > 1 else arrays
    if dtype is not None:
        arrays = [astype(a, dtype) for a in arrays]
    return lax.concatenate(arrays, _axis(axis, arrays[0].ndim))


def stack(arrays, axis=0, out=None, dtype=None):
    _no_out("stack", out)
    if _prng.any_keys(arrays):
        return _prng.stack_keys(list(arrays), axis)
    arrays = [asarray(a) for a in arrays]
    if not arrays:
        raise ValueError("need at least one array to stack")
    shapes = {a.shape for a in arrays}
    if len(shapes) > 1:
        raise ValueError(at_user_line(f"all input arrays must have the same shape, got "
                         f"{[a.shape for a in arrays]}"))
    ax = _axis(axis, arrays[0].ndim + 1)
    return concatenate([expand_dims(a, ax) for a in arrays], axis=ax, dtype=dtype)


def hstack(tup, dtype=None):
    arrs = [atleast_1d(a) for a in tup]
    return concatenate(arrs, axis=0 if arrs[0].ndim == 1 else 1, dtype=dtype)


def vstack(tup, dtype=None):
    return concatenate([atleast_2d(a) for a in tup], axis=0, dtype=dtype)


def column_stack(tup):
    return concatenate([a if asarray(a).ndim > 1 else reshape(a, (-1, 1)) for a in tup], 1)


def split(ary, indices_or_sections, axis=0):
    ary = asarray(ary)
    axis = _axis(axis, ary.ndim)
    n = ary.shape[axis]
    if isinstance(indices_or_sections, int) or _onp.ndim(indices_or_sections) == 0:
        from mjax.numpy.concrete_values import concrete_int
        indices_or_sections = concrete_int(indices_or_sections,
                                           "split: the number of sections must be static")
        if n % indices_or_sections:
            raise ValueError("array split does not result in an equal division")
        step = n // indices_or_sections
        bounds = list(range(0, n + 1, step))
    else:
        bounds = [0] + list(indices_or_sections) + [n]
    return [lax.slice_in_dim(ary, a, b, 1, axis) for a, b in zip(bounds[:-1], bounds[1:])]


def flip(m, axis=None):
    m = asarray(m)
    return lax.rev(m, _axes(axis, m.ndim))


def fliplr(m):
    return flip(m, 1)


def flipud(m):
    return flip(m, 0)


def tile(A, reps):
    A = asarray(A)
    reps = (_operator.index(reps),) if _onp.ndim(reps) == 0 else tuple(reps)
    d = builtins.max(len(reps), A.ndim)
    A = reshape(A, (1,) * (d - A.ndim) + A.shape)
    reps = (1,) * (d - len(reps)) + reps
    inter = []
    for r, s in zip(reps, A.shape):
        inter += [r, s]
    out = lax.broadcast_in_dim(A, inter, list(range(1, 2 * d, 2)))
    return reshape(out, [r * s for r, s in zip(reps, A.shape)])


def repeat(a, repeats, axis=None, *, total_repeat_length=None):
    a = asarray(a)
    if not isinstance(repeats, int) or total_repeat_length is not None:
        from mjax.numpy.shaping import repeat_general
        return repeat_general(a, repeats, axis, total_repeat_length)
    if axis is None:
        a, axis = ravel(a), 0
    axis = _axis(axis, a.ndim)
    shape = list(a.shape)
    b = expand_dims(a, axis + 1)
    b = broadcast_to(b, shape[:axis + 1] + [repeats] + shape[axis + 1:])
    shape[axis] *= repeats
    return reshape(b, shape)


# ---- reductions -----------------------------------------------------------------
def _reduction(name, lax_fn, *, bool_fn=None, upcast_small_int=False, identity=None):
    def f(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None,
          promote_integers=True):
        if out is not None:
            raise NotImplementedError(f"mjax.numpy.{name}: the `out` argument is not supported "
                                      f"(arrays are immutable)")
        _check_arraylike(name, a)
        a = asarray(a)
        axes = _axes(axis, a.ndim)
        if dtype is not None:
            a = astype(a, dtype)
        elif upcast_small_int and promote_integers and (a.dtype == _onp.bool_ or (
                _dt.issubdtype(a.dtype, _onp.integer)
                and a.dtype.itemsize < _dt.default_int().itemsize)):
            a = astype(a, _dt.default_int() if not _dt.issubdtype(a.dtype, _onp.unsignedinteger)
                       else _dt.canonicalize_dtype(_dt.uint64))
        if where is not None:
            if identity is None and initial is None:
                raise ValueError(f"reduction operation {name} does not have an identity, so "
                                 f"to use a where mask one has to specify 'initial'")
            a = _where_identity(a, where, identity(a.dtype) if initial is None else initial)
        if a.dtype == _onp.bool_ and bool_fn is not None:
            res = bool_fn(a, axes)
        else:
            if name in ("max", "min") and builtins.any(a.shape[i] == 0 for i in axes) \
                    and initial is None:
                raise ValueError(f"zero-size array to reduction operation {name} which has "
                                 f"no identity")
            res = lax_fn(a, axes)
        if initial is not None:
            res = {"sum": add, "prod": multiply, "max": maximum, "min": minimum}[name](
                res, initial)
        if keepdims:
            res = lax.expand_dims(res, axes)
        return res
    f.__name__ = name
    f.__doc__ = f"NumPy's {name} reduction. JAX: jax.numpy.{name}."
    return f


def _where_identity(a, where_, value):
    return where(where_, a, full_like(a, value))


sum = _reduction("sum", lax.reduce_sum, upcast_small_int=True, identity=lambda d: 0)  # noqa
prod = _reduction("prod", lax.reduce_prod, upcast_small_int=True, identity=lambda d: 1)
_max = _reduction("max", lax.reduce_max, bool_fn=lax.reduce_or)
_min = _reduction("min", lax.reduce_min, bool_fn=lax.reduce_and)


# (max and min take no dtype: JAX's positional order is axis, out, keepdims)
def max(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """NumPy's max reduction. JAX: jax.numpy.max."""
    return _max(a, axis, None, out, keepdims, initial, where)


def min(a, axis=None, out=None, keepdims=False, initial=None, where=None):  # noqa: A001
    """NumPy's min reduction. JAX: jax.numpy.min."""
    return _min(a, axis, None, out, keepdims, initial, where)


amax, amin = max, min


def _truth_reduction(name, lax_fn, identity: bool):
    def f(a, axis=None, out=None, keepdims=False, *, where=None):
        _check_arraylike(name, a)
        a = asarray(a)
        a = a if a.dtype == _onp.bool_ else astype(a, bool_)
        if where is not None:
            a = _where_identity(a, where, identity)
        res = lax_fn(a, _axes(axis, a.ndim))
        return lax.expand_dims(res, _axes(axis, a.ndim)) if keepdims else res
    f.__name__ = name
    f.__doc__ = f"NumPy's {name}: truth of every/any element. JAX: jax.numpy.{name}."
    return f


all = _truth_reduction("all", lax.reduce_and, True)  # noqa: A001
any = _truth_reduction("any", lax.reduce_or, False)  # noqa: A001


def mean(a, axis=None, dtype=None, out=None, keepdims=False, *, where=None):
    _check_arraylike("mean", a)
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    if dtype is None:
        dtype = _dt.to_inexact_dtype(a.dtype)
    if where is None:
        n = math.prod(a.shape[i] for i in axes)
        total = sum(astype(a, dtype), axis=axes, keepdims=keepdims)
        return lax.div(total, lax.full_like(total, n))
    total = sum(astype(a, dtype), axis=axes, keepdims=keepdims, where=where)
    count = sum(broadcast_to(where, a.shape), axis=axes, keepdims=keepdims, dtype=dtype)
    return total / count


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    ddof = _correction(ddof, correction)
    if where is not None:
        raise NotImplementedError("jnp.var: the where= argument is not implemented in mjax")
    _check_arraylike("var", a)
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    # (`mean` is the caller's precomputed mean, kept dims, as in JAX; the function is global)
    m = globals()["mean"](a, axes, dtype, keepdims=True) if mean is None else asarray(mean)
    d = a - m
    sq = real(d * conj(d)) if _dt.issubdtype(d.dtype, _onp.complexfloating) else d * d
    n = math.prod(a.shape[i] for i in axes)
    return sum(sq, axis=axes, keepdims=keepdims) / builtins.max(n - ddof, 0)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None,
        mean=None, correction=None):
    _check_arraylike("std", a)
    return sqrt(var(a, axis, dtype, ddof=_correction(ddof, correction), keepdims=keepdims,
                    where=where, mean=mean))


def _correction(ddof, correction):
    # The array API's name for ddof; giving both is ambiguous, as JAX says.
    if correction is None:
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def average(a, axis=None, weights=None, returned=False, keepdims=False):
    from mjax.numpy.shaping import average as _average
    return _average(a, axis, weights, returned, keepdims)


def _arg(name, lax_fn):
    def f(a, axis=None, out=None, keepdims=None):
        keepdims = bool(keepdims)
        a = asarray(a)
        if axis is None:
            res = lax_fn(ravel(a), 0, _dt.default_int())
            return reshape(res, (1,) * a.ndim) if keepdims else res
        ax = _axis(axis, a.ndim)
        if a.shape[ax] == 0:
            raise ValueError(f"attempt to get {name} of an empty sequence")
        res = lax_fn(a, ax, _dt.default_int())
        return lax.expand_dims(res, (ax,)) if keepdims else res
    f.__name__ = name
    return f


argmax = _arg("argmax", lax.argmax)
argmin = _arg("argmin", lax.argmin)


def _cumulative(name, lax_fn, upcast=False):
    def f(a, axis=None, dtype=None, out=None):
        _no_out(name, out)
        a = asarray(a)
        if axis is None:
            a, axis = ravel(a), 0
        if dtype is not None:
            a = astype(a, dtype)
        elif upcast and a.dtype == _onp.bool_:  # (JAX keeps small ints as they are)
            a = astype(a, _dt.default_int())
        return lax_fn(a, _axis(axis, a.ndim))
    f.__name__ = name
    return f


cumsum = _cumulative("cumsum", lax.cumsum, True)
cumprod = _cumulative("cumprod", lax.cumprod, True)


def sort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False):
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    out = lax.sort(a, _axis(axis, a.ndim), is_stable=True)
    return flip(out, _axis(axis, a.ndim)) if descending else out


def argsort(a, axis=-1, *, kind=None, order=None, stable=True, descending=False,
            dtype=None):
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    ax = _axis(axis, a.ndim)
    idx = lax.broadcasted_iota(_dt.default_int() if dtype is None else
                               _dt.check_user_dtype(dtype, "argsort"), a.shape, ax)
    keys = negative(a) if descending else a
    _, perm = lax.sort((keys, idx), ax, is_stable=True, num_keys=1)
    return perm


# ---- linear algebra -------------------------------------------------------------
def matmul(a, b, *, precision=None, preferred_element_type=None):
    """NumPy matmul: batched, with broadcasting of batch dims and 1-d promotion."""
    a, b = (_promote("matmul", a, b, broadcast=False) if _needs_promotion(a, b)
            else (asarray(a), asarray(b)))
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(at_user_line(
            f"matmul: operands must be at least 1-d, got shapes {a.shape} and "
            f"{b.shape}"))
    b_contract = builtins.max(b.ndim - 2, 0)
    if a.shape[-1] != b.shape[b_contract]:
        raise TypeError(at_user_line(f"matmul: contracting dimensions differ: shapes {a.shape} and "
                        f"{b.shape} (size {a.shape[-1]} vs {b.shape[b_contract]})"))
    if a.ndim == 1 or b.ndim == 1:
        # One dot_general on the vector itself, as JAX emits: the other operand's leading
        # dims stay free dims (nothing to broadcast), already in the result's order.
        return lax.dot_general(a, b, (((a.ndim - 1,), (b_contract,)), ((), ())),
                               preferred_element_type=preferred_element_type)
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a2 = broadcast_to(a, batch + a.shape[-2:])
    b2 = broadcast_to(b, batch + b.shape[-2:])
    nb = len(batch)
    return lax.dot_general(a2, b2, (((nb + 1,), (nb,)), (tuple(range(nb)), tuple(range(nb)))),
                           preferred_element_type=preferred_element_type)


def _needs_promotion(a, b):
    return not (_is_array(a) and _is_array(b) and a.dtype == b.dtype)


def dot(a, b, *, precision=None, preferred_element_type=None):
    a, b = _promote("dot", a, b, broadcast=False) if _needs_promotion(a, b) else (a, b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    if b.ndim == 1 or a.ndim == 1 or (a.ndim <= 2 and b.ndim <= 2):
        return matmul(a, b, preferred_element_type=preferred_element_type)
    # N-d: sum over last axis of a and second-to-last of b
    return lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 2,)), ((), ())),
                           preferred_element_type=preferred_element_type)


def vdot(a, b, *, precision=None, preferred_element_type=None):
    a, b = asarray(a), asarray(b)
    return dot(conj(ravel(a)), ravel(b), precision=precision,
               preferred_element_type=preferred_element_type)


def inner(a, b, *, precision=None, preferred_element_type=None):
    if preferred_element_type is not None:
        a, b = (astype(v, preferred_element_type) for v in (a, b))
    a, b = _promote("inner", a, b, broadcast=False) if _needs_promotion(a, b) else (a, b)
    if a.ndim == 0 or b.ndim == 0:
        return multiply(a, b)
    return lax.dot_general(a, b, (((a.ndim - 1,), (b.ndim - 1,)), ((), ())))


def outer(a, b, out=None):
    _no_out("outer", out)
    a, b = ravel(a), ravel(b)
    return multiply(reshape(a, (-1, 1)), reshape(b, (1, -1)))


def tensordot(a, b, axes=2, *, precision=None, preferred_element_type=None):
    if preferred_element_type is not None:
        a, b = (astype(v, preferred_element_type) for v in (a, b))
    a, b = _promote("tensordot", a, b, broadcast=False) if _needs_promotion(a, b) else (a, b)
    if isinstance(axes, int):
        ax_a, ax_b = tuple(range(a.ndim - axes, a.ndim)), tuple(range(axes))
    else:
        ax_a, ax_b = axes
        ax_a = (ax_a,) if isinstance(ax_a, int) else tuple(ax_a)
        ax_b = (ax_b,) if isinstance(ax_b, int) else tuple(ax_b)
    return lax.dot_general(a, b, ((tuple(_axis(x, a.ndim) for x in ax_a),
                                   tuple(_axis(x, b.ndim) for x in ax_b)), ((), ())))


def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    """Sum along a diagonal (small integers widen as in sum). JAX: jax.numpy.trace."""
    _no_out("trace", out)
    return sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


def _no_out(name, out):
    if out is not None:
        raise NotImplementedError(f"mjax.numpy.{name}: the `out` argument is not supported "
                                  f"(arrays are immutable)")


def diagonal(a, offset=0, axis1=0, axis2=1):
    a = asarray(a)
    a = moveaxis(a, (axis1, axis2), (-2, -1))
    n, m = a.shape[-2:]
    size_ = builtins.max(0, builtins.min(n + builtins.min(offset, 0),
                                         m - builtins.max(offset, 0)))
    rows = arange(size_) - builtins.min(offset, 0)
    cols = arange(size_) + builtins.max(offset, 0)
    return a[..., rows, cols]


def diag(v, k=0):
    v, k = asarray(v), _operator.index(k)
    if v.ndim == 1:
        n = v.shape[0] + builtins.abs(k)
        out = zeros((n, n), v.dtype)
        rows = arange(v.shape[0]) - builtins.min(k, 0)
        cols = arange(v.shape[0]) + builtins.max(k, 0)
        return out.at[rows, cols].set(v)
    if v.ndim == 2:
        return diagonal(v, k)
    raise ValueError("diag: input must be 1-d or 2-d")


def einsum(subscripts, /, *operands, out=None, optimize="auto", precision=None,
           preferred_element_type=None):
    """Einstein summation by pairwise dot_generals (left to right). (`optimize` picks a
    contraction order in JAX; mjax contracts left to right whatever it says.)"""
    _no_out("einsum", out)
    out = _einsum_module.einsum(subscripts, *operands)
    if preferred_element_type is not None:
        out = astype(out, preferred_element_type)
    return out


# ---- misc -----------------------------------------------------------------------
def iscomplexobj(x):
    return _dt.issubdtype(asarray(x).dtype, _onp.complexfloating)


def isscalar(element):
    return _onp.isscalar(element) or (_is_array(element) and element.ndim == 0)


def copy(a, order=None):
    from mjax.core import bind
    from mjax.dialect import op_class
    return bind(op_class("copy"), asarray(a))


def save(*a, **k):
    raise NotImplementedError("mjax.numpy.save: convert with numpy.asarray and use numpy.save")


def _set_ndarray():
    global ndarray
    from mjax.array import Array
    ndarray = Array


_set_ndarray()


# ---- Array API spellings and small composites ------------------------------------
acos, acosh, asin, asinh, atan, atanh = arccos, arccosh, arcsin, arcsinh, arctan, arctanh
atan2 = arctan2
pow = power  # noqa: A001
bitwise_left_shift, bitwise_right_shift = left_shift, right_shift
def concat(arrays, /, *, axis=0):
    """JAX: jnp.concat (the array API's concatenate)."""
    return concatenate(arrays, axis=axis)


def matrix_transpose(x, /):
    return swapaxes(x, -1, -2)


def bitwise_count(x, /):
    (x,) = _promote("bitwise_count", x)
    if not _dt.issubdtype(x.dtype, _onp.integer):
        raise TypeError(f"mjax.numpy.bitwise_count: needs integers, got {x.dtype}")
    return astype(lax.population_count(abs(x)), uint8)


def logaddexp2(x1, x2, /):
    x1, x2 = _promote("logaddexp2", x1, x2, inexact=True)
    ln2 = lax.full_like(x1, math.log(2))
    return _strong(lax.div(logaddexp(lax.mul(x1, ln2), lax.mul(x2, ln2)), ln2))


def modf(x, /, out=None):
    _no_out("modf", out)
    (x,) = _promote("modf", x, inexact=True)
    whole = trunc(x)
    return lax.sub(x, whole), whole


def isposinf(x, /, out=None):
    _no_out("isposinf", out)
    x = asarray(x)
    return logical_and(isinf(x), greater(x, 0))


def isneginf(x, /, out=None):
    _no_out("isneginf", out)
    x = asarray(x)
    return logical_and(isinf(x), less(x, 0))


def isreal(x):
    return equal(imag(x), 0)


def iscomplex(x):
    return not_equal(imag(x), 0)


def angle(z, deg=False):
    (z,) = _promote("angle", z, inexact=True)
    out = arctan2(imag(z), real(z))
    return rad2deg(out) if deg else out


def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    x = asarray(x)
    if not _dt.is_inexact(x.dtype):
        return x
    if _dt.issubdtype(x.dtype, _onp.complexfloating):
        return lax.complex(nan_to_num(real(x), nan=nan, posinf=posinf, neginf=neginf),
                           nan_to_num(imag(x), nan=nan, posinf=posinf, neginf=neginf))
    info = finfo(x.dtype)
    x = where(isnan(x), asarray(nan, x.dtype), x)
    x = where(isposinf(x), asarray(info.max if posinf is None else posinf, x.dtype), x)
    return where(isneginf(x), asarray(info.min if neginf is None else neginf, x.dtype), x)


def roll(a, shift, axis=None):
    a = asarray(a)
    if axis is None:
        return reshape(roll(ravel(a), shift, 0), a.shape)
    shifts = (shift,) if isinstance(shift, int) or _onp.ndim(shift) == 0 else tuple(shift)
    axes = (axis,) if isinstance(axis, int) or _onp.ndim(axis) == 0 else tuple(axis)
    from mjax.numpy.concrete_values import concrete_int
    axes = tuple(concrete_int(ax, "roll: axis must be static") for ax in axes)
    if len(shifts) != len(axes):
        shifts = shifts * len(axes) if len(shifts) == 1 else shifts
    for s, ax in zip(shifts, axes):
        if isinstance(s, Tracer) or (hasattr(s, "aval") and not isinstance(s, int)):
            from mjax.numpy.shaping import roll_dynamic
            a = roll_dynamic(a, s, _axis(ax, a.ndim))
            continue
        ax = _axis(ax, a.ndim)
        n = a.shape[ax]
        if n == 0:
            continue
        s = int(s) % n
        if s:
            a = concatenate([lax.slice_in_dim(a, n - s, n, 1, ax),
                             lax.slice_in_dim(a, 0, n - s, 1, ax)], axis=ax)
    return a


def diff(a, n=1, axis=-1, prepend=None, append=None):
    a = asarray(a)
    axis = _axis(axis, a.ndim)
    parts = [a]
    if prepend is not None:
        parts.insert(0, broadcast_to(asarray(prepend), a.shape[:axis] + (1,) + a.shape[axis + 1:])
                     if asarray(prepend).ndim == 0 else asarray(prepend))
    if append is not None:
        parts.append(broadcast_to(asarray(append), a.shape[:axis] + (1,) + a.shape[axis + 1:])
                     if asarray(append).ndim == 0 else asarray(append))
    a = concatenate(parts, axis) if len(parts) > 1 else a
    for _ in range(n):
        m = a.shape[axis]
        hi = lax.slice_in_dim(a, 1, m, 1, axis)
        lo = lax.slice_in_dim(a, 0, builtins.max(m - 1, 0), 1, axis)
        a = not_equal(hi, lo) if a.dtype == _onp.bool_ else subtract(hi, lo)
    return a


def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', got {indexing!r}")
    xi = [ravel(x) for x in xi]
    shape = [x.shape[0] for x in xi]
    if indexing == "xy" and len(xi) >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, x in enumerate(xi):
        axis = i
        if indexing == "xy" and len(xi) >= 2 and i < 2:
            axis = 1 - i
        s = [1] * len(xi)
        s[axis] = x.shape[0]
        x = reshape(x, s)
        out.append(x if sparse else broadcast_to(x, shape))
    return out


def count_nonzero(a, axis=None, keepdims=False):
    return sum(not_equal(a, 0), axis=axis, keepdims=keepdims, dtype=_dt.default_int())


def ptp(a, axis=None, out=None, keepdims=False):
    _no_out("ptp", out)
    return subtract(max(a, axis=axis, keepdims=keepdims), min(a, axis=axis, keepdims=keepdims))


def atleast_3d(*arys):
    out = []
    for a in arys:
        a = asarray(a)
        if a.ndim == 0:
            a = reshape(a, (1, 1, 1))
        elif a.ndim == 1:
            a = reshape(a, (1, a.shape[0], 1))
        elif a.ndim == 2:
            a = expand_dims(a, 2)
        out.append(a)
    return out[0] if len(out) == 1 else out


def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False):
    x = asarray(x)
    if axis is None:
        if x.ndim > 1:
            raise ValueError("cumulative_sum: axis is required for arrays of rank > 1")
        axis = 0
    if dtype is None and (x.dtype == _onp.bool_ or (_dt.issubdtype(x.dtype, _onp.integer) and
                                                    x.dtype.itemsize < _dt.default_int().itemsize)):
        # Small integers widen as in sum (JAX's cumulative_sum; cumsum keeps the dtype).
        dtype = (_dt.canonicalize_dtype(_dt.uint64)
                 if _dt.issubdtype(x.dtype, _onp.unsignedinteger) else _dt.default_int())
    out = cumsum(x, axis, dtype)
    if include_initial:
        axis = _axis(axis, out.ndim)
        zero_shape = out.shape[:axis] + (1,) + out.shape[axis + 1:]
        out = concatenate([zeros(zero_shape, out.dtype), out], axis)
    return out


# ---- composites in their own modules (imported last: they use the functions above) ----
from mjax.numpy.nanfunctions import (nanargmax, nanargmin, nancumprod, nancumsum,  # noqa: E402
                                     nanmax, nanmean, nanmin, nanprod, nanstd, nansum, nanvar)
from mjax.numpy.arraypad import pad  # noqa: E402
from mjax.numpy.searching import (argwhere, bincount, flatnonzero, histogram,  # noqa: E402
                                  interp, searchsorted)
from mjax.numpy.arraysetops import isin, unique  # noqa: E402
from mjax.numpy.polynomial import (convolve, correlate, polydiv, polyfit,  # noqa: E402
                                   polyval, roots)
from mjax.numpy.histograms import histogram2d, histogramdd  # noqa: E402
from mjax.numpy.quantiles import (median, nanmedian, nanpercentile, nanquantile,  # noqa: E402
                                  percentile, quantile)
from mjax.numpy.shaping import (array_split, digitize, dsplit, dstack, ediff1d,  # noqa: E402
                                geomspace, hsplit, indices, lexsort, logspace, rot90, vsplit)
from mjax.numpy.extras import (append, apply_along_axis, apply_over_axes,  # noqa: E402
                               argpartition, array_equiv, bartlett, blackman, block, c_,
                               choose, compress, corrcoef, cov, cumulative_prod, delete,
                               diag_indices, diag_indices_from, diagflat, euler_gamma,
                               extract, fill_diagonal, fromfunction, gradient, hamming,
                               hanning, histogram_bin_edges, index_exp, insert, intersect1d,
                               isrealobj, iterable, mgrid, ogrid, partition, piecewise, poly,
                               polyadd, polyder, polyint, polymul, polysub, r_,
                               ravel_multi_index, resize, rollaxis, s_, setdiff1d, setxor1d,
                               sort_complex, spacing, trapezoid, tril_indices,
                               tril_indices_from, trim_zeros, triu_indices, triu_indices_from,
                               union1d, unique_all, unique_counts, unique_inverse,
                               unique_values, unravel_index, unstack, vander)
from mjax.numpy.extras import (ix_, kron, mask_indices, place, put,  # noqa: E402
                               put_along_axis, unwrap)
from mjax.numpy.extras import frexp, i0, kaiser  # noqa: E402
from mjax.numpy.ufunc import frompyfunc, make_ufuncs as _make_ufuncs, ufunc  # noqa: E402
# The binary functions JAX exposes as ufuncs get .reduce/.accumulate/.reduceat/.outer/.at.
_UFUNCS = _make_ufuncs(globals())
add, multiply, subtract, maximum, minimum = (_UFUNCS[n] for n in (
    "add", "multiply", "subtract", "maximum", "minimum"))
bitwise_and, bitwise_or, bitwise_xor = (_UFUNCS[n] for n in (
    "bitwise_and", "bitwise_or", "bitwise_xor"))
logical_and, logical_or, logical_xor = (_UFUNCS[n] for n in (
    "logical_and", "logical_or", "logical_xor"))
logaddexp, logaddexp2, negative = (_UFUNCS[n] for n in ("logaddexp", "logaddexp2", "negative"))
from mjax.numpy import linalg  # noqa: E402, F401
from mjax.numpy import fft  # noqa: E402, F401
from mjax.numpy.vectorize import vectorize  # noqa: E402
from mjax.numpy.array_api import (__array_api_version__,  # noqa: E402, F401
                                 __array_namespace_info__)
from mjax.numpy.more import (ComplexWarning, array_repr, array_str,  # noqa: E402, F401
                              character, cross, einsum_path, flexible, frombuffer, fromfile,
                              fromiter, fromstring, generic, get_printoptions, load, matvec,
                              object_, packbits, printoptions, savez, set_printoptions,
                              unpackbits, vecdot, vecmat)
from mjax.numpy.array_api import DEVICE_FUNCTIONS as _DF, with_device_keyword  # noqa: E402
globals().update({_n: with_device_keyword(globals()[_n]) for _n in _DF})
from mjax.numpy.array_api import OUT_SHARDING_FUNCTIONS as _OSF  # noqa: E402
from mjax.lax.sharding import takes_out_sharding as _takes_out_sharding  # noqa: E402
globals().update({_n: _takes_out_sharding(globals()[_n]) for _n in _OSF})
from mjax.numpy.array_api import FUSED_FUNCTIONS as _FF, fused_when_eager  # noqa: E402
globals().update({_n: fused_when_eager(globals()[_n]) for _n in _FF})


def __getattr__(name):
    # jnp.bool is jnp.bool_ (NumPy 2's spelling); a global `bool` would shadow the builtin
    # that this module's functions use.
    if name == "bool":
        return bool_
    raise AttributeError(f"module 'mjax.numpy' has no attribute {name!r}")
