"""Registrars and helpers for batching rules (JAX: interpreters/batching.py).

A batching rule, as stored in `BATCH`, has one signature:

    rule(b: BatchBuilder, args: list[Value], dims: list[int | None], **params)
        -> (outs: list[Value], out_dims: list[int | None])

`dims[i]` is where the batch axis sits in `args[i]` (whose type already includes it), or
None (`NOT_MAPPED`) when that operand is the same for every batch element. The driver
(passes/batching.py) calls a rule only when some operand is batched, so a rule never sees
all dims None. A rule keeps unbatched operands unbatched as long as it can, may put the
output batch axis anywhere (the driver moves it where it must be), and may answer None
for an output that does not depend on the batch.

Most ops register through a family registrar:

    defvectorized(SinOp, CosOp)     # one operand: the batch axis passes straight through
    defbroadcasting(AddOp, MulOp)   # same-shape operands: align the batch axes
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect.builder import Builder
from mjax.dialect.types import aval_of
from mjax.passes.rules.tables import BATCH

NOT_MAPPED = None


class BatchBuilder(Builder):
    """A Builder that also knows the batch axis being added (size and name)."""

    write_mask = None     # (see Batcher.write_mask)

    def __init__(self, ip, loc, axis_size: int, axis_name: str | None = None):
        super().__init__(ip, loc)
        self.axis_size = axis_size
        self.axis_name = axis_name


def batch_rule(*ops):
    """Decorator: registers `rule` as the batching rule of each op in `ops`."""
    return BATCH.register(*ops)


# ---- named axes ----------------------------------------------------------------------
# Ops that read a vmap's named axis (the collectives): they go through their batching
# rule whenever they name the vmap's axis, even with no batched operand, since
# psum(1, "i") is the axis size and axis_index has no operand at all.
NAMED_AXIS_OPS: set = set()


def uses_named_axes(*ops):
    """Registers `ops` as reading the named axes in their `axes` attribute."""
    NAMED_AXIS_OPS.update(ops)


def names_axis(view, axis_name: str | None) -> bool:
    """Whether op `view` reads the named axis `axis_name` (and so must be batched)."""
    return (axis_name is not None and type(view) in NAMED_AXIS_OPS
            and axis_name in view.params["axes"])


# ---- moving batch axes ---------------------------------------------------------------
def rank(x: ir.Value) -> int:
    return len(aval_of(x.type).shape)


def moveaxis(b: Builder, x: ir.Value, src: int, dst: int) -> ir.Value:
    """`x` with axis `src` moved to position `dst` (no op when they are equal)."""
    if src == dst:
        return x
    perm = list(range(rank(x)))
    perm.insert(dst, perm.pop(src))
    return b.transpose(x, permutation=tuple(perm))


def bdim_at(b: BatchBuilder, x: ir.Value, d: int | None, dst: int) -> ir.Value:
    """`x` with its batch axis at `dst`; an unbatched `x` is broadcast along a new axis."""
    if d is not NOT_MAPPED:
        return moveaxis(b, x, d, dst)
    aval = aval_of(x.type)
    shape = list(aval.shape)
    shape.insert(dst, b.axis_size)
    dims = tuple(i if i < dst else i + 1 for i in range(len(aval.shape)))
    return b.broadcast_in_dim(x, shape=tuple(shape), broadcast_dimensions=dims)


def bdim_to_front(b: BatchBuilder, x: ir.Value, d: int | None) -> ir.Value:
    return bdim_at(b, x, d, 0)


def batched_shape(x: ir.Value, d: int | None) -> tuple[int, ...]:
    """The per-example shape of `x` (its shape without the batch axis)."""
    shape = aval_of(x.type).shape
    return shape if d is NOT_MAPPED else shape[:d] + shape[d + 1:]


def canonical_axis(axis: int, d: int | None) -> int:
    """Position in the batched value of per-example axis `axis` (batch axis at `d`)."""
    return axis if d is NOT_MAPPED or axis < d else axis + 1


def first_batched(dims) -> int:
    return next(i for i, d in enumerate(dims) if d is not NOT_MAPPED)


# ---- family registrars ---------------------------------------------------------------
def defvectorized(*ops):
    """Ops of one operand acting on each element (or each row, keeping axes): the batch
    axis passes straight through with the params unchanged."""
    for op in ops:
        def rule(b, args, dims, _op=op, **params):
            outs = b.emit(_op, *args, **params)
            return outs, [dims[0]] * len(outs)
        BATCH[op] = rule


def align_operands(b: BatchBuilder, args, dims):
    """Same-shape operands with their batch axes at one common position; unbatched ones
    are broadcast (a rank-0 splat constant is rebuilt at the batched shape instead).
    Returns (operands, common dim)."""
    i = first_batched(dims)
    d = dims[i]
    out = []
    for x, xd in zip(args, dims):
        if xd is NOT_MAPPED:
            out.append(_broadcast_unbatched(b, x, d))
        else:
            out.append(moveaxis(b, x, xd, d))
    return out, d


# (constant's value attribute, batch dim, axis size) -> the batched splat, or False
_BATCHED_SPLATS: dict = {}


def _broadcast_unbatched(b: BatchBuilder, x: ir.Value, d: int) -> ir.Value:
    owner = x.owner
    if not isinstance(owner, ir.Block) and owner.name == "jaxpr.constant":
        # (The batched splat per (value attribute, dim, size), made once: attributes are
        # uniqued, and rules meet the same few constants again and again.)
        key = (owner.operation.attributes["value"], d, b.axis_size)
        splat = _BATCHED_SPLATS.get(key)
        if splat is None:
            splat = False
            value = owner.opview.params["value"]
            if _is_splat(value):
                shape = list(value.shape)
                shape.insert(d, b.axis_size)
                # A stride-0 view is encoded as a splat attribute at any size.
                splat = np.broadcast_to(value.reshape(-1)[0], tuple(shape))
            if len(_BATCHED_SPLATS) >= 4096:
                _BATCHED_SPLATS.clear()
            _BATCHED_SPLATS[key] = splat
        if splat is not False:
            return b.emit("constant", value=splat)[0]
    return bdim_at(b, x, NOT_MAPPED, d)


def _is_splat(value: np.ndarray) -> bool:
    return value.size > 0 and (np.asarray(value).strides == (0,) * value.ndim
                               or bool(np.all(value == value.reshape(-1)[0])))


def _is_splat_constant(x: ir.Value) -> bool:
    owner = x.owner
    return (not isinstance(owner, ir.Block) and owner.name == "jaxpr.constant"
            and _is_splat(owner.opview.params["value"]))


# An implicit broadcast (lax's, which the frontend stages as a marked broadcast_in_dim)
# batched keeps its mark and records its operand's batch dim, so elementwise rules see the
# operands lax saw.
_IMPLICIT = "mjax.implicit_broadcast"
_IMPLICIT_DIM = "mjax.implicit_batch_dim"


def implicit_broadcast_batched(b: BatchBuilder, x: ir.Value, d, shape):
    """The batched implicit broadcast of `x` (batched at `d`) to per-example `shape`: a
    scalar per example along the batch axis, a same-rank operand along its own dims."""
    shape = tuple(shape)
    if rank(x) == 1 and len(shape) != 0:     # (a scalar per example: batched at 0)
        out_d, dims, out_shape = 0, (0,), (b.axis_size,) + shape
    else:
        out_d, dims = d, tuple(range(rank(x)))
        out_shape = shape[:d] + (b.axis_size,) + shape[d:]
    out = b.broadcast_in_dim(x, shape=out_shape, broadcast_dimensions=dims)
    attrs = out.owner.operation.attributes
    attrs[_IMPLICIT] = ir.UnitAttr.get()
    attrs[_IMPLICIT_DIM] = ir.IntegerAttr.get(ir.IntegerType.get_signless(64), d)
    return out, out_d


def _lax_operand(b: BatchBuilder, x: ir.Value, d):
    """(value, dim, is_scalar) of an operand as lax takes it: an implicit broadcast's
    source (a scalar, or the same rank with size-1 dims), a splat constant as a scalar."""
    while True:
        owner = x.owner
        if isinstance(owner, ir.Block) or owner.name != "jaxpr.broadcast_in_dim":
            break
        owner = owner.operation
        attrs = owner.attributes
        if _IMPLICIT not in attrs:
            break
        sd = ir.IntegerAttr(attrs[_IMPLICIT_DIM]).value if _IMPLICIT_DIM in attrs else None
        if (sd is None) != (d is NOT_MAPPED):
            break
        x, d = owner.operands[0], sd
    scalar = d is NOT_MAPPED and (rank(x) == 0 or _is_splat_constant(x))
    return x, d, scalar


def _implicit_to(b: BatchBuilder, x: ir.Value, shape) -> ir.Value:
    """`x` broadcast to `shape` as lax's lowering broadcasts its operands (a scalar
    along no dims, the same rank along its own dims), marked as implicit."""
    shape = tuple(shape)
    if aval_of(x.type).shape == shape:
        return x
    if _is_splat_constant(x):
        value = x.owner.opview.params["value"]
        return b.emit("constant", value=np.broadcast_to(value.reshape(-1)[0], shape))[0]
    out = b.broadcast_in_dim(x, shape=shape, broadcast_dimensions=tuple(range(rank(x))))
    out.owner.operation.attributes[_IMPLICIT] = ir.UnitAttr.get()
    return out


def broadcast_batcher(b: BatchBuilder, op, args, dims, *, op_broadcasts=False, **params):
    """JAX's broadcast_batcher over the operands lax saw: when every non-scalar one is
    batched at one dim with one shape, the op runs there; otherwise every batch axis moves
    to the front (an unbatched operand gains a leading axis of size 1, a batched scalar
    trailing ones), lax broadcasts the size-1 dims, and the output is batched at 0.
    `op_broadcasts`: the op broadcasts scalars and size-1 dims itself (threefry2x32), so
    its operands are taken as they are and given to it so."""
    if op_broadcasts:
        views = [(x, d, d is NOT_MAPPED and rank(x) == 0) for x, d in zip(args, dims)]
    else:
        views = [_lax_operand(b, x, d) for x, d in zip(args, dims)]
    x0, dim, _ = next(v for v in views if v[1] is not NOT_MAPPED)
    shape = aval_of(x0.type).shape
    # (a splat constant stands for a scalar literal only where no operand needs lax's
    # broadcasting; else it is an array, as jnp.ones_like's is in JAX)
    example = batched_shape(args[0], dims[0])
    if (op_broadcasts or batched_shape(x0, dim) == example) and all(
            s or (aval_of(x.type).shape == shape and d == dim) for x, d, s in views):
        xs = [_implicit_to(b, x, shape) if s and not op_broadcasts else x
              for x, d, s in views]
        outs = b.emit(op, *xs, **params)
        return outs, [dim] * len(outs)
    views = [(x, d, s and rank(x) == 0) for x, d, s in views]
    xs = []
    for x, d, s in views:
        if s:
            xs.append(x)
        elif d is NOT_MAPPED:
            xshape = aval_of(x.type).shape
            xs.append(b.broadcast_in_dim(x, shape=(1,) + tuple(xshape),
                                         broadcast_dimensions=tuple(range(1, len(xshape) + 1))))
        else:
            xs.append(moveaxis(b, x, d, 0))
    nd = max(rank(x) for x, (_, _, s) in zip(xs, views) if not s)
    for i, (x, (_, d, s)) in enumerate(zip(xs, views)):
        if not s and d is not NOT_MAPPED and rank(x) < nd:
            xshape = aval_of(x.type).shape
            xs[i] = b.broadcast_in_dim(x, shape=tuple(xshape) + (1,) * (nd - rank(x)),
                                       broadcast_dimensions=tuple(range(rank(x))))
    if not op_broadcasts:
        out_shape = (b.axis_size,) + tuple(example)
        xs = [_implicit_to(b, x, out_shape) for x in xs]
    outs = b.emit(op, *xs, **params)
    return outs, [0] * len(outs)


def defbroadcasting(*ops):
    """Ops over operands of one shape (elementwise binary/n-ary): JAX's broadcast_batcher
    over the operands as lax takes them."""
    for op in ops:
        def rule(b, args, dims, _op=op, **params):
            return broadcast_batcher(b, _op, args, dims, **params)
        BATCH[op] = rule


__all__ = ["NOT_MAPPED", "BatchBuilder", "batch_rule", "uses_named_axes", "names_axis",
           "NAMED_AXIS_OPS", "moveaxis", "bdim_at",
           "bdim_to_front", "batched_shape", "canonical_axis", "first_batched",
           "align_operands", "defvectorized", "defbroadcasting", "rank"]
