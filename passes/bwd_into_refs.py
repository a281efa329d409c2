"""A backward jit that accumulates cotangents into refs (`VJP.with_refs` under a trace).

JAX transposes a jit whose input's cotangent goes to a Ref (`with_refs(ref, ...)`) by
passing the ref into the transposed jit: its accumulator there is the ref, so the
transpose of the equation that read the input adds into it (`b[c:c+1] += j` for a
dynamic_slice, `b[...] += ct` for most others) and the jit returns only the other
cotangents. mjax's backward function (passes/autodiff.vjp_functions) returns every
cotangent; `accumulate_into_refs` rewrites a copy of it into JAX's form:

    (residuals, cts) -> (ct_0, ..., ct_k, ...)
  ==>
    (residuals, refs, cts) -> (the cts not taken by a ref)

Each cotangent a ref takes is split back into the contributions the transpose summed
(add_any), and each contribution is added where JAX's fancy transposes add it: a
`dynamic_update_slice` into zeros (dynamic_slice's transpose) or a `pad` with zeros of
a value (slice's) adds the value into the ref's slice; anything else into all of it."""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir

from mjax.dialect import Builder, aval_of, context, tensor_type
from mjax.dialect.attributes import decode
from mjax.dialect.ops import state as S
from mjax.dialect.types import RefAval
from mjax.passes.ir_util import is_zero_constant
from mjax.passes.rules.ad_util import ADD_ANY


def accumulate_into_refs(module, name: str, n_res: int, taken: list[int]) -> None:
    """Rewrites @name (residuals, cts) -> cotangents in place: result `taken[k]` is added
    into a new ref argument k (placed after the residuals) instead of returned."""
    with context(), ir.Location.unknown(context()):
        fn = ir.SymbolTable(module.operation)[name]
        block = fn.regions[0].blocks[0]
        ret = list(block.operations)[-1].operation
        results = list(ret.operands)
        loc = ir.Location.unknown(context())
        refs = [block.add_argument(tensor_type(RefAval(aval_of(results[k].type).shape,
                                                       aval_of(results[k].type).dtype)),
                                   loc) for k in taken]
        # (the cotangent arguments move behind the refs, as JAX orders the jit's inputs)
        n_args = len(block.arguments) - len(refs)
        for i in range(n_res, n_args):
            old = block.arguments[i]
            old.replace_all_uses_with(block.add_argument(old.type, loc))
        for i in reversed(range(n_res, n_args)):
            block.erase_argument(i)
        for ref, k in zip(refs, taken):
            _accumulate(ref, results[k], loc)
        kept = [v for k, v in enumerate(results) if k not in taken]
        ir.Operation.create(ret.name, operands=kept, ip=ir.InsertionPoint(ret))
        ret.erase()
        for k in taken:
            _erase_dead(results[k])
        fn.attributes["function_type"] = ir.TypeAttr.get(ir.FunctionType.get(
            [a.type for a in block.arguments], [v.type for v in kept]))
        for attr in ("arg_attrs", "res_attrs"):
            if attr in fn.attributes:
                del fn.attributes[attr]


def _accumulate(ref, value, loc) -> None:
    """ref[...] += value, split as JAX's transposes would have added it, each part where
    its transpose made it: a slice's in place of the dynamic_update_slice or pad, the
    rest right after the value is computed (JAX's accumulator adds it then)."""
    op = _sole_user_op(value)
    if op is not None and op.name == "jaxpr.add" and ADD_ANY in op.attributes:
        for v in op.operands:
            _accumulate(ref, v, loc)
        return
    if op is not None and op.name == "jaxpr.dynamic_update_slice" and \
            is_zero_constant(op.operands[0]):
        b = Builder(ir.InsertionPoint(op), loc)
        _addupdate(b, ref, op.operands[1], list(op.operands[2:]))
        return
    if op is not None and op.name == "jaxpr.pad" and is_zero_constant(op.operands[1]):
        lo, hi, interior = np.asarray(_i64s(op, "padding_config")).reshape(-1, 3).T
        if not interior.any() and (lo >= 0).all() and (hi >= 0).all():
            b = Builder(ir.InsertionPoint(op), loc)
            _addupdate(b, ref, op.operands[0], [b.constant(np.int32(s)) for s in lo])
            return
    owner = value.owner
    b = Builder(ir.InsertionPoint.at_block_begin(owner) if isinstance(owner, ir.Block)
                else ir.InsertionPoint.after(owner.operation), loc)
    _addupdate(b, ref, value, [b.constant(np.int32(0)) for _ in aval_of(value.type).shape])


def _addupdate(b, ref, value, starts) -> None:
    sizes = tuple(aval_of(value.type).shape)
    b.emit(S.RefAddUpdateOp, ref, value, *starts, sizes=sizes, squeezed=())


def _sole_user_op(value):
    """The op defining `value` when it is used only once (by the return): its other
    users would still need the sum."""
    if isinstance(value.owner, ir.Block) or len(list(value.uses)) != 1:
        return None
    return value.owner.operation


def _i64s(op, name):
    return decode(op.attributes[name])


# (the ops _accumulate looks through; others stay for the DCE of the passes)
_PURE = ("jaxpr.add", "jaxpr.dynamic_update_slice", "jaxpr.pad", "jaxpr.broadcast_in_dim",
         "jaxpr.constant")


def _erase_dead(value) -> None:
    """Erases the pure ops left without users after the cotangent went into a ref."""
    if isinstance(value.owner, ir.Block) or list(value.uses):
        return
    op = value.owner.operation
    if op.name not in _PURE or any(list(r.uses) for r in op.results):
        return
    operands = list(op.operands)
    op.erase()
    for v in operands:
        _erase_dead(v)
