"""vjp's and linearize's split of the traced function: a forward part run once, and the
linear map run per call of the function they return (mjax.ad.reverse's `_LinearFun`).
Eagerly the split module's executables are kept in the table of compiled programs
`_Retraced` uses (mjax.ad.staging), keyed by the program's text: a repeated eager
vjp/linearize traces the function again (its Python runs, as in JAX) but neither splits,
lowers nor compiles it again."""
from __future__ import annotations

import itertools
import threading

import numpy as np
from jaxlib.mlir import ir

from mjax.base import trace_trees
from mjax.ad import concrete, levels
from mjax.ad.jit_partial_eval import split_jit_calls
from mjax.ad.tracer_text import showing_gradients
from mjax.ad.staging import (_USER_PRIMITIVE, _check_aux_pair, _is_inexact,
                             forget_program, program_identity, recall_program,
                             remember_program, stage_function)
from mjax.arrays.array import Array
from mjax.config import config
from mjax.tracing.core import aval_of_value, current_trace, to_numpy
from mjax.dialect import Builder, context, tensor_type
from mjax.dialect.attributes import Symbol
from mjax.dialect.ops import transforms as T
from mjax.dialect.types import RefAval
from mjax.arrays.dispatch import execute
from mjax.arrays.host_callbacks import errors_for_caller
from mjax.tracing.lowering import compile_for_buffers
from mjax.passes import custom_rules
from mjax.passes.autodiff import linearize_functions, vjp_functions
from mjax.passes.ir_util import FunctionTable, forward_copy, functions_text
from mjax.passes.jaxpr_discharge_state import discharge_function
from mjax.passes.rules.export import _clone_functions
from mjax.passes.weak_cotangents import cotangent_weak_table
from mjax.runtime import get_backend
from mjax.specs import memory_kinds
from mjax.tracing.staging import call_args, emit_call, trace_function


def _diff_results(traced, has_aux):
    n_main = (_check_aux_pair(traced.out_tree, traced.out_avals).num_leaves if has_aux
              else len(traced.out_avals))
    return tuple(j for j, a in enumerate(traced.out_avals[:n_main]) if _is_inexact(a))


def _main_tree(traced, has_aux):
    return traced.out_tree.children()[0] if has_aux else traced.out_tree


_recipe_ids = itertools.count()
_CUSTOM_VJP = '"jaxpr.custom_vjp'     # (its ops: jaxpr.custom_vjp_call, _bwd, ...)


class _Recipe:
    """A traced function that can be called from any trace: by its name in the module
    it was traced into, and from other modules (after the function returned by vjp
    crossed a jit boundary) through a copy of it and its callees, frozen as text while
    that module is intact: when it first crosses (is flattened) or is first used
    elsewhere; the module is transformed and lowered once its trace ends."""

    def __init__(self, module, name, text=None):
        self.module, self.name, self.text = module, name, text
        self.prefix = f"linear{next(_recipe_ids)}"

    def freeze(self):
        if self.text is None:
            self.text = functions_text(self.module, [self.name])

    def callee_in(self, module) -> str:
        if module is self.module:
            return self.name
        self.freeze()
        name = f"{self.prefix}_{self.name}"
        if name not in ir.SymbolTable(module.operation):
            _clone_functions(module.operation, self.text, self.prefix)
        return name


def forward_part(traced) -> str:
    """The function a vjp's forward part calls under a trace: @f, or, where f calls
    custom_vjp functions, a copy of f and its callees marked VJP_FORWARD
    (passes.ir_util.forward_copy): a differentiation of it (by an enclosing one, or of
    the jit function it is traced into) differentiates their fwd rules, as JAX's vjp
    computes the primal outputs by fwd (jacfwd(jacrev(f)), hessian, jacrev of vjp's
    outputs), where a jvp of f itself raises."""
    return forward_copy(FunctionTable(traced.module), traced.name)


class _Split:
    """fun split in two: a forward part run once (primal outputs), and the linear map at
    those primals (cotangents -> input cotangents for vjp, tangents -> output tangents
    for linearize), run by `_LinearFun`.

    Under a trace the forward part is `jaxpr.call @f` and each linear call emits
    `jaxpr.vjp @f` / `jaxpr.jvp @f` on the same primals: the passes derive the rest, and
    inlining + CSE share the forward work. Eagerly the module is split once by the
    passes' function-level entry points (`vjp_functions`, `linearize_functions`) into
    two executables, and the residuals stay on the device between calls."""

    def __init__(self, fun, primals, diff_args, has_aux, kind):
        self.kind = kind
        self.leaves, self.in_tree = trace_trees.tree_flatten(tuple(primals))
        self.in_avals = [aval_of_value(x) for x in self.leaves]
        self.diff_args = diff_args
        outer = current_trace()
        if outer is None:
            # Outside jit the primals are concrete: Python can branch on fun's values.
            # (its tracers print as JAX's reverse-mode ones: GradTracer(primal=1.0, ...))
            fun = levels.differentiated(concrete.with_sources(
                showing_gradients(fun, diff_args), self.leaves, diff_args, new_root=True),
                diff_args)
            traced = trace_function(fun, tuple(primals), {}, name="f", visibility="private")
        else:
            traced = stage_function(fun, tuple(primals), {}, diff_leaves=diff_args)
        self.traced = traced
        self.out_tree, self.out_avals = traced.out_tree, traced.out_avals
        self.main_tree = _main_tree(traced, has_aux)
        self.diff_results = _diff_results(traced, has_aux)
        self.args = call_args(traced, self.leaves)
        if kind == "vjp":   # (the cotangents' weak types, as JAX's backward pass makes them)
            self.ct_weak = cotangent_weak_table(
                traced.module, traced.name, traced.arg_avals + list(traced.capture_avals),
                diff_args, len(traced.out_avals), self.diff_results, eager=outer is None)
        if outer is None:
            self._compile()
            self.recipe = _Recipe(None, self._entry.name, self._entry.text)
        else:
            self.recipe = _Recipe(traced.module, traced.name)
            self.jit_split = None
            if kind == "vjp" and not levels.depth():   # (f = one jit call: JAX's split)
                self.jit_split = split_jit_calls(traced, self.args, diff_args,
                                                  self.diff_results)
            if self.jit_split is not None:
                self.outs = self.jit_split.forward(self.args, traced.out_avals)
            else:
                self.outs = emit_call(forward_part(traced), self.args,
                                      traced.out_avals)

    def _compile(self):
        traced = self.traced
        # Refs the function closes over: it is split as a function over their values,
        # whose final values (extra results) the forward run writes back. (Such a
        # program is split and compiled at each call.)
        refs = [i for i, x in enumerate(self.args) if type(aval_of_value(x)) is RefAval]
        bufs = [x._buf if isinstance(x, Array) else
                self.args[i]._buffer_value()._buf if i in refs else
                get_backend().put(to_numpy(x)) for i, x in enumerate(self.args)]
        # (the forward program's parameters in its arguments' memory: a TPU runs a
        # program only on buffers in the memory its parameters were compiled for)
        kinds = memory_kinds.buffer_kinds(bufs, get_backend())
        program = None if refs else self._program_key(traced, kinds)
        entry = recall_program(program) if program is not None else None
        if entry is None:
            runs = custom_rules.rule_runs()
            with concrete.running_now():
                entry = _SplitEntry(traced, self.kind, self.diff_args, self.diff_results,
                                    refs, kinds)
            # (a split that traced Python rules: JAX runs them at each call, as here)
            if (program is not None and entry.unevaluable is None
                    and custom_rules.rule_runs() == runs):
                entry.program = program
                remember_program(program, entry)
        self._entry = entry
        self.n_out, self.linear_name = entry.n_out, entry.linear_name
        self.res_spec, self.res_avals = entry.res_spec, entry.res_avals
        res = execute(entry.fwd_exe, bufs, None, self.args)
        n = len(traced.out_avals)
        self.outs = [Array(b, a) for b, a in zip(res[:n], traced.out_avals)]
        for i, buf in zip(refs, res[n:self.n_out]):
            self.args[i]._write_back(buf, strong=False)
        self.residuals = res[self.n_out:]
        if self.kind == "vjp":
            self.opaque = [Array(b, a) for b, a, k in
                           zip(self.residuals, self.res_avals, self.res_spec) if k is None]
        self.traced = None     # (the module may have been split in place: the entry's text)

    def _program_key(self, traced, kinds=None):
        """What decides the split and its executables: the module's text (functions named
        canonically), the avals (weak types are not in the text), the memory kinds of the
        arguments (`kinds`: memory_kinds.buffer_kinds), what is differentiated and the
        trace state; None where it must not be reused (user primitives, custom_vjp:
        their Python rules run as the passes lower them, on each call as in JAX). Custom
        rule handles are described by their sources (mjax.ad.staging.stable_rules)."""
        # (a custom_vjp's bwd is traced as the linear part lowers, at the first call of
        # each vjp's pullback: a shared split would trace it once in all)
        try:
            rest = (self.diff_args, self.diff_results, tuple(traced.arg_avals),
                    tuple(traced.capture_avals), traced.out_tree, tuple(traced.out_avals),
                    kinds, config.trace_state())
            hash(rest)
        except TypeError:
            return None
        identity = program_identity(traced.module, (_USER_PRIMITIVE, _CUSTOM_VJP),
                                    hint=("linear_split", self.kind, rest))
        if identity is None:
            return None
        program = ("linear_split", self.kind, *identity, *rest)
        try:
            hash(program)
        except TypeError:
            return None
        return program

    def linear(self, inputs, in_avals, out_avals, residuals=None):
        """Runs the compiled linear map on `inputs` (one per in_aval): vjp's on
        `residuals` (values, one per residual), linearize's on the saved ones."""
        bufs = _buffers(inputs, in_avals)
        # vjp's bwd takes (residuals, cotangents); linearize's lin (tangents, residuals).
        bufs = (_buffers(residuals, self.res_avals) + bufs if self.kind == "vjp"
                else bufs + list(self.residuals))
        # (compiled for the memory of the buffers it runs on: residuals and inputs in
        # host memory are parameters in host memory, as the forward program's arguments)
        exe = self._entry.linear_exe(memory_kinds.buffer_kinds(bufs, get_backend()))
        # (waits for the program where its callbacks run beside it: their errors are
        # raised here, as JAX's eager checks raise them)
        with errors_for_caller():
            return execute(exe, bufs, out_avals, inputs)


class _SplitEntry:
    """A traced function split by the passes and its forward part compiled: what eager
    vjps/linearizes of the same program share (the linear part compiles when first
    called: a custom_vjp's bwd is traced then, as JAX runs it only when the pullback is
    called; a linearized custom_vjp function's linear map cannot run: calling it raises
    JAX's TypeError, as there). Each program's parameters are in the memory of the
    buffers it runs on (`kinds`, memory_kinds.buffer_kinds; None where no host memory is
    in use): the linear part is compiled for each set of memory kinds it is called
    with."""

    def __init__(self, traced, kind, diff_args, diff_results, refs, kinds=None):
        split = vjp_functions if kind == "vjp" else linearize_functions
        name = traced.name
        if refs:
            with context(), ir.Location.unknown(context()):
                fns = FunctionTable(traced.module)
                name = fns.fresh_name(f"{traced.name}_discharged")
                discharge_function(fns, traced.name, name)
        info = split(traced.module, name, diff_args, diff_results)
        self.n_out = info.num_outputs
        self.linear_name = info.bwd if kind == "vjp" else info.lin
        self.res_spec = self.res_avals = None
        if kind == "vjp":
            # Which residuals are primal arguments passed through (JAX's VJP keeps those
            # in args_res) and the rest, the opaque residuals (a ref's value, read
            # when the forward ran, among them).
            self.res_spec = [None if k in refs else k for k in
                             _forwarded_arguments(traced.module, info.fwd, self.n_out)]
            self.res_avals = list(info.residual_avals)
        self.name = traced.name
        self.text = str(traced.module)     # @f is still in it, unchanged
        self.unevaluable = getattr(info, "unevaluable", None)
        self.fwd_exe = self._compile(info.fwd, kinds)
        self._linear_exes = {}     # (memory kinds of its arguments -> executable)
        self._lock = threading.Lock()
        self.program = None     # (its key in the table of programs, once stored there)

    def _compile(self, callee, kinds=None):
        with context(), ir.Location.unknown(context()):
            module = ir.Module.parse(self.text)
            out_avals = _add_main(module, callee)
        return compile_for_buffers(module, out_avals, kinds)

    def linear_exe(self, kinds=None):
        """The linear part's executable for arguments in memories `kinds`."""
        if self.unevaluable is not None:
            raise self.unevaluable
        exe = self._linear_exes.get(kinds)
        if exe is None:
            with self._lock:
                exe = self._linear_exes.get(kinds)
                if exe is None:
                    runs = custom_rules.rule_runs()
                    with concrete.running_now():
                        exe = self._compile(self.linear_name, kinds)
                    if custom_rules.rule_runs() == runs:
                        self._linear_exes[kinds] = exe
                        return exe
                    # It traced Python rules (a custom_vjp's bwd): JAX runs them at each
                    # call of the pullback, so the linear part is lowered again at each
                    # call (XLA's cache keeps the executable of an unchanged program),
                    # and later vjps split and trace anew.
                    if self.program is not None:
                        forget_program(self.program, self)
                    return exe
        return exe


def _buffers(values, avals) -> list:
    return [x._buf if isinstance(x, Array) and x.dtype == a.dtype else
            get_backend().put(np.asarray(x, dtype=a.dtype)) for x, a in zip(values, avals)]


def _forwarded_arguments(module, fwd: str, n_out: int) -> list:
    """For each residual @fwd returns: the index of the argument it passes through
    unchanged, or None (a value the forward computed)."""
    block = ir.SymbolTable(module.operation)[fwd].regions[0].blocks[0]
    spec = []
    for v in list(block.operations)[-1].operands[n_out:]:
        spec.append(ir.BlockArgument(v).arg_number if isinstance(v.owner, ir.Block)
                    and v.owner == block else None)
    return spec


def _add_main(module, callee):
    """Adds a public @main that calls @callee (so XLA has an entry point); returns the
    result avals."""
    from jaxlib.mlir.dialects import func
    table = ir.SymbolTable(module.operation)
    ins, outs = T.function_signature(table[callee].operation)
    with ir.InsertionPoint(module.body):
        f = func.FuncOp("main", ([tensor_type(a) for a in ins], [tensor_type(a) for a in outs]))
        block = f.add_entry_block()
    b = Builder(ir.InsertionPoint(block), ir.Location.unknown(context()))
    res = T.emit_transform(b, T.CallOp, *block.arguments, callee=Symbol(callee))
    func.ReturnOp(res, ip=ir.InsertionPoint(block))
    return outs
