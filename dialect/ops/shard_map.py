"""`jaxpr.shard_map @body`: a function applied to per-device blocks over a mesh.

    %y = "jaxpr.shard_map"(%x, %w) {callee = @body, mesh_axes = ["x", "y"],
           mesh_shape = array<i64: 4, 2>, axis_types = ["Auto", "Auto"],
           in_specs = [["x"], []], out_specs = [["x"]], manual_axes = ["x", "y"],
           check_vma = true} : (tensor<8x6xf32>, tensor<6xf32>) -> tensor<8x6xf32>

@body takes and returns one device's blocks. Operand i is laid out by `in_specs[i]`
(one string per entry of JAX's PartitionSpec: "" for None, comma-joined mesh axes; it
may be shorter than the rank): each dimension of its block is the operand's divided by
the sizes of the mesh axes its entry names; result j is assembled from the blocks by
`out_specs[j]`. The last `num_captured` operands are values @body closes over, passed
whole (replicated). `manual_axes` are the mesh axes the body is manual over (the
others are left to the compiler), `check_vma` JAX's varying-axes check; `device_ids`
as jaxpr.sharding_constraint's, `out_paths` each result's key path (for errors),
`abstract_mesh` whether the user gave the mesh abstractly (the context's: JAX's
equation then names an AbstractMesh). `in_reduced[i]` / `out_unreduced[j]` (absent: none)
are the mesh axes JAX's spec calls reduced / unreduced: operand i is the same on every
member of those axes (laid out replicated over them), result j is the sum over the
members of those axes of what each returns (a value laid out unreduced over them).
`stacked_outputs` (the ops differentiation makes, whose bodies may read residuals stacked
along axes their results do not vary along): the expansion takes each result as without
check_vma (member 0's block for the axes its out_spec leaves unnamed).
--jaxpr-expand-transforms rewrites it into sharding constraints, reshapes and one
`jaxpr.vmap` per manual axis (passes/rules/shard_map.py). JAX: shard_map_p.
"""
from __future__ import annotations

import math

from mjax.dialect import attributes as A
from mjax.dialect.core import InferError
from mjax.dialect.ops.collectives import AxisNames
from mjax.dialect.ops.transforms import TransformOp, _expect
from mjax.dialect.types import ShapedArray


class SpecList(A.AttrKind):
    """A tuple of specs, each a tuple of strings ("" or comma-joined mesh axis names)."""

    expected = "a sequence of specs, each a sequence of strings"

    def accepts(self, v):
        return isinstance(v, (tuple, list)) and all(
            isinstance(s, (tuple, list)) and all(isinstance(e, str) for e in s) for s in v)

    def normalize(self, v):
        return tuple(tuple(str(e) for e in s) for s in v)


def entry_axes(entry: str) -> tuple[str, ...]:
    return tuple(a for a in entry.split(",") if a)


def spec_axes(spec) -> set[str]:
    """The mesh axes a spec names."""
    return {a for e in spec for a in entry_axes(e)}


def block_layout(shape, dim_axes, sizes, order) -> tuple:
    """How a global value of `shape` becomes per-device blocks stacked along leading axes,
    one per mesh axis it is split over (in mesh `order`): (the shape to reshape it to,
    the permutation putting those axes first, the mesh axes in use). `dim_axes(d)`: the
    mesh axes dimension d is split over; `sizes`: each mesh axis's size."""
    split, where, blocks = [], {}, []
    for d, size in enumerate(shape):
        names = dim_axes(d)
        for a in names:
            where[a] = len(split)
            split.append(sizes[a])
        blocks.append(len(split))
        split.append(size // math.prod(sizes[a] for a in names))
    present = [a for a in order if a in where]
    return split, tuple(where[a] for a in present) + tuple(blocks), present


def split_sizes(spec, sizes: dict, rank: int) -> list[int]:
    """Per dimension of a rank-`rank` value, how many blocks `spec` splits it into."""
    return [math.prod(sizes[a] for a in entry_axes(spec[d])) if d < len(spec) else 1
            for d in range(rank)]


class ShardMapOp(TransformOp, name="shard_map"):
    """@callee run on per-device blocks (see the module docstring)."""
    attributes = {"callee": A.Sym(), "mesh_axes": AxisNames(), "mesh_shape": A.Ints(),
                  "device_ids": A.Ints(default=None), "axis_types": AxisNames(default=None),
                  "in_specs": SpecList(), "out_specs": SpecList(),
                  "manual_axes": AxisNames(), "check_vma": A.Bool(default=True),
                  "num_captured": A.Int(default=0), "out_paths": A.AnyAttr(default=None),
                  "abstract_mesh": A.Bool(default=False),
                  "in_reduced": SpecList(default=None),
                  "out_unreduced": SpecList(default=None),
                  "stacked_outputs": A.Bool(default=False)}

    @classmethod
    def infer_with_callees(cls, avals, params, signature):
        name = cls.OPERATION_NAME
        ins, outs = signature(params["callee"])
        sizes = dict(zip(params["mesh_axes"], params["mesh_shape"]))
        n_specs = len(avals) - params["num_captured"]
        if len(params["in_specs"]) != n_specs or len(params["out_specs"]) != len(outs):
            raise InferError(f"'{name}' op has {len(params['in_specs'])} in_specs for "
                             f"{n_specs} operands and {len(params['out_specs'])} out_specs "
                             f"for {len(outs)} results")
        for spec in (*params["in_specs"], *params["out_specs"]):
            for a in spec_axes(spec):
                if a not in params["manual_axes"]:
                    raise InferError(f"'{name}' op spec {spec} names '{a}', which is not a "
                                     f"manual axis {tuple(params['manual_axes'])}")
        blocks = []
        for k, a in enumerate(avals):
            if k >= n_specs:
                blocks.append(a)
                continue
            spec = params["in_specs"][k]
            if len(spec) > len(a.shape):
                raise InferError(f"'{name}' op in_specs[{k}] {spec} is longer than the "
                                 f"rank of operand {k} {a.str_short()}")
            split = split_sizes(spec, sizes, len(a.shape))
            if any(d % s for d, s in zip(a.shape, split)):
                raise InferError(f"'{name}' op operand {k} {a.str_short()} is not divisible "
                                 f"into blocks by in_specs[{k}] {spec}")
            blocks.append(ShapedArray(tuple(d // s for d, s in zip(a.shape, split)), a.dtype))
        _expect(name, "operand blocks", blocks, ins)
        results = []
        for j, (o, spec) in enumerate(zip(outs, params["out_specs"])):
            if len(spec) > len(o.shape):
                raise InferError(f"'{name}' op out_specs[{j}] {spec} is longer than the "
                                 f"rank of result {j} of @{params['callee']}")
            split = split_sizes(spec, sizes, len(o.shape))
            results.append(ShapedArray(tuple(d * s for d, s in zip(o.shape, split)), o.dtype))
        return tuple(results)


SHARD_MAP_OPS = (ShardMapOp,)

__all__ = ["ShardMapOp", "SHARD_MAP_OPS", "SpecList", "block_layout", "entry_axes",
           "spec_axes", "split_sizes"]
