"""`jaxpr.manual_computation`: a body run once per device of a mesh on each device's own
blocks, where the compiler must not split or repeat what the body does (a compiled
Pallas kernel under shard_map: its custom call is the per-device program).

    %y = "jaxpr.manual_computation"(%x, %w)
           {mesh_axes = ["x", "y"], mesh_shape = array<i64: 4, 2>,
            out_axes = ["x", "y"], in_axes = [["x", "y"], []]} ({
      ^bb0(%xb: tensor<8x128xf32>, %wb: tensor<128xf32>):
        ...
        "jaxpr.yield"(%yb) : (tensor<8x128xf32>) -> ()
    }) : (tensor<4x2x8x128xf32>, tensor<128xf32>) -> tensor<4x2x8x128xf32>

The body runs once on every device of the mesh (it is manual over all of `mesh_axes`).
Operands and results are stacked per device: operand i has one leading dim per axis of
`in_axes[i]` (a subsequence of `out_axes`, sized as the mesh says) and is the same on
every device along the other axes; every result has one leading dim per axis of
`out_axes` (the same on every device along the others). The body (isolated from above,
ending in jaxpr.yield) takes and gives one device's blocks, the stacked dims dropped.
Lowered to
`sdy.manual_computation` (passes/rules/manual.py). mjax makes it when it batches a
compiled pallas_call along the mesh axes of the shard_map it was traced in (JAX lowers
shard_map's body into one such region).
"""
from __future__ import annotations

from mjax.dialect import attributes as A
from mjax.dialect.ops.collectives import AxisNames
from mjax.dialect.ops.control_flow import RegionOp, _expect
from mjax.dialect.types import ShapedArray, RefAval


class StackedAxes(A.AttrKind):
    """Per operand, the mesh axes it is stacked along (a tuple of names, maybe empty)."""

    expected = "a sequence of sequences of axis names (strings)"

    def accepts(self, v):
        return isinstance(v, (tuple, list)) and all(
            isinstance(e, (tuple, list)) and all(
                isinstance(n, str) and not isinstance(n, A.Symbol) for n in e) for e in v)

    def normalize(self, v):
        return tuple(tuple(str(n) for n in e) for e in v)


def stacked_shape(axes, sizes: dict) -> tuple[int, ...]:
    return tuple(sizes[a] for a in axes)


class ManualComputationOp(RegionOp, name="manual_computation"):
    """(stacked operands) -> (stacked results): the body once per device of the manual
    axes, on that device's blocks."""

    num_regions = 1
    attributes = {"mesh_axes": AxisNames(), "mesh_shape": A.Ints(),
                  "out_axes": AxisNames(), "in_axes": StackedAxes()}

    @classmethod
    def infer_regions(cls, avals, params, regions):
        name = cls.OPERATION_NAME
        axes, manual = tuple(params["mesh_axes"]), tuple(params["out_axes"])
        if len(axes) != len(params["mesh_shape"]) or len(set(axes)) != len(axes):
            raise TypeError(f"{name}: mesh_axes {axes} must be distinct names, one per "
                            f"entry of mesh_shape {tuple(params['mesh_shape'])}")
        sizes = dict(zip(axes, params["mesh_shape"]))
        if len(set(manual)) != len(manual) or not set(manual) <= set(axes):
            raise TypeError(f"{name}: out_axes {manual} must be distinct axes of the "
                            f"mesh {axes}")
        in_axes = params["in_axes"]
        if len(in_axes) != len(avals):
            raise TypeError(f"{name}: in_axes names the stacked axes of {len(in_axes)} "
                            f"operands, but there are {len(avals)}")
        local = []
        for i, (a, st) in enumerate(zip(avals, in_axes)):
            if [m for m in manual if m in st] != list(st):
                raise TypeError(f"{name}: in_axes[{i}] = {st} must be a subsequence of "
                                f"out_axes {manual}")
            lead = stacked_shape(st, sizes)
            if isinstance(a, RefAval) or a.shape[:len(lead)] != lead:
                raise TypeError(f"{name}: operand {i} is {a.str_short()}; it must be an "
                                f"array with leading dims {lead} (stacked along {st})")
            local.append(ShapedArray(a.shape[len(lead):], a.dtype))
        ((body_in, body_out),) = regions
        _expect(name, "body region arguments", body_in, local)
        lead = stacked_shape(manual, sizes)
        return tuple(ShapedArray(lead + y.shape, y.dtype) for y in body_out)


__all__ = ["ManualComputationOp", "StackedAxes", "stacked_shape"]
