"""Partition specs and mesh axis types as values (JAX: jax.sharding.PartitionSpec, P,
AxisType): per array dimension, the mesh axes it is split over. mjax.specs.sharding_impls
builds meshes and shardings on them."""
from __future__ import annotations

import enum


class AxisType(enum.Enum):
    """How a mesh axis is used. JAX: jax.sharding.AxisType."""
    Auto = enum.auto()
    Explicit = enum.auto()
    Manual = enum.auto()

    def __repr__(self):
        return self.name


class _Unconstrained:
    def __repr__(self):
        return "UNCONSTRAINED"


UNCONSTRAINED = _Unconstrained()


class PartitionSpec(tuple):
    """Per array dimension: the mesh axis (or tuple of axes) it is split over, or None.
    JAX: jax.sharding.PartitionSpec (P)."""

    UNCONSTRAINED = UNCONSTRAINED

    def __new__(cls, *partitions, unreduced=frozenset(), reduced=frozenset()):
        for p in partitions:
            ok = (p is None or p is UNCONSTRAINED or isinstance(p, str) or
                  (isinstance(p, tuple) and all(isinstance(a, str) for a in p)))
            if not ok:
                raise TypeError(f"PartitionSpec entries must be None, a mesh axis name or "
                                f"a tuple of axis names, got {p!r}")
        spec = super().__new__(cls, partitions)
        # (Mesh axes over which the array holds partial sums, or is a replicated value
        # whose gradient will be such: JAX's unreduced/reduced axes; mjax/lax/unreduced.py.)
        spec.unreduced = frozenset(unreduced)
        spec.reduced = frozenset(reduced)
        _check_unreduced(spec)
        return spec

    def __repr__(self):
        inner = ", ".join(repr(p) for p in self)
        for name in ("unreduced", "reduced"):
            axes = getattr(self, name)
            if axes:
                inner += f"{', ' if inner else ''}{name}={set(sorted(axes))!r}"
        return f"P({inner},)" if len(self) == 1 and inner == repr(self[0]) else f"P({inner})"

    def __reduce__(self):
        return (_make_spec, (tuple(self), self.unreduced, self.reduced))

    def axes_of(self, dim: int) -> tuple[str, ...]:
        if dim >= len(self) or self[dim] is None or self[dim] is UNCONSTRAINED:
            return ()
        p = self[dim]
        return (p,) if isinstance(p, str) else tuple(p)


P = PartitionSpec


def _check_unreduced(spec) -> None:
    u, r = spec.unreduced, spec.reduced
    if not u and not r:
        return
    for name, axes in (("unreduced", u), ("reduced", r)):
        if None in axes:
            raise ValueError(f"{name} cannot contain None: its elements name mesh axes")
    if u & r:
        raise ValueError(f"`unreduced` and `reduced` argument to PartitionSpec cannot "
                         f"overlap. Got unreduced: {u} and reduced: {r}")
    used = {a for d in range(len(spec)) for a in spec.axes_of(d)}
    for name, axes in (("unreduced", u), ("reduced", r)):
        if used & axes:
            raise ValueError(f"partitions cannot overlap with {name} axes passed to "
                             f"PartitionSpec. Got partitions: {tuple(spec)} and {name} "
                             f"axes: {axes}")


def _make_spec(partitions, unreduced, reduced):
    return PartitionSpec(*partitions, unreduced=unreduced, reduced=reduced)
