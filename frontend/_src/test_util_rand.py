"""jax._src.test_util's random test inputs and test-name formatting (re-exported there).

    rng = np.random.RandomState(0)
    x = rand_default(rng)((2, 3), np.float32)      # a sampler: (shape, dtype) -> array
    format_shape_dtype_string((2, 3), np.float32)  # 'float32[2,3]'

A shape is a tuple (or list, or an int n for (n,)), or NUMPY_SCALAR_SHAPE (a NumPy
scalar of the dtype) or PYTHON_SCALAR_SHAPE (a Python scalar). Every sampler draws from
`rng` in the same order as JAX's, so a seeded RandomState gives JAX's values.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from mjax.config import config
from mjax.specs import dtypes as _dt


class ScalarShape:
    """The shape of a scalar that is no 0-d array (len 0, no items)."""

    def __len__(self):
        return 0

    def __getitem__(self, i):
        raise IndexError(f"index {i} out of range.")


class _NumpyScalar(ScalarShape):
    pass


class _PythonScalar(ScalarShape):
    pass


NUMPY_SCALAR_SHAPE = _NumpyScalar()
PYTHON_SCALAR_SHAPE = _PythonScalar()


def is_valid_shape(shape, dtype) -> bool:
    """False for a Python scalar of a dtype no Python scalar has (e.g. float32)."""
    if shape == PYTHON_SCALAR_SHAPE:
        return np.dtype(dtype) == np.dtype(type(np.array(0, dtype=dtype).item()))
    return True


def _dims(shape) -> tuple:
    if type(shape) in (list, tuple):
        return shape
    if isinstance(shape, ScalarShape):
        return ()
    if np.ndim(shape) == 0:
        return (shape,)
    raise TypeError(type(shape))


def _as_shape(value, shape, dtype):
    """`value` as the kind of thing `shape` asks for (NumPy or Python scalar, array)."""
    if shape is NUMPY_SCALAR_SHAPE:
        return np.dtype(dtype).type(value)
    if shape is PYTHON_SCALAR_SHAPE:
        return np.asarray(value).item()
    if type(shape) in (list, tuple):
        assert np.shape(value) == tuple(shape)
        return value
    if np.ndim(shape) == 0:
        assert np.shape(value) == (shape,)
        return value
    raise TypeError(type(shape))


def dtype_str(dtype) -> str:
    return np.dtype(dtype).name


def format_shape_dtype_string(shape, dtype) -> str:
    """'float32[2,3]', 'int32[]', 'float32[3,]' (an int shape), 'float32' (a NumPy
    scalar), 'pyfloat64' (a Python scalar)."""
    if isinstance(shape, np.ndarray):
        return f"{dtype_str(dtype)}[{shape}]"
    if isinstance(shape, list):
        shape = tuple(shape)
    return _format(shape, dtype)


@functools.lru_cache(maxsize=64)
def _format(shape, dtype) -> str:
    name = dtype_str(dtype)
    if shape is NUMPY_SCALAR_SHAPE:
        return name
    if shape is PYTHON_SCALAR_SHAPE:
        return "py" + name
    if type(shape) is tuple:
        return f"{name}[{','.join(str(d) for d in shape)}]"
    if type(shape) is int:
        return f"{name}[{shape},]"
    raise TypeError(type(shape))


def _rand_dtype(draw, shape, dtype, scale=1., post=lambda x: x):
    """scale * draw(*dims) in `dtype` (unsigned: its absolute value; complex: a second
    draw for the imaginary part), then `post`, as `shape` asks."""
    dims = _dims(shape)
    unsigned = _dt.issubdtype(dtype, np.unsignedinteger)

    def one():
        v = scale * draw(*dims)
        return np.asarray(abs(v) if unsigned else v).astype(dtype)
    vals = one()
    if _dt.issubdtype(dtype, np.complexfloating):
        vals = vals + 1.0j * one()
    return _as_shape(np.asarray(post(vals), dtype), shape, dtype)


def rand_fullrange(rng, standardize_nans=False):
    """Random bytes viewed as `dtype`: values over the dtype's whole range."""
    def sample(shape, dtype, post=lambda x: x):
        dtype = np.dtype(dtype)
        n = dtype.itemsize * math.prod(_dims(shape))
        vals = post(rng.randint(0, np.iinfo(np.uint8).max, size=n, dtype=np.uint8))
        vals = vals.view(dtype)
        if shape is PYTHON_SCALAR_SHAPE:
            # (the widest unsigned values overflow a Python scalar's conversion)
            if dtype == np.uint64:
                vals = vals.astype(np.int64)
            elif dtype == np.uint32 and not config.read("jax_enable_x64"):
                vals = vals.astype(np.int32)
        vals = vals.reshape(shape)
        if standardize_nans and np.issubdtype(dtype, np.floating):
            vals[np.isnan(vals)] = np.nan
        return _as_shape(vals, shape, dtype)
    return sample


def rand_default(rng, scale=3):
    return functools.partial(_rand_dtype, rng.randn, scale=scale)


def rand_nonzero(rng):
    post = lambda x: np.where(x == 0, np.array(1, dtype=x.dtype), x)
    return functools.partial(_rand_dtype, rng.randn, scale=3, post=post)


def rand_positive(rng):
    return functools.partial(_rand_dtype, rng.rand, scale=2, post=lambda x: x + 1)


def rand_small(rng):
    return functools.partial(_rand_dtype, rng.randn, scale=1e-3)


def rand_not_small(rng, offset=10.):
    post = lambda x: x + np.where(x > 0, offset, -offset)
    return functools.partial(_rand_dtype, rng.randn, scale=3., post=post)


def rand_small_positive(rng):
    return functools.partial(_rand_dtype, rng.rand, scale=2e-5)


def rand_uniform(rng, low=0.0, high=1.0):
    assert low < high
    return functools.partial(_rand_dtype, rng.rand, post=lambda x: x * (high - low) + low)


def rand_some_equal(rng):
    """Large values, about half of them equal to the first."""
    def post(x):
        flat = x.ravel()
        if len(flat) == 0:
            return x
        return np.where(rng.rand(*np.shape(x)) < 0.5, flat[0], x)
    return functools.partial(_rand_dtype, rng.randn, scale=100., post=post)


def _complex_from_parts(sample, shape, dtype):
    part = np.real(np.array(0, dtype=dtype)).dtype
    out = sample(shape, part) + np.array(1j, dtype) * sample(shape, part)
    return _as_shape(out, shape, dtype)


def _with_specials(rng, specials):
    """rand_default's values, with `specials` [(probability draws, value)] substituted
    where a uniform draw falls below each probability (floating dtypes only)."""
    base = rand_default(rng)

    def sample(shape, dtype):
        if not _dt.issubdtype(dtype, np.floating):
            return base(shape, dtype)
        dims = _dims(shape)
        masks = [(rng.rand(*dims) < p, v) for p, v in specials]
        vals = base(shape, dtype)
        for mask, v in masks:
            vals = np.where(mask, np.array(v, dtype=dtype), vals)
        return _as_shape(np.asarray(vals, dtype=dtype), shape, dtype)
    return sample


# (As JAX's, these two give complex dtypes rand_default's values: no infinities.)
def rand_some_inf(rng):
    """rand_default's values with about 10% +inf and 10% -inf (real floating dtypes)."""
    return _with_specials(rng, [(0.1, np.inf), (0.1, -np.inf)])


def rand_some_inf_and_nan(rng):
    """rand_default's values with about 10% each of +inf, -inf and NaN (real floating)."""
    return _with_specials(rng, [(0.1, np.inf), (0.1, -np.inf), (0.1, np.nan)])


def rand_some_nan(rng):
    """rand_default's values with about 10% NaN (half of them negative NaN)."""
    base = rand_default(rng)

    def rand(shape, dtype):
        if _dt.issubdtype(dtype, np.complexfloating):
            return _complex_from_parts(rand, shape, dtype)
        if not _dt.issubdtype(dtype, np.floating):
            return base(shape, dtype)
        u = rng.rand(*_dims(shape))       # (one draw decides both)
        vals = base(shape, dtype)
        vals = np.where(u < 0.1, np.array(np.nan, dtype=dtype), vals)
        vals = np.where(u < 0.05, np.array(-np.nan, dtype=dtype), vals)
        return _as_shape(np.asarray(vals, dtype=dtype), shape, dtype)
    return rand


def rand_some_zero(rng):
    """rand_default's values, about half of them zero."""
    base = rand_default(rng)

    def rand(shape, dtype):
        zeros = rng.rand(*_dims(shape)) < 0.5
        vals = np.where(zeros, np.array(0, dtype=dtype), base(shape, dtype))
        return _as_shape(np.asarray(vals, dtype=dtype), shape, dtype)
    return rand


def rand_int(rng, low=0, high=None):
    """Integers in [low, high) (high defaults to the dtype's maximum, for integer
    dtypes), cast to `dtype`."""
    def sample(shape, dtype):
        nonlocal high
        integer = np.issubdtype(dtype, np.integer)
        if low == 0 and high is None:
            if not integer:
                raise ValueError("rand_int requires an explicit `high` value for "
                                 "non-integer types.")
            high = np.iinfo(dtype).max
        return rng.randint(low, high=high, size=shape,
                           dtype=dtype if integer else np.int64).astype(dtype)
    return sample


def rand_unique_int(rng, high=None):
    """Distinct integers below `high` (default: the number of elements)."""
    def sample(shape, dtype):
        return rng.choice(np.arange(high or math.prod(shape), dtype=dtype), size=shape,
                          replace=False)
    return sample


def rand_indices_unique_along_axis(rng):
    """(dim, shape, axis, allow_negative=True) -> indices below dim of `shape`, distinct
    along `axis`; with allow_negative, some written as their negative equivalent."""
    def sample(dim, shape, axis, allow_negative=True):
        rest = shape[:axis] + shape[axis:][1:]
        batch = math.prod(rest)
        idx = np.array([rng.choice(dim, size=shape[axis], replace=False)
                        for _ in range(batch)]).reshape(batch, shape[axis])
        idx = np.moveaxis(idx.reshape(rest + (shape[axis],)), -1, axis)
        assert (np.apply_along_axis(functools.partial(np.bincount, minlength=dim), axis,
                                    idx) <= 1).all()
        if allow_negative:
            idx[rng.choice([False, True], idx.shape)] -= dim
        return idx
    return sample


def rand_bool(rng):
    def sample(shape, dtype):
        return _as_shape(np.asarray(rng.rand(*_dims(shape)) < 0.5, dtype=dtype), shape,
                         dtype)
    return sample
