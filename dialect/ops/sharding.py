"""Sharding annotations: jaxpr.sharding_constraint.

The op carries its whole mesh, so `mjax-opt` text is self-contained:

    %y = "jaxpr.sharding_constraint"(%x) {mesh_axes = ["x", "y"],
           mesh_shape = array<i64: 4, 2>, spec = ["x", ""]}
           : (tensor<8x6xf32>) -> tensor<8x6xf32>

`spec` has one string per dimension: the mesh axes that dimension is split over, joined
by commas (major to minor), "" for a dimension that is not split, or "?" for one left to
the compiler (JAX's P.UNCONSTRAINED). `device_ids` (the
mesh's devices in row-major order; default 0..n-1) lets jit run the program on the right
devices. `unreduced` (mesh axes over which each device holds a partial sum of the value,
JAX's P(..., unreduced=...)) and `reduced` (a replicated value whose cotangent will be
unreduced over them) are optional; they change no value, only the layout Shardy gives it
(frontend/lax/unreduced.py). `hlo_sharding` gives the XLA form (the tile assignment over logical partition
ids in mesh order), shared by lowering and by the propagation pass.
"""
from __future__ import annotations

import math

import numpy as np

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.ops.collectives import AxisNames


class DimSpec(A.AttrKind):
    """One string per dimension: "" (not split) or comma-joined mesh axis names."""

    expected = "a sequence of strings, one per dimension (\"\" or comma-joined axis names)"

    def accepts(self, v):
        return isinstance(v, (tuple, list)) and all(
            isinstance(s, str) and not isinstance(s, A.Symbol) for s in v)

    def normalize(self, v):
        return tuple(str(s) for s in v)


UNCONSTRAINED = "?"


def dim_axes(entry: str) -> tuple[str, ...]:
    """The mesh axes of one spec entry ("" and "?" -> ())."""
    return tuple(a.strip() for a in entry.split(",")) if entry not in ("", "?") else ()


def check_layout(op: str, shape, mesh_axes, mesh_shape, spec, device_ids=None) -> None:
    """Raises ValueError when `spec` cannot lay out an array of `shape` over the mesh."""
    if len(mesh_axes) != len(mesh_shape):
        raise ValueError(f"{op}: mesh_axes {tuple(mesh_axes)} and mesh_shape "
                         f"{tuple(mesh_shape)} differ in length")
    if device_ids is not None and len(device_ids) != math.prod(mesh_shape):
        raise ValueError(f"{op}: device_ids has {len(device_ids)} entries, expected "
                         f"{math.prod(mesh_shape)} (the mesh size)")
    if len(spec) != len(shape):
        raise ValueError(f"{op}: spec has {len(spec)} entries, expected one per dimension "
                         f"of the operand of shape {tuple(shape)}")
    sizes = dict(zip(mesh_axes, mesh_shape))
    seen = []
    for d, entry in enumerate(spec):
        axes = dim_axes(entry)
        for a in axes:
            if a not in sizes:
                raise ValueError(f"{op}: spec entry {d} names axis '{a}', which is not a "
                                 f"mesh axis {tuple(mesh_axes)}")
        seen += axes
        tiles = math.prod(sizes[a] for a in axes)
        if shape[d] % tiles:
            raise ValueError(f"{op}: dimension {d} of shape {tuple(shape)} (size "
                             f"{shape[d]}) is not divisible by the {tiles} tiles of "
                             f"mesh axes {axes}")
    if len(set(seen)) != len(seen):
        raise ValueError(f"{op}: spec {tuple(spec)} uses a mesh axis more than once")


def tile_array(mesh_axes, mesh_shape, spec) -> np.ndarray:
    """Logical partition ids arranged as [tiles of each dim..., replicas]."""
    per_dim = [dim_axes(e) for e in spec]
    used = [a for axes in per_dim for a in axes]
    unused = [a for a in mesh_axes if a not in used]
    sizes = dict(zip(mesh_axes, mesh_shape))
    perm = [list(mesh_axes).index(a) for a in used + unused]
    ids = np.arange(math.prod(mesh_shape)).reshape(tuple(mesh_shape)).transpose(perm)
    tiles = tuple(math.prod(sizes[a] for a in axes) for axes in per_dim)
    return ids.reshape(tiles + (math.prod(sizes[a] for a in unused),))


def hlo_sharding(mesh_axes, mesh_shape, spec):
    """The XLA HloSharding of `spec` over the mesh (devices as logical ids in order)."""
    from jaxlib import xla_client as xc
    arr = tile_array(mesh_axes, mesh_shape, spec)
    if arr.shape[-1] == arr.size:
        return xc.HloSharding.replicate()
    op = xc.OpSharding()
    op.type = xc.OpSharding.Type.OTHER
    replicas = arr.shape[-1]
    op.tile_assignment_dimensions = list(arr.shape) if replicas > 1 else list(arr.shape[:-1])
    op.tile_assignment_devices = [int(i) for i in arr.reshape(-1)]
    op.replicate_on_last_tile_dim = replicas > 1
    return xc.HloSharding.from_proto(op)


# A discardable attribute on a sharding constraint that a device_put inside a program made
# (errors name it as JAX's do: "device_put inside jit").
DEVICE_PUT_MARK = "mjax.device_put"


class ShardingConstraintOp(JaxprOp, name="sharding_constraint"):
    """The identity, asking that its result be laid out as `spec` over the mesh.
    JAX: lax.sharding_constraint_p (jax.lax.with_sharding_constraint)."""
    attributes = {"mesh_axes": AxisNames(), "mesh_shape": A.Ints(), "spec": DimSpec(),
                  "device_ids": A.Ints(default=None), "unreduced": AxisNames(default=None),
                  "reduced": AxisNames(default=None)}

    @classmethod
    def infer(cls, x, *, mesh_axes, mesh_shape, spec, device_ids, unreduced=None,
              reduced=None):
        check_layout("sharding_constraint", x.shape, mesh_axes, mesh_shape, spec, device_ids)
        for what, axes in (("unreduced", unreduced), ("reduced", reduced)):
            for a in axes or ():
                if a not in mesh_axes:
                    raise ValueError(f"sharding_constraint: {what} names axis '{a}', which "
                                     f"is not a mesh axis {tuple(mesh_axes)}")
        return (x,)


SHARDING_OPS = (ShardingConstraintOp,)

__all__ = ["DEVICE_PUT_MARK", "ShardingConstraintOp", "SHARDING_OPS", "DimSpec", "UNCONSTRAINED", "dim_axes",
           "check_layout",
           "tile_array", "hlo_sharding"]
