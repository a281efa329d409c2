"""float0 (JAX's tangent dtype of integer values) across staged calls.

XLA has no float0 buffers, so a float0 array in a staged function's output is replaced
by a `Float0Zeros` placeholder (a pytree node with no leaves, so it rides in the output
tree), and made on the host after the call.
"""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes as _dt
from mjax.base import trace_trees, tree_util


class Float0Zeros:
    """Stands for float0 zeros of `shape` in the output of a staged computation: XLA has
    no float0 buffers, so these are made on the host after the call (a pytree node with
    no leaves, so jit passes it through its output tree)."""

    __slots__ = ("shape",)

    def __init__(self, shape):
        self.shape = tuple(shape)

    def __eq__(self, other):
        return isinstance(other, Float0Zeros) and other.shape == self.shape

    def __hash__(self):
        return hash(("float0", self.shape))

    def zeros(self):
        return np.zeros(self.shape, _dt.float0)


tree_util.register_pytree_node(Float0Zeros, lambda x: ((), x.shape),
                               lambda shape, _: Float0Zeros(shape))


def is_float0(x) -> bool:
    return isinstance(x, np.ndarray) and x.dtype == _dt.float0


def hide_float0(tree):
    return trace_trees.tree_map(lambda x: Float0Zeros(x.shape) if is_float0(x) else x, tree)


def contains_float0(tree) -> bool:
    leaves = trace_trees.tree_leaves(tree, is_leaf=lambda x: isinstance(x, Float0Zeros))
    return any(isinstance(x, Float0Zeros) for x in leaves)


def restore_float0(tree):
    return trace_trees.tree_map(lambda x: x.zeros() if isinstance(x, Float0Zeros) else x, tree,
                              is_leaf=lambda x: isinstance(x, Float0Zeros))


