"""Dtypes between TensorFlow and mjax, and TF values as tensors of mjax's dtypes.

TF → mjax follows mjax's x64 flag: without it, an int64/float64/complex128 TF value is
cast to its 32-bit type before the call, as JAX does. mjax → TF is exact, except float0
(tangents of integer values), which TF holds as bool zeros, as JAX's lowering does.
JAX: jax2tf._to_tf_dtype, _to_jax_dtype, _tfval_to_tensor_jax_dtype.
"""
from __future__ import annotations

import ml_dtypes
import numpy as np
import tensorflow as tf

from mjax.specs import dtypes as _dtypes

# The numeric types JAX arrays may have (TF's string, resource and variant are not).
_KINDS = "biufc"


def _is_numeric(dt) -> bool:
    """Bool, integer, floating or complex, ml_dtypes' (bfloat16, float8_*, int4) too."""
    return dt.kind in _KINDS or (dt.kind == "V" and hasattr(ml_dtypes, dt.name))


def to_tf_dtype(dtype) -> tf.DType:
    """The TF dtype holding values of an mjax dtype (float0 as bool)."""
    if dtype == _dtypes.float0:
        return tf.bool
    return tf.dtypes.as_dtype(np.dtype(dtype))


def to_mjax_dtype(tf_dtype: tf.DType, where: str = "a value") -> np.dtype:
    """The mjax dtype of a TF dtype, canonicalized by the x64 flag."""
    try:
        dt = np.dtype(tf_dtype.as_numpy_dtype)
    except TypeError:
        dt = None
    if dt is None or not _is_numeric(dt):
        raise TypeError(f"jax2tf.convert: {where} has the TF dtype {tf_dtype.name}, which "
                        f"is not a valid JAX array type: only numeric and bool types are "
                        f"supported")
    return np.dtype(_dtypes.canonicalize_dtype(dt))


def is_tf_value(x) -> bool:
    """Tensors, variables, scalars and arrays (NumPy's, mjax's: anything with
    `__array__`)."""
    return isinstance(x, (tf.Tensor, tf.Variable, np.ndarray, np.generic,
                          bool, int, float, complex)) or hasattr(x, "__array__")


def to_tensor(x, where: str) -> tuple[tf.Tensor, np.dtype]:
    """`x` (tf.Tensor, tf.Variable, NumPy array or Python scalar) as a tf.Tensor of its
    mjax dtype, and that dtype. Variables are read here, outside any custom gradient, so
    the gradient reaches them through the read."""
    if isinstance(x, (tf.Tensor, tf.Variable)):
        dtype = to_mjax_dtype(x.dtype, where)
        want = to_tf_dtype(dtype)
        t = tf.convert_to_tensor(x) if isinstance(x, tf.Variable) else x
        return (t if want == x.dtype else tf.cast(t, want)), dtype
    if not is_tf_value(x):
        raise TypeError(f"jax2tf.convert: {where} is {x!r} of type {type(x).__name__}; "
                        f"arguments of a converted function must be NumPy arrays, "
                        f"scalars, tf.Variable or tf.Tensor (or pytrees of them)")
    value = np.asarray(x)
    if not _is_numeric(value.dtype):
        raise TypeError(f"jax2tf.convert: {where} has dtype {value.dtype}, which is not a "
                        f"valid JAX array type")
    dtype = np.dtype(_dtypes.canonicalize_dtype(value.dtype))
    if isinstance(x, int) and not isinstance(x, bool) and \
            not np.iinfo(dtype).min <= x <= np.iinfo(dtype).max:
        raise OverflowError(f"Python int {x} too large to convert to {dtype} ({where})")
    return tf.convert_to_tensor(value.astype(dtype), dtype=to_tf_dtype(dtype)), dtype


def dtype_of_val(x) -> tf.DType:
    """The TF dtype a converted function sees for `x`, by JAX's typing rules (64-bit
    types follow the x64 flag). JAX: jax2tf.dtype_of_val."""
    return to_tensor(x, "the value")[0].dtype
