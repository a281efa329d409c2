"""shard_map over hijax values: `HiPspec`s lay out a hi type's lo arrays.

A hi value (mjax/tracing/hijax_lowering.py) crosses shard_map as its lo values. Its entry in
in_specs or out_specs is a `HiPspec`, whose `to_lo()` gives one PartitionSpec per lo value
(JAX's docs/hijax_types.md: a quantized array's values and scales split together); a
plain PartitionSpec there applies to each of its lo values. The body sees the value
raised again over its per-device blocks, so `jax.typeof` of it is the hi type of a block;
the results come back raised over the global arrays.
"""
from __future__ import annotations

from mjax.base import tree_util
from mjax.tracing.hijax_lowering import Lowered, has_hi, lower_results, raise_results
from mjax.specs.sharding_impls import PartitionSpec


class HiPspec:
    """A partition spec for a hi type's lowered arrays (JAX's HiPspec): subclasses give
    `to_lo()`, one PartitionSpec per lo value of the type."""

    def to_lo(self):
        raise NotImplementedError(f"{type(self).__name__}.to_lo must be overridden")


def _spec_leaf(s) -> bool:
    return s is None or isinstance(s, (PartitionSpec, HiPspec))


def uses_hi(in_specs, out_specs, args) -> bool:
    """Whether a shard_map call involves hi values or HiPspecs."""
    specs = tree_util.tree_leaves((in_specs, out_specs), is_leaf=_spec_leaf)
    return any(isinstance(s, HiPspec) for s in specs) or has_hi(args)


def lowered_specs(specs):
    """in_specs or out_specs for the lowered values: each HiPspec becomes the tuple of its
    lo values' specs (a prefix of the tuple of lo values a hi value is lowered to; a plain
    PartitionSpec over a hi value is a prefix of them all already)."""
    return tree_util.tree_map(lambda s: tuple(s.to_lo()) if isinstance(s, HiPspec) else s,
                              specs, is_leaf=_spec_leaf)


def _packed(flat, how):
    """The body's lowered results as a tree: each hi leaf a tuple of its lo values."""
    treedef, specs, counts = how
    it = iter(flat)
    leaves = [next(it) if s is None else tuple(next(it) for _ in range(n))
              for s, n in zip(specs, counts)]
    return tree_util.tree_unflatten(treedef, leaves)


def shard_map_hi(shard_map, f, in_specs, out_specs, options, cache, args):
    """`shard_map(f, ...)(*args)` where hi values or HiPspecs take part: the map runs over
    the lo values. `shard_map` is the ordinary transformation and `options` its other
    keyword arguments; `cache` keeps one map over the lo values per hi structure."""
    if isinstance(in_specs, HiPspec):      # (one spec for every argument)
        in_specs = (in_specs,) * len(args)
    lowered = Lowered(args)
    if any(spec is not None and spec[1] is not None for spec in lowered.specs):
        raise NotImplementedError("shard_map over mutable hijax values (MutableHiType): "
                                  "mjax does not write their states back")
    key = ("hi", lowered.key())
    hit = cache.get(key)
    if hit is None:
        state: dict = {}

        def lo_body(*lo_args):
            hi_args, _ = state["lowered"].raise_flat(tree_util.tree_leaves(lo_args),
                                                     traced=True, retype=True)
            flat, state["how"] = lower_results(f(*hi_args), handles=False)
            return _packed(flat, state["how"])

        mapped = shard_map(lo_body, in_specs=lowered_specs(in_specs),
                           out_specs=lowered_specs(out_specs), **options)
        hit = cache[key] = (mapped, state)
    mapped, state = hit
    state["lowered"] = lowered
    packed = mapped(*lowered.packed)
    return raise_results(tree_util.tree_leaves(packed), state["how"])
