"""Jacobians: `jacfwd` (the JVP vmapped over the input basis), `jacrev` (the pullback
vmapped over the output basis) and `hessian`. One trace each, as in JAX."""
from __future__ import annotations

import numpy as np

from mjax.specs import dtypes as _dt
from mjax import lax
from mjax.base import trace_trees, tree_util
from mjax.ad.reverse import (_argnums_tuple, _check_input_dtype, _check_output_dtype,
                             _main_tree, vjp)
from mjax.ad.staging import (_check_aux_pair, _check_callable, _is_inexact, _wraps,
                             stage_function, staged)
from mjax.vmap.batching import vmap
from mjax.tracing.core import aval_of_value
from mjax.dialect.attributes import Symbol
from mjax.dialect.ops import transforms as T
from mjax.tracing.staging import call_args, emit, emit_call
from mjax.base.traceback_util import api_boundary


# ---- jacobians ----------------------------------------------------------------------------
def _std_basis(avals):
    """The standard basis of the space of all `avals` together, one array per aval: the
    k-th has shape (total,) + avals[k].shape and is one-hot in rows [off_k, off_k + size_k).
    JAX: api._std_basis."""
    total = sum(a.size for a in avals)
    out, off = [], 0
    for a in avals:
        rows = lax.broadcasted_iota(np.int32, (total, a.size), 0)
        cols = lax.broadcasted_iota(np.int32, (total, a.size), 1)
        eye = lax.convert_element_type(lax.eq(rows, lax.add(cols, np.int32(off))), a.dtype)
        out.append(lax.reshape(eye, (total,) + a.shape))
        off += a.size
    return out


def _rows(stacked, avals, k, shape):
    """Rows [off_k, off_k + size_k) of `stacked` (one row per basis vector of `avals`),
    reshaped to avals[k].shape + shape."""
    off = sum(a.size for a in avals[:k])
    return lax.reshape(lax.slice_in_dim(stacked, off, off + avals[k].size),
                       avals[k].shape + tuple(shape))


def _moveaxis(x, source, destination):
    """jnp.moveaxis: the axes `source` moved to the positions `destination`."""
    rest = [n for n in range(len(np.shape(x))) if n not in source]
    for dst, src in sorted(zip(destination, source)):
        rest.insert(dst, src)
    return lax.transpose(x, tuple(rest))


def _select_args(fun, args, kwargs, nums):
    def f_sel(*xs):
        full = list(args)
        for i, x in zip(nums, xs):
            full[i] = x
        return fun(*full, **kwargs)
    return f_sel


def _wrt(args, argnums):
    """What a Jacobian is taken with respect to: (single, argnums, the arguments, their
    leaves, tree and avals)."""
    single, nums = _argnums_tuple(argnums, len(args))
    dyn = tuple(args[i] for i in nums)
    leaves, tree = trace_trees.tree_flatten(dyn)
    # (JAX checks the inputs with a tree_map, which rebuilds custom nodes with None leaves:
    # an unflatten function that rejects None fails there, as under JAX.)
    tree_util.tree_unflatten(tree, [None] * len(leaves))
    return single, nums, dyn, leaves, tree, [aval_of_value(x).strip_weak_type()
                                             for x in leaves]


def _jac_tree(out_tree, in_tree, blocks, single):
    """blocks[j][k]: d out leaf j / d in leaf k -> out structure outside, in inside."""
    per_out = []
    for row in blocks:
        inner = tree_util.tree_unflatten(in_tree, row)
        per_out.append(inner[0] if single else inner)
    return tree_util.tree_unflatten(out_tree, per_out)


def jacfwd(fun, argnums=0, has_aux=False, holomorphic=False):
    """Jacobian by forward mode, the JVP vmapped over the input basis; output structure
    outside, input structure inside, output dims first. JAX: jax.jacfwd."""
    _check_callable(fun)

    def jacfwd_impl(*args, **kwargs):
        single, nums, dyn, x_leaves, x_tree, x_avals = _wrt(args, argnums)
        for a in x_avals:
            if holomorphic:
                _check_input_dtype(a, False, True, "jacfwd")
            elif not _dt.is_float(a.dtype):
                raise TypeError(f"jacfwd requires real-valued inputs (input dtype that is a "
                                f"sub-dtype of np.floating), but got {a.dtype.name}. For "
                                f"holomorphic differentiation, pass holomorphic=True. For "
                                f"differentiation of non-holomorphic functions involving "
                                f"complex inputs or integer inputs, use jax.jvp directly.")
        traced = stage_function(_select_args(fun, args, kwargs, nums), dyn, {},
                                name=getattr(fun, "__name__", "jacfwd"),
                                diff_leaves=range(len(x_leaves)), forward=True)
        out_avals = traced.out_avals
        main_tree = _main_tree(traced, has_aux)
        if has_aux:
            _check_aux_pair(traced.out_tree, out_avals)
        n_main = main_tree.num_leaves
        if holomorphic:
            for a in out_avals[:n_main]:
                _check_output_dtype(a, True, "jacfwd")
        diff_results = tuple(j for j, a in enumerate(out_avals) if _is_inexact(a))
        operands = call_args(traced, x_leaves)
        n_out = len(out_avals)

        def pushforward(*tangents):
            # Only the inputs get tangents, not values the function closes over.
            res = emit(T.JvpOp, operands + list(tangents), callee=Symbol(traced.name),
                       diff_args=tuple(range(len(x_avals))), diff_results=diff_results)
            return res[:n_out], res[n_out:]
        if sum(a.size for a in x_avals) == 0:  # no input elements at all
            outs, tangents = emit_call(traced.name, operands), None
        else:
            # One JVP batched over every basis vector (JAX: vmap of the pushforward).
            outs, tangents = vmap(pushforward, out_axes=(None, 0))(*_std_basis(x_avals))
            tangents = dict(zip(diff_results, tangents))
        for t, a in zip(outs, out_avals):
            t.aval = a
        blocks = []
        for j, ya in enumerate(out_avals[:n_main]):
            row = []
            for k, xa in enumerate(x_avals):
                if j not in diff_results:
                    row.append(np.zeros(ya.shape + xa.shape, _dt.float0))
                    continue
                if tangents is None:
                    row.append(lax.full(ya.shape + xa.shape, 0, ya.dtype))
                    continue
                J = _rows(tangents[j], x_avals, k, ya.shape)
                # x dims first -> y dims first
                J = _moveaxis(J, tuple(range(xa.ndim)),
                              tuple(range(ya.ndim, ya.ndim + xa.ndim)))
                if ya.weak_type and hasattr(J, "aval"):   # tangents keep the weak type
                    J.aval = J.aval.update(weak_type=True)
                row.append(J)
            blocks.append(row)
        jac = _jac_tree(main_tree, x_tree, blocks, single)
        if has_aux:
            return jac, tree_util.tree_unflatten(traced.out_tree, outs)[1]
        return jac
    run = staged(jacfwd_impl,
                 diff_argnums=lambda n: set(_argnums_tuple(argnums, n)[1]) if n else set(),
                 concrete_root=True)

    @_wraps(fun)
    @api_boundary
    def jacfun(*args, **kwargs):
        return run(*args, **kwargs)
    return jacfun


def jacrev(fun, argnums=0, has_aux=False, holomorphic=False, allow_int=False):
    """Jacobian by reverse mode: one forward pass, the pullback vmapped over the output
    basis; output structure outside, input structure inside. JAX: jax.jacrev."""
    _check_callable(fun)

    def jacrev_impl(*args, **kwargs):
        single, nums, dyn, x_leaves, x_tree, x_avals = _wrt(args, argnums)
        for a in x_avals:
            _check_input_dtype(a, allow_int, holomorphic, "jacrev")
        res = vjp(_select_args(fun, args, kwargs, nums), *dyn, has_aux=has_aux)
        y, pullback = res[0], res[1]
        y_leaves, y_tree = trace_trees.tree_flatten(y)
        y_avals = [aval_of_value(v).strip_weak_type() for v in y_leaves]
        for a in y_avals:
            _check_output_dtype(a, holomorphic, "jacrev")
        diff_in = [k for k, xa in enumerate(x_avals) if _is_inexact(xa)]

        def pullback_leaves(*cts):
            grads = trace_trees.tree_leaves(pullback(tree_util.tree_unflatten(y_tree, cts)))
            return [grads[k] for k in diff_in]
        if sum(a.size for a in y_avals) == 0:
            rows = None
        else:
            # One pullback batched over every basis vector (JAX: vmap of the pullback).
            rows = dict(zip(diff_in, vmap(pullback_leaves)(*_std_basis(y_avals))))
        blocks = []
        for j, ya in enumerate(y_avals):
            row = []
            for k, xa in enumerate(x_avals):
                if rows is None or k not in rows:
                    # allow_int: zeros of the input dtype, as JAX; or no output elements
                    row.append(lax.full(ya.shape + xa.shape, 0, xa.dtype))
                else:
                    block = _rows(rows[k], y_avals, j, xa.shape)
                    if block.dtype == xa.dtype:   # (the input's weak type: JAX's cast)
                        block = lax.convert_element_type(
                            block, xa.dtype, weak_type=aval_of_value(x_leaves[k]).weak_type)
                    row.append(block)
            blocks.append(row)
        jac = _jac_tree(y_tree, x_tree, blocks, single)
        return (jac, res[2]) if has_aux else jac
    run = staged(jacrev_impl,
                 diff_argnums=lambda n: set(_argnums_tuple(argnums, n)[1]) if n else set(),
                 concrete_root=True)

    @_wraps(fun)
    @api_boundary
    def jacfun(*args, **kwargs):
        return run(*args, **kwargs)
    return jacfun


jacobian = jacrev


def hessian(fun, argnums=0, has_aux=False, holomorphic=False):
    """jacfwd(jacrev(fun)). JAX: jax.hessian."""
    return jacfwd(jacrev(fun, argnums, has_aux, holomorphic), argnums, has_aux, holomorphic)
