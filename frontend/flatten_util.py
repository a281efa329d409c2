"""JAX: jax.flatten_util: ravel a pytree of arrays into one 1-D array and back."""
from __future__ import annotations

import warnings

import numpy as np

from mjax import lax
from mjax.specs import dtypes
from mjax.base.trace_trees import tree_flatten
from mjax.base.tree_util import tree_unflatten

__all__ = ["ravel_pytree"]


class _Unravel:
    """A hashable function (equal when built from the same structure), so an unravel
    function can be a static argument of jit, as JAX's HashablePartial is."""

    def __init__(self, fun, *args):
        self.fun, self.args = fun, args

    def __call__(self, flat):
        return self.fun(*self.args, flat)

    def __eq__(self, other):
        return type(other) is _Unravel and (self.fun, self.args) == (other.fun, other.args)

    def __hash__(self):
        return hash((self.fun, self.args))


def ravel_pytree(pytree):
    """Ravel (flatten) a pytree of arrays down to a 1-D array.

    Returns (flat, unravel): `flat` concatenates the raveled leaves in the dtype their
    dtypes promote to (float32 and empty when there are no leaves); `unravel(flat)`
    rebuilds the pytree, each leaf in its own shape and dtype."""
    leaves, treedef = tree_flatten(pytree)
    flat, unravel_list = _ravel_list(leaves)
    return flat, _Unravel(_unravel_pytree, treedef, unravel_list)


def _unravel_pytree(treedef, unravel_list, flat):
    return tree_unflatten(treedef, unravel_list(flat))


def _ravel_list(leaves):
    if not leaves:
        return lax.full([0], 0, "float32"), _Unravel(_no_leaves)
    from_dtypes = tuple(dtypes.dtype(x) for x in leaves)
    to_dtype = dtypes.result_type(*from_dtypes)
    sizes = tuple(int(np.size(x)) for x in leaves)
    shapes = tuple(tuple(np.shape(x)) for x in leaves)
    flat = lax.concatenate([lax.reshape(lax.convert_element_type(x, to_dtype), (n,))
                            for x, n in zip(leaves, sizes)], dimension=0)
    if all(d == to_dtype for d in from_dtypes):
        # (one dtype: nothing was converted, so unravel takes a vector of any dtype and
        # keeps it, as JAX's does: unravel(flat < 5) gives booleans)
        return flat, _Unravel(_unravel_any_dtype, sizes, shapes)
    return flat, _Unravel(_unravel_list, sizes, shapes, from_dtypes, to_dtype)


def _unravel_any_dtype(sizes, shapes, flat):
    return [c.reshape(s) for c, s in zip(lax.split(flat, sizes), shapes)]


def _no_leaves(flat):
    return []


def _unravel_list(sizes, shapes, from_dtypes, to_dtype, flat):
    if dtypes.dtype(flat) != to_dtype:
        raise TypeError(f"unravel function given array of dtype {dtypes.dtype(flat)}, "
                        f"but expected dtype {to_dtype}")
    chunks = lax.split(flat, sizes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # complex -> real drops the imaginary part, as JAX
        return [lax.convert_element_type(c.reshape(s), d)
                for c, s, d in zip(chunks, shapes, from_dtypes)]
