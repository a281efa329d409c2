"""Reductions, cumulative reductions, argmin/argmax and sort.

Shape rules are plain functions on shapes (`reduce_shape`, `argminmax_shape`,
`cumulative_shape`, `sort_shapes`) so the verifier, the tracer and tests share them.
"""
from __future__ import annotations

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.dtype_rules import check_dtype, is_int
from mjax.dialect.types import ShapedArray, short_dtype_name


# ---- shape rules -----------------------------------------------------------------
def reduce_shape(op: str, shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """Shape after reducing `axes` away. JAX: lax._reduce_op_shape_rule."""
    if len(set(axes)) != len(axes):
        raise ValueError(f"{op}: duplicate value in 'axes' of reduction: {tuple(axes)}")
    for a in axes:
        if not 0 <= a < len(shape):
            raise ValueError(f"{op}: reduction axes {tuple(axes)} contains out-of-bounds "
                             f"indices for operand of shape {shape} (rank {len(shape)})")
    return tuple(d for i, d in enumerate(shape) if i not in axes)


def argminmax_shape(op: str, shape: tuple[int, ...], axes: tuple[int, ...]) -> tuple[int, ...]:
    """Shape after dropping the one reduced axis. JAX: lax._argminmax_shape_rule."""
    if len(axes) != 1:
        raise ValueError(f"{op} requires exactly one axis in 'axes', got {tuple(axes)}")
    axis, = axes
    if not 0 <= axis < len(shape):
        raise ValueError(f"{op}: invalid axis {axis} for operand shape {shape}")
    if shape[axis] < 1:
        raise ValueError(f"{op} requires a non-empty reduced dimension, got operand shape "
                         f"{shape} and axis {axis}")
    return shape[:axis] + shape[axis + 1:]


def cumulative_shape(op: str, shape: tuple[int, ...], axis: int) -> tuple[int, ...]:
    """Cumulative reductions keep the shape. JAX: loops._cumred_shape_rule."""
    if axis < 0:
        raise ValueError(f"{op}: axis must be nonnegative (XLA operations do not allow "
                         f"negative axes), got {axis}")
    if axis >= len(shape):
        raise ValueError(f"{op}: axis {axis} is out of bounds for array of shape {shape}")
    return shape


def sort_shapes(shapes: list[tuple[int, ...]], dimension: int, num_keys: int) -> None:
    """Checks sort's operands: equal shapes, dimension in range, 1 <= num_keys <= n."""
    if any(s != shapes[0] for s in shapes[1:]):
        raise TypeError("sort requires operands of equal shapes, got "
                        + ", ".join(str(s) for s in shapes))
    rank = len(shapes[0])
    if rank == 0:
        raise TypeError("sort requires operands of rank >= 1, got shape ()")
    if not 0 <= dimension < rank:
        raise ValueError(f"sort: dimension {dimension} is out of range for operands of "
                         f"shape {shapes[0]} (rank {rank})")
    if not 1 <= num_keys <= len(shapes):
        raise ValueError(f"sort: num_keys must be in [1, {len(shapes)}] (the number of "
                         f"operands), got {num_keys}")


# ---- reductions ------------------------------------------------------------------
class Reduction(JaxprOp):
    """Base of reduce_*: reduces `axes` away; result keeps the operand's dtype."""

    attributes = {"axes": A.Ints()}
    dtypes: tuple[str, ...] = ("numeric",)

    @classmethod
    def infer(cls, x, *, axes):
        check_dtype(cls.primitive, x, *cls.dtypes)
        return (ShapedArray(reduce_shape(cls.primitive, x.shape, axes), x.dtype),)


class ReduceSumOp(Reduction, name="reduce_sum"):
    """Sum over `axes`. JAX: lax.reduce_sum_p."""


class ReduceProdOp(Reduction, name="reduce_prod"):
    """Product over `axes`. JAX: lax.reduce_prod_p."""


class ReduceMaxOp(Reduction, name="reduce_max"):
    """Maximum over `axes` (NaN-propagating; complex: lexicographic). JAX: lax.reduce_max_p."""
    dtypes = ("any",)


class ReduceMinOp(Reduction, name="reduce_min"):
    """Minimum over `axes` (NaN-propagating; complex: lexicographic). JAX: lax.reduce_min_p."""
    dtypes = ("any",)


class ReduceAndOp(Reduction, name="reduce_and"):
    """Logical/bitwise and over `axes`. JAX: lax.reduce_and_p."""
    dtypes = ("bool", "int")
    weak_type_inputs = None


class ReduceOrOp(Reduction, name="reduce_or"):
    """Logical/bitwise or over `axes`. JAX: lax.reduce_or_p."""
    dtypes = ("bool", "int")
    weak_type_inputs = None


class ReduceXorOp(Reduction, name="reduce_xor"):
    """Logical/bitwise exclusive or over `axes`. JAX: lax.reduce_xor_p."""
    dtypes = ("bool", "int")
    weak_type_inputs = None


# ---- argmin / argmax -------------------------------------------------------------
class ArgMinMax(JaxprOp):
    """Base of argmin/argmax: index (of `index_dtype`) along the one axis in `axes`.

    As JAX: a NaN beats every number, and ties (NaN with NaN too) go to the first index.
    """

    attributes = {"axes": A.Ints(), "index_dtype": A.DType()}
    weak_type_inputs = None

    @classmethod
    def infer(cls, x, *, axes, index_dtype):
        check_dtype(cls.primitive, x, "bool", "int", "float")
        if not is_int(index_dtype):
            raise TypeError(f"{cls.primitive} index_dtype must be an integer type, but got "
                            f"{short_dtype_name(index_dtype)}")
        return (ShapedArray(argminmax_shape(cls.primitive, x.shape, axes), index_dtype),)


class ArgMinOp(ArgMinMax, name="argmin"):
    """Index of the minimum along the one axis (NaN counts as least). JAX: lax.argmin_p."""


class ArgMaxOp(ArgMinMax, name="argmax"):
    """Index of the maximum along the one axis (NaN counts as greatest). JAX: lax.argmax_p."""


# ---- cumulative reductions -------------------------------------------------------
class CumulativeReduction(JaxprOp):
    """Base of cum*: inclusive prefix (or, with `reverse`, suffix) reduction along `axis`."""

    attributes = {"axis": A.Int(), "reverse": A.Bool(default=False)}
    dtypes: tuple[str, ...] = ("numeric",)

    @classmethod
    def infer(cls, x, *, axis, reverse):
        check_dtype(cls.primitive, x, *cls.dtypes)
        return (ShapedArray(cumulative_shape(cls.primitive, x.shape, axis), x.dtype),)


class CumsumOp(CumulativeReduction, name="cumsum"):
    """Cumulative sum along `axis`. JAX: lax.cumsum_p."""


class CumprodOp(CumulativeReduction, name="cumprod"):
    """Cumulative product along `axis`. JAX: lax.cumprod_p."""


class CummaxOp(CumulativeReduction, name="cummax"):
    """Cumulative maximum along `axis`. JAX: lax.cummax_p."""


class CumminOp(CumulativeReduction, name="cummin"):
    """Cumulative minimum along `axis`. JAX: lax.cummin_p."""


class CumlogsumexpOp(CumulativeReduction, name="cumlogsumexp"):
    """Cumulative log(sum(exp(x))) along `axis`. JAX: lax.cumlogsumexp_p."""
    dtypes = ("float",)


# ---- sort ------------------------------------------------------------------------
class SortOp(JaxprOp, name="sort"):
    """Sorts operands together along `dimension` by their first `num_keys`. JAX: lax.sort_p.

    Keys compare lexicographically in JAX's total order: -0.0 == 0.0, NaNs last, complex
    numbers by real then imaginary part.
    """
    num_operands = None
    min_operands = 1
    attributes = {"dimension": A.Int(), "is_stable": A.Bool(default=True),
                  "num_keys": A.Int(default=1)}

    @classmethod
    def infer(cls, *xs, dimension, is_stable, num_keys):
        sort_shapes([x.shape for x in xs], dimension, num_keys)
        for i, x in enumerate(xs):
            what = f"operand {i}" + (" (a key)" if i < num_keys else "")
            check_dtype("sort", x, "bool", "numeric", what=what)
        return tuple(x.strip_weak_type() for x in xs)


__all__ = [n for n in dir() if n.endswith("Op")]
