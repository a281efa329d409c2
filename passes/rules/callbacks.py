"""Rules for `jaxpr.callback` (dialect/ops/callbacks.py): lowering, JVP, batching.

Lowering: an XLA host callback, whose `index` is the op's `callback_id` until the
frontend, compiling, renumbers it into the list of callables handed to XLA.

    %y = "jaxpr.callback"(%x) {callback_id = 3, effect = "pure", ...}
  ==>
    %y = stablehlo.custom_call @xla_ffi_python_cpu_callback(%x)
           {api_version = 4 : i32, backend_config = {index = 3 : ui64},
            mhlo.sharding = "{maximal device=0}"}

Effectful callbacks add `has_side_effect = true`. Ordered ones take and give a
`!stablehlo.token` first (the host callable gets it first and hands it back); the rule
chains the tokens of one block, and `thread_tokens` (run by --jaxpr-to-stablehlo once
everything is lowered) makes one chain per function, through loops and branches, which
XLA keeps in order. JAX: callback.emit_python_callback.

JVP: JAX's errors for pure and IO callbacks; debug callbacks see the primals. Batching:
per `vmap_method` for pure callbacks; IO and debug callbacks run once per element, in
order (a jaxpr.scan); ordered IO callbacks cannot be batched, as in JAX.
"""
from __future__ import annotations

import sys

from jaxlib.mlir import ir
from jaxlib.mlir.dialects import stablehlo as hlo

from mjax.dialect.builder import Builder
from mjax.dialect.ops import control_flow as C
from mjax.dialect.ops.callbacks import ORDERED_EFFECTS, CallbackOp
from mjax.dialect.types import ShapedArray, aval_of, tensor_type
from mjax.passes.ir_util import callee_of, has_effects, nested_ops, used_values
from mjax.passes.registry import PassError
from mjax.passes.rules.ad_util import zeros
from mjax.passes.rules.batch_util import NOT_MAPPED, batch_rule, moveaxis
from mjax.passes.rules.tables import JVP, JVP_NESTED, TRANSPOSE, lowering

CALL_TARGET = "xla_ffi_python_cpu_callback"


# ---- lowering ---------------------------------------------------------------------------
def _is_token_callback(op: ir.Operation) -> bool:
    return (op.name == "stablehlo.custom_call" and len(op.results) > 0
            and hlo.TokenType.isinstance(op.results[0].type)
            and ir.StringAttr(op.attributes["call_target_name"]).value == CALL_TARGET)


def _token_before(op: ir.Operation) -> ir.Value:
    """The token the last ordered callback before `op` in its block gave, else a new one
    (so the ordered callbacks of a block run in program order)."""
    last = None
    for other in op.block.operations:
        other = other.operation
        if other == op:
            break
        if _is_token_callback(other):
            last = other
    if last is not None:
        return last.results[0]
    return hlo.create_token()


@lowering(CallbackOp)
def _callback_lower(ctx, *args, callback_id, effect, result_shapes, result_dtypes,
                    vmap_method, manual_axes=None):
    result_types = [tensor_type(a) for a in ctx.avals_out]
    operands = list(args)
    ordered = effect in ORDERED_EFFECTS
    if ordered:
        _LOWERED_ORDERED[0] = True
        operands = [_token_before(ctx.op)] + operands
        result_types = [hlo.TokenType.get()] + result_types
    results = host_call(operands, result_types, callback_id, effect != "pure")
    return results[1:] if ordered else results


def host_call(operands, result_types, callback_id: int, has_side_effect: bool) -> list:
    """The custom call of registered host callback `callback_id` (mjax.arrays.host_callbacks)
    at the insertion point; its results."""
    u64 = ir.IntegerType.get_unsigned(64)
    op = ir.Operation.create(
        "stablehlo.custom_call", results=list(result_types), operands=list(operands),
        attributes={
            "call_target_name": ir.StringAttr.get(CALL_TARGET),
            "api_version": ir.IntegerAttr.get(ir.IntegerType.get_signless(32), 4),
            "has_side_effect": ir.BoolAttr.get(has_side_effect),
            "backend_config": ir.DictAttr.get({"index": ir.IntegerAttr.get(u64, callback_id)}),
            # Run once, on the first device, when XLA partitions the program (SPMD needs a
            # sharding on side-effecting ops). JAX: debugging's MAXIMAL sharding.
            "mhlo.sharding": ir.StringAttr.get("{maximal device=0}"),
        })
    return list(op.results)


# ---- one token chain through a whole function ---------------------------------------------
def thread_tokens(module) -> None:
    """Re-threads the tokens of ordered callbacks so each function has one chain in
    program order, also through `stablehlo.while`/`if`/`case` bodies (the per-block chains
    the lowering rule builds would let XLA run a loop's callbacks before those of an
    earlier branch): loops carry the token, branches take it and give it back.
    JAX: mlir.lower_jaxpr_to_fun's token threading through control flow."""
    if not _LOWERED_ORDERED[0]:
        return      # nothing ordered was lowered since the last call: skip the walk
    _LOWERED_ORDERED[0] = False
    for fn in module.body.operations:
        if fn.operation.name == "func.func":
            _thread_block(fn.operation.regions[0].blocks[0], None)


# Set when an ordered callback is lowered, so that `thread_tokens` costs nothing for the
# (usual) programs without one.
_LOWERED_ORDERED = [False]


def _calls_back_in_order(op: ir.Operation) -> bool:
    found = []

    def visit(inner):
        if _is_token_callback(inner):
            found.append(inner)
            return ir.WalkResult.INTERRUPT
        return ir.WalkResult.ADVANCE
    op.walk(visit)
    return bool(found)


def _thread_block(block: ir.Block, token):
    """Threads `token` (None: made where first needed) through `block`; returns the last
    token."""
    for op in list(block.operations):
        op = op.operation
        if _is_token_callback(op):
            old = op.operands[0]
            if token is not None and old != token:
                op.operands[0] = token
                _erase_if_unused_token(old)
            token = op.results[0]
        elif op.name in ("stablehlo.while", "stablehlo.if", "stablehlo.case") and \
                _calls_back_in_order(op):
            if token is None:
                with op.location, ir.InsertionPoint(op):
                    token = hlo.create_token()
            token = _thread_region_op(op, token)
    return token


def _erase_if_unused_token(value: ir.Value) -> None:
    owner = value.owner
    if (not isinstance(owner, ir.Block) and owner.name == "stablehlo.create_token"
            and not list(value.uses)):
        owner.erase()


def _thread_region_op(op: ir.Operation, token) -> ir.Value:
    """Rebuilds a while/if/case to take `token` through its bodies and give it back as
    its last result."""
    loop = op.name == "stablehlo.while"
    tok_type = hlo.TokenType.get()
    with op.location:
        new = ir.Operation.create(
            op.name, results=[r.type for r in op.results] + [tok_type],
            operands=list(op.operands) + ([token] if loop else []),
            attributes={a.name: a.attr for a in op.attributes},
            regions=len(op.regions), ip=ir.InsertionPoint(op))
    for old_region, region in zip(op.regions, new.regions):
        block = old_region.blocks[0]
        block.append_to(region)
    if loop:
        cond, body = (r.blocks[0] for r in new.regions)
        cond.add_argument(tok_type, op.location)
        inner = body.add_argument(tok_type, op.location)
        _rereturn(body, _thread_block(body, inner))
    else:
        for region in new.regions:
            block = region.blocks[0]
            _rereturn(block, _thread_block(block, token))
    for old, res in zip(op.results, new.results):
        old.replace_all_uses_with(res)
    op.erase()
    return new.results[len(new.results) - 1]


def _rereturn(block: ir.Block, token) -> None:
    """Appends `token` to the operands of `block`'s terminator (stablehlo.return)."""
    ret = list(block.operations)[-1].operation
    with ret.location, ir.InsertionPoint(ret):
        hlo.return_(list(ret.operands) + [token])
    ret.erase()


# ---- errors -----------------------------------------------------------------------------
class _CallbackValueError(PassError, ValueError):
    """JAX's ValueError (same text for Python callers), located at the op for mjax-opt."""

    def __str__(self):
        return self.message


class _CallbackNotImplementedError(PassError, NotImplementedError):
    """JAX's NotImplementedError, located at the op for mjax-opt."""

    def __str__(self):
        return self.message


# ---- JVP --------------------------------------------------------------------------------
def _callback_jvp(b, primals, tangents, *, effect, **params):
    """Pure and IO callbacks with tangent inputs raise JAX's errors (custom_jvp/custom_vjp
    never get here); debug callbacks run on the primals."""
    if effect == "pure":
        # JAX: callback.pure_callback_jvp_rule (custom_jvp/custom_vjp never get here).
        raise _CallbackValueError(b.loc, "Pure callbacks do not support JVP. Please use "
                                  "`jax.custom_jvp` to use callbacks while taking "
                                  "gradients.")
    if effect in ("unordered", "ordered"):
        raise _CallbackValueError(b.loc, "IO callbacks do not support JVP.")
    # Debug callbacks see the primals; tangents are ignored. JAX: debug_callback_jvp_rule.
    b.emit(CallbackOp, *primals, effect=effect, **params)
    return [], []


JVP[CallbackOp] = _callback_jvp


def _callback_jvp_nested(jvp, op, pairs):
    """Linearizing (the forward half of reverse mode) drops debug callbacks: reverse mode
    runs the primal function as well (`jaxpr.call` beside `jaxpr.vjp`), which prints
    once, as JAX's grad does. The eager vjp/linearize split keeps them (its forward
    function is that primal run: `keep_debug_callbacks` on the expander). Everything else
    goes through `_callback_jvp`."""
    # An IO callback without results is dropped alike (it prints once, as in JAX).
    if _drops_printing(jvp) and _prints(op):
        return []
    return jvp._op_rule(op, pairs)


def drop_rerun_callbacks(jvp, fn, name: str) -> None:
    """In the forward part `fn` of a function that prints, drops the IO callbacks with
    results that the forward part's own results do not need: the primal call beside
    the vjp stays whenever the function prints (it is never swapped for the forward
    part: reverse_mode._primal_twin) and runs them once, as JAX's grad does (equinox's
    progress meter under grad). Their results, read by dead ops only, become zeros
    (the ops with regions that read them are left to --jaxpr-dce: a region's ops may
    still be named by the linearization's tables)."""
    if not (_drops_printing(jvp) and prints_anywhere(jvp.ex, name)):
        return
    block = fn.regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    live = set(ops[-1].operands)            # (the return)
    dead = []
    for op in reversed(ops[:-1]):
        rerun = op.name == CallbackOp.OPERATION_NAME and not _prints(op)
        if any(r in live for r in op.results) or (not rerun and has_effects(op)):
            live.update(used_values(op))
        elif rerun:
            dead.append(op)
    for op in dead:
        b = Builder(ir.InsertionPoint(op), op.location)
        for r in op.results:
            r.replace_all_uses_with(zeros(b, aval_of(r.type)))
        op.erase()


def _prints(op) -> bool:
    """A debug callback, or an IO callback without results: run only for its effect."""
    return op.opview.params["effect"].startswith("debug") or len(op.results) == 0


def prints_anywhere(ex, name: str) -> bool:
    """Whether @name, or a function it calls, has a callback linearization drops."""
    seen = ex.state.setdefault("prints_anywhere", {})
    if name not in seen:
        seen[name] = False     # (recursion guard)
        found = False
        for inner in nested_ops(ex.fns.get(name)):
            op_name = inner.name     # (read once: this runs for every op of the function)
            if op_name == _CALLBACK and _prints(inner):
                found = True
            elif op_name == "func.call" or op_name.startswith("jaxpr.") and \
                    "callee" in inner.attributes:
                callee = callee_of(inner)
                found = callee in ex.fns and prints_anywhere(ex, callee)
            if found:
                break
        seen[name] = found
    return seen[name]


_CALLBACK = CallbackOp.OPERATION_NAME


def _drops_printing(jvp) -> bool:
    return (jvp.linearize and not getattr(jvp.ex, "keep_debug_callbacks", False)
            and not _in_eager_split())


def drop_printing_when_linearizing(jvp, op) -> None:
    """The same for the callbacks inside `op`, an op with regions that linearization
    copies whole (no tangent reaches it: a loop over integers that prints)."""
    if not _drops_printing(jvp):
        return
    for inner in nested_ops(op):
        if inner.name == CallbackOp.OPERATION_NAME and _prints(inner):
            inner.erase()


def _in_eager_split() -> bool:
    """Whether passes.autodiff's eager entry points (vjp_functions/linearize_functions,
    whose forward function is the primal run) are on the stack."""
    frame = sys._getframe(1)
    while frame is not None:
        code = frame.f_code
        if (code.co_name in ("vjp_functions", "linearize_functions")
                and frame.f_globals.get("__name__") == "mjax.passes.autodiff"):
            return True
        frame = frame.f_back
    return False


JVP_NESTED[CallbackOp] = _callback_jvp_nested
TRANSPOSE.unsupported(CallbackOp, "host callbacks are not linear (pure callbacks: "
                                  "use custom_vjp; debug callbacks only ever see primal values)")


# ---- batching -----------------------------------------------------------------------------
_VMAP_METHOD_ERROR = (
    "vmap is only supported for the pure_callback primitive when vmap_method is one of "
    "'sequential', 'sequential_unrolled', 'expand_dims', 'broadcast_all', or "
    "'legacy_vectorized'. Got vmap_method=None.")


@batch_rule(CallbackOp)
def _callback_batch(b, args, dims, *, effect, vmap_method, **params):
    if effect == "ordered":
        raise _CallbackValueError(b.loc, "Cannot `vmap` ordered IO callback.")
    if effect == "pure" and vmap_method is None:
        if b.axis_name not in (params.get("manual_axes") or ()):
            raise _CallbackNotImplementedError(b.loc, _VMAP_METHOD_ERROR)
        # (the vmap of a shard_map body over a manual mesh axis: once per device)
        outs = _sequential(b, args, dims, dict(params, effect=effect, vmap_method=None))
        return outs, [0] * len(outs)
    params = dict(params, effect=effect, vmap_method=vmap_method)
    if effect != "pure" or vmap_method.startswith("sequential"):
        # io_callback loops with lax.map and JAX unrolls debug callbacks: both call the
        # callable once per batch element, in order.
        outs = _sequential(b, args, dims, params, unroll=vmap_method == "sequential_unrolled")
        return outs, [0] * len(outs)
    n = b.axis_size
    new_args = []
    for x, d in zip(args, dims):
        if d is not NOT_MAPPED:
            new_args.append(moveaxis(b, x, d, 0))
        elif vmap_method == "legacy_vectorized":
            new_args.append(x)
        else:   # expand_dims adds a unit axis, broadcast_all the full batch axis
            aval = aval_of(x.type)
            size = n if vmap_method == "broadcast_all" else 1
            new_args.append(b.broadcast_in_dim(
                x, shape=(size,) + aval.shape,
                broadcast_dimensions=tuple(range(1, aval.ndim + 1))))
    shapes = tuple((n,) + tuple(s) for s in params["result_shapes"] or ()) or None
    outs = b.emit(CallbackOp, *new_args, **dict(params, result_shapes=shapes))
    return outs, [0] * len(outs)


def _sequential(b, args, dims, params, unroll=False) -> list[ir.Value]:
    """A jaxpr.scan over the batch calling the unbatched callback once per element
    (unbatched operands are the scan's consts). JAX: lax.map in ffi_batching_rule."""
    n = b.axis_size
    consts = [x for x, d in zip(args, dims) if d is NOT_MAPPED]
    xs = [moveaxis(b, x, d, 0) for x, d in zip(args, dims) if d is not NOT_MAPPED]
    x_avals = [aval_of(x.type) for x in xs]
    slice_avals = [ShapedArray(a.shape[1:], a.dtype) for a in x_avals]
    out_avals = [ShapedArray(tuple(s), dt) for s, dt in
                 zip(params["result_shapes"] or (), params["result_dtypes"] or ())]
    scan_params = C.ScanOp.check_params(dict(
        length=n, reverse=False, unroll=n if unroll and n else 1,
        num_consts=len(consts), num_carry=0))
    ys_avals = [ShapedArray((n,) + a.shape, a.dtype) for a in out_avals]
    op = C.ScanOp.create(consts + xs, ys_avals, scan_params, loc=b.loc, ip=b.ip,
                         num_regions=1)
    block = op.regions[0].blocks.append(
        *[c.type for c in consts], *[tensor_type(a) for a in slice_avals])
    inner = Builder(ir.InsertionPoint(block), b.loc)
    c_args = iter(block.arguments[:len(consts)])
    x_args = iter(block.arguments[len(consts):])
    merged = [next(c_args) if d is NOT_MAPPED else next(x_args) for d in dims]
    outs = inner.emit(CallbackOp, *merged, **params)
    C.YieldOp.create(outs, [], {}, loc=b.loc, ip=ir.InsertionPoint(block))
    return list(op.results)
