"""JAX-private: jax._src.tree_util (flax.nnx: the pytree registry; flax's struct_test:
prefix_errors; flatten_one_level's docstring example imports it from here). The public
names are mjax.tree_util's."""
from mjax.base import tree_util
from mjax.base.tree_util import *  # noqa: F401,F403
from mjax.base.tree_util import __all__ as _public
from mjax.base.tree_util import NODE_TYPES as _registry  # noqa: F401 (flax.nnx: `type(x) in`)


def prefix_errors(prefix_tree, full_tree, is_leaf=None) -> list:
    """Per disagreement between a prefix tree and a full tree, a function of the prefix
    tree's name (e.g. 'in_axes') building JAX's ValueError. JAX:
    jax._src.tree_util.prefix_errors."""
    return list(tree_util._prefix_errors((), prefix_tree, full_tree, is_leaf))


__all__ = list(_public) + ["prefix_errors"]
