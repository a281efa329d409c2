"""Collectives over named axes (JAX: jax.lax.psum, pmean, all_gather, ...).

An axis name is bound by an enclosing `vmap(..., axis_name=...)` while its function is
traced; a name nothing binds raises JAX's `NameError: unbound axis name: i` right away.
Each function maps over the leaves of a pytree argument, as JAX's do.
"""
from __future__ import annotations

import math

import numpy as np

from mjax.specs import dtypes
from mjax.base import trace_trees, tree_util
from mjax.tracing.axis_env import AXIS_ENV
from mjax.tracing.core import Tracer, at_user_line, aval_of_value, bind
from mjax.dialect.ops import collectives as C
from mjax.dialect.ops.structural import CopyOp
from mjax.dialect.values import defining_op, set_strings
from mjax.lax import parallel_groups as G
from mjax.lax.elementwise import convert_element_type, div
from mjax.lax.shapes import index_in_dim
from mjax.arrays.sharding_types import mark_manual_partial


def _names(axis_name) -> tuple:
    return tuple(axis_name) if isinstance(axis_name, (tuple, list)) else (axis_name,)


def _bound_size(names) -> int:
    """The product of the sizes of `names`; NameError for a name no vmap binds."""
    return math.prod(AXIS_ENV.size(n) for n in names)


def _groups(axis_index_groups, names, fn: str, equal_sizes=True):
    """The static tables of `axis_index_groups` (None without groups)."""
    if axis_index_groups is None:
        return None
    if len(names) != 1:
        raise NotImplementedError(f"lax.{fn}: axis_index_groups over several axis names "
                                  f"{names} at once is not supported by mjax")
    return G.Groups(axis_index_groups, _bound_size(names), fn, equal_sizes)


def _single(names, fn: str):
    if len(names) != 1:
        raise NotImplementedError(f"lax.{fn} over several axis names {names} at once is not "
                                  f"supported by mjax yet; nest one call per name")
    return names


def _map(fn, tree):
    """fn over the leaves of `tree` (a plain loop, so traced ops get the user's line)."""
    leaves, treedef = trace_trees.tree_flatten(tree)
    return tree_util.tree_unflatten(treedef, [fn(v) for v in leaves])


def _check_name_types(names, fn: str):
    for n in names:
        if not isinstance(n, str):
            raise NotImplementedError(f"lax.{fn}: only string axis names are supported, got "
                                      f"{n!r}")


def _prepare(axis_name, fn: str, single=False):
    names = _names(axis_name)
    _check_name_types(names, fn)
    size = _bound_size(names)
    return (_single(names, fn) if single else names), size


def _canonical(axis: int, rank: int, what: str, fn: str) -> int:
    if not -rank <= axis < rank:
        raise ValueError(at_user_line(f"lax.{fn}: {what} {axis} is out of bounds for rank "
                                      f"{rank}"))
    return axis % rank


# ---- reductions ----------------------------------------------------------------------------
def _as_summable(v):
    """Booleans are summed as int32 (JAX: psum counts the True members)."""
    if np.dtype(aval_of_value(v).dtype) == np.bool_:
        return convert_element_type(v, np.int32)
    return v


def psum(x, axis_name, *, axis_index_groups=None):
    """Sum over the named axes `axis_name` of each leaf. JAX: lax.psum."""
    names, _ = _prepare(axis_name, "psum")
    groups = _groups(axis_index_groups, names, "psum", equal_sizes=False)
    if groups is not None:
        return _map(lambda v: G.reduce(_as_summable(v), names[0], groups, "sum"), x)
    return _map(lambda v: bind(C.PsumOp, _as_summable(v), axes=names), x)


def pmax(x, axis_name, *, axis_index_groups=None):
    """Maximum over the named axes `axis_name` of each leaf. JAX: lax.pmax."""
    names, _ = _prepare(axis_name, "pmax")
    groups = _groups(axis_index_groups, names, "pmax", equal_sizes=False)
    if groups is not None:
        return _map(lambda v: G.reduce(v, names[0], groups, "max"), x)
    return _map(lambda v: bind(C.PmaxOp, v, axes=names), x)


def pmin(x, axis_name, *, axis_index_groups=None):
    """Minimum over the named axes `axis_name` of each leaf. JAX: lax.pmin."""
    names, _ = _prepare(axis_name, "pmin")
    groups = _groups(axis_index_groups, names, "pmin", equal_sizes=False)
    if groups is not None:
        return _map(lambda v: G.reduce(v, names[0], groups, "min"), x)
    return _map(lambda v: bind(C.PminOp, v, axes=names), x)


def pmean(x, axis_name, *, axis_index_groups=None):
    """Mean over the named axes: psum divided by the axis size (in an inexact dtype, as
    jnp.true_divide). JAX: lax.pmean."""
    names, size = _prepare(axis_name, "pmean")
    groups = _groups(axis_index_groups, names, "pmean", equal_sizes=False)
    if groups is not None:      # JAX divides by the first group's size
        size = groups.group_size

    def mean(v):
        v = _as_summable(v)
        total = (bind(C.PsumOp, v, axes=names) if groups is None
                 else G.reduce(v, names[0], groups, "sum"))
        aval = aval_of_value(total)
        inexact = dtypes.to_inexact_dtype(aval.dtype)
        if inexact != aval.dtype:
            total = convert_element_type(total, inexact, weak_type=aval.weak_type)
        return div(total, convert_element_type(size, inexact, weak_type=True))
    return _map(mean, x)


# ---- gathers and scatters -----------------------------------------------------------------
def all_gather(x, axis_name, *, axis_index_groups=None, axis=0, tiled=False, to="varying"):
    """Every member's `x`, stacked along `axis` (tiled: concatenated). JAX: lax.all_gather."""
    if to != "varying":
        raise NotImplementedError(f"lax.all_gather(to={to!r}) needs shard_map's varying/"
                                  f"reduced types, which mjax does not have yet")
    names, size = _prepare(axis_name, "all_gather", single=True)
    groups = _groups(axis_index_groups, names, "all_gather")

    def one(v):
        rank = len(getattr(v, "shape", ()))
        a = _canonical(axis, rank if tiled else rank + 1, "axis", "all_gather")
        if groups is not None:
            return G.all_gather(v, names[0], groups, a, bool(tiled))
        return bind(C.AllGatherOp, v, axes=names, axis=a, tiled=bool(tiled), axis_size=size)
    return _map(one, x)


def psum_scatter(x, axis_name, *, scatter_dimension=0, axis_index_groups=None, tiled=False):
    """psum whose result each member keeps one block of, along `scatter_dimension`.
    JAX: lax.psum_scatter."""
    names, size = _prepare(axis_name, "psum_scatter", single=True)
    groups = _groups(axis_index_groups, names, "psum_scatter")

    def one(v):
        d = _canonical(scatter_dimension, len(getattr(v, "shape", ())), "scatter_dimension",
                       "psum_scatter")
        if groups is not None:
            return G.psum_scatter(v, names[0], groups, d, bool(tiled))
        return bind(C.PsumScatterOp, v, axes=names, scatter_dimension=d, tiled=bool(tiled),
                    axis_size=size)
    return _map(one, x)


def all_to_all(x, axis_name, split_axis, concat_axis, *, axis_index_groups=None,
               tiled=False):
    """Splits `x` along `split_axis` across the members; each concatenates what it gets
    along `concat_axis`. JAX: lax.all_to_all."""
    names, size = _prepare(axis_name, "all_to_all", single=True)
    groups = _groups(axis_index_groups, names, "all_to_all")

    def one(v):
        rank = len(getattr(v, "shape", ()))
        s = _canonical(split_axis, rank, "split_axis", "all_to_all")
        c = _canonical(concat_axis, rank, "concat_axis", "all_to_all")
        if groups is not None:
            return G.all_to_all(v, names[0], groups, s, c, bool(tiled))
        return bind(C.AllToAllOp, v, axes=names, split_axis=s, concat_axis=c,
                    tiled=bool(tiled), axis_size=size)
    return _map(one, x)


def pswapaxes(x, axis_name, axis, *, axis_index_groups=None):
    """Swaps the named axis with positional axis `axis` of `x` (whose size must be the
    axis size). JAX: lax.pswapaxes."""
    return all_to_all(x, axis_name, axis, axis, axis_index_groups=axis_index_groups)


# ---- permutations -------------------------------------------------------------------------
def ppermute(x, axis_name, perm):
    """Member `dst` gets member `src`'s `x` for each (src, dst) in `perm`; the others get
    zeros. JAX: lax.ppermute."""
    names, size = _prepare(axis_name, "ppermute", single=True)
    pairs = tuple((int(s), int(d)) for s, d in perm)
    for s, d in pairs:
        if not (0 <= s < size and 0 <= d < size):
            raise ValueError(at_user_line(f"lax.ppermute: perm {list(perm)} names a member "
                                          f"outside axis {names[0]!r} of size {size}"))
    srcs, dsts = [p[0] for p in pairs], [p[1] for p in pairs]
    if len(set(srcs)) != len(srcs) or len(set(dsts)) != len(dsts):
        raise ValueError(at_user_line(f"lax.ppermute: perm sources and destinations must be "
                                      f"unique, got {list(perm)}"))
    return _map(lambda v: bind(C.PpermuteOp, v, axes=names, perm=pairs), x)


def pshuffle(x, axis_name, perm):
    """Member i gets member perm[i]'s `x` (perm a permutation). JAX: lax.pshuffle."""
    perm = [int(p) for p in perm]
    if sorted(perm) != list(range(len(perm))):
        raise ValueError(f"`perm` does not represent a permutation: {perm}")
    return ppermute(x, axis_name, [(src, dst) for dst, src in enumerate(perm)])


def pbroadcast(x, axis_name, source):
    """Every member gets member `source`'s value of each leaf (XLA's collective broadcast;
    here the `source` row of an all_gather, so every dtype and bit pattern is copied as it
    is). JAX: lax.pbroadcast."""
    names, size = _prepare(axis_name, "pbroadcast", single=True)
    source = int(source)
    if not 0 <= source < size:
        raise ValueError(at_user_line(f"pbroadcast: source {source} is not an index of axis "
                                      f"{names[0]!r} of size {size}"))
    return _map(lambda v: index_in_dim(all_gather(v, names[0]), source, 0, False), x)


def axis_size(axis_name) -> int:
    """The size of the named axis (the product over a tuple of names). JAX: lax.axis_size."""
    names = _names(axis_name)
    _check_name_types(names, "axis_size")
    return _bound_size(names)


def axis_index(axis_name):
    """This member's index along `axis_name` (int32); over several names, the row-major
    index into their product. JAX: lax.axis_index."""
    names, _ = _prepare(axis_name, "axis_index")

    def one(name):
        given = AXIS_ENV.index_of.get(name)     # (pl.core_map's core axis in its kernel)
        return given() if given is not None else bind(C.AxisIndexOp, axes=(name,))
    index = one(names[0])
    for name in names[1:]:
        index = index * AXIS_ENV.size(name) + one(name)
    return index


__all__ = ["psum", "pmean", "pmax", "pmin", "all_gather", "psum_scatter", "all_to_all",
           "pswapaxes", "ppermute", "pshuffle", "pbroadcast", "axis_index", "axis_size"]


# ---- variance casts ------------------------------------------------------------------------
def pcast(x, axis_name, *, to: str):
    """`x` cast to vary along the named axes. JAX: lax.pcast. mjax's shard_map bodies run
    under one vmap per mesh axis, where a value the same on every member of an axis is
    simply unbatched and becomes batched when mixed with a varying one, so
    to='varying' changes no value, only its type (`{V:...}`)."""
    if to not in ("varying", "unreduced", "reduced"):
        raise ValueError("Got unexpected `to` value. Allowed `to` values are: "
                         "{'varying', 'unreduced', 'reduced'}")
    names = _names(axis_name)
    _check_name_types(names, "pcast")
    bound = {n for n, _ in AXIS_ENV.frames}
    if not all(n in bound for n in names):
        if to == "unreduced":
            raise ValueError("Unsupported pcast from=invarying, to='unreduced'")
        unbound = next(n for n in names if n not in bound)
        raise NameError(f"Found an unbound axis name: {unbound}. To fix this, please call "
                        f"{'preduced' if to == 'reduced' else 'pvary'} under "
                        f"`jax.shard_map`.")
    if to == "reduced":
        # The same value on every member, typed {R:...}: its cotangent, varying along
        # the axes (partials), is summed back by the transpose of the unbatched use.
        return _map(lambda v: _marked(v, reduced=names), x)
    # to='unreduced': each member's value is its partial of the sum over the axes; mjax
    # keeps it as a value varying along them, which an unreduced out_spec stacks into an
    # unreduced array (spmd/shard_map.py).
    if to == "varying":
        return _map(lambda v: cast_varying(v, names), x)
    return _map(lambda v: _marked(cast_varying(v, names), unreduced=names), x)


def _marked(v, unreduced=(), reduced=()):
    if isinstance(v, Tracer) and v.trace.varying is not None:
        v = bind(CopyOp, v) if reduced else v
        mark_manual_partial(v, unreduced, reduced)
    return v


def cast_varying(x, names):
    """x as a value varying along `names` too (a copy under a shard_map body's trace)."""
    if not isinstance(x, Tracer) or x.trace.varying is None:
        return x
    y = bind(CopyOp, x)
    y.trace.varying[y.value] = y.trace.varying.get(x.value, frozenset()) | set(names)
    # (printed as JAX's pvary: spmd/shard_map_print.py)
    set_strings(defining_op(y.value), PVARY_MARK, names)
    return y


# The discardable attribute of the copy a pcast to 'varying' makes: the axes it names.
PVARY_MARK = "mjax.pvary"
