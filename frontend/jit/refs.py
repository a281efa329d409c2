"""What jit checks about Ref arguments (mjax.new_ref), with JAX's errors: a traced
function returns no ref; one ref is passed at most once, and is not both passed and
closed over (a program over two aliases of one ref would lose one of their writes)."""
from __future__ import annotations

import inspect

from jaxlib.mlir import ir

from mjax.base import trace_trees
from mjax.tracing.core import aval_of_value
from mjax.dialect.types import RefAval, ShapedArray


def _where(fun) -> str:
    """`f at file:line`, as JAX's debug info names a traced function."""
    code = getattr(inspect.unwrap(fun), "__code__", None)
    where = f" at {code.co_filename}:{code.co_firstlineno}" if code else ""
    return f"{getattr(fun, '__name__', fun)}{where}"


def _ref_arg_names(fun, args, kwargs) -> list[tuple[object, str]]:
    """(leaf, JAX's name of that argument: x_ref, xs[1], kw) for each Ref leaf, in order."""
    try:
        bound = list(inspect.signature(fun).bind(*args, **kwargs).arguments.items())
    except (TypeError, ValueError):
        bound = [(f"args[{i}]", a) for i, a in enumerate(args)] + list(kwargs.items())
    return [(leaf, name + "".join(str(k) for k in path))
            for name, value in bound
            for path, leaf in trace_trees.tree_flatten_with_path(value)[0]
            if type(aval_of_value(leaf)) is RefAval]


def check_ref_args(fun, args, kwargs, leaves, captured) -> None:
    """JAX's ValueErrors for a Ref passed twice, or passed and closed over."""
    refs = [x for x in leaves if type(aval_of_value(x)) is RefAval]
    if len({id(x) for x in refs}) == len(refs) and not any(
            c is x for c in captured for x in refs):
        return
    named = _ref_arg_names(fun, args, kwargs)
    first: dict[int, str] = {}
    for x, name in named:
        a = str(x.aval)     # (JAX's Ref{float32[3]})
        if id(x) in first:
            raise ValueError(
                f"only one reference to a mutable array may be passed as an argument "
                f"to a function, but when tracing {_where(fun)} for jit the mutable "
                f"array reference of type {a} appeared at both {first[id(x)]} and "
                f"{name}.")
        if any(c is x for c in captured):
            raise ValueError(f"when tracing {_where(fun)} for jit, a mutable array "
                             f"reference of type {a} was both closed over and passed as "
                             f"the argument {name}")
        first[id(x)] = name


def ref_slots(entry, traced, fun) -> list:
    """Records in `entry` the refs of a traced program (Ref arguments, then captured
    Refs, as the discharged program's extra results follow them); gives those results'
    avals. A returned ref is JAX's ValueError."""
    for j, a in enumerate(traced.out_avals):
        if type(a) is RefAval:
            raise ValueError(f"function {_where(fun)} traced for jit returned a mutable "
                             f"array reference of type {a}, but mutable array "
                             f"references cannot be returned.{_origin(traced, j, fun)}")
    refs = [(i, None) for i, a in enumerate(traced.in_avals) if type(a) is RefAval]
    refs += [(None, c) for c in traced.captured if type(aval_of_value(c)) is RefAval]
    entry.refs = tuple(refs)
    avals = [traced.in_avals[i] if i is not None else c.aval for i, c in refs]
    return [ShapedArray(a.shape, a.dtype) for a in avals]


def ref_aliases(entry, traced) -> dict[int, int]:
    """{argument of @main: result} pairing each ref's buffer with its final value (after
    the outputs), so XLA updates the ref in place, as JAX does. The arguments are the
    flat ones, then the captured values."""
    n_in, n_out = len(traced.in_avals), len(traced.out_avals)
    captured = {id(c): k for k, c in enumerate(traced.captured)}
    return {(i if i is not None else n_in + captured[id(c)]): n_out + j
            for j, (i, c) in enumerate(entry.refs)}


def _origin(traced, j: int, fun) -> str:
    """JAX's note on where a returned ref came from, when it is an argument."""
    fn = ir.SymbolTable(traced.module.operation)[traced.name]
    block = fn.regions[0].blocks[0]
    value = list(block.operations)[-1].operands[j]
    if not isinstance(value.owner, ir.Block):
        return ""
    i = ir.BlockArgument(value).arg_number
    try:
        params = [p.name for p in inspect.signature(fun).parameters.values()]
    except (TypeError, ValueError):
        params = []
    name = params[i] if i < len(params) and traced.in_tree.num_leaves == len(
        traced.in_avals) else f"args[{i}]"
    return f"\n\nThe returned mutable array was passed in as the argument {name}."


__all__ = ["check_ref_args", "ref_aliases", "ref_slots"]
