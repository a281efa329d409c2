"""How every pass handles `jaxpr.custom_primitive`: through the rules its user
registered (jax.interpreters.ad / batching / mlir), traced into the module on demand.

The op's `rule` handle names the frontend's record of the bind (the Primitive object,
its Python parameters and operand types) in the registry of rule sources
(passes/custom_rules.py). A pass asks that source to trace one rule, `part`, into the
module as a private function, once per module (`custom_rules.materialize` caches it by
handle and part):

    jvp:<nonzero>               (primals..., nonzero tangents...) -> (outs..., tangents of
                                the inexact outs...)   `nonzero`: "1"/"0" per operand
    transpose:<linear>:<cts>    (non-linear operands..., nonzero cotangents...) ->
                                cotangents of the linear operands
    batch:<dims>:<size>         (operands batched at dims...) -> outs, at the dims the
                                function's `mjax.batch_out_dims` lists (-1: unbatched)
    lower                       (operands...) -> outs: the primitive's `lower_fun`

A rule the user did not register is JAX's NotImplementedError, raised by the source.
JVP inlines the rule when linearizing (so partial evaluation sees its ops), transposition
inlines the transpose rule where the cotangents are computed, batching calls the batched
function, and --jaxpr-expand-transforms replaces what is left of the ops by calls of
their lowering functions (`lower_user_primitives`), which the usual pipeline inlines and
lowers. A lowering rule written against MLIR's builders runs in --jaxpr-to-stablehlo.
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.builder import Builder
from mjax.dialect.ops.user import UserPrimitiveOp
from mjax.dialect.types import aval_of
from mjax.passes.custom_rules import materialize, source_of
from mjax.passes.ir_util import nested_ops, reachable_functions, replace_op
from mjax.passes.jaxpr_inline import inline_body
from mjax.passes.registry import op_error
from mjax.passes.rules.ad_util import Linear, has_tangent
from mjax.passes.rules.tables import (BATCH_NESTED, JVP_NESTED, LOWER, SHARD,
                                      TRANSPOSE_NESTED, TRITON)

OUT_DIMS = "mjax.batch_out_dims"


def _source(op):
    """The frontend's record of the bind behind `op` (an op_error if unknown)."""
    handle = op.opview.params["rule"]
    source = source_of(handle) if handle is not None else None
    if source is None:
        raise op_error(op, f"names no user-defined primitive of this process (rule handle "
                           f"{handle!r}): IR read from text or staged by another process "
                           f"has no Python rules")
    return handle, source


def _mask(xs) -> str:
    return "".join("0" if x is None else "1" for x in xs)


# ---- forward mode ----------------------------------------------------------------------
def _jvp(jvp, op, pairs):
    ps, ts = [p for p, _ in pairs], [t for _, t in pairs]
    if all(t is None for t in ts):
        return jvp.copy(op, pairs)
    handle, _ = _source(op)
    name = materialize(jvp.ex, handle, f"jvp:{_mask(ts)}", op)
    args = ps + [t for t in ts if t is not None]
    res = (jvp.inline(name, args, jvp.ip) if jvp.linearize
           else jvp.ex.call(jvp.builder(op), name, args))
    n = len(op.results)
    tangents = iter(res[n:])
    return [(p, next(tangents) if has_tangent(aval_of(p.type)) else None)
            for p in res[:n]]


# ---- transposition ---------------------------------------------------------------------
def _transpose(tr, op, cts, args, b):
    if all(c is None for c in cts):
        return [None] * len(args)
    handle, _ = _source(op)
    linear = [isinstance(a, Linear) for a in args]
    part = f"transpose:{''.join('1' if x else '0' for x in linear)}:{_mask(cts)}"
    operands = ([a for a in args if not isinstance(a, Linear)]
                + [c for c in cts if c is not None])
    # (tr.ex: the Expander of the transpose being built; the rule's function stays for
    # symbol-dce to drop once inlined)
    got = iter(inline_body(tr.ex.fns, materialize(tr.ex, handle, part, op), operands, b.ip))
    return [next(got) if x else None for x in linear]


# ---- batching --------------------------------------------------------------------------
def _batch(batcher, op, vals, dims, b):
    handle, _ = _source(op)
    dims_text = ",".join("n" if d is None else str(d) for d in dims)
    name = materialize(batcher.ex, handle, f"batch:{dims_text}:{batcher.axis_size}", op)
    fn = batcher.fns.get(name, op)
    out_dims = [None if d < 0 else d for d in ir.DenseI64ArrayAttr(fn.attributes[OUT_DIMS])]
    return batcher.ex.call(b, name, vals), out_dims


# ---- lowering --------------------------------------------------------------------------
def lower_user_primitives(ex) -> None:
    """Replaces each user primitive op whose lowering is a `lower_fun` with a call of
    that function traced into the module (and the ones in those functions and in the
    functions their expansion made, in turn)."""
    if not UserPrimitiveOp.staged:   # (none can name rules: --jaxpr-to-stablehlo says so)
        return
    # Only the functions the public ones reach: a transformed function's original body
    # (the unbatched @f a vmap expanded) is dead and goes in --jaxpr-inline's prune;
    # tracing its lowering would run the user's lowering rule for a program never
    # compiled (JAX lowers only the final jaxpr's primitives; equinox counts them).
    todo, seen = sorted(reachable_functions(ex.fns.table)), set()
    while todo:
        name = todo.pop()
        if name in seen or name not in ex.fns:
            continue
        seen.add(name)
        for op in nested_ops(ex.fns.get(name)):
            if op.name != UserPrimitiveOp.OPERATION_NAME:
                continue
            handle, source = _source(op)
            if source.lowers_directly():
                continue
            callee = materialize(ex, handle, "lower", op)
            b = Builder(ir.InsertionPoint(op), op.location)
            replace_op(op, ex.call(b, callee, list(op.operands)))
            # (the lowering, and the functions expanding it made that it calls: a vmap
            # inside it)
            todo.extend(n for n in reachable_functions(ex.fns.table, [callee])
                        if n not in seen)


def _lower(ctx, *operands, **params):
    """A lowering rule written with MLIR's builders (JAX: mlir.register_lowering)."""
    _, source = _source(ctx.op)
    return source.lower(ctx, operands)


JVP_NESTED[UserPrimitiveOp] = _jvp
TRANSPOSE_NESTED[UserPrimitiveOp] = _transpose
BATCH_NESTED[UserPrimitiveOp] = _batch
LOWER[UserPrimitiveOp] = _lower
SHARD.unsupported(UserPrimitiveOp, "a user-defined primitive has no sharding rule in "
                                   "mjax: its operands' shardings do not propagate through it")
TRITON.unsupported(UserPrimitiveOp, "a user-defined primitive cannot run inside a Pallas "
                                    "kernel on a GPU (use interpret=True)")

__all__ = ["OUT_DIMS", "lower_user_primitives"]
