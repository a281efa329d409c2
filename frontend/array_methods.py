"""Operators and methods shared by `mjax.Array` and tracers; they call `mjax.numpy`."""
from __future__ import annotations


def _np():
    import mjax.numpy as jnp
    return jnp


def _accepted_operand(x) -> bool:
    # JAX: _defer_to_unrecognized_arg. Anything else (lists, pytest.approx, ...) gets
    # NotImplemented, so Python can try the other operand's method.
    import numpy as np
    return isinstance(x, (ArrayMethods, np.ndarray, np.generic, bool, int, float, complex)) \
        or hasattr(x, "__jax_array__")


def _binary(name, reflected=False):
    def method(self, other):
        if not _accepted_operand(other):
            return NotImplemented
        f = getattr(_np(), name)
        return f(other, self) if reflected else f(self, other)
    method.__name__ = name
    return method


class ArrayMethods:
    """Mixin: `+ - * / // % ** @`, comparisons, bitwise ops, indexing, reductions."""

    __slots__ = ()

    __add__, __radd__ = _binary("add"), _binary("add", True)
    __sub__, __rsub__ = _binary("subtract"), _binary("subtract", True)
    __mul__, __rmul__ = _binary("multiply"), _binary("multiply", True)
    __truediv__, __rtruediv__ = _binary("true_divide"), _binary("true_divide", True)
    __floordiv__, __rfloordiv__ = _binary("floor_divide"), _binary("floor_divide", True)
    __mod__, __rmod__ = _binary("remainder"), _binary("remainder", True)
    __pow__, __rpow__ = _binary("power"), _binary("power", True)
    __matmul__, __rmatmul__ = _binary("matmul"), _binary("matmul", True)
    __and__, __rand__ = _binary("bitwise_and"), _binary("bitwise_and", True)
    __or__, __ror__ = _binary("bitwise_or"), _binary("bitwise_or", True)
    __xor__, __rxor__ = _binary("bitwise_xor"), _binary("bitwise_xor", True)
    __lshift__, __rlshift__ = _binary("left_shift"), _binary("left_shift", True)
    __rshift__, __rrshift__ = _binary("right_shift"), _binary("right_shift", True)
    __lt__, __le__ = _binary("less"), _binary("less_equal")
    __gt__, __ge__ = _binary("greater"), _binary("greater_equal")
    __eq__, __ne__ = _binary("equal"), _binary("not_equal")
    __divmod__ = _binary("divmod")

    def __neg__(self):
        return _np().negative(self)

    def __pos__(self):
        return _np().positive(self)

    def __abs__(self):
        return _np().abs(self)

    def __invert__(self):
        return _np().invert(self)

    def __setitem__(self, idx, value):
        raise TypeError(f"{type(self).__name__} objects are immutable: x[idx] = y is not "
                        f"supported. Use x = x.at[idx].set(y) (or .add, .multiply, ...) "
                        f"instead.")

    def __getitem__(self, idx):
        from mjax.numpy.indexing import getitem
        return getitem(self, idx)

    def __iter__(self):
        if not self.shape:
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    # Both users (Array, Tracer) carry `aval`.
    @property
    def shape(self):
        return self.aval.shape

    @property
    def dtype(self):
        return self.aval.dtype

    @property
    def weak_type(self):
        return self.aval.weak_type

    @property
    def ndim(self):
        return len(self.shape)

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def T(self):
        return _np().transpose(self)

    @property
    def mT(self):
        return _np().swapaxes(self, -1, -2)

    @property
    def real(self):
        return _np().real(self)

    @property
    def imag(self):
        return _np().imag(self)

    @property
    def at(self):
        from mjax.numpy.indexing import _IndexUpdateHelper
        return _IndexUpdateHelper(self)

    def astype(self, dtype):
        return _np().astype(self, dtype)

    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _np().reshape(self, shape, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return _np().transpose(self, axes or None)

    def swapaxes(self, a, b):
        return _np().swapaxes(self, a, b)

    def flatten(self):
        return _np().ravel(self)

    ravel = flatten

    def squeeze(self, axis=None):
        return _np().squeeze(self, axis)

    def sum(self, axis=None, dtype=None, keepdims=False):
        return _np().sum(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def prod(self, axis=None, dtype=None, keepdims=False):
        return _np().prod(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def mean(self, axis=None, dtype=None, keepdims=False):
        return _np().mean(self, axis=axis, dtype=dtype, keepdims=keepdims)

    def max(self, axis=None, keepdims=False):
        return _np().max(self, axis=axis, keepdims=keepdims)

    def min(self, axis=None, keepdims=False):
        return _np().min(self, axis=axis, keepdims=keepdims)

    def argmax(self, axis=None, keepdims=False):
        return _np().argmax(self, axis=axis, keepdims=keepdims)

    def argmin(self, axis=None, keepdims=False):
        return _np().argmin(self, axis=axis, keepdims=keepdims)

    def all(self, axis=None, keepdims=False):
        return _np().all(self, axis=axis, keepdims=keepdims)

    def any(self, axis=None, keepdims=False):
        return _np().any(self, axis=axis, keepdims=keepdims)

    def clip(self, min=None, max=None):
        return _np().clip(self, min, max)

    def dot(self, other):
        return _np().dot(self, other)

    def conj(self):
        return _np().conj(self)

    conjugate = conj
