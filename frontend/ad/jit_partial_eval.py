"""vjp under a trace of a function that is a sequence of jit calls: split as JAX's partial
evaluation of a jit splits it. The forward part is a jit (of the same name) computing
the primal outputs and the residuals; the pullback, called later in the same trace,
stages a jit (same name) of the backward part over those residuals:

    _, f_vjp = vjp(take, x, 3); f_vjp(1.0)          (take = jit(...))
  ==>
    _:f32[] c:i32[] = jit[name=take jaxpr={... in (_, c)}] a 3:i32[]
    h:f32[10] = jit[name=take jaxpr={ lambda ; c:i32[] i:f32[]. ... }] c 1.0:f32[]

Each jit a differentiated input reaches splits so (a sequence: forward jits in order, the
pullback's backward jits in reverse, cotangents of a value read twice added by add_any);
the others stay plain calls. With `VJP.with_refs`, a ref taking an argument's cotangent
is passed into the backward jits, which add into it (frontend/ad/bwd_into_refs.py), as
JAX's do. Any other function (other equations between the jits, refs, custom_vjp calls,
inside another differentiation) returns None: the caller stages `jaxpr.vjp` of the whole
function."""
from __future__ import annotations

from jaxlib.mlir import ir

import mjax.lax as lax
from mjax.ad.bwd_into_refs import accumulate_into_refs
from mjax.ad.grad_markers import GradRef
from mjax.ad.staging import _is_inexact, _zeros
from mjax.tracing.core import aval_of_value, current_trace
from mjax.dialect import aval_of, context
from mjax.dialect.types import RefAval
from mjax.passes.autodiff import vjp_functions
from mjax.passes.ir_util import functions_text
from mjax.passes.rules.export import _clone_functions
from mjax.passes.derived import MARK
from mjax.tracing.staging import copy_prefix, emit_call, fresh_name, user_name


class _Step:
    """One jit call of the function: run as it is (no differentiated input reaches it),
    or split into a forward jit (outputs, residuals) and a backward jit."""

    def __init__(self, call, cdiff, cdr):
        self.call, self.cdiff, self.cdr = call, cdiff, cdr
        self.callee = ir.FlatSymbolRefAttr(call.attributes["callee"]).value
        self.fwd = self.bwd = self.spec = self.residuals = self.module = None
        self.into_refs = {}    # (cotangent positions a ref takes) -> the backward jit

    def split(self, module):
        info = vjp_functions(module, self.callee, self.cdiff, self.cdr)
        if info.num_outputs != len(self.call.results):
            return False
        self.module = module
        self.fwd = _renamed_copy(module, info.fwd, self.callee)
        self.bwd = _renamed_copy(module, info.bwd, self.callee)
        self.spec = _forward_known_inputs(module, self.fwd, info.num_outputs)
        return True

    def backward_into_refs(self, taken: tuple) -> str:
        """The backward jit adding the cotangents at positions `taken` (of cdiff) into
        refs passed after the residuals (JAX's transpose of a jit with ref
        accumulators; frontend/ad/bwd_into_refs.py)."""
        if taken not in self.into_refs:
            fn = _renamed_copy(self.module, self.bwd, self.callee)
            accumulate_into_refs(self.module, fn, len(self.residuals), list(taken))
            self.into_refs[taken] = fn
        return self.into_refs[taken]

    def forward(self, operands):
        if self.fwd is None:
            return emit_call(self.callee, operands)
        outs = emit_call(self.fwd, operands)
        n = len(self.call.results)
        rest = iter(outs[n:])
        self.residuals = [next(rest) if k is None else
                          operands[k[1]] if k[0] == "arg" else outs[k[1]]
                          for k in self.spec]
        return outs[:n]


class JitSplit:
    """The forward and backward jits of a function that is a sequence of jit calls."""

    def __init__(self, trace, block, steps):
        self.trace, self.block, self.steps = trace, block, steps
        self.ret = list(list(block.operations)[-1].operation.operands)
        self.args = None

    def forward(self, args, out_avals):
        self.args = list(args)
        env = {a: x for a, x in zip(self.block.arguments, args)}
        for step in self.steps:
            outs = step.forward([env[v] for v in step.call.operands])
            env.update(zip(step.call.results, outs))
        outs = [env[v] for v in self.ret]
        for t, a in zip(outs, out_avals):
            t.aval = a
        return outs

    def usable(self) -> bool:
        return current_trace() is self.trace and self.args is not None

    def backward(self, cts, diff_results, refs=None) -> dict:
        """{primal argument index: its cotangent} for `cts` of the results
        `diff_results`; the arguments no cotangent reaches are left out. `refs`
        ({argument index: Ref}, with_refs) names arguments whose cotangents the backward
        jits add into those refs, as JAX's do: such an argument maps to GradRef() (or to
        the rest of its cotangent, should some of it come back as a value)."""
        ref_of = {self.block.arguments[i]: r for i, r in (refs or {}).items()
                  if _ref_fits(r, aval_of(self.block.arguments[i].type))}
        done = set()
        ct = {}
        for j, c in zip(diff_results, cts):
            _accumulate(ct, self.ret[j], c)
        for step in reversed(self.steps):
            if step.fwd is None:
                continue
            got = [ct.get(step.call.results[k]) for k in step.cdr]
            if all(c is None for c in got):
                continue      # (JAX skips an equation whose cotangents are all zero)
            got = [c if c is not None else _zeros(aval_of(step.call.results[k].type))
                   for c, k in zip(got, step.cdr)]
            operands = [step.call.operands[j] for j in step.cdiff]
            # (a ref takes the cotangent of an operand it is passed for once)
            taken = tuple(k for k, v in enumerate(operands)
                          if v in ref_of and operands.count(v) == 1)
            if taken:
                fn = step.backward_into_refs(taken)
                outs = emit_call(fn, list(step.residuals) +
                                 [ref_of[operands[k]]._traced() for k in taken] + got)
                done.update(operands[k] for k in taken)
                operands = [v for k, v in enumerate(operands) if k not in taken]
            else:
                outs = emit_call(step.bwd, list(step.residuals) + got)
            for v, o in zip(operands, outs):
                _accumulate(ct, v, o)
        return {i: ct[a] if a in ct else GradRef()
                for i, a in enumerate(self.block.arguments) if a in ct or a in done}


def _ref_fits(ref, aval) -> bool:
    """Whether the with_refs marker `ref` is a Ref of the cotangent's shape and dtype
    (any other goes to the caller's accumulation, which checks it as JAX does)."""
    ref_aval = aval_of_value(ref) if hasattr(ref, "_traced") else None
    return type(ref_aval) is RefAval and tuple(ref_aval.shape) == tuple(aval.shape) and \
        ref_aval.dtype == aval.dtype


def _accumulate(ct: dict, value, c) -> None:
    if value not in ct:
        ct[value] = c
        return
    ct[value] = lax.add(ct[value], c)


def split_jit_calls(traced, args, diff_args, diff_results):
    """A JitSplit when @traced's body is a sequence of jit calls (`jaxpr.call`s) on its
    arguments and each other's results, returning their results, else None."""
    trace = current_trace()
    if trace is None or any(type(getattr(a, "aval", None)) is RefAval for a in args):
        return None
    module = traced.module
    block = ir.SymbolTable(module.operation)[traced.name].regions[0].blocks[0]
    ops = [op.operation for op in block.operations]
    calls, ret = ops[:-1], ops[-1]
    if not calls or any(op.name != "jaxpr.call" for op in calls) or any(
            isinstance(v.owner, ir.Block) for v in ret.operands):
        return None
    active = {block.arguments[i] for i in diff_args}
    steps = []
    for call in calls:
        cdiff = tuple(j for j, v in enumerate(call.operands)
                      if v in active and _is_inexact(aval_of(v.type)))
        cdr = tuple(k for k, r in enumerate(call.results) if _is_inexact(aval_of(r.type)))
        step = _Step(call, cdiff, cdr)
        if cdiff and cdr:
            text = functions_text(module, [step.callee])
            if "custom_vjp" in text or "custom_jvp" in text or "Ref" in text:
                return None
            active.update(call.results[k] for k in cdr)
        steps.append(step)
    if not any(s.cdiff and s.cdr for s in steps):
        return None
    for step in steps:
        if step.cdiff and step.cdr and not step.split(module):
            return None
    return JitSplit(trace, block, steps)


def _forward_known_inputs(module, fwd: str, n_out: int) -> list:
    """Drops from @fwd's results the residuals that are its arguments passed through or
    its primal outputs (JAX's partial eval of a jit forwards those to the backward jit
    instead); returns per residual ("arg", index), ("out", index) or None (computed)."""
    with context(), ir.Location.unknown(context()):
        fn = ir.SymbolTable(module.operation)[fwd]
        block = fn.regions[0].blocks[0]
        ret = list(block.operations)[-1].operation
        values = list(ret.operands)
        spec = []
        for v in values[n_out:]:
            if isinstance(v.owner, ir.Block) and v.owner == block:
                spec.append(("arg", ir.BlockArgument(v).arg_number))
            else:
                spec.append(next((("out", j) for j in range(n_out) if values[j] == v),
                                 None))
        if all(k is None for k in spec):
            return spec
        kept = values[:n_out] + [v for v, k in zip(values[n_out:], spec) if k is None]
        ir.Operation.create(ret.name, operands=kept, ip=ir.InsertionPoint(ret))
        ret.erase()
        ftype = ir.FunctionType(ir.TypeAttr(fn.attributes["function_type"]).value)
        fn.attributes["function_type"] = ir.TypeAttr.get(
            ir.FunctionType.get(list(ftype.inputs), [v.type for v in kept]))
        if "res_attrs" in fn.attributes:
            del fn.attributes["res_attrs"]
    return spec


def _renamed_copy(module, name: str, callee: str) -> str:
    """A copy of @name (and its callees) whose symbol prints as the jit's name; not
    marked derived (the printer then keeps its call a nested jit)."""
    with context(), ir.Location.unknown(context()):
        # (one process-wide counter names every copy: a restored export's functions,
        # copied in too, had names of this form from a second counter once)
        prefix = copy_prefix()
        _clone_functions(module.operation, functions_text(module, [name]), prefix)
        table = ir.SymbolTable(module.operation)
        new = fresh_name(module, f"{prefix}_{user_name(callee)}",
                         taken=lambda n: n in table)
        fn = table[f"{prefix}_{name}"]
        ir.SymbolTable.set_symbol_name(fn, new)
        if MARK in fn.attributes:
            del fn.attributes[MARK]
    return new
