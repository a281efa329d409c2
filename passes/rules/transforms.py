"""Rules for the transformation ops (dialect/ops/transforms.py): transpose, lowering.

JVP of these ops is not a table entry: the autodiff interpreter (passes/autodiff.py)
handles calls itself (it needs the module to materialize or inline callees).
"""
from __future__ import annotations

import numpy as np
from jaxlib.mlir import ir
from jaxlib.mlir.dialects import func as func_d

from mjax.dialect.ops import transforms as T
from mjax.dialect.ops.structural import OptimizationBarrierOp
from mjax.passes import custom_rules
from mjax.passes.rules.ad_util import instantiate, is_linear, transpose_rule
from mjax.passes.rules.tables import (BATCH, JVP, LOWER, TRANSPOSE, WEAK_COTANGENTS,
                                      WEAK_TYPES, lowering)
from mjax.passes.weak_cotangents import (STRONG_COTANGENTS, generic_incoming, is_inexact,
                                         symbol)
from mjax.passes.rules import ad_util as AD
from mjax.passes.rules import batch_util as B

_BY_INTERPRETER = "calls are differentiated by the autodiff interpreter (passes/autodiff.py)"
for _op in (T.CallOp, T.CheckpointOp, T.CustomJvpCallOp, T.CustomVjpCallOp):
    JVP.unsupported(_op, _BY_INTERPRETER)
    TRANSPOSE.unsupported(_op, "linearization inlines calls; never transposed")
for _op in (T.JvpOp, T.VjpOp, T.LinearTransposeOp):
    JVP.unsupported(_op, "expanded (inner-first) before its caller is differentiated")
    TRANSPOSE.unsupported(_op, "expanded before its caller is differentiated")
    LOWER.unsupported(_op, f"unexpanded transformation op '{_op.OPERATION_NAME}'; run "
                           f"--jaxpr-expand-transforms before --jaxpr-to-stablehlo")
JVP.unsupported(T.VmapOp, "expanded (inner-first) before its caller is differentiated")
TRANSPOSE.unsupported(T.VmapOp, "expanded before its caller is differentiated")
LOWER.unsupported(T.VmapOp, "unexpanded transformation op 'jaxpr.vmap'; run "
                            "--jaxpr-batch or --jaxpr-expand-transforms first")
_BY_BATCHER = "call-like ops are batched by the batching interpreter (passes/batching.py)"
for _op in (T.CallOp, T.CheckpointOp, T.CustomJvpCallOp, T.CustomVjpCallOp):
    BATCH.unsupported(_op, _BY_BATCHER)
for _op in (T.JvpOp, T.VjpOp, T.LinearTransposeOp, T.VmapOp):
    BATCH.unsupported(_op, "expanded (inner-first) before its caller is batched")
for _op in (T.CheckpointTangentOp, T.CustomVjpTangentOp):
    BATCH.unsupported(_op, "internal to --jaxpr-vjp; it never outlives linearization")
for _op in (T.CheckpointTangentOp, T.CustomVjpTangentOp):
    JVP.unsupported(_op, "internal to --jaxpr-vjp; it never outlives linearization")
    LOWER.unsupported(_op, f"'{_op.OPERATION_NAME}' is internal to --jaxpr-vjp and "
                           f"must not reach lowering")
# custom_vjp_bwd: its bwd rule is traced by --jaxpr-expand-transforms (or by the pass that
# needs its body: jvp, vmap), after which it is a call.
JVP.unsupported(T.CustomVjpBwdOp, _BY_INTERPRETER + " (its bwd rule traced first)")
TRANSPOSE.unsupported(T.CustomVjpBwdOp, "linearization turns it into a call of its "
                                        "traced bwd rule first")
BATCH.unsupported(T.CustomVjpBwdOp, _BY_BATCHER + " (its bwd rule traced first)")
LOWER.unsupported(T.CustomVjpBwdOp, "its bwd rule is not traced yet; run "
                                    "--jaxpr-expand-transforms first")


def _as_list(ct):
    return ct if isinstance(ct, list) else [ct]


@transpose_rule(T.CheckpointTangentOp)
def _checkpoint_tangent_transpose(b, ct, *args, callee, diff_args, diff_results,
                                  prevent_cse=True):
    # Rematerialization: the backward pass runs vjp @f from f's primal inputs (the only
    # residuals), so f's forward is recomputed here instead of saving its internals.
    # JAX: remat_lowering with prevent_cse: the recomputation's inputs go through an
    # optimization barrier, or CSE after inlining merges it with the original forward.
    cts = _as_list(ct)
    n_in = len(args) - len(diff_args)
    primals = list(args[:n_in])
    values = [k for k, v in enumerate(primals) if not isinstance(v.type, ir.MemRefType)]
    if prevent_cse and values:     # (a ref is not a value: it passes as it is)
        fenced = b.emit(OptimizationBarrierOp, *[primals[k] for k in values])
        for k, v in zip(values, fenced):
            primals[k] = v
    keep = [k for k, c in enumerate(cts) if c is not None]
    cts_in = T.emit_transform(b, T.VjpOp, *primals, *[cts[k] for k in keep], callee=callee,
                              diff_args=diff_args,
                              diff_results=tuple(diff_results[k] for k in keep))
    return [None] * n_in + list(cts_in)


@transpose_rule(T.CustomVjpTangentOp)
def _custom_vjp_tangent_transpose(b, ct, *args, bwd, rule, callee, num_residuals):
    # JAX: custom_lin_p's transpose calls the user's bwd on the residuals. A bwd known only
    # by its rule handle stays untraced (custom_vjp_bwd) until the result is compiled.
    signature = T.module_signatures(b.ip.block.owner)
    res = list(args[:num_residuals])
    if bwd is not None:
        b_ins, _ = signature(str(bwd))
        ct_avals = b_ins[num_residuals:]
    else:
        _, outs = signature(str(callee))
        ct_avals = [a for a in outs if T.differentiable(a)]
    given = _as_list(ct)
    cts = [instantiate(b, c, a) for c, a in zip(given, ct_avals)]
    if bwd is not None:
        cts_in = T.emit_transform(b, T.CallOp, *res, *cts, signature=signature, callee=bwd)
    else:
        zeros = tuple(k for k, c in enumerate(given) if c is None)
        cts_in = T.emit_transform(b, T.CustomVjpBwdOp, *res, *cts, signature=signature,
                                  callee=callee, rule=rule, num_residuals=num_residuals,
                                  zero_cotangents=zeros or None)
    return [None] * num_residuals + [c if is_linear(a) else None
                                     for a, c in zip(args[num_residuals:], cts_in)]


@lowering(T.CallOp, T.CheckpointOp, T.CustomJvpCallOp, T.CustomVjpCallOp)
def _call_lower(ctx, *args, callee, **params):
    # Leftover custom_jvp_call/custom_vjp_call/checkpoint outside differentiation: a call.
    types = [r.type for r in ctx.op.results]
    return func_d.CallOp(types, ir.FlatSymbolRefAttr.get(str(callee)), list(args)).results


# checkpoint_name: an identity carrying a name for remat policies (passes/rules/remat.py).
# (The cotangent passes unnamed, as in JAX: names mark forward values to save.)
AD.deflinear(T.CheckpointNameOp, lambda b, ct, x, *, name: [ct])
B.defvectorized(T.CheckpointNameOp)


@lowering(T.CheckpointNameOp)
def _checkpoint_name_lower(ctx, x, *, name):
    return x


# ---- weak types (passes/weak_cotangents.py) -------------------------------------------
# A call's results and cotangents are typed as its callee's; a batched function's
# results keep their types, and a tangent its primal's.
@WEAK_TYPES.register(T.CallOp, T.CheckpointOp, T.CustomVjpCallOp, T.CustomJvpCallOp,
                     T.VmapOp)
def _call_weak_types(types, op, weak):
    return types.callee_results(op, weak)


def _diff_results(op):
    return ir.DenseI64ArrayAttr(op.attributes["diff_results"]) \
        if "diff_results" in op.attributes else None


@WEAK_TYPES.register(T.JvpOp)
def _jvp_weak_types(types, op, weak):
    flags = types.callee_results(op, weak)
    diff = _diff_results(op)
    return flags + [flags[j] for j in (range(len(flags)) if diff is None else diff)]


@WEAK_COTANGENTS.register(T.CallOp, T.CheckpointOp, T.VmapOp)
def _call_weak_cotangents(types, op, weak, ct, outs, top):
    # (vmap transposes as the function does; only its outermost use sums eagerly)
    return types.backward(symbol(op, "callee"),
                          tuple(weak.get(v, False) for v in op.operands),
                          [ct.get(r) for r in op.results],
                          top and op.name == T.VmapOp.OPERATION_NAME)


@WEAK_COTANGENTS.register(T.CustomVjpCallOp)
def _custom_vjp_call_weak_cotangents(types, op, weak, ct, outs, top):
    # The bwd rule's own cotangents, once it was traced on cotangents of these weak
    # types; strong where its function says so; else the generic rule.
    if _strong_rule(op):
        return [False] * len(op.operands)
    return _bwd_weak(types, op, weak, ct) or None


@WEAK_COTANGENTS.register(T.CustomJvpCallOp)
def _custom_jvp_call_weak_cotangents(types, op, weak, ct, outs, top):
    # JAX transposes the jvp rule's tangent computation (inlined where the call is): the
    # cotangents are those of the rule's tangent arguments (each typed as its primal),
    # given those of its tangent results. A rule not traced yet: the generic rule.
    if "jvp" not in op.attributes:
        return None
    operands, results = list(op.operands), list(op.results)
    diff = [i for i, v in enumerate(operands) if is_inexact(v)]
    p_weak = tuple(weak.get(v, False) for v in operands)
    got = types.backward(symbol(op, "jvp"), p_weak + tuple(p_weak[i] for i in diff),
                         [None] * len(results) + [ct.get(r) for r in results
                                                  if is_inexact(r)], top)
    out = [None] * len(operands)
    for k, i in enumerate(diff):
        out[i] = got[len(operands) + k]
    return out


@WEAK_COTANGENTS.register(T.VjpOp)
def _vjp_weak_cotangents(types, op, weak, ct, outs, top):
    # (its trailing cotangent seeds are no factor)
    seeds = _diff_results(op)
    if seeds is None:
        seeds = types.callee_results(op, weak)
    operands = list(op.operands)
    return [generic_incoming(operands[:len(operands) - len(seeds)], outs, weak)] \
        * len(operands)


@WEAK_COTANGENTS.register(T.JvpOp)
def _jvp_weak_cotangents(types, op, weak, ct, outs, top):
    # (nor a jvp's tangents: the primals only)
    operands = list(op.operands)
    primals = operands[:len(types.body(symbol(op, "callee")).arguments)]
    return [generic_incoming(primals, outs, weak)] * len(operands)


def _custom_call_source(op):
    if "rule" not in op.attributes:
        return None
    return custom_rules.source_of(ir.StringAttr(op.attributes["rule"]).value)


def _strong_rule(op) -> bool:
    call = _custom_call_source(op)
    return bool(getattr(getattr(call, "custom", None), STRONG_COTANGENTS, False))


def _bwd_weak(types, op, weak: dict, ct: dict):
    """Per operand of the custom_vjp call `op`: the weak type of the cotangent its bwd
    returned (None: none), when bwd was traced seeing cotangents of the weak types the
    op's results have in `ct`; else None, after asking that it be traced so (the call's
    `ct_weak_hint`: frontend/ad/custom.py)."""
    call = _custom_call_source(op)
    in_avals = getattr(call, "in_avals", None)
    if in_avals is None or not hasattr(call, "bwd_weak"):
        return None
    # (a result without a cotangent: bwd sees zeros, weak as the result is)
    hint = tuple(bool(ct.get(r, weak.get(r, False))) for r in op.results if is_inexact(r))
    if call.bwd_weak is None or call.bwd_weak[0] != hint or call.bwd_weak[1] is None:
        if call.bwd_weak is None:
            call.ct_weak_hint = hint
            types.pending = True
        return None
    flags = iter(call.bwd_weak[1])
    got = [next(flags, None) if getattr(a, "dtype", None) is not None and
           np.issubdtype(a.dtype, np.inexact) else None for a in in_avals]
    return got + [None] * (len(op.operands) - len(got))
