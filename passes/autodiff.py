"""Automatic differentiation: the expansion rules of `jaxpr.jvp` / `jaxpr.vjp` and the
function-level entry points for Python callers (the frontend's eager `vjp`/`linearize`).

    expand_transforms(module)                       # every transformation op, inner-first
    jvp_function(module, "f", diff_args, diff_results) -> "f_jvp"
    vjp_functions(module, "f", ...) -> VjpInfo      # @f_fwd (outs + residuals), @f_bwd
    trace_bwd_rules_now(module, "f", ...)           # a pullback called under a trace
    linearize_functions(module, "f", ...) -> LinearizeInfo   # @f_fwd, @f_lin (runnable)

`diff_args` / `diff_results` default to every float/complex argument / result; integer
and bool values never carry tangents (JAX's float0). Derived functions are private and
reused when asked for again (passes/derived.py).

Where the work happens: passes/forward_mode.py (the JVP transformation),
passes/partial_eval.py, passes/reverse_mode.py (linearize, split, transpose), all on the
block interpreter of passes/interpreter.py; passes/expansion.py drives them.
"""
from __future__ import annotations

import dataclasses

from jaxlib.mlir import ir

from mjax.dialect.context import context
from mjax.dialect.ops import transforms as T
from mjax.dialect.ops.shard_map import ShardMapOp
from mjax.passes import forward_mode, reverse_mode
from mjax.passes.linear_transpose import expand_linear_transpose_op
from mjax.passes.expansion import Expander, lower_bwd_rules, lower_custom_calls
from mjax.passes.ir_util import nested_ops, reachable_functions
from mjax.passes.reverse_mode import LinearizeInfo, VjpInfo
from mjax.passes.rules.tables import EXPAND
from mjax.passes.shard_map_ad import expand_shard_maps
from mjax.passes.user_primitives import lower_user_primitives

EXPAND[T.JvpOp] = forward_mode.expand_jvp_op
EXPAND[T.VjpOp] = reverse_mode.expand_vjp_op
EXPAND[T.LinearTransposeOp] = expand_linear_transpose_op
# (EXPAND[T.VmapOp] is registered by passes/batching.py.)


def expand_transforms(module, only=None, lower_leftovers: bool = True) -> Expander:
    """Expands the transformation ops of `module` whose class is in `only` (default:
    all), inner-first, at any depth; with `lower_leftovers`, the custom_jvp_call,
    custom_vjp_call and checkpoint ops left become jaxpr.call. Expanding all, the bwd
    rules transposition left untraced (custom_vjp_bwd) are traced either way. Returns
    the Expander (its `state` holds what the rules noted)."""
    with context(), ir.Location.unknown(context()):
        ex = Expander(module)
        ex.lowering = lower_leftovers and only is None
        ex.expand_all(frozenset(only) if only is not None else None)
        if not ex.custom_seen and not ex.traced_rules:
            # (expand_all looked at every op of every function and met no custom call,
            # and the rules traced no Python function: the rules emit custom calls only
            # from custom calls, so there is none to lower and no walk of the module
            # for them)
            if lower_leftovers:
                lower_user_primitives(ex)
        elif lower_leftovers:
            lower_custom_calls(ex)
        elif only is None:
            lower_custom_calls(ex, bwd_only=True)
        if ex.state.get("shard_maps") and lower_leftovers and (
                only is None or ShardMapOp in only):
            expand_shard_maps(ex)     # (kept as ops by differentiation: expanded last)
        return ex


def jvp_function(module, name: str, diff_args=None, diff_results=None) -> str:
    """Adds @<name>_jvp: (primals..., tangents of diff_args...) -> (outs..., tangents of
    diff_results...) to `module`, or reuses it; returns its name."""
    with context(), ir.Location.unknown(context()):
        return forward_mode.jvp_function(Expander(module), name, diff_args, diff_results)


def vjp_functions(module, name: str, diff_args=None, diff_results=None) -> VjpInfo:
    """Adds @<name>_fwd (primals -> outs + residuals) and @<name>_bwd (residuals +
    cotangents -> input cotangents) to `module`, or reuses them. The frontend's eager
    `vjp` runs fwd once and bwd per cotangent."""
    with context(), ir.Location.unknown(context()):
        return reverse_mode.vjp_functions(Expander(module), name, diff_args, diff_results)


def trace_bwd_rules_now(module, name: str, diff_args=None, diff_results=None) -> None:
    """If @name reaches a custom_vjp call: derives its vjp functions now (as
    `vjp_functions`) and traces the bwd rules they reach. A pullback called under a
    trace thus runs custom_vjp bwd rules when it is called, as JAX does (libraries observe
    that through the rules' side effects: equinox's checkpointed loops); the `jaxpr.vjp`
    staged beside it is expanded later into calls of these same functions, found by
    their derived marks."""
    with context(), ir.Location.unknown(context()):
        ex = Expander(module)
        if not any(op.name == T.CustomVjpCallOp.OPERATION_NAME
                   for f in reachable_functions(ex.fns.table, [name])
                   for op in nested_ops(ex.fns.get(f))):
            return
        info = reverse_mode.vjp_functions(ex, name, diff_args, diff_results)
        lower_bwd_rules(ex, [info.bwd])


def linearize_functions(module, name: str, diff_args=None,
                        diff_results=None) -> LinearizeInfo:
    """Adds @<name>_fwd (primals -> outs + residuals) and @<name>_lin (tangents of
    diff_args + residuals -> tangents of diff_results) to `module`, or reuses them; the
    linear function can run on its own (the frontend's eager `linearize`), unless it
    holds a custom_vjp function's linear map: then `unevaluable` is the error running it
    raises (JAX's, when its f_jvp is called)."""
    with context(), ir.Location.unknown(context()):
        ex = Expander(module)
        info = reverse_mode.linearize_functions(ex, name, diff_args, diff_results)
        before = set(ex.fns.table)
        try:
            reverse_mode.evaluable_linear(ex, info.lin)
        except forward_mode.CustomVjpJvpError as e:
            # (with the functions the error left unfinished: the module is printed to
            # be compiled)
            for f in [info.lin] + [f for f in ex.fns.table if f not in before
                                   and _unfinished(ex.fns.get(f))]:
                ex.derived.forget(f)
                ex.fns.erase(f)
            return dataclasses.replace(info, unevaluable=e)
        return info


def _unfinished(fn) -> bool:
    ops = list(fn.regions[0].blocks[0].operations)
    return not ops or ops[-1].operation.name != "func.return"


__all__ = ["LinearizeInfo", "VjpInfo", "expand_transforms", "jvp_function",
           "linearize_functions", "lower_custom_calls", "trace_bwd_rules_now", "vjp_functions"]
