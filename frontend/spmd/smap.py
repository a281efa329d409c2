"""`smap`: shard_map over one mesh axis, its specs given as vmap-style axes.
JAX: jax.smap."""
from __future__ import annotations

from mjax.base import tree_util
from mjax.specs.sharding_impls import PartitionSpec as P
from mjax.spmd.shard_map import Infer, shard_map


def _spec(axis_name, axis):
    """The PartitionSpec that splits dimension `axis` over `axis_name` (None: none)."""
    return P() if axis is None else P(*[None] * axis, axis_name)


def _is_axes_leaf(x) -> bool:
    return x is None or isinstance(x, int)


def smap(f=None, /, *, in_axes=Infer, out_axes, axis_name):
    """`f` applied per shard of the mesh axis `axis_name` of the context mesh
    (`mjax.set_mesh`), each argument split along its `in_axes` dimension (None: passed
    whole) and each result put together along its `out_axes` dimension."""
    if f is None:
        return lambda g: smap(g, in_axes=in_axes, out_axes=out_axes, axis_name=axis_name)
    if isinstance(axis_name, (list, tuple)):
        raise TypeError(f"smap axis_name should be a `str` or a `Hashable`, but got "
                        f"{axis_name}")
    if in_axes is not None and in_axes is not Infer and not isinstance(in_axes, (int, tuple)):
        raise TypeError(f"smap in_axes must be an int, None, jax.sharding.Infer, or a tuple "
                        f"of entries corresponding to the positional arguments passed to "
                        f"the function, but got {in_axes}.")
    if in_axes is not Infer and not all(
            isinstance(a, int) for a in tree_util.tree_leaves(in_axes)):
        raise TypeError(f"smap in_axes must be an int, None, jax.sharding.Infer, or "
                        f"(nested) container with those types as leaves, but got {in_axes}.")
    if not all(isinstance(a, int) for a in tree_util.tree_leaves(out_axes)):
        raise TypeError(f"smap out_axes must be an int, None, or (nested) container with "
                        f"those types as leaves, but got {out_axes}.")

    def specs(axes):
        return tree_util.tree_map(lambda a: _spec(axis_name, a), axes, is_leaf=_is_axes_leaf)
    return shard_map(f, in_specs=Infer if in_axes is Infer else specs(in_axes),
                     out_specs=specs(out_axes), axis_names={axis_name})
