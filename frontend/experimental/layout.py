"""JAX: jax.experimental.layout: array layouts (Layout) and layout + sharding pairs
(Format). mjax compiles every array in XLA's default layout: these classes exist so code
that builds or inspects them runs (flax maps over them); passing a Format with a
non-default layout to mjax is not supported."""
from __future__ import annotations

import dataclasses

__all__ = ["Format", "Layout", "with_layout_constraint"]


@dataclasses.dataclass(frozen=True)
class Layout:
    """A device layout: dimension order (major to minor) and tiling."""
    major_to_minor: tuple[int, ...]
    tiling: tuple[tuple[int, ...], ...] | None = None
    sub_byte_element_size_in_bits: int = 0


class Format:
    """A layout (or None: the default) with a sharding."""

    def __init__(self, layout=None, sharding=None):
        self.layout, self.sharding = layout, sharding

    def __eq__(self, other):
        return isinstance(other, Format) and (self.layout, self.sharding) == (
            other.layout, other.sharding)

    def __hash__(self):
        return hash((self.layout, self.sharding))

    def __repr__(self):
        return f"Format({self.layout}, {self.sharding})"


def with_layout_constraint(x, layouts):
    raise NotImplementedError("jax.experimental.layout.with_layout_constraint: mjax "
                              "keeps XLA's default layouts")
