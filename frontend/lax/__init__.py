"""`mjax.lax`: one Python function per `jaxpr` primitive, as in `jax.lax`.

Each function validates and normalizes its arguments, then calls `bind`. Binary ops accept
Python scalars (weakly typed: they take the other operand's dtype) and broadcast scalars,
as JAX's lax does; otherwise dtypes and shapes must match.
"""
from __future__ import annotations

import builtins
import enum
from collections import namedtuple

import numpy as np

from mjax import dtypes
from mjax.array_methods import ArrayMethods
from mjax.core import Tracer, at_user_line, aval_of_value, bind, to_numpy
from mjax.dialect import ShapedArray as _ShapedArray, op_class

_OPS = {}
_PY_SCALARS = (bool, int, float, complex)  # before `complex` is shadowed by lax.complex


def _op(name):
    cls = _OPS.get(name)
    if cls is None:
        cls = _OPS[name] = op_class(name)
    return cls


def _is_python_scalar(x):
    return isinstance(x, _PY_SCALARS) and not hasattr(x, "aval")


def _unchanged(x):
    """x, when an op that would not change it returns it as is: an Array or tracer
    comes back itself; a NumPy array or Python scalar as an Array, as JAX's does."""
    return x if isinstance(x, ArrayMethods) else convert_element_type(
        x, aval_of_value(x).dtype, weak_type=_is_python_scalar(x))


def _prepare(*args, fn: str):
    """Python scalars take the dtype of the array operands; scalars broadcast."""
    # The common case: arrays (or tracers) of one shape, nothing to convert or broadcast
    # (a plain loop: this runs per op).
    shape = None
    for a in args:
        av = getattr(a, "aval", None)
        if type(av) is not _ShapedArray or (shape is not None and av.shape != shape):
            break
        shape = av.shape
    else:
        return list(args)
    avals = [aval_of_value(a) for a in args]
    arrays = [a for a, av in zip(args, avals) if not _is_python_scalar(a)]
    if arrays:
        target = aval_of_value(arrays[0]).dtype
        args = [convert_element_type(a, target, weak_type=True) if _is_python_scalar(a)
                else a for a in args]
        avals = [aval_of_value(a) for a in args]
    shapes = {av.shape for av in avals if av.shape != ()}
    if len(shapes) > 1:
        ranks = {len(s) for s in shapes}
        if len(ranks) > 1:
            raise TypeError(at_user_line(
                f"{fn}: arrays must have the same rank (or be scalars), got "
                f"shapes {', '.join(str(av.shape) for av in avals)}"))
        shape = tuple(builtins.max(ds) if all(d in (1, builtins.max(ds)) for d in ds) else -1
                      for ds in zip(*shapes))
        if -1 in shape:
            raise TypeError(at_user_line(f"{fn} got incompatible shapes for broadcasting: "
                            f"{', '.join(str(av.shape) for av in avals)}"))
    elif shapes:
        shape = shapes.pop()
    else:
        return list(args)
    return [implicit_broadcast(a, shape) if av.shape != shape else a
            for a, av in zip(args, avals)]


IMPLICIT_BROADCAST = "mjax.implicit_broadcast"


def implicit_broadcast(x, shape):
    """Broadcasts an elementwise op's scalar or same-rank operand (size-1 dims) to `shape`.
    JAX's lax ops take such operands as they are, so its jaxprs show no equation here: the
    staged broadcast is marked for the jaxpr printer to leave out."""
    shape = tuple(shape)
    rank = aval_of_value(x).ndim
    if isinstance(x, _LiteralArray) and rank == 0:
        # A literal: one splat constant (printed as JAX's scalar literal, never a residual).
        return _LiteralArray(np.broadcast_to(np.asarray(x), shape), x._weak)
    out = broadcast_in_dim(x, shape, tuple(range(len(shape))) if rank else ())
    if isinstance(out, Tracer) and out is not x:
        _mark(out, IMPLICIT_BROADCAST)
    return out


def _mark(t: Tracer, name: str) -> None:
    """Sets unit attribute `name` on the op that made `t` (a note for the jaxpr printer)."""
    from jaxlib.mlir import ir
    from mjax.dialect import context
    with context():
        t.value.owner.operation.attributes[name] = ir.UnitAttr.get()


# JAX's transcendental ops take `accuracy=` (a result-accuracy request that backends may
# honour); XLA:CPU computes them at its one accuracy, so the keyword is accepted and noted.
_ACCURACY = {"sin", "cos", "tan", "tanh", "exp", "exp2", "expm1", "log", "log1p",
             "logistic", "sqrt", "rsqrt", "cbrt"}


def _unary(name):
    op = []   # the op class, looked up on first use

    if name in _ACCURACY:
        def f(x, *, accuracy=None):
            return bind(op[0] if op else _first_use(op, name), x)
    else:
        def f(x):
            return bind(op[0] if op else _first_use(op, name), x)
    f.__name__ = name
    f.__doc__ = f"Elementwise {name}. JAX: lax.{name}."
    return f


def _first_use(cache: list, name: str):
    cache.append(_op(name))
    return cache[0]


def _binary(name):
    op = []   # the op class, looked up on first use

    def f(x, y):
        x, y = _prepare(x, y, fn=name)
        return bind(op[0] if op else _first_use(op, name), x, y)
    f.__name__ = name
    f.__doc__ = f"Elementwise {name}. JAX: lax.{name}."
    return f


_UNARY = ["neg", "sign", "floor", "ceil", "is_finite", "exp", "exp2", "expm1", "log",
          "log1p", "sqrt", "rsqrt", "cbrt", "sin", "cos", "tan", "asin", "acos", "atan",
          "sinh", "cosh", "tanh", "asinh", "acosh", "atanh", "logistic", "erf", "erfc",
          "erf_inv", "lgamma", "digamma", "population_count", "clz", "real", "imag",
          "abs"]
_BINARY = ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "atan2", "and", "or",
           "xor", "shift_left", "shift_right_arithmetic", "shift_right_logical", "eq", "ne",
           "lt", "le", "gt", "ge", "complex"]

for _n in _UNARY:
    globals()[_n] = _unary(_n)
for _n in _BINARY:  # `and`/`or` are keywords: lax spells them and_/or_
    globals()[_n + "_" if _n in ("and", "or") else _n] = _binary(_n)
not_ = _unary("not")
_mul = mul  # noqa: F821


def mul(x, y, *, out_dtype=None):
    """x * y elementwise; `out_dtype`: the product's dtype (operands cast to it first).
    JAX: lax.mul."""
    if out_dtype is not None:
        x, y = (convert_element_type(v, out_dtype) for v in (x, y))
    return _mul(x, y)


def polygamma(m, x):
    """The m-th derivative of digamma, elementwise. JAX: lax.polygamma."""
    m, x = _prepare(m, x, fn="polygamma")
    return bind(_op("polygamma"), m, x)
bitwise_and, bitwise_or, bitwise_xor, bitwise_not = and_, or_, xor, not_  # noqa: F821
conj = _unary("conj")
square = lambda x: integer_pow(x, 2)  # noqa: E731


class RoundingMethod(enum.IntEnum):
    """lax.round's tie breaking. JAX: lax.RoundingMethod."""
    AWAY_FROM_ZERO = 0
    TO_NEAREST_EVEN = 1


def round(x, rounding_method=RoundingMethod.AWAY_FROM_ZERO):
    """Elementwise rounding: 0 (AWAY_FROM_ZERO) or 1 (TO_NEAREST_EVEN). JAX: lax.round."""
    return bind(_op("round"), x, rounding_method=int(rounding_method))


def integer_pow(x, y: int):
    """x ** y for a static integer y. JAX: lax.integer_pow."""
    if not isinstance(y, (int, np.integer)) or isinstance(y, bool):
        raise TypeError(f"integer_pow: the exponent must be a static Python int, got {y!r}")
    return bind(_op("integer_pow"), x, y=int(y))


def stop_gradient(x):
    """Identity with zero derivative (applies to every leaf of a pytree)."""
    from mjax import tree_util
    return tree_util.tree_map(lambda v: bind(_op("stop_gradient"), v), x)


def optimization_barrier(operand, /):
    """Identity on a pytree of arrays that XLA may not optimize across (no CSE, fusion or
    code motion through it). JAX: lax.optimization_barrier."""
    from mjax import tree_util
    leaves, tree = tree_util.tree_flatten(operand)
    if not leaves:
        return operand
    outs = bind(_op("optimization_barrier"), *leaves)
    outs = outs if isinstance(outs, list) else [outs]
    return tree_util.tree_unflatten(tree, outs)


def reciprocal(x):
    return div(_one_like(x), x)  # noqa: F821


def _one_like(x):
    return convert_element_type(1, aval_of_value(x).dtype, weak_type=True)


# ---- conversions ------------------------------------------------------------------
def convert_element_type(operand, new_dtype, *, weak_type: bool = False):
    """Casts to new_dtype (canonicalized for x64). JAX: lax.convert_element_type."""
    x = operand
    requested, new_dtype = new_dtype, dtypes.canonicalize_dtype(new_dtype)
    if new_dtype is not requested and new_dtype != requested:
        dtypes.check_user_dtype(requested, "convert_element_type")  # (x64 off: warns)
    aval = getattr(x, "aval", None)
    if aval is not None and aval.dtype == new_dtype and aval.weak_type == weak_type:
        return x  # already that type: the common case on every NumPy-level op
    aval = aval_of_value(x)
    if _is_python_scalar(x) or (not isinstance(x, Tracer) and isinstance(
            x, (np.ndarray, np.generic))):
        from mjax.api import device_put_value
        from mjax.core import current_trace
        value = np.asarray(x)
        cast_complex = np.iscomplexobj(value)
        if np.iscomplexobj(value) and not dtypes.issubdtype(new_dtype, np.complexfloating):
            value = np.real(value)  # JAX drops the imaginary part
        if value.dtype.kind in "fc" and new_dtype.kind in "iu":
            # XLA's float->int conversion saturates and sends NaN to 0; NumPy's does not.
            info, real = np.iinfo(new_dtype), np.real(value)
            with np.errstate(invalid="ignore"):
                cast = real.astype(new_dtype)
            value = np.where(np.isnan(real), 0, np.where(
                real >= info.max, info.max, np.where(real <= info.min, info.min, cast)))
        trace = current_trace()
        if trace is not None and value.ndim and not cast_complex:
            # JAX: under a trace a non-scalar constant is a jaxpr constvar and its cast an
            # equation (only scalars fold into literals).
            const = trace.to_tracer(to_numpy(x))
            if const.aval.dtype == new_dtype and not weak_type:
                return const
            x = const
        else:
            value = value.astype(new_dtype)
            if trace is None:
                return device_put_value(value, weak_type=weak_type)
            return _LiteralArray(value, weak_type)
    if aval.dtype == new_dtype and aval.weak_type == weak_type:
        return x
    out = bind(_op("convert_element_type"), x, new_dtype=new_dtype, _weak_type=weak_type)
    if weak_type and isinstance(out, Tracer):   # (for the jaxpr printer: JAX shows it)
        _mark(out, "mjax.weak_type")
    return out


class _LiteralArray(ArrayMethods, np.ndarray):
    """A NumPy constant that carries JAX's weak_type flag while tracing. Its Array
    methods and operators (`.at`, `.T`, `.sum()`, `x[i]`, `+`, ...) are mjax's, as on a
    traced array: a literal is a traced constant to the user (JAX traces one)."""

    # Static facts stay NumPy's (the Array mixin's read `aval`, which reads these).
    shape, dtype, ndim, size = (np.ndarray.shape, np.ndarray.dtype, np.ndarray.ndim,
                                np.ndarray.size)
    itemsize, nbytes = np.ndarray.itemsize, np.ndarray.nbytes
    __array_priority__ = 100  # below a Tracer's: `literal + tracer` is the tracer's op

    def view(self, dtype=None, type=None):  # noqa: A002 (NumPy's name)
        if type is not None or (isinstance(dtype, builtins.type)
                                and issubclass(dtype, np.ndarray)):
            return np.ndarray.view(self, *(a for a in (dtype, type) if a is not None))
        return ArrayMethods.view(self, dtype)

    def __new__(cls, value, weak_type):
        obj = np.asarray(value).view(cls)
        obj._weak = weak_type
        return obj

    def __array_finalize__(self, obj):
        self._weak = getattr(obj, "_weak", False)

    @property
    def aval(self):
        from mjax.dialect import ShapedArray
        return ShapedArray(self.shape, dtypes.canonicalize_dtype(self.dtype), self._weak)


def bitcast_convert_type(operand, new_dtype):
    return bind(_op("bitcast_convert_type"), operand,
                new_dtype=dtypes.canonicalize_dtype(new_dtype))


def reduce_precision(operand, exponent_bits: int, mantissa_bits: int):
    """operand rounded to a float with the given exponent and mantissa widths.
    JAX: lax.reduce_precision."""
    if int(exponent_bits) < 1:
        raise ValueError(f"reduce_precision: exponent_bits must be positive; got {exponent_bits}")
    if int(mantissa_bits) < 0:
        raise ValueError("reduce_precision: mantissa_bits must be non-negative; got "
                         f"{mantissa_bits}")
    return bind(_op("reduce_precision"), operand, exponent_bits=int(exponent_bits),
                mantissa_bits=int(mantissa_bits))


# ---- shapes ---------------------------------------------------------------------
def broadcast_in_dim(operand, shape, broadcast_dimensions, *, out_sharding=None):
    """JAX: lax.broadcast_in_dim."""
    if out_sharding is not None:
        from mjax.lax.sharding import apply_out_sharding
        return apply_out_sharding(broadcast_in_dim(operand, shape, broadcast_dimensions),
                                  out_sharding)
    x = operand
    shape, bd = tuple(int(d) for d in shape), tuple(int(d) for d in broadcast_dimensions)
    aval = aval_of_value(x)
    if aval.shape == shape and bd == tuple(range(len(shape))):
        return _unchanged(x)
    # (A literal scalar's broadcast is staged too, as JAX does: `jnp.zeros(3)` under a
    # trace is a tracer, with `.at` and jnp semantics, printed `broadcast_in_dim 0.0:f32[]`.)
    return bind(_op("broadcast_in_dim"), x, shape=shape, broadcast_dimensions=bd)


def broadcast(operand, sizes, *, out_sharding=None):
    """Prepends dimensions `sizes`. JAX: lax.broadcast."""
    aval = aval_of_value(operand)
    n = len(sizes)
    return broadcast_in_dim(operand, tuple(sizes) + aval.shape,
                            tuple(range(n, n + aval.ndim)), out_sharding=out_sharding)


def broadcast_to_rank(x, rank):
    aval = aval_of_value(x)
    return broadcast(x, (1,) * (rank - aval.ndim))


def reshape(operand, new_sizes, dimensions=None, *, out_sharding=None):
    """JAX: lax.reshape (dimensions: transpose before reshaping)."""
    if out_sharding is not None:
        from mjax.lax.sharding import apply_out_sharding
        return apply_out_sharding(reshape(operand, new_sizes, dimensions), out_sharding)
    x = operand
    new_sizes = tuple(int(d) for d in new_sizes)
    aval = aval_of_value(x)
    if aval.shape == new_sizes and dimensions is None:
        return _unchanged(x)
    return bind(_op("reshape"), x, new_sizes=new_sizes,
                dimensions=None if dimensions is None else tuple(dimensions))


def _canonical_axes(dimensions, rank):
    out = []
    for d in dimensions:
        d = int(d)
        if not -rank <= d < rank:
            raise ValueError(at_user_line(f"axis {d} is out of bounds for array of "
                                          f"dimension {rank}"))
        out.append(d % rank)
    return tuple(sorted(out))


def squeeze(array, dimensions):
    x = array
    aval = aval_of_value(x)
    dims = _canonical_axes(dimensions, aval.ndim)
    if any(aval.shape[d] != 1 for d in dims):
        raise ValueError(at_user_line(
            f"cannot select an axis to squeeze out which has size not equal to one, got "
            f"shape={aval.shape} and dimensions={tuple(dimensions)}"))
    if not dims:
        return _unchanged(x)
    return bind(_op("squeeze"), x, dimensions=dims)


def expand_dims(array, dimensions):
    x = array
    aval = aval_of_value(x)
    dims = _canonical_axes(dimensions, aval.ndim + len(dimensions))
    if not dims:
        return _unchanged(x)
    return bind(_op("expand_dims"), x, dimensions=dims)


def transpose(operand, permutation):
    permutation = tuple(int(p) for p in permutation)
    if permutation == tuple(range(len(permutation))):
        return _unchanged(operand)
    return bind(_op("transpose"), operand, permutation=permutation)


def rev(operand, dimensions):
    return bind(_op("rev"), operand, dimensions=tuple(int(d) for d in dimensions))


def concatenate(operands, dimension):
    operands = list(operands)
    if len(operands) == 1:
        return _unchanged(operands[0])
    return bind(_op("concatenate"), *operands, dimension=int(dimension))


def pad(operand, padding_value, padding_config):
    """operand with low/high (possibly negative) and interior padding per axis.
    JAX: lax.pad."""
    x = operand
    padding_config = tuple(tuple(c) for c in padding_config)
    shape = aval_of_value(x).shape
    if len(padding_config) != len(shape):
        raise ValueError("length of padding_config must equal the number of axes of operand, "
                         f"got padding_config {padding_config} for operand shape {shape}")
    return bind(_op("pad"), x, padding_value,
                padding_config=tuple(tuple(int(v) for v in c) for c in padding_config))


def slice(operand, start_indices, limit_indices, strides=None):  # noqa: A001
    return bind(_op("slice"), operand, start_indices=tuple(int(i) for i in start_indices),
                limit_indices=tuple(int(i) for i in limit_indices),
                strides=None if strides is None else tuple(int(s) for s in strides))


def slice_in_dim(operand, start_index, limit_index, stride=1, axis=0):
    x = operand
    aval = aval_of_value(x)
    start, limit, strides = [0] * aval.ndim, list(aval.shape), [1] * aval.ndim
    axis = _static_axis(axis, aval.ndim, "slice_in_dim")
    d = aval.shape[axis]
    start_index = 0 if start_index is None else (start_index + d if start_index < 0 else start_index)
    limit_index = d if limit_index is None else (limit_index + d if limit_index < 0 else limit_index)
    start[axis], limit[axis], strides[axis] = start_index, limit_index, stride
    return slice(x, start, limit, strides)


def index_in_dim(operand, index, axis=0, keepdims=True):
    x = operand
    aval = aval_of_value(x)
    axis = _static_axis(axis, aval.ndim, "index_in_dim")
    index = index + aval.shape[axis] if index < 0 else index
    out = slice_in_dim(x, index, index + 1, 1, axis)
    return out if keepdims else squeeze(out, (axis,))


# ---- creation -------------------------------------------------------------------
def iota(dtype, size):
    return bind(_op("iota"), dtype=dtypes.canonicalize_dtype(dtype), shape=(int(size),),
                dimension=0)


def broadcasted_iota(dtype, shape, dimension, *, out_sharding=None):
    out = bind(_op("iota"), dtype=dtypes.canonicalize_dtype(dtype),
               shape=tuple(int(d) for d in shape), dimension=int(dimension))
    if out_sharding is not None:
        from mjax.lax.sharding import apply_out_sharding
        out = apply_out_sharding(out, out_sharding)
    return out


def full(shape, fill_value, dtype=None, *, sharding=None):
    if sharding is not None:
        from mjax.lax.sharding import apply_out_sharding
        return apply_out_sharding(full(shape, fill_value, dtype), sharding)
    shape = tuple(int(d) for d in shape)
    if dtype is not None:
        dtype = dtypes.check_user_dtype(dtype, "full")
    if dtype is None:
        dtype = aval_of_value(fill_value).dtype
    weak = dtype is None and _is_python_scalar(fill_value)
    value = convert_element_type(fill_value, dtype, weak_type=weak)
    return broadcast_in_dim(value, shape, ())


def full_like(x, fill_value, dtype=None, shape=None, sharding=None):
    """An array like x filled with fill_value; weakly typed when x is and no dtype is
    given (as JAX's, so constants built inside NumPy functions keep weak results)."""
    aval = aval_of_value(x)
    if dtype is None and aval.weak_type:
        value = convert_element_type(fill_value, aval.dtype, weak_type=True)
        out = broadcast_in_dim(value, tuple(int(d) for d in (
            aval.shape if shape is None else shape)), ())
        if sharding is not None:
            from mjax.lax.sharding import apply_out_sharding
            out = apply_out_sharding(out, sharding)
        return out
    return full(aval.shape if shape is None else shape, fill_value,
                aval.dtype if dtype is None else dtype, sharding=sharding)


def zeros_like_array(x):
    return full_like(x, 0)


# ---- selection ------------------------------------------------------------------
def select_n(which, *cases):
    """cases[which] elementwise. JAX: lax.select_n."""
    if len(cases) == 1:
        return _unchanged(cases[0])
    return bind(_op("select_n"), which, *cases)


def select(pred, on_true, on_false):
    """JAX: lax.select (pred ? on_true : on_false)."""
    return select_n(pred, on_false, on_true)


def clamp(min, x, max):  # noqa: A002
    x_dtype = aval_of_value(x).dtype
    min, max = (convert_element_type(v, x_dtype) if _is_python_scalar(v) else v
                for v in (min, max))
    return bind(_op("clamp"), min, x, max)


# ---- contraction ----------------------------------------------------------------
class Precision:
    DEFAULT = "DEFAULT"
    HIGH = "HIGH"
    HIGHEST = "HIGHEST"


def dot_general(lhs, rhs, dimension_numbers, precision=None, preferred_element_type=None,
                *, out_sharding=None):
    """JAX: lax.dot_general. `precision` is accepted; XLA CPU computes in full precision."""
    if out_sharding is not None:
        from mjax.lax.sharding import apply_out_sharding
        from mjax.sharding_types import out_sharding_given
        with out_sharding_given():
            out = dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type)
        return apply_out_sharding(out, out_sharding)
    (lc, rc), (lb, rb) = dimension_numbers
    dn = ((tuple(lc), tuple(rc)), (tuple(lb), tuple(rb)))
    pet = None if preferred_element_type is None else dtypes.canonicalize_dtype(
        preferred_element_type)
    from mjax.lax.convolution import canonicalize_precision
    return bind(_op("dot_general"), lhs, rhs, dimension_numbers=dn,
                precision=canonicalize_precision(precision), preferred_element_type=pet)


def dot(lhs, rhs, *, dimension_numbers=None, precision=None, preferred_element_type=None,
        out_sharding=None):
    """Vector/matrix products of rank-1/2 operands (or dot_general when
    `dimension_numbers` is given). JAX: lax.dot."""
    if dimension_numbers is not None:
        return dot_general(lhs, rhs, dimension_numbers, precision, preferred_element_type,
                           out_sharding=out_sharding)
    la, ra = aval_of_value(lhs), aval_of_value(rhs)
    if la.ndim not in (1, 2) or ra.ndim not in (1, 2):
        raise TypeError(at_user_line(
            f"dot only supports rank 1 or 2 operands, got shapes {la.shape} and "
            f"{ra.shape}"))
    return dot_general(lhs, rhs, (((la.ndim - 1,), (0,)), ((), ())), precision,
                       preferred_element_type, out_sharding=out_sharding)


# ---- reductions -----------------------------------------------------------------
def _reduce(name):
    def f(operand, axes, *, out_sharding=None):
        out = bind(_op(name), operand, axes=tuple(int(a) for a in axes))
        if out_sharding is not None:
            from mjax.lax.sharding import apply_out_sharding
            out = apply_out_sharding(out, out_sharding)
        return out
    f.__name__ = name
    return f


reduce_sum = _reduce("reduce_sum")
reduce_prod = _reduce("reduce_prod")
reduce_max = _reduce("reduce_max")
reduce_min = _reduce("reduce_min")
reduce_and = _reduce("reduce_and")
reduce_or = _reduce("reduce_or")


def _arg_reduction(name):
    def f(operand, axis: int, index_dtype):
        return bind(_op(name), operand, axes=(int(axis),),
                    index_dtype=dtypes.canonicalize_dtype(index_dtype))
    f.__name__ = name
    return f


argmax = _arg_reduction("argmax")
argmin = _arg_reduction("argmin")


def _static_axis(axis, ndim, fn):
    """axis in [-ndim, ndim) made nonnegative; out of range is JAX's IndexError."""
    axis = int(axis)
    if not -ndim <= axis < ndim:
        raise IndexError(f"{fn}: axis {axis} is out of bounds for an operand of rank {ndim}")
    return axis % ndim


def _cumulative(name):
    def f(operand, axis: int = 0, reverse: bool = False):
        aval = aval_of_value(operand)
        if not -builtins.max(aval.ndim, 1) <= int(axis) < builtins.max(aval.ndim, 1):
            raise ValueError(f"axis {axis} is out of bounds for array of shape {aval.shape}")
        return bind(_op(name), operand, axis=int(axis) % builtins.max(aval.ndim, 1),
                    reverse=bool(reverse))
    f.__name__ = name
    return f


cumsum = _cumulative("cumsum")
cumprod = _cumulative("cumprod")
cummax = _cumulative("cummax")
cummin = _cumulative("cummin")
cumlogsumexp = _cumulative("cumlogsumexp")


def sort(operand, dimension: int = -1, is_stable: bool = True, num_keys: int = 1):
    """Sorts one array or a sequence of arrays (by the first num_keys). JAX: lax.sort."""
    single = not isinstance(operand, (tuple, list))
    operands = [operand] if single else list(operand)
    if not 1 <= int(num_keys) <= len(operands):
        raise ValueError(f"num_keys={num_keys} must be between 1 and "
                         f"len(operand)={len(operands)}")
    rank = aval_of_value(operands[0]).ndim
    if rank == 0:
        raise ValueError(f"sort: operands must have rank >= 1, got shape ()")
    outs = bind(_op("sort"), *operands, dimension=int(dimension) % rank,
                is_stable=bool(is_stable), num_keys=int(num_keys))
    outs = outs if isinstance(outs, list) else [outs]
    return outs[0] if single else tuple(outs)


# ---- indexing -------------------------------------------------------------------
def _start_indices(start_indices, shape, allow_negative_indices):
    """Start indices as arrays; negative ones count from the end (JAX's default), before
    XLA clamps them into range."""
    allow = allow_negative_indices
    allow = [bool(allow)] * len(shape) if isinstance(allow, bool) else list(allow)
    out, static = [], []
    for i, size, neg in zip(start_indices, shape, allow):
        if _is_python_scalar(i) or (isinstance(i, (np.ndarray, np.generic))
                                    and not isinstance(i, Tracer) and np.ndim(i) == 0):
            i = int(i)
            if i < 0 and not neg:
                raise ValueError(f"Index {i} is out of bounds for dimension {size} if "
                                 "allow_negative_indices=False")
            static.append(len(out))
            out.append(i + size if neg and i < 0 else i)
            continue
        dtype = aval_of_value(i).dtype
        if neg and dtypes.issubdtype(dtype, np.signedinteger):
            zero = convert_element_type(0, dtype)
            i = select(lt(i, zero), add(i, convert_element_type(size, dtype)), i)
        out.append(i)
    # Static starts take the dtype of the traced ones (so x[i] with an int32 `i` under x64
    # slices with int32 starts throughout, as JAX's *_in_dim helpers build them).
    traced = {aval_of_value(v).dtype for k, v in enumerate(out) if k not in static}
    target = traced.pop() if len(traced) == 1 else dtypes.default_int()
    for k in static:
        fits = np.iinfo(target).min <= out[k] <= np.iinfo(target).max
        out[k] = convert_element_type(out[k], target if fits else dtypes.default_int())
    return out


def dynamic_slice(operand, start_indices, slice_sizes, *, allow_negative_indices=True):
    """operand[start:start + size] per axis, starts clamped into range (negative ones
    counting from the end). JAX: lax.dynamic_slice."""
    idx = _start_indices(start_indices, aval_of_value(operand).shape, allow_negative_indices)
    return bind(_op("dynamic_slice"), operand, *idx,
                slice_sizes=tuple(int(s) for s in slice_sizes))


def dynamic_update_slice(operand, update, start_indices, *, allow_negative_indices=True):
    """operand with update written at start (clamped; negative starts count from the
    end). JAX: lax.dynamic_update_slice."""
    idx = _start_indices(start_indices, aval_of_value(operand).shape, allow_negative_indices)
    return bind(_op("dynamic_update_slice"), operand, update, *idx)


def dynamic_slice_in_dim(operand, start_index, slice_size, axis=0, *,
                         allow_negative_indices=True):
    aval = aval_of_value(operand)
    starts = [0] * aval.ndim
    sizes = list(aval.shape)
    starts[axis], sizes[axis] = start_index, slice_size
    return dynamic_slice(operand, starts, sizes,
                         allow_negative_indices=allow_negative_indices)


def dynamic_update_slice_in_dim(operand, update, start_index, axis, *,
                                allow_negative_indices=True):
    aval = aval_of_value(operand)
    starts = [0] * aval.ndim
    starts[axis] = start_index
    return dynamic_update_slice(operand, update, starts,
                                allow_negative_indices=allow_negative_indices)


GatherDimensionNumbers = namedtuple(
    "GatherDimensionNumbers", ["offset_dims", "collapsed_slice_dims", "start_index_map",
                               "operand_batching_dims", "start_indices_batching_dims"],
    defaults=((), ()))
ScatterDimensionNumbers = namedtuple(
    "ScatterDimensionNumbers", ["update_window_dims", "inserted_window_dims",
                                "scatter_dims_to_operand_dims", "operand_batching_dims",
                                "scatter_indices_batching_dims"], defaults=((), ()))


class GatherScatterMode:
    CLIP = "clip"
    FILL_OR_DROP = "fill"
    PROMISE_IN_BOUNDS = "promise_in_bounds"


def _mode(mode, default):
    if mode is None:
        return default
    if isinstance(mode, str):
        return {"clip": "clip", "fill": "fill", "drop": "fill",
                "promise_in_bounds": "promise_in_bounds"}[mode.lower()]
    return mode


def gather(operand, start_indices, dimension_numbers, slice_sizes, *,
           indices_are_sorted=False, unique_indices=False, mode=None, fill_value=None):
    return bind(_op("gather"), operand, start_indices,
                dimension_numbers=dict(dimension_numbers._asdict()),
                slice_sizes=tuple(int(s) for s in slice_sizes),
                indices_are_sorted=bool(indices_are_sorted),
                unique_indices=bool(unique_indices), mode=_mode(mode, "fill"),
                fill_value=fill_value)


def _scatter(name):
    def f(operand, scatter_indices, updates, dimension_numbers, *,
          indices_are_sorted=False, unique_indices=False, mode=None):
        return bind(_op(name), operand, scatter_indices, updates,
                    dimension_numbers=dict(dimension_numbers._asdict()),
                    indices_are_sorted=bool(indices_are_sorted),
                    unique_indices=bool(unique_indices), mode=_mode(mode, "fill"))
    f.__name__ = name
    return f


scatter = _scatter("scatter")
scatter_add = _scatter("scatter_add")
scatter_mul = _scatter("scatter_mul")
scatter_min = _scatter("scatter_min")
scatter_max = _scatter("scatter_max")


from mjax.lax.convolution import (ConvDimensionNumbers, conv, conv_dimension_numbers,  # noqa: E402
                                  conv_general_dilated, conv_general_permutations,
                                  conv_general_shape_tuple, conv_transpose,
                                  conv_with_general_padding, padtype_to_pads,
                                  conv_shape_tuple, conv_transpose_shape_tuple,
                                  conv_general_dilated_patches, conv_general_dilated_local)
from mjax.lax.windowed import reduce_window, reduce_window_shape_tuple  # noqa: E402
from mjax.lax.sorting import approx_max_k, approx_min_k, sort_key_val, top_k  # noqa: E402
from mjax.lax.reduce import reduce, reduce_xor  # noqa: E402
from mjax.lax.extras import (ConvGeneralDilatedDimensionNumbers, DotDimensionNumbers,  # noqa: E402,E501
                             PrecisionLike, batch_matmul, broadcast_like, broadcast_shapes,
                             collapse, dtype, dynamic_index_in_dim,
                             dynamic_update_index_in_dim, empty, index_take, mulhi,
                             nextafter, scatter_apply, scatter_sub, split, stack, tile,
                             unstack)
from mjax.lax.control_flow import (associative_scan, cond, fori_loop, map, scan,  # noqa: E402
                                   switch, while_loop)
from mjax.lax.parallel import (all_gather, all_to_all, axis_index, axis_size,  # noqa: E402
                               pcast, pmax, pmean, pmin, ppermute, pshuffle, pswapaxes,
                               psum, psum_scatter)
from mjax.lax.sharding import with_sharding_constraint  # noqa: E402
from mjax.lax import linalg  # noqa: E402, F401
from mjax.lax.linalg import FftType, fft  # noqa: E402
from mjax.lax.special_functions import (bessel_i0e, bessel_i1e, betainc, igamma,  # noqa: E402
                                       igamma_grad_a, igammac, random_gamma_grad, zeta)
from mjax.lax.ragged import (RandomAlgorithm, ragged_dot, ragged_dot_general,  # noqa: E402
                               rng_bit_generator, rng_uniform)
from mjax.lax.solves import custom_linear_solve, custom_root  # noqa: E402
