"""`jaxpr.remote_update`: a write into another device's buffer, what an interpreted Pallas
TPU kernel's remote DMA or remote semaphore signal becomes once discharged.

    %d2 = "jaxpr.remote_update"(%dst, %update, %active, %s0, %s1, %cx)
            {axes = ["x"], mesh_shape = array<i64: 4>, add = false}
        : (tensor<8x128xf32>, tensor<8x128xf32>, tensor<i1>, tensor<i32>, tensor<i32>,
           tensor<i32>) -> tensor<8x128xf32>

Each device of the shard_map mesh (`axes`, `mesh_shape`) runs the kernel; where `active`,
it writes `update` (`add`: adds it, as a semaphore signal does) into `dst`'s window at
the starts `s_i` of the device whose mesh coordinates are the `c_k` (one per axis of
`axes`). The result is this device's `dst` after every device's write. mjax runs the
shard_map body under one vmap per mesh axis: batching the op along a mesh axis makes
that axis `resolved` (every operand gains it as a leading dim, outermost first); once
every axis is resolved the batching rule emits a scatter across the stacked devices
(passes/rules/pallas_remote.py). An op left with an unresolved axis cannot be lowered.
"""
from __future__ import annotations

import numpy as np

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.ops.collectives import AxisNames
from mjax.dialect.types import RefAval


class RemoteUpdateOp(JaxprOp, name="remote_update"):
    """(dst, update, active, *starts, *coords) -> dst after every device's write."""

    num_operands = None
    attributes = {"axes": AxisNames(), "mesh_shape": A.Ints(),
                  "add": A.Bool(default=False),
                  "resolved": A.Ints(default=())}

    @classmethod
    def infer(cls, dst, update, active, *rest, axes, mesh_shape, add, resolved=()):
        name = cls.OPERATION_NAME
        if len(axes) != len(mesh_shape):
            raise TypeError(f"{name}: {len(axes)} axes but mesh_shape {tuple(mesh_shape)}")
        lead = tuple(mesh_shape[k] for k in resolved)
        if len(set(resolved)) != len(resolved) or any(
                not 0 <= k < len(axes) for k in resolved):
            raise TypeError(f"{name}: resolved {tuple(resolved)} must name distinct axes "
                            f"of {tuple(axes)} by position")
        for a in (dst, update, active, *rest):
            if isinstance(a, RefAval) or a.shape[:len(lead)] != lead:
                raise TypeError(f"{name} operands must be arrays with leading dims {lead} "
                                f"(its resolved axes), got {a.str_short()}")
        rank = len(dst.shape) - len(lead)
        if len(rest) != rank + len(axes):
            raise TypeError(f"{name} takes {rank} window starts and {len(axes)} device "
                            f"coordinates, got {len(rest)} operands after dst, update "
                            f"and active")
        if update.dtype != dst.dtype or len(update.shape) != len(dst.shape) or any(
                u > d for u, d in zip(update.shape, dst.shape)):
            raise TypeError(f"{name}: update {update.str_short()} must be a window of dst "
                            f"{dst.str_short()}")
        if active.shape != lead or active.dtype != np.bool_:
            raise TypeError(f"{name}: active must be bool{list(lead)}, got "
                            f"{active.str_short()}")
        for a in rest:
            if a.shape != lead or a.dtype != np.int32:
                raise TypeError(f"{name}: starts and coordinates must be i32{list(lead)}, "
                                f"got {a.str_short()}")
        return (dst,)


__all__ = ["RemoteUpdateOp"]
