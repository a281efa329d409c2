"""Operators and methods shared by `mjax.Array` and tracers; they call `mjax.numpy`."""
from __future__ import annotations

import numpy as np


def _np():
    import mjax.numpy as jnp
    return jnp


def _accepted_operand(x) -> bool:
    # JAX: _defer_to_unrecognized_arg. Anything else (lists, pytest.approx, ...) gets
    # NotImplemented, so Python can try the other operand's method.
    return isinstance(x, (ArrayMethods, np.ndarray, np.generic, bool, int, float, complex)) \
        or hasattr(x, "__jax_array__")


def _binary(name, reflected=False):
    fn = []   # the mjax.numpy function, looked up on first use (as JAX binds its operators)

    def method(self, other):
        if not _accepted_operand(other):
            return NotImplemented
        if not fn:
            fn.append(getattr(_np(), name))
        f = fn[0]
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

    def __round__(self, ndigits=None):
        # JAX: round(x) is an integer array, round(x, n) keeps x's dtype.
        out = _np().round(self, decimals=ndigits or 0)
        return out.astype(int) if ndigits is None else out

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

    def astype(self, dtype, copy=False, device=None):
        return _np().astype(self, dtype, copy=copy, device=device)

    def reshape(self, *shape, order="C", out_sharding=None):
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        return _np().reshape(self, shape, order=order)

    def transpose(self, *axes):
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        return _np().transpose(self, axes or None)

    def flatten(self, order="C", *, out_sharding=None):
        return _np().ravel(self, order)

    ravel = flatten

    def conj(self):
        return _np().conj(self)

    conjugate = conj

    def to_device(self, device, *, stream=None):
        """A copy of the array placed on `device` (a Device or a Sharding)."""
        if stream is not None:
            raise NotImplementedError("stream argument of array.to_device()")
        from mjax.numpy.array_api import _put
        return _put(self, device)

    @property
    def itemsize(self):
        import numpy as np
        return np.dtype(self.dtype).itemsize

    @property
    def nbytes(self):
        return self.size * self.itemsize

    def view(self, dtype=None, type=None):  # noqa: A002 (NumPy's name)
        """The same bits seen as another dtype (the last axis rescales when the widths
        differ). JAX: Array.view."""
        if type is not None:
            raise NotImplementedError("`type` argument of array.view() is not supported.")
        return _view(self, dtype)

    def byteswap(self):
        return _byteswap(self)

    def tobytes(self, order="C"):
        import numpy as np
        return np.asarray(self).tobytes(order)


def _forward(name):
    """A method `x.name(*args, **kw)` that calls `jnp.name(x, *args, **kw)`: JAX's
    method and function take the same arguments in the same order."""
    def method(self, *args, **kwargs):
        return getattr(_np(), name)(self, *args, **kwargs)
    method.__name__ = name
    method.__doc__ = f"jax.numpy.{name} of this array."
    return method


for _name in ("swapaxes", "squeeze", "sum", "prod", "mean", "max", "min", "argmax",
              "argmin", "all", "any", "clip", "dot", "argsort", "sort", "argpartition",
              "choose", "cumsum", "cumprod", "diagonal", "nonzero", "ptp", "repeat", "round",
              "searchsorted", "std", "var", "take", "trace"):
    setattr(ArrayMethods, _name, _forward(_name))


def _compress(self, condition, axis=None, *, out=None, size=None, fill_value=0):
    if out is not None:
        raise NotImplementedError("The 'out' argument to jnp.compress is not supported.")
    return _np().compress(condition, self, axis, size=size, fill_value=fill_value)


ArrayMethods.compress = _compress


def _view(x, dtype):
    import numpy as np

    from mjax import lax
    jnp = _np()
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
    import numpy as np

    from mjax import lax
    jnp = _np()
    width = np.dtype(x.dtype).itemsize
    if width == 1:
        return x
    as_bytes = lax.bitcast_convert_type(x, np.uint8)          # shape (..., width)
    return lax.bitcast_convert_type(jnp.flip(as_bytes, -1), x.dtype)
