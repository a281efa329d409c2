"""`jax.ds(start, size)` / `pl.ds`: a slice of a ref whose start may be traced and whose
size is static (the index form of dynamic_slice). Refs (mjax.Ref and Pallas kernels'
refs) take it in their index. JAX: state/indexing.py's Slice and ds."""
from __future__ import annotations

import numpy as np


class Slice:
    """`size` elements from `start` (static or traced), every `stride`-th.
    JAX: pl.Slice / pl.ds."""

    __slots__ = ("start", "size", "stride")

    def __init__(self, start, size, stride=1):
        if not isinstance(size, (int, np.integer)):
            raise ValueError(f"jax.ds size must be a static integer, got {size!r}")
        if size < 0:
            raise ValueError(f"jax.ds size must be nonnegative, got {size}")
        if not isinstance(stride, (int, np.integer)) or stride < 1:
            raise ValueError(f"jax.ds stride must be a positive integer, got {stride!r}")
        self.start, self.size, self.stride = start, int(size), int(stride)

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
