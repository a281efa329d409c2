"""`mjax.ad_checkpoint`: rematerialization. JAX: jax.ad_checkpoint.

    checkpoint(f, policy=checkpoint_policies.everything_saveable)
    print_saved_residuals(f, x)   # what reverse mode keeps for the backward pass
"""
from __future__ import annotations

import inspect
import re

from mjax.base import trace_trees
from mjax.ad import checkpoint_policies
from mjax.ad.remat import checkpoint, remat
from mjax.tracing.core import FUNCTION_AT, aval_of_value, bind
from mjax.dialect import aval_of, context
from mjax.dialect.functions import symbols_of
from mjax.dialect.ops import transforms as T
from mjax.dialect.values import (argument_number, defining_op, result_number, string_attr,
                                 symbol_ref_attr)
from mjax.specs.dtypes import is_inexact
from mjax.passes.autodiff import vjp_functions
from mjax.tracing.staging import trace_function


def checkpoint_name(x, name):
    """Names `x` (any pytree of arrays) for rematerialization policies
    (save_only_these_names, ...): emits the identity `jaxpr.checkpoint_name {name}`.
    JAX: jax.ad_checkpoint.checkpoint_name."""
    return trace_trees.tree_map(lambda v: _name_leaf(v, name), x)


def _name_leaf(v, name):
    return bind(T.CheckpointNameOp, v, name=str(name))


def _short(aval) -> str:
    return aval.str_short() if hasattr(aval, "str_short") else str(aval)


def _arg_names(fun, args, kwargs) -> list[str]:
    """A name per flattened argument leaf, as JAX's debug info gives them: the
    parameter name, plus the leaf's key path inside it."""
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
        params = list(bound.arguments.items())
    except (TypeError, ValueError):
        params = [(f"args[{i}]", a) for i, a in enumerate(args)] + list(kwargs.items())
    names = []
    for pname, value in params:
        for path, _ in trace_trees.tree_flatten_with_path(value)[0]:
            names.append(pname + "".join(str(k) for k in path))
    return names


# (the file location inside any name location: a named scope, a differentiation's jvp())
_LOC = re.compile(r'"(?P<file>[^"]*)":(?P<line>\d+):(?P<col>\d+)\)')


def _source(op) -> str:
    """file:line:col (JAX's 0-based column; mjax's locations are 1-based), then the
    Python function it is in, as JAX prints it: `<file>:5:6 (f4)`."""
    m = _LOC.search(str(op.location))
    if not m:
        return "unknown"
    fn = FUNCTION_AT.get((m["file"], int(m["line"]), int(m["col"])))
    return f"{m['file']}:{m['line']}:{int(m['col']) - 1}" + (f" ({fn})" if fn else "")


def _origin(value, callee_of, position):
    """Where the residual `value` of @f_fwd comes from: (op, path) with `path` the
    positions (block index) that order it, or (None, argument number) for an argument of
    @f_fwd. Checkpoint outputs are seen through to the op of the callee computing them
    (its argument, to the checkpoint's operand): JAX's partial evaluation inlines a
    checkpoint's forward part, so it names that op."""
    path, entered = [], []        # entered: the checkpoint ops looked into
    while True:
        i = argument_number(value)
        if i is not None:
            if not entered:
                return None, i
            value = list(entered.pop().operands)[i]
            path.pop()
            continue
        op = defining_op(value)
        path.append(position(op))
        if op.name != "jaxpr.checkpoint":
            return op, tuple(path)
        ret = list(callee_of(op).regions[0].blocks[0].operations)[-1]
        value = list(ret.operands)[result_number(value)]
        entered.append(op)


def _positions():
    """op -> its index in its block (each block numbered once, when first asked)."""
    seen: dict = {}

    def position(op) -> int:
        block = op.block
        if block not in seen:
            seen[block] = {o.operation: k for k, o in enumerate(block.operations)}
        return seen[block][op]
    return position


def _describe(op) -> str:
    if op.name == "jaxpr.checkpoint_name":
        label = string_attr(op, "name")
        return f"named '{label}' from {_source(op)}"
    if op.name == "jaxpr.call":
        callee = symbol_ref_attr(op)
        return f"output of jitted function '{callee}' from {_source(op)}"
    return f"output of {op.name.split('.', 1)[-1]} from {_source(op)}"


def saved_residuals(f, *args, **kwargs) -> list[tuple]:
    """[(aval, where it comes from)] of the residuals reverse mode saves for f(*args)."""
    leaves = trace_trees.tree_leaves((args, kwargs))
    traced = trace_function(f, args, kwargs, name="f", visibility="private")
    diff = tuple(i for i, x in enumerate(leaves) if is_inexact(aval_of_value(x).dtype))
    info = vjp_functions(traced.module, traced.name, diff)
    names = _arg_names(f, args, kwargs)
    n_args = min(len(leaves), len(names))
    with context():
        table = symbols_of(traced.module)

        def callee_of(op):
            return table[symbol_ref_attr(op)]
        block = table[info.fwd].regions[0].blocks[0]
        ret = list(block.operations)[-1]
        position = _positions()
        # JAX's order: constants, arguments, then values in program order.
        consts, argres, opres = [], [], []
        for v in list(ret.operands)[info.num_outputs:]:
            aval = aval_of(v.type)
            op, where = _origin(v, callee_of, position)
            if op is not None:
                opres.append((where, (aval, _describe(op))))
            elif where < n_args:
                argres.append((where, (aval, f"from the argument {names[where]}")))
            else:
                consts.append((aval, "from a constant"))
        order = lambda t: t[0]   # noqa: E731
        return consts + [x for _, x in sorted(argres, key=order)] + [
            x for _, x in sorted(opres, key=order)]


def print_saved_residuals(f, *args, **kwargs) -> None:
    """Prints one line per residual saved by reverse mode: its type and where it comes
    from (an argument, or the op computing it). JAX: print_saved_residuals."""
    for aval, src in saved_residuals(f, *args, **kwargs):
        print(f"{_short(aval)} {src}")


# (what a policy may return: JAX's jax.ad_checkpoint.Recompute, Saveable, Offloadable)
Recompute = checkpoint_policies.Recompute
Saveable = checkpoint_policies.Saveable
Offloadable = checkpoint_policies.Offloadable

__all__ = ["Offloadable", "Recompute", "Saveable", "checkpoint", "checkpoint_name",
           "checkpoint_policies", "print_saved_residuals", "remat", "saved_residuals"]
