"""`jax.ds(start, size)` / `pl.ds`: a slice of a ref whose start may be traced (the index
form of dynamic_slice). Refs (mjax.Ref and Pallas kernels' refs) take it in their index.
Its size is static, or, inside a Pallas kernel, a traced integer scalar (a view of
dynamic size, which only DMAs copy; `is_dynamic_size`). JAX: state/indexing.py's Slice
and ds."""
from __future__ import annotations

import operator

import numpy as np


class Slice:
    """`size` elements from `start` (static or traced), every `stride`-th.
    JAX: pl.Slice / pl.ds."""

    __slots__ = ("start", "size", "stride")

    def __init__(self, start, size, stride=1):
        size = _static_or_traced_size(size)
        if not isinstance(stride, (int, np.integer)) or stride < 1:
            raise ValueError(f"jax.ds stride must be a positive integer, got {stride!r}")
        self.start, self.size, self.stride = start, size, int(stride)

    @property
    def is_dynamic_size(self) -> bool:
        """Whether the size is traced (known only when the kernel runs)."""
        return not isinstance(self.size, int)

    def __repr__(self):
        return f"Slice(start={self.start}, size={self.size}, stride={self.stride})"

    @classmethod
    def from_slice(cls, s: slice, dim: int) -> "Slice":
        for part in (s.start, s.stop, s.step):
            if part is not None and not isinstance(part, (int, np.integer)):
                raise NotImplementedError(
                    "a Python slice into a ref needs static bounds; use pl.ds(start, size) "
                    "for a traced start")
        start, stop, step = s.indices(dim)
        return cls(start, max(0, -(-(stop - start) // step)), step)


def _static_or_traced_size(size):
    """`size` as an int, or as it is when it is a traced integer scalar."""
    if not isinstance(size, (int, np.integer)):
        aval = getattr(size, "aval", None)
        if (aval is None or getattr(aval, "shape", None) != ()
                or np.dtype(aval.dtype).kind not in "iu"):
            raise ValueError(f"jax.ds size must be an integer (static, or a traced integer "
                             f"scalar in a Pallas kernel), got {size!r}")
        try:
            size = operator.index(size)        # (a concrete array: its value)
        except TypeError:
            return size
    if size < 0:
        raise ValueError(f"jax.ds size must be nonnegative, got {size}")
    return int(size)


def ds(start, size=None, stride=None) -> Slice:
    """`pl.ds(start, size)`: `size` elements from `start`; `pl.ds(n)` is `pl.ds(0, n)`.
    JAX: pl.ds / pl.dslice."""
    stride = 1 if stride is None else stride
    if size is None:
        if not isinstance(start, (int, np.integer)):
            raise ValueError("jax.ds(size) with a single argument needs a static size")
        return Slice(0, start, stride)
    return Slice(start, size, stride)


dslice = ds
