"""`jaxpr.linear_transpose @f`: the transpose of a function linear in some arguments.

JAX transposes a linear function equation by equation with each primitive's transpose
rule, never through a JVP. So does this expansion: @f's calls are inlined into a flat
copy (a custom_jvp function's primal and a checkpoint's body too: their rules are for
differentiation, not transposition), which `transpose_function` transposes:

    %ct_x = jaxpr.linear_transpose @f(%c, %ct_y) {num_linear = 1}
  ==>
    @f_flat(x, c) = f(x, c), calls inlined
    @f_flat_transpose(c, ct_y) -> ct_x          (reverse_mode.transpose_function)
    %ct_x = jaxpr.call @f_flat_transpose(%c, %ct_y)

A user primitive is transposed by its registered transpose rule, as in JAX. A call left
on linear values in a function being transposed (a user primitive's JVP rule, traced
during differentiation, can apply a custom_jvp function, a jit or a checkpoint to
tangents) is transposed through a flat copy of its callee the same way. A
`custom_vjp_call` reading linear values is transposed by its VJP taken at zeros of
those values: the frontend lets only `linear_call`'s through (its bwd rule is the user's
transpose function; JAX refuses other custom_vjp functions, and so does mjax.linear_transpose).
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.builder import Builder
from mjax.dialect.ops import transforms as T
from mjax.passes.custom_rules import bwd_part, materialize
from mjax.passes.forward_mode import prepare
from mjax.dialect.types import aval_of
from mjax.passes.ir_util import (callee_of, clone_into, entry_block, replace_op,
                                 set_results, symbol_name)
from mjax.passes.jaxpr_inline import Inline
from mjax.passes.reverse_mode import transpose_function, vjp_functions
from mjax.passes.rules.ad_util import Linear, zeros
from mjax.passes.rules.tables import TRANSPOSE_NESTED

# Ops that call their callee on their own operands, inlined in the flat copy.
_INLINED = ("func.call", T.CallOp.OPERATION_NAME, T.CustomJvpCallOp.OPERATION_NAME,
            T.CheckpointOp.OPERATION_NAME)


class _Flatten(Inline):
    def __init__(self, ip, ex):
        super().__init__(ip, ex.fns)
        self.ex = ex

    def rule_for(self, op):
        if op.name in _INLINED and callee_of(op) in self.fns:
            return self._inline_call
        if op.name == T.CustomVjpBwdOp.OPERATION_NAME:
            return self._inline_bwd_rule
        return self._copy

    def _inline_bwd_rule(self, op, values):
        """A custom_vjp bwd rule (a transpose of a linear_call holds one): traced now."""
        p = op.opview.params
        rule = materialize(self.ex, p["rule"], bwd_part(p["zero_cotangents"]), op)
        return self.run(entry_block(self.fns.get(rule, op)), values)


def linear_transpose_function(ex, name: str, num_linear: int, where=None) -> str:
    """Materializes (or reuses) the transpose of @name in its first `num_linear`
    arguments: (other arguments..., cotangents of results...) -> their cotangents."""
    existing = ex.derived.get(name, T.LinearTransposeOp, num_linear=num_linear)
    if existing:
        return existing
    bwd = _flat_transpose(ex, name, tuple(range(num_linear)), where)
    ex.derived.add(bwd, name, T.LinearTransposeOp, num_linear=num_linear)
    return bwd


def _flat_transpose(ex, name: str, linear_args: tuple, where) -> str:
    """The transpose of a flat copy of @name (calls inlined) in `linear_args`."""
    fn, ins, outs, _, _ = prepare(ex, "vjp", name, (), (), where)
    flat, block = ex.fns.create(ex.fns.fresh_name(f"{name}_flat"), ins, None, fn)
    try:
        set_results(flat, _Flatten(ir.InsertionPoint(block), ex).run(
            entry_block(fn), list(block.arguments)))
        bwd = transpose_function(ex, symbol_name(flat), linear_args, f"{name}_transpose",
                                 where)
    finally:
        ex.fns.erase(symbol_name(flat))
    ex.derived.forget(bwd)       # (its entry keyed by the flat copy, now erased)
    return bwd


def _call_transpose(tr, op, cts, args, b):
    """A call on linear values left in a linear function (a user primitive's JVP rule,
    traced while the function was differentiated, can apply a custom_jvp function or a
    jit to tangents): its callee transposed, as JAX's partial evaluation stages a
    custom_jvp function's primal (its rule is for differentiation, not transposition)."""
    if all(c is None for c in cts):
        return [None] * len(args)
    linear = tuple(i for i, a in enumerate(args) if isinstance(a, Linear))
    bwd = _flat_transpose(tr.ex, callee_of(op), linear, op)
    others = [a for a in args if not isinstance(a, Linear)]
    seeds = [c if c is not None else zeros(b, aval_of(r.type))
             for c, r in zip(cts, op.results)]
    got = iter(tr.ex.call(b, bwd, others + seeds))
    return [next(got) if i in linear else None for i in range(len(args))]


def expand_linear_transpose_op(ex, op) -> None:
    p = op.opview.params
    bwd = linear_transpose_function(ex, str(p["callee"]), p["num_linear"], where=op)
    replace_op(op, ex.call(Builder(ir.InsertionPoint(op), op.location), bwd,
                           list(op.operands)))


def _custom_vjp_transpose(tr, op, cts, args, b):
    """A custom_vjp call linear in the `Linear` operands: the backward part of its VJP,
    its forward part run at zeros of those operands (residuals cannot depend on them)."""
    if all(c is None for c in cts):
        return [None] * len(args)
    ex = tr.ex
    ins = [aval_of(v.type) for v in op.operands]
    callee = str(op.opview.params["callee"])
    wrap, block = ex.fns.create(ex.fns.fresh_name(f"{callee}_linear"), ins, None,
                                ex.fns.get(callee, op))
    set_results(wrap, list(clone_into(op, ir.InsertionPoint(block),
                                      dict(zip(op.operands, block.arguments))).results))
    da = tuple(i for i, a in enumerate(args) if isinstance(a, Linear))
    dr = tuple(j for j, c in enumerate(cts) if c is not None)
    info = vjp_functions(ex, symbol_name(wrap), da, dr, where=op)
    primals = [zeros(b, ins[i]) if isinstance(a, Linear) else a for i, a in enumerate(args)]
    res = ex.call(b, info.fwd, primals)[info.num_outputs:]
    got = iter(ex.call(b, info.bwd, res + [cts[j] for j in dr]))
    return [next(got) if i in da else None for i in range(len(args))]


TRANSPOSE_NESTED[T.CustomVjpCallOp] = _custom_vjp_transpose
for _op in (T.CallOp, T.CustomJvpCallOp, T.CheckpointOp):
    TRANSPOSE_NESTED[_op] = _call_transpose
