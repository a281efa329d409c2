"""JAX: jax.api_util: helpers for writing transformations over flattened functions
(WrappedFun from mjax.extend.linear_util), argument numbers and axis specifications."""
from __future__ import annotations

import inspect

from mjax.tracing import core
from mjax.base import trace_trees, tree_util
from mjax.extend import linear_util as lu
from mjax.extend.core import DebugInfo

__all__ = ["safe_map", "flatten_axes", "shaped_abstractify", "flatten_fun",
           "flatten_fun_nokwargs", "argnums_partial", "donation_vector",
           "rebase_donate_argnums", "debug_info"]


def safe_map(f, *args):
    """map() that refuses arguments of different lengths."""
    args = list(map(list, args))
    n = len(args[0])
    for arg in args[1:]:
        if len(arg) != n:
            raise ValueError(f"length mismatch: {list(map(len, args))}")
    return list(map(f, *args))


def shaped_abstractify(x):
    """The aval (shape, dtype, weak type) of a value (JAX: api_util.shaped_abstractify)."""
    return core.aval_of_value(x)


def flatten_axes(name, treedef, axis_tree, *, kws=False, tupled_args=False):
    """One axis per leaf of `treedef`, from `axis_tree`, a tree prefix of it whose leaves
    (None included) stand for the whole subtree below them (vmap's in_axes)."""
    full = tree_util.tree_unflatten(treedef, [object()] * treedef.num_leaves)
    try:
        per_leaf = trace_trees.tree_map(
            lambda ax, sub: [ax] * len(trace_trees.tree_leaves(sub)), axis_tree, full,
            is_leaf=lambda x: x is None)
    except ValueError as e:
        raise ValueError(f"{name} specification must be a tree prefix of the "
                         f"corresponding value, got specification {axis_tree} for value "
                         f"tree {treedef}. {e}") from None
    axes = [a for group in trace_trees.tree_leaves(per_leaf, is_leaf=lambda x: isinstance(
        x, list)) for a in group]
    assert len(axes) == treedef.num_leaves
    return axes


@lu.transformation_with_aux2
def flatten_fun(f, store, in_tree, *args_flat):
    """(f over flat (args, kwargs) leaves, a thunk of the output's treedef)."""
    py_args, py_kwargs = tree_util.tree_unflatten(in_tree, args_flat)
    out, out_tree = trace_trees.tree_flatten(f(*py_args, **py_kwargs))
    store.store(out_tree)
    return out


@lu.transformation_with_aux2
def flatten_fun_nokwargs(f, store, in_tree, *args_flat):
    """(f over flat positional-argument leaves, a thunk of the output's treedef)."""
    out, out_tree = trace_trees.tree_flatten(f(*tree_util.tree_unflatten(in_tree, args_flat)))
    store.store(out_tree)
    return out


def argnums_partial(f: lu.WrappedFun, dyn_argnums, args, require_static_args_hashable=True):
    """(f of the dynamic arguments only, with the others fixed; those arguments)."""
    dyn = (dyn_argnums,) if isinstance(dyn_argnums, int) else tuple(dyn_argnums)
    dyn = tuple(i % len(args) for i in dyn)
    fixed = [(i, a) for i, a in enumerate(args) if i not in dyn]
    if require_static_args_hashable:
        for i, a in fixed:
            try:
                hash(a)
            except TypeError:
                raise ValueError(f"Non-hashable static arguments are not supported. An "
                                 f"error occurred while trying to hash an object of type "
                                 f"{type(a)}, {a}.") from None

    def call(inner, *dyn_args, **kwargs):
        full, it = [], iter(dyn_args)
        fixed_at = dict(fixed)
        for i in range(len(args)):
            full.append(fixed_at[i] if i in fixed_at else next(it))
        return inner(*full, **kwargs)
    return lu.transformation2(call, f), tuple(args[i] for i in dyn)


def donation_vector(donate_argnums, donate_argnames, in_tree, kws: bool = True):
    """One bool per leaf of (args, kwargs): whether that leaf is donated."""
    args_tree, kwargs_tree = tree_util.treedef_children(in_tree) if kws else (in_tree, None)
    out = []
    for i, sub in enumerate(tree_util.treedef_children(args_tree)):
        out += [i in donate_argnums] * sub.num_leaves
    if kwargs_tree is not None:
        kw = tree_util.tree_unflatten(kwargs_tree, [None] * kwargs_tree.num_leaves)
        for key in sorted(kw) if isinstance(kw, dict) else ():
            n = len(trace_trees.tree_leaves(kw[key], is_leaf=lambda x: x is None))
            out += [key in donate_argnames] * n
    return tuple(out)


def rebase_donate_argnums(donate_argnums, static_argnums) -> tuple[int, ...]:
    """Donated argument numbers counted among the non-static arguments:
    rebase_donate_argnums((3, 4), (0, 1)) == (1, 2)."""
    if any(i in set(static_argnums) for i in donate_argnums):
        raise ValueError(f"`static_argnums` {static_argnums} and `donate_argnums` "
                         f"{donate_argnums} cannot intersect.")
    static = sorted(static_argnums)
    return tuple(i - sum(s < i for s in static) for i in sorted(donate_argnums))


def debug_info(traced_for: str, fun, args, kwargs, *, static_argnums=(),
               static_argnames=(), result_paths_thunk=None, sourceinfo=None,
               signature=None) -> DebugInfo:
    """Where `fun` comes from and its argument names, for error messages."""
    try:
        src = inspect.getsourcefile(fun)
        line = inspect.getsourcelines(fun)[1]
        where = f"{getattr(fun, '__name__', repr(fun))} at {src}:{line}"
    except (TypeError, OSError):
        where = getattr(fun, "__name__", repr(fun))
    try:
        bound = inspect.signature(fun).bind(*args, **kwargs)
        names = tuple(n for i, n in enumerate(bound.arguments)
                      if i not in static_argnums and n not in static_argnames)
    except (TypeError, ValueError):
        names = None
    return DebugInfo(traced_for, sourceinfo or where, names)
