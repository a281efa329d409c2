"""JAX's type promotion and NumPy's broadcasting for jax.numpy's functions.

`promote` converts arguments to one dtype (weak Python scalars, x64 canonicalization) and
broadcasts them; it has fast paths for the operand pairs that need no work, since every
elementwise function calls it. Also `result_type`, `promote_types`, `broadcast_to`, ...
"""
from __future__ import annotations

import builtins
import math

import numpy as _onp

from mjax import lax
from mjax.specs import dtypes as _dt
from mjax.arrays import eager
from mjax.tracing import registration
from mjax.arrays.array import Array as _Array
from mjax.config import config as _config
from mjax.dialect.shape_poly import is_symbolic_dim
from mjax.dialect.shape_poly import broadcast_shapes as symbolic_broadcast_shapes
from mjax.tracing.core import (at_user_line, aval_of_value, bind, current_trace as _current_trace,
                               Tracer)
from mjax.dialect.ops.structural import ConvertElementTypeOp
from mjax.dialect.values import defining_op, mark
from mjax.dialect import ShapedArray as _ShapedArray
from mjax.lax.sharding import takes_out_sharding
from mjax.numpy.arguments import canonical_shape, is_array
from mjax.numpy.array_api import fused_when_eager
from mjax.numpy.conversion import asarray


def result_type(*args, return_weak_type_flag=False):
    return _dt.result_type(*args, return_weak_type_flag=return_weak_type_flag)


promote_types = _dt.numpy_promote_types
can_cast = _dt.can_cast
isdtype = _dt.isdtype


def broadcast_shapes(*shapes):
    try:
        try:
            return tuple(_onp.broadcast_shapes(*shapes))
        except TypeError:   # (symbolic dimensions)
            return symbolic_broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(at_user_line(
            f"Incompatible shapes for broadcasting: shapes="
            f"[{', '.join(str(tuple(s)) for s in shapes)}]")) from None


def _type_str(dtype, shape) -> str:
    """JAX's short aval text, e.g. float32[2,3]."""
    return f"{_onp.dtype(dtype).name}[{','.join(map(str, shape))}]"


@takes_out_sharding
def broadcast_to(array, shape):  # noqa: A002 (JAX's name)
    x = asarray(array)
    shape = canonical_shape(shape)
    xs = x.shape
    if xs == shape:
        return x
    if len(shape) < len(xs) or builtins.any(
            a not in (1, b) for a, b in zip(xs, shape[len(shape) - len(xs):])):
        raise ValueError(at_user_line(
            f"Incompatible types for broadcasting: input type={_type_str(x.dtype, xs)} "
            f"and requested type={_type_str(x.dtype, shape)}"))
    n = len(shape) - len(xs)
    # (one broadcast_in_dim, size-1 axes expanded by it, as JAX stages it)
    return lax.broadcast_in_dim(x, shape, list(range(n, len(shape))))


@fused_when_eager
def broadcast_arrays(*args):
    args = [asarray(a) for a in args]
    shape = broadcast_shapes(*(a.shape for a in args))
    # (new values, as JAX's: vmap gives back no argument as it came)
    return [lax.shapes.fresh(broadcast_to(a, shape)) for a in args]


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
KEEP_ANY = frozenset(
    d for d in map(_onp.dtype, [bool, _onp.int8, _onp.int16, _onp.int32, _onp.uint8,
                                _onp.uint16, _onp.uint32, _onp.float16, _onp.float32,
                                _onp.complex64, _dt.bfloat16])
    if _keeps_dtype(d, False) and d not in _dt._X64_NARROW)
KEEP_INEXACT = frozenset(d for d in KEEP_ANY if _dt.is_inexact(d))


def unchanged_pair(av0, av1, inexact, same_shape=True) -> bool:
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
registration.INTERNAL_ARRAYS.append(lambda: [entry[0] for entry in list(_SCALAR_CONSTS.values())])
eager.CLEAR_HOOKS.append(_SCALAR_CONSTS.clear)   # (jax.clear_caches; a platform change)




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


def scalar_learner(fname, reflected=False):
    """learn(x, s) for eager_fast.fast_op: the constant that `fname(x, s)` (reflected:
    `fname(s, x)`) promotes the Python scalar s to (_SCALAR_CONSTS' cached one), when that
    leaves x as it is and has x's aval; else None."""
    def learn(x, s):
        try:
            out = _scalar_with_array(fname, [s, x] if reflected else [x, s], False)
        except Exception:   # (the Python path raises it again, explained)
            return None
        if out is None:
            return None
        arr, const = out[::-1] if reflected else out
        if arr is not x or const.aval != x.aval:
            return None
        return const
    return learn


def _canonical_numpy(a):
    # A NumPy argument becomes an array of its canonical dtype first, as jax.numpy's do
    # (an int64 wraps to int32 when x64 is off), and is then cast.
    if isinstance(a, (_onp.ndarray, _onp.generic)):
        canonical = _dt.canonicalize_dtype(a.dtype)
        if canonical != a.dtype:
            return _onp.asarray(a).astype(canonical)
    return a


def promote(fname, *args, inexact=False, broadcast=True, scalar_consts=False):
    """Promote dtypes (JAX rules) and, unless broadcast=False, broadcast shapes.
    scalar_consts: the operands only feed a new op (see _scalar_with_array)."""
    # One and two operands, spelled out: the hot path of every elementwise function.
    if len(args) == 2:
        av0, av1 = getattr(args[0], "aval", None), getattr(args[1], "aval", None)
        if unchanged_pair(av0, av1, inexact, same_shape=False):
            if not broadcast or av0.shape == av1.shape:
                return list(args)
            return _broadcast_promoted(fname, list(args), [av0, av1])
    elif len(args) == 1:
        av0 = getattr(args[0], "aval", None)
        if type(av0) is _ShapedArray and not av0.weak_type and _keeps_dtype(av0.dtype,
                                                                            inexact):
            return list(args)
    for a in args:
        if isinstance(a, _onp.ndarray) and a.dtype == _dt.float0:
            # (JAX's check_no_float0s, with its message and class)
            raise TypeError(f"Called {fname} with a float0 array. float0s do not support "
                            "any operations by design because they are not compatible "
                            "with non-trivial vector spaces. No implicit dtype conversion "
                            "is done. You can use np.zeros_like(arr, dtype=np.float) to "
                            "cast a float0 array to a regular zeros array. \nIf you "
                            "didn't expect to get a float0 you might have accidentally "
                            "taken a gradient with respect to an integer argument.")
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
    if any(map(is_symbolic_dim, args)):      # (each dimension's value staged once)
        args = [a.__jax_array__() if is_symbolic_dim(a) else a for a in args]
    # (NumPy values in their canonical dtype once: converting one twice would capture
    # two copies of it as constants of the trace)
    args = [_canonical_numpy(a) for a in args]
    avals = [aval_of_value(a) if is_array(a) or isinstance(
                 a, (bool, int, float, complex, _onp.ndarray, _onp.generic))
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


_SCALAR_VALUES: dict = {}


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
    # (The read-only value is made once per scalar, dtype and shape: a traced program
    # repeats its few constants. The sign is in the key: 0.0 == -0.0.)
    key = (tv, v, math.copysign(1.0, v), av.dtype, av.shape if broadcast else ())
    try:
        value = _SCALAR_VALUES.get(key)
    except Exception:       # (an inconclusive symbolic dimension)
        value, key = None, None
    if value is None:
        value = _onp.asarray(v).astype(av.dtype)
        if broadcast and av.shape:
            try:
                value = _onp.broadcast_to(value, av.shape)
            except TypeError:   # (symbolic dimensions: the general path broadcasts)
                return None
        value.flags.writeable = False
        if key is not None:
            if len(_SCALAR_VALUES) >= 1024:
                _SCALAR_VALUES.clear()
            _SCALAR_VALUES[key] = value
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


def promote_ranks(fname, *args, inexact=False):
    """Promoted dtypes and, where non-scalar operands differ in rank, leading 1s up to the
    highest rank; scalars and size-1 dims are left to lax's implicit broadcast (JAX:
    promote_args_numeric's promote_shapes), so ops on a scalar operand stay scalar; Python
    scalars are jit_arguments, as in JAX's jitted remainder and floor_divide."""
    out = promote(fname, *jit_arguments(*args), inexact=inexact, broadcast=False)
    shapes = [aval_of_value(o).shape for o in out]
    ranks = {len(s) for s in shapes if s}
    if len(ranks) < 2:
        return out
    _check_rank_promotion(fname, shapes)
    try:
        rank = len(broadcast_shapes(*shapes))
    except ValueError:
        raise ValueError(at_user_line("Incompatible shapes for broadcasting: shapes="
                                      f"{[tuple(s) for s in shapes]}")) from None
    return [lax.broadcast_to_rank(o, rank) for o in out]


def jit_arguments(*args) -> list:
    """`args`, a Python scalar under a trace as the weak-typed value a jitted jnp function
    (JAX's clip, where, remainder) gets for it: an identity cast of its literal, so a TPU
    kernel makes its constant where the function is called, once, as JAX's does its jit's
    arguments, and a promotion casts it by an equation (an int 0 into int16: trunci)."""
    if _current_trace() is None:
        return list(args)
    return [_weak_value(a) if type(a) in (bool, int, float) else a for a in args]


def _weak_value(x):
    weak = lax.convert_element_type(x, aval_of_value(x).dtype, weak_type=True)
    out = bind(ConvertElementTypeOp, weak, new_dtype=weak.dtype, _weak_type=True)
    mark(defining_op(out.value), "mjax.weak_type")      # (for the jaxpr printer, as lax's)
    return out


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
