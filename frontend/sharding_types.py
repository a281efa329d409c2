"""Shardings in types: what `mjax.typeof` says about how an array is laid out.

On a mesh whose axes are Explicit, JAX makes an array's sharding part of its type:
`typeof(x)` is `float32[8@X,4@Y]` and `typeof(x).sharding` a NamedSharding over the
mesh's AbstractMesh. Auto axes are the compiler's business and never appear in types.
mjax keeps avals sharding-free while tracing (its propagation pass decides layouts after
tracing); `typeof` of a concrete array reads the type off the array's sharding.
"""
from __future__ import annotations

from mjax.dialect.types import ShapedArray
from mjax.sharding import (AbstractMesh, AxisType, NamedSharding, PartitionSpec,
                           get_abstract_mesh)


class ShardedAval(ShapedArray):
    """A ShapedArray with JAX's `sharding` (a NamedSharding over an AbstractMesh)."""

    __slots__ = ("sharding",)

    def __init__(self, shape, dtype, weak_type: bool = False, sharding=None):
        super().__init__(shape, dtype, weak_type)
        if sharding is None:
            sharding = NamedSharding(AbstractMesh((), ()), PartitionSpec(*[None] * len(shape)))
        self.sharding = sharding

    def update(self, shape=None, dtype=None, weak_type=None, sharding=None):
        return ShardedAval(self.shape if shape is None else shape,
                           self.dtype if dtype is None else dtype,
                           self.weak_type if weak_type is None else weak_type,
                           self.sharding if sharding is None else sharding)

    def _dims(self) -> str:
        spec = self.sharding.spec
        out = []
        for d, size in enumerate(self.shape):
            axes = spec.axes_of(d)
            if not axes:
                out.append(str(size))
            elif len(axes) == 1:
                out.append(f"{size}@{axes[0]}")
            else:
                out.append(f"{size}@({','.join(axes)})")
        return ",".join(out)

    def str_short(self) -> str:
        from mjax.dialect.types import short_dtype_name
        return f"{short_dtype_name(self.dtype)}[{self._dims()}]"

    def __str__(self):
        name = getattr(self.dtype, "name", str(self.dtype))
        return f"{name}[{self._dims()}]"

    def __eq__(self, other):
        return super().__eq__(other) and _layout_key(self) == _layout_key(other)

    __hash__ = ShapedArray.__hash__


def _layout_key(aval):
    """The mesh axes of each dimension (None: all whole), so that an unsharded typed aval
    equals a plain ShapedArray."""
    sharding = getattr(aval, "sharding", None)
    if sharding is None:
        return None
    dims = tuple(sharding.spec.axes_of(d) for d in range(len(aval.shape)))
    return None if not any(dims) else (sharding.mesh, dims)


def type_spec(sharding, ndim: int) -> PartitionSpec:
    """The part of `sharding`'s spec a type records: its Explicit mesh axes, one entry
    per dimension."""
    mesh = getattr(sharding, "mesh", None)
    if mesh is None:
        return PartitionSpec(*[None] * ndim)
    explicit = {n for n, t in zip(mesh.axis_names, mesh.axis_types) if t == AxisType.Explicit}
    entries = []
    for d in range(ndim):
        axes = tuple(a for a in sharding.spec.axes_of(d) if a in explicit)
        entries.append(None if not axes else axes[0] if len(axes) == 1 else axes)
    return PartitionSpec(*entries)


def typed_aval(aval: ShapedArray, sharding) -> ShardedAval:
    """`aval` with the type-level sharding of an array laid out as `sharding` (None: on
    one device)."""
    mesh = getattr(sharding, "mesh", None)
    if mesh is None:
        abstract = AbstractMesh((), ())
    else:
        abstract = mesh.abstract_mesh
    spec = type_spec(sharding, aval.ndim)
    return ShardedAval(aval.shape, aval.dtype, aval.weak_type, NamedSharding(abstract, spec))


__all__ = ["ShardedAval", "typed_aval", "type_spec", "get_abstract_mesh"]
