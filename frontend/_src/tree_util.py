"""JAX-private: jax._src.tree_util (flax.nnx: the pytree registry; flax's struct_test:
prefix_errors; flatten_one_level's docstring example imports it from here). The public
names are mjax.tree_util's."""
from mjax.base import tree_util
from mjax.base.tree_util import *  # noqa: F401,F403
from mjax.base.tree_util import __all__ as _public
from mjax.base.tree_util import NODE_TYPES as _registry  # noqa: F401 (flax.nnx: `type(x) in`)
# (JAX's registry jit's dispatch flattens arguments with; mjax's transformations flatten
# with trace_registry, the same nodes plus key arrays as their data)
from mjax.base.tree_util import trace_registry as dispatch_registry  # noqa: F401


def prefix_errors(prefix_tree, full_tree, is_leaf=None) -> list:
    """Per disagreement between a prefix tree and a full tree, a function of the prefix
    tree's name (e.g. 'in_axes') building JAX's ValueError. JAX:
    jax._src.tree_util.prefix_errors."""
    return list(tree_util._prefix_errors((), prefix_tree, full_tree, is_leaf))


def broadcast_flattened_prefix_with_treedef(prefix_leaves, prefix_treedef, full_treedef):
    """The leaves of the prefix tree (given flattened) broadcast to full_treedef: each
    prefix leaf repeated for every leaf of the full tree's subtree under it; JAX's
    "pytree structure error" ValueError where the prefix is not a prefix. JAX:
    jax._src.tree_util.broadcast_flattened_prefix_with_treedef."""
    prefix = tree_util.tree_unflatten(prefix_treedef, prefix_leaves)
    full = tree_util.tree_unflatten(full_treedef, [object()] * full_treedef.num_leaves)
    return tree_util.tree_leaves(tree_util.tree_broadcast(prefix, full))


__all__ = list(_public) + ["prefix_errors"]
