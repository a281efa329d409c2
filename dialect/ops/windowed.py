"""Windowed reductions: reduce_window_{sum,max,min}, and the two ops max/min pooling
differentiates through, select_and_gather_add (JVP) and select_and_scatter_add (VJP).

Windows are described as in XLA/JAX: `window_dimensions`, `window_strides`, `padding`
((low, high) per dimension), `base_dilation` (holes between operand elements) and
`window_dilation` (holes between window elements). `reduce_window_shape` is the one shape
rule, a plain function.
"""
from __future__ import annotations

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.dtype_rules import check_dtype, check_same_dtypes
from mjax.dialect.ops.convolution import dilate_dim, stride_dim
from mjax.dialect.types import ShapedArray

SELECT_PRIMS = ("ge", "le")  # JAX's select_prim: lax.ge_p picks maxima, lax.le_p minima


# ---- shape rules -------------------------------------------------------------------
def _check_window_param(op: str, name: str, values, rank: int, minimum: int):
    if len(values) != rank:
        raise TypeError(f"{op} got the wrong number of {name} for operand of rank {rank}: "
                        f"got {name} {tuple(values)}")
    if any(v < minimum for v in values):
        raise TypeError(f"{op}: {name} must be {'positive' if minimum else 'non-negative'}, "
                        f"got {tuple(values)}")


def reduce_window_shape(op: str, shape: tuple[int, ...], *, window_dimensions,
                        window_strides, padding, base_dilation, window_dilation
                        ) -> tuple[int, ...]:
    """Result shape of a windowed reduction. JAX: _common_reduce_window_shape_rule."""
    rank = len(shape)
    _check_window_param(op, "window_dimensions", window_dimensions, rank, 1)
    _check_window_param(op, "window_strides", window_strides, rank, 1)
    _check_window_param(op, "base_dilation", base_dilation, rank, 1)
    _check_window_param(op, "window_dilation", window_dilation, rank, 1)
    if len(padding) != rank or any(len(p) != 2 for p in padding):
        raise TypeError(f"{op}: padding must be {rank} (low, high) pairs, got "
                        f"{tuple(padding)}")
    out = []
    for d, w, s, (lo, hi), bd, wd in zip(shape, window_dimensions, window_strides, padding,
                                         base_dilation, window_dilation):
        # (a negative padded size has no windows, as JAX's: stride_dim clamps at 0)
        padded = dilate_dim(d, bd) + lo + hi
        out.append(stride_dim(padded, dilate_dim(w, wd), s))
    return tuple(out)


_WINDOW_ATTRS = {"window_dimensions": A.Ints(), "window_strides": A.Ints(),
                 "padding": A.Nested(depth=2), "base_dilation": A.Ints(),
                 "window_dilation": A.Ints()}


class ReduceWindow(JaxprOp):
    """Base of reduce_window_*: one monoid reduction per (padded, dilated) window; the
    padding takes the monoid's identity."""
    attributes = dict(_WINDOW_ATTRS)
    dtypes: tuple[str, ...] = ("numeric",)

    @classmethod
    def infer(cls, x, **window):
        check_dtype(cls.primitive, x, *cls.dtypes)
        return (ShapedArray(reduce_window_shape(cls.primitive, x.shape, **window), x.dtype),)


class ReduceWindowSumOp(ReduceWindow, name="reduce_window_sum"):
    """Sum over each window. JAX: lax.reduce_window_sum_p."""


class ReduceWindowMaxOp(ReduceWindow, name="reduce_window_max"):
    """Maximum over each window (padding counts as -inf). JAX: lax.reduce_window_max_p."""
    dtypes = ("bool", "numeric")


class ReduceWindowMinOp(ReduceWindow, name="reduce_window_min"):
    """Minimum over each window (padding counts as +inf). JAX: lax.reduce_window_min_p."""
    dtypes = ("bool", "numeric")


class SelectAndGatherAddOp(JaxprOp, name="select_and_gather_add"):
    """For each window, the element of `tangents` where `operand` attains its max
    (select_prim "ge") or min ("le"); the JVP of reduce_window_max/min.
    JAX: lax.select_and_gather_add_p."""
    num_operands = 2
    attributes = {"select_prim": A.Str(choices=SELECT_PRIMS), **_WINDOW_ATTRS}

    @classmethod
    def infer(cls, tangents, operand, *, select_prim, **window):
        if tangents.shape != operand.shape:
            raise TypeError(f"select_and_gather_add tangents and operand shapes must match, "
                            f"got {tangents.shape} and {operand.shape}")
        check_same_dtypes("select_and_gather_add", (tangents, operand), "operands")
        check_dtype("select_and_gather_add", operand, "float")
        shape = reduce_window_shape("select_and_gather_add", operand.shape, **window)
        return (ShapedArray(shape, tangents.dtype),)


class SelectAndScatterAddOp(JaxprOp, name="select_and_scatter_add"):
    """Adds each element of `source` (one per window) at the position where `operand`
    attains the window's max ("ge") or min ("le"); the transpose of select_and_gather_add,
    i.e. max-pool's gradient. JAX: lax.select_and_scatter_add_p."""
    num_operands = 2
    attributes = {"select_prim": A.Str(choices=SELECT_PRIMS),
                  "window_dimensions": A.Ints(), "window_strides": A.Ints(),
                  "padding": A.Nested(depth=2)}

    @classmethod
    def infer(cls, source, operand, *, select_prim, window_dimensions, window_strides,
              padding):
        check_same_dtypes("select_and_scatter_add", (source, operand), "operands")
        check_dtype("select_and_scatter_add", operand, "numeric")
        ones = (1,) * len(operand.shape)
        want = reduce_window_shape("select_and_scatter_add", operand.shape,
                                   window_dimensions=window_dimensions,
                                   window_strides=window_strides, padding=padding,
                                   base_dilation=ones, window_dilation=ones)
        if source.shape != want:
            raise TypeError(f"select_and_scatter_add source shape must be the windowed "
                            f"shape {want} of operand shape {operand.shape}, got "
                            f"{source.shape}")
        return (ShapedArray(operand.shape, source.dtype),)


__all__ = [n for n in dir() if n.endswith("Op")]
