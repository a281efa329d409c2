"""Operators and NumPy-style methods of `mjax.Array` and tracers, which call
`mjax.numpy`: installed onto `ArrayMethods` (frontend/arrays/array_methods.py, floors below)
when this module is imported, right after mjax.numpy (JAX: jax._src.numpy.array_methods).
Also registers NumPy's ufuncs as the monoids `lax.reduce` recognizes (these registrations
move into frontend/numpy/ once its split into topic modules has landed).
"""
from __future__ import annotations

import math

import numpy as np

import mjax.numpy as jnp
from mjax import lax
from mjax.tracing import registration
from mjax.arrays.array import Array
from mjax.arrays.array_methods import ArrayMethods, install, selects_all
from mjax.dialect import ShapedArray
from mjax.dialect.ops.elementwise import AddOp, EqOp, GeOp, GtOp, LeOp, LtOp, MulOp, NeOp, SubOp
from mjax.specs.dtypes import promote_types
from mjax.arrays.eager_fast import NUMPY_SCALARS, fast_op
from mjax.lax.reduce import register_monoid
from mjax.numpy.array_api import _put
from mjax.numpy.eager_indexing import at as eager_at, fast_getitem
from mjax.numpy.indexing import getitem
from mjax.jit.jitted import jit
from mjax.numpy.promotion import _SCALAR_CONST_MAX_SIZE, KEEP_ANY, scalar_learner


def _accepted_operand(x) -> bool:
    # JAX: _defer_to_unrecognized_arg. Anything else (lists, pytest.approx, ...) gets
    # NotImplemented, so Python can try the other operand's method.
    return isinstance(x, (ArrayMethods, np.ndarray, np.generic, bool, int, float, complex)) \
        or hasattr(x, "__jax_array__")


def _binary(name, reflected=False):
    f = getattr(jnp, name)

    if reflected:
        def method(self, other):
            if not _accepted_operand(other):
                return NotImplemented
            return f(other, self)
    else:
        def method(self, other):
            if not _accepted_operand(other):
                return NotImplemented
            return f(self, other)
    method.__name__ = name
    return method


def _forward(name):
    """A method `x.name(*args, **kw)` that calls `jnp.name(x, *args, **kw)`: JAX's
    method and function take the same arguments in the same order."""
    f = getattr(jnp, name)

    def method(self, *args, **kwargs):
        return f(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"jax.numpy.{name} of this array."
    return method


def _neg(self):
    return jnp.negative(self)


def _pos(self):
    return jnp.positive(self)


def _abs(self):
    return jnp.abs(self)


def _round(self, ndigits=None):
    # JAX: round(x) is an integer array, round(x, n) keeps x's dtype.
    out = jnp.round(self, decimals=ndigits or 0)
    return out.astype(int) if ndigits is None else out


def _invert(self):
    return jnp.invert(self)


def _getitem(self, idx):
    if selects_all(idx):
        return self  # x[...] and x[()] are x itself, as in JAX (flax reads Variables so)
    if type(self) is Array:   # (basic indices: one cached jit, numpy/eager_indexing.py)
        out = fast_getitem(self, idx)
        if out is not None:
            return out
    return getitem(self, idx)


def _T(self):
    return jnp.transpose(self)


def _mT(self):
    return jnp.matrix_transpose(self)


def _flat(self):
    raise NotImplementedError("JAX Arrays do not implement the arr.flat property: "
                              "consider arr.flatten() instead.")


def _real(self):
    return jnp.real(self)


def _imag(self):
    return jnp.imag(self)


def _astype(self, dtype, copy=False, device=None):
    return jnp.astype(self, dtype, copy=copy, device=device)


def _reshape(self, *shape, order="C", out_sharding=None):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    return jnp.reshape(self, shape, order=order)


def _transpose(self, *axes):
    if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
        axes = tuple(axes[0])
    return jnp.transpose(self, axes or None)


def _flatten(self, order="C", *, out_sharding=None):
    return jnp.ravel(self, order)


def _conj(self):
    return jnp.conj(self)


def _to_device(self, device, *, stream=None):
    """A copy of the array placed on `device` (a Device or a Sharding)."""
    if stream is not None:
        raise NotImplementedError("stream argument of array.to_device()")
    return _put(self, device)


def _view_method(self, dtype=None, type=None):  # noqa: A002 (NumPy's name)
    """The same bits seen as another dtype (the last axis rescales when the widths
    differ). JAX: Array.view."""
    if type is not None:
        raise NotImplementedError("`type` argument of array.view() is not supported.")
    return _view(self, dtype)


def _byteswap_method(self):
    return _byteswap(self)


def _compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    return jnp.compress(condition, self, axis, size=size, fill_value=fill_value)


def _view(x, dtype):
    if dtype is None:
        return x
    dtype = np.dtype(dtype)
    src = np.dtype(x.dtype)
    if dtype == src:
        return x
    if x.ndim == 0 and dtype.itemsize != src.itemsize:
        raise ValueError("view() of a 0-d array needs a dtype of the same width")
    if src == np.bool_:
        x, src = x.astype(np.uint8), np.dtype(np.uint8)
    to = np.dtype(np.uint8) if dtype == np.bool_ else dtype
    if to.itemsize == src.itemsize:
        out = lax.bitcast_convert_type(x, to)
    elif to.itemsize < src.itemsize:             # each element splits into several
        out = lax.bitcast_convert_type(x, to)
        out = jnp.reshape(out, x.shape[:-1] + (x.shape[-1] * (src.itemsize // to.itemsize),))
    else:                                        # several elements join into one
        k = to.itemsize // src.itemsize
        if x.shape[-1] % k:
            raise ValueError(f"When changing to a larger dtype, its size must be a divisor "
                             f"of the total size in bytes of the last axis of the array; got "
                             f"{src} -> {dtype} with last axis {x.shape[-1]}")
        out = lax.bitcast_convert_type(
            jnp.reshape(x, x.shape[:-1] + (x.shape[-1] // k, k)), to)
    return out != 0 if dtype == np.bool_ else out


def _byteswap(x):
    width = np.dtype(x.dtype).itemsize
    if width == 1:
        return x
    as_bytes = lax.bitcast_convert_type(x, np.uint8)          # shape (..., width)
    return lax.bitcast_convert_type(jnp.flip(as_bytes, -1), x.dtype)


def _deepcopy(self, memo):
    return self.copy()


def _array_namespace(self, *, api_version=None):
    return jnp


_OPERATORS = {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "true_divide",
              "floordiv": "floor_divide", "mod": "remainder", "pow": "power",
              "matmul": "matmul", "and": "bitwise_and", "or": "bitwise_or",
              "xor": "bitwise_xor", "lshift": "left_shift", "rshift": "right_shift"}
_COMPARISONS = {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                "eq": "equal", "ne": "not_equal"}
_FORWARDED = ("swapaxes", "squeeze", "sum", "prod", "mean", "max", "min", "argmax",
              "argmin", "all", "any", "clip", "dot", "argsort", "sort", "argpartition",
              "choose", "cumsum", "cumprod", "diagonal", "nonzero", "ptp", "repeat",
              "round", "searchsorted", "std", "var", "take", "trace", "copy")

_METHODS: dict = {}
for _op, _fn in _OPERATORS.items():
    _METHODS[f"__{_op}__"] = _binary(_fn)
    _METHODS[f"__r{_op}__"] = _binary(_fn, True)
for _op, _fn in _COMPARISONS.items():
    _METHODS[f"__{_op}__"] = _binary(_fn)
_METHODS.update({name: _forward(name) for name in _FORWARDED})
_METHODS.update({
    "__divmod__": _binary("divmod"), "__rdivmod__": _binary("divmod", True),
    "__copy__": _METHODS["copy"], "__deepcopy__": _deepcopy,
    "__neg__": _neg, "__pos__": _pos, "__abs__": _abs,
    "__round__": _round,
    "__invert__": _invert, "__getitem__": _getitem, "at": property(eager_at),
    "T": property(_T), "mT": property(_mT), "flat": property(_flat), "real": property(_real),
    "imag": property(_imag), "astype": _astype, "reshape": _reshape,
    "transpose": _transpose, "flatten": _flatten, "ravel": _flatten, "conj": _conj,
    "conjugate": _conj, "to_device": _to_device, "view": _view_method,
    "byteswap": _byteswap_method, "compress": _compress})



def _numpy_learner(learn):
    """learn (promotion.scalar_learner's) that also takes a NumPy scalar s of x's own dtype
    (np.float32(2) * x): promotion leaves both as they are, so the call is the op on x and
    s broadcast to x's shape (a new constant, kept by the C memo); None for other dtypes."""
    def learn_any(x, s):
        if type(s) not in NUMPY_SCALARS:
            return learn(x, s)
        aval = x.aval
        if np.dtype(type(s)) != aval.dtype or math.prod(aval.shape) > _SCALAR_CONST_MAX_SIZE:
            return None
        return jnp.broadcast_to(jnp.asarray(s), aval.shape)
    return learn_any


def _pair_learner(fname):
    """pair(x, y) for eager_fast.fast_op: for Arrays x, y of one shape and different avals
    (int32 + float32, x * weak) whose promotion gives a non-weak dtype, `jnp.<fname>` as a
    jit (promotion and op compiled as one program, as JAX's jnp functions are; its cache
    hit runs in C); None otherwise (other shapes: rank promotion may warn, and a jit warns
    once, the Python path every call; a bool operand: XLA may compile x * convert(b) as a
    select, whose zero's sign differs from the op by op result; a 16-bit float result:
    XLA may keep a fused conversion's excess precision)."""
    fn = getattr(jnp, fname)
    jitted = jit(lambda x, y: fn(x, y))
    jitted.__name__ = jitted.__qualname__ = fname

    def pair(x, y):
        ax, ay = x.aval, y.aval
        if type(ax) is not ShapedArray or type(ay) is not ShapedArray or \
                ax.shape != ay.shape or ax == ay or _BOOL in (ax.dtype, ay.dtype):
            return None
        try:
            dtype, weak = promote_types((ax.dtype, ax.weak_type), (ay.dtype, ay.weak_type))
        except Exception:   # (the Python path raises it, explained)
            return None
        return None if weak or dtype in _HALF else jitted
    return pair


# x + y, x - y, x * y on arrays of one non-weak aval (not bool: + and * are or/and there),
# or on such an array and a Python int/float or a NumPy scalar of its dtype (either side),
# and the comparisons likewise (lt/le/gt/ge: not complex, which jnp orders
# lexicographically), are one op: their cache hits run in C when built (eager_fast). x <op>
# y on arrays of one shape whose promotion converts them (int32 + float32) runs as one jit
# (its cache hit in C too).
_BOOL = np.dtype(bool)
_HALF = frozenset(map(np.dtype, (np.float16, jnp.bfloat16)))
_ARITH_KEEP = KEEP_ANY - {_BOOL}
_ORDER_KEEP = frozenset(d for d in KEEP_ANY if d.kind != "c")
_FAST = [("add", AddOp, _ARITH_KEEP), ("sub", SubOp, _ARITH_KEEP),
         ("mul", MulOp, _ARITH_KEEP), ("lt", LtOp, _ORDER_KEEP), ("le", LeOp, _ORDER_KEEP),
         ("gt", GtOp, _ORDER_KEEP), ("ge", GeOp, _ORDER_KEEP), ("eq", EqOp, KEEP_ANY),
         ("ne", NeOp, KEEP_ANY)]
for _op, _opcls, _keep in _FAST:
    _fn = _OPERATORS.get(_op) or _COMPARISONS[_op]
    _METHODS[f"__{_op}__"] = fast_op(_METHODS[f"__{_op}__"], _opcls, _keep,
                                     _numpy_learner(scalar_learner(_fn)), numpy_scalars=True,
                                     pair=_pair_learner(_fn))
    if _op in _OPERATORS:
        _METHODS[f"__r{_op}__"] = fast_op(
            _METHODS[f"__r{_op}__"], _opcls, _keep,
            _numpy_learner(scalar_learner(_fn, True)), True, numpy_scalars=True)
# (the scalar constants those C memos hold are mjax's, not the user's: jax.live_arrays)
_FAST_OPS = [m for m in _METHODS.values() if hasattr(m, "memo")]
_SCALAR_KEYS = NUMPY_SCALARS | {int, float}
registration.INTERNAL_ARRAYS.append(lambda: [
    entry[4] for op in _FAST_OPS for key, entry in list(op.memo.items())
    if key in _SCALAR_KEYS])
install(ArrayMethods, _METHODS)
install(Array, {"__array_namespace__": _array_namespace})

for _fn, _kind in ((jnp.add, "add"), (jnp.multiply, "mul"), (jnp.maximum, "max"),
                   (jnp.minimum, "min"), (jnp.bitwise_and, "and"), (jnp.logical_and, "and"),
                   (jnp.bitwise_or, "or"), (jnp.logical_or, "or"), (jnp.bitwise_xor, "xor"),
                   (jnp.logical_xor, "xor")):
    register_monoid(_fn, _kind)
