"""`ManualAxisType`: the mesh axes a value in a shard_map body varies along, and those
it holds unreduced or reduced partial sums over (`jax.typeof(x).manual_axis_type`, and
`jax.ShapeDtypeStruct(..., manual_axis_type=)` for a pallas_call's outputs under
check_vma). JAX: jax.sharding.ManualAxisType."""
from __future__ import annotations


class ManualAxisType(tuple):
    """(varying, unreduced, reduced): three frozensets of mesh axis names."""

    def __new__(cls, *, varying=frozenset(), unreduced=frozenset(), reduced=frozenset()):
        for name, other in (("unreduced", unreduced), ("reduced", reduced)):
            if frozenset(varying) & frozenset(other):   # (JAX's text: the sets as given)
                raise ValueError(f"varying and {name} cannot have common mesh axes. Got "
                                 f"varying={varying} and {name}={other}")
        return super().__new__(cls, tuple(map(frozenset, (varying, unreduced, reduced))))

    varying = property(lambda self: self[0])
    unreduced = property(lambda self: self[1])
    reduced = property(lambda self: self[2])

    def update(self, **kwargs) -> "ManualAxisType":
        fields = dict(varying=self.varying, unreduced=self.unreduced, reduced=self.reduced)
        fields.update(kwargs)
        return ManualAxisType(**fields)

    def __repr__(self):
        return (f"ManualAxisType(varying={self.varying}, unreduced={self.unreduced}, "
                f"reduced={self.reduced})")


__all__ = ["ManualAxisType"]
