"""`.val` and `.batch_dim` of a value in a vmap body, as JAX's VmapTracer has them.

mjax traces a vmap body once, on one abstract example; JAX's tracer there holds the
batched value (`val`) and where its batch axis is (`batch_dim`). Asked for `.val`, the ops
the value depends on are copied into a function of their own (the per-example prefix),
and `jaxpr.vmap` of it, on the vmap's own arguments with out_axes the batch dim, is
staged in the trace around the vmap. Called outside jit (also inside grad & co. called
outside jit) that trace knows concrete values (mjax.ad.concrete), so `.val` is an Array,
as in JAX; where it does not, `.val` is that trace's tracer of the batched type, as JAX's:
under jit one printing as JitTracer, in a nested vmap a VmapTracer of the outer body,
inside eager grad one depending on the differentiated input. Nothing uses the staged
vmap, so the passes drop it. Nothing runs unless `.val`/`.batch_dim` is asked for.

`batch_dim` follows JAX's batching rules for the common ops (elementwise ops keep a batch
dim their batched operands agree on, reductions, dot_general, slice and pad keep it in
place); elsewhere it is 0, where JAX's rules move the batch axis in front.
"""
from __future__ import annotations

from mjax.tracing.core import Tracer, _state
from mjax.dialect import Builder, aval_of, context
from mjax.dialect.attributes import Symbol
from mjax.dialect.core import JaxprOp
from mjax.dialect.ops import transforms as T
from mjax.dialect.ops.reductions import ArgMinMax, Reduction
from mjax.dialect.values import argument_number, is_argument, value_shape
from mjax.base.errors import UnexpectedTracerError
from mjax.tracing.source_info import user_location
from mjax.tracing.tracer import escaped_tracer_message, known_value
from mjax.tracing.value_prefix import prefix_function, prefix_ops

class BatchedBody:
    """What a vmap body's trace (`Trace.vmap_body`) knows of its batching: the trace
    around the vmap (`outer`), the array leaves the body's arguments stand for and their
    batch axes (None: unmapped), the axis size and name; memos of batch dims and `.val`s
    computed (per IR value of the body)."""

    __slots__ = ("outer", "leaves", "axes", "size", "axis_name", "dims", "vals")

    def __init__(self, outer, leaves, axes, size, axis_name):
        self.outer = outer
        self.leaves = leaves
        self.axes = axes
        self.size = size
        self.axis_name = axis_name
        self.dims: dict = {}
        self.vals: dict = {}

    def batch_dim(self, t: Tracer) -> int:
        """JAX's `batch_dim` of `t`, a tracer of this body's trace."""
        d = self._dim(t)
        if d is None:
            raise _unbatched(t, "batch_dim")
        return d

    def val(self, t: Tracer):
        """JAX's `val` of `t`: its batched value, batch axis at its batch_dim."""
        d = self._dim(t)
        if d is None:
            raise _unbatched(t, "val")
        hit = self.vals.get(t.value)
        if hit is None:
            hit = self.vals[t.value] = self._batched(t, d)
        # (Known concretely, as JAX's value is outside jit, unless it depends on a
        # differentiated input: JAX holds those in its JVP tracers.)
        if isinstance(hit, Tracer) and (value := known_value(hit, False)) is not None:
            return value
        return hit

    def _dim(self, t):
        if not t.trace.active:
            raise UnexpectedTracerError(escaped_tracer_message(t))
        return _batch_dim(self, t.value)

    def _batched(self, t, d):
        outer = self.outer
        if outer is None or not outer.active or _state.user is not None:
            raise NotImplementedError(
                "`.val` of a value in a vmap body needs the trace around the vmap to stage "
                "the batched computation in; it has ended (or is a user-defined trace)")
        v = t.value
        n = argument_number(v)
        if n is not None and n < len(self.leaves):
            return self.leaves[n]     # (a mapped argument: on its own axis)
        trace = t.trace
        ops, used = prefix_ops(v)
        sources = list(self.leaves) + list(trace.captured)
        name = prefix_function(trace, ops, used, v, "vmap_val")
        operands = [outer.to_tracer(sources[a.arg_number]) for a in used]
        in_axes = [self.axes[a.arg_number] if a.arg_number < len(self.axes) else None
                   for a in used]
        with context():
            b = Builder(outer.ip, user_location())
            r, = T.emit_transform(
                b, T.VmapOp, *[o.value for o in operands], callee=Symbol(name),
                in_axes=tuple(T.NOT_MAPPED if a is None else a for a in in_axes),
                out_axes=(d,), axis_size=self.size, axis_name=self.axis_name)
        aval = aval_of(r.type)
        if t.aval.weak_type:
            aval = aval.update(weak_type=True)
        return Tracer(outer, r, aval)


def _unbatched(t, what) -> AttributeError:
    return AttributeError(
        f"'{type(t).__name__}' object has no attribute '{what}': this value of the vmap "
        f"body is not batched (it does not vary along the mapped axis; JAX's is no "
        f"VmapTracer)")


# ---- batch dims ------------------------------------------------------------------------------
def _batch_dim(body, v):
    """Where JAX's batching rules put the batch axis of body value `v` (None: unbatched)."""
    dims = body.dims
    if v in dims:
        return dims[v]
    n = argument_number(v)
    if n is not None:
        d = dims[v] = body.axes[n] if n < len(body.axes) else None
        return d
    ops, _ = prefix_ops(v)
    for op in ops:
        results = list(op.operation.results)
        if results[0] in dims:
            continue
        ins = []
        for x in op.operation.operands:
            if x not in dims:
                dims[x] = _batch_dim(body, x)   # (a block argument)
            ins.append(dims[x])
        name = op.operation.name
        if name in _OVER_AXIS and body.axis_name in op.params["axes"]:
            # (a collective over this vmap's axis: JAX's result is unbatched, except
            # axis_index's, the batch of indices)
            d = 0 if name == "jaxpr.axis_index" else None
        else:
            d = _rule(op, ins) if any(i is not None for i in ins) else None
        for r in results:
            dims[r] = d
    return dims[v]


_OVER_AXIS = {"jaxpr.psum", "jaxpr.pmax", "jaxpr.pmin", "jaxpr.all_gather",
               "jaxpr.axis_index"}


# (ops that keep the batch axis of their one batched operand, the first, where JAX's
# rules do: slices and pads of it)
_KEEP_FIRST = {"jaxpr.slice", "jaxpr.pad"}


def _rule(op, ins) -> int:
    """The batch dim of `op`'s results, its operands batched at `ins` (None: not)."""
    operation = op.operation
    name = operation.name
    if isinstance(op, (Reduction, ArgMinMax)):
        d = ins[0]
        axes = [a if a < d else a + 1 for a in op.params["axes"]]
        return d - sum(a < d for a in axes)
    if name == "jaxpr.dot_general":
        return _dot_dim(op, ins)
    if name in _KEEP_FIRST and all(i is None for i in ins[1:]):
        return ins[0]
    result = value_shape(operation.results[0])
    if not isinstance(op, JaxprOp) or len(operation.regions) or name == "jaxpr.transpose" \
            or any(value_shape(r) != result for r in operation.results):
        return 0
    # Elementwise (and other shape-keeping ops: cumsum, sort, rev): JAX's
    # broadcast_batcher keeps a batch dim all batched operands agree on when the unbatched
    # ones are scalars.
    batched = {i for i in ins if i is not None}
    for x, i in zip(operation.operands, ins):
        shape = value_shape(x)
        if i is not None and shape != result:
            return 0
        if i is None and shape and not _is_scalar(x):
            return 0
    return batched.pop() if len(batched) == 1 else 0


def _dot_dim(op, ins) -> int:
    """JAX's dot_general batching: a batch axis of one side stays a free dimension of it
    (in place among them), one on both sides becomes a batch dimension in front."""
    (lc, rc), (lb, rb) = op.params["dimension_numbers"]
    dl, dr = ins
    if dl is not None and dr is not None:
        return 0
    lhs, rhs = (len(value_shape(x)) for x in op.operation.operands)
    if dl is not None:
        return len(lb) + _free_index(lhs, lc, lb, dl)
    return len(lb) + (lhs - len(lc) - len(lb)) + _free_index(rhs, rc, rb, dr)


def _free_index(ndim, contract, batch, d) -> int:
    """Position of batch axis d among the free dims of an operand of rank ndim batched
    at d."""
    taken = {a if a < d else a + 1 for a in (*contract, *batch)}
    free = [k for k in range(ndim + 1) if k not in taken]
    return free.index(d)


def _is_scalar(v) -> bool:
    """Whether JAX's operand is a scalar where mjax's is `v`: a splat constant (a Python
    scalar), or a scalar's implicit broadcast (mjax's binary ops take equal shapes)."""
    if is_argument(v):
        return False
    op = v.owner.operation
    return op.name == "jaxpr.constant" or (op.name == "jaxpr.broadcast_in_dim" and
                                           "mjax.implicit_broadcast" in op.attributes)


__all__ = ["BatchedBody"]
