"""Differentiation with respect to the stored values of sparse arguments: `grad`,
`value_and_grad`, `jacfwd`, `jacrev`, `jacobian`. A sparse argument's derivative is a
sparse array with its indices (leading output dimensions as batch dimensions for
Jacobians). JAX: jax.experimental.sparse.ad."""
from __future__ import annotations

import functools

from mjax import ad as _ad
from mjax import numpy as jnp
from mjax.base import tree_util
from mjax.experimental.sparse._base import JAXSparse


def _is_sparse(x) -> bool:
    return isinstance(x, JAXSparse)


def _split(args, argnums):
    """The arguments with each sparse one at argnums replaced by its data, and how to put
    the sparse ones back."""
    argnums = (argnums,) if isinstance(argnums, int) else tuple(argnums)
    structs = {}
    new = list(args)
    for i in argnums:
        leaves, tree = tree_util.tree_flatten(args[i], is_leaf=_is_sparse)
        structs[i] = (tree, [(leaf.tree_flatten(), type(leaf)) if _is_sparse(leaf) else None
                             for leaf in leaves])
        new[i] = tree_util.tree_unflatten(tree, [leaf.data if _is_sparse(leaf) else leaf
                                                 for leaf in leaves])
    return new, argnums, structs


def _rebuild(i, value, structs, out_ndim=0):
    tree, kinds = structs[i]
    leaves = tree_util.tree_leaves(value)
    out = []
    for leaf, kind in zip(leaves, kinds):
        if kind is None:
            out.append(leaf)
            continue
        (children, aux), cls = kind
        lead = leaf.shape[:out_ndim]
        others = [jnp.broadcast_to(c, lead + c.shape) if out_ndim else c
                  for c in children[1:]]
        # (BCOO/BCSR's unflatten reads leading dimensions off the indices' rank)
        out.append(cls.tree_unflatten(aux, [leaf, *others]))
    return tree_util.tree_unflatten(tree, out)


def _wrap(transform, fun, argnums, out_rank=False, **kw):
    @functools.wraps(fun)
    def wrapped(*args):
        new, nums, structs = _split(args, argnums)

        def on_data(*a):
            full = list(args)
            for i in nums:
                full[i] = _rebuild(i, a[i], structs)
            return fun(*full)
        result = transform(on_data, argnums=nums, **kw)(*new)
        value = None
        if transform is _ad.value_and_grad:
            value, result = result
        if kw.get("has_aux"):
            result, aux = result
        n = 0
        if out_rank:
            n = jnp.ndim(on_data(*new)[0] if kw.get("has_aux") else on_data(*new))
        grads = tuple(_rebuild(i, g, structs, n) for i, g in zip(nums, result))
        grads = grads[0] if isinstance(argnums, int) else grads
        if kw.get("has_aux"):
            grads = (grads, aux)
        return grads if value is None else (value, grads)
    return wrapped


def grad(fun, argnums=0, has_aux=False, **kwargs):
    """mjax.grad, a sparse argument's gradient as a sparse array of its indices. JAX:
    jax.experimental.sparse.grad."""
    return _wrap(_ad.grad, fun, argnums, has_aux=has_aux, **kwargs)


def value_and_grad(fun, argnums=0, has_aux=False, **kwargs):
    """JAX: jax.experimental.sparse.value_and_grad."""
    return _wrap(_ad.value_and_grad, fun, argnums, has_aux=has_aux, **kwargs)


def jacfwd(fun, argnums=0, has_aux=False, **kwargs):
    """JAX: jax.experimental.sparse.jacfwd."""
    return _wrap(_ad.jacfwd, fun, argnums, out_rank=True, has_aux=has_aux, **kwargs)


def jacrev(fun, argnums=0, has_aux=False, **kwargs):
    """JAX: jax.experimental.sparse.jacrev."""
    return _wrap(_ad.jacrev, fun, argnums, out_rank=True, has_aux=has_aux, **kwargs)


jacobian = jacrev
