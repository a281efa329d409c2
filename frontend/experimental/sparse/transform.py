"""`sparsify`: a function written with dense ops, run on sparse arguments. The function is
traced to a jaxpr on dense stand-ins of the sparse arguments' shapes; the jaxpr is then
evaluated equation by equation, each op that meets a sparse operand by its sparse rule
(below) and the others as they are. No SparseTracer: the interpreter holds BCOO values.
An op without a sparse rule raises NotImplementedError naming it. JAX:
jax.experimental.sparse.sparsify."""
from __future__ import annotations

import functools

from mjax import numpy as jnp
from mjax.base import tree_util
from mjax.experimental.sparse._base import JAXSparse
from mjax.experimental.sparse.bcoo import (BCOO, bcoo_sum_duplicates, bcoo_todense,
                                           bcoo_transpose)
from mjax.experimental.sparse.bcoo_ops import (bcoo_add, bcoo_broadcast_in_dim,
                                               bcoo_concatenate, bcoo_dot_general,
                                               bcoo_dynamic_slice, bcoo_multiply_dense,
                                               bcoo_multiply_sparse, bcoo_reduce_sum,
                                               bcoo_reshape, bcoo_rev, bcoo_slice,
                                               bcoo_squeeze)
from mjax.experimental.sparse.bcsr import BCSR
from mjax.jaxpr.api import make_jaxpr
from mjax.jaxpr.objects import eval_equations
from mjax.specs.shape_dtype_struct import ShapeDtypeStruct

# ops with f(0) = 0 applied to the stored values: linear ones as they are, the others
# after duplicates are summed (f(a) + f(b) != f(a + b))
_LINEAR = {"neg", "real", "imag", "conj", "copy", "copy_p"}
_ZERO_PRESERVING = {"sin", "tan", "sqrt", "abs", "sign", "tanh", "expm1", "log1p",
                    "asin", "atan", "asinh", "atanh", "sinh", "erf", "erf_inv", "cbrt",
                    "integer_pow", "round", "floor", "ceil", "square", "relu",
                    "convert_element_type", "reduce_precision"}   # (casts round or truncate)

# ops whose bodies see sparse operands (a solver's loop over a sparse matrix): those run
# on the dense form (correct, without the memory saving)
_DENSIFIED = {"while", "cond", "scan", "custom_jvp_call", "custom_vjp_call", "checkpoint",
              "remat"}


def _is_sparse(x) -> bool:
    return isinstance(x, JAXSparse)


def _to_bcoo(x):
    if isinstance(x, BCOO):
        return x
    if isinstance(x, BCSR) or hasattr(x, "to_bcoo"):
        return x.to_bcoo()
    raise NotImplementedError(f"sparsify: sparse format {type(x).__name__} (mjax "
                              f"sparsifies BCOO, BCSR, COO, CSR and CSC)")


def _map_data(f, x: BCOO) -> BCOO:
    return BCOO((f(x.data), x.indices), shape=x.shape, indices_sorted=x.indices_sorted,
                unique_indices=x.unique_indices)


def _dense(x):
    return bcoo_todense(x) if isinstance(x, BCOO) else x


def _add(a, b, sign=1):
    if isinstance(a, BCOO) and isinstance(b, BCOO):
        return bcoo_add(a, b if sign > 0 else _map_data(lambda d: -d, b))
    return _dense(a) + sign * _dense(b)


def _mul(a, b):
    if isinstance(a, BCOO) and isinstance(b, BCOO):
        return bcoo_multiply_sparse(a, b)
    sp, other = (a, b) if isinstance(a, BCOO) else (b, a)
    return bcoo_multiply_dense(sp, other)


def _div(a, b):
    if isinstance(a, BCOO) and not isinstance(b, BCOO):
        return bcoo_multiply_dense(a, 1 / jnp.asarray(b))
    raise NotImplementedError("sparsify: div with a sparse divisor (the zeros would "
                              "divide)")


def _unary(prim, params, x: BCOO, linear: bool):
    x = x if linear or x.unique_indices else bcoo_sum_duplicates(x, nse=x.nse)
    return _map_data(lambda d: prim.bind(d, **params), x)


def _rule(eqn, vals):
    name, p = eqn.primitive.name, eqn.params
    if name == "add":
        return _add(*vals)
    if name == "sub":
        return _add(*vals, sign=-1)
    if name == "mul":
        return _mul(*vals)
    if name == "div":
        return _div(*vals)
    if name == "integer_pow" and p["y"] <= 0:       # x ** 0 is 1 where x is 0
        raise NotImplementedError(f"sparsify: integer_pow with the non-positive exponent "
                                  f"{p['y']} does not keep zeros")
    if name in _LINEAR or name in _ZERO_PRESERVING:
        if len(vals) != 1:
            raise NotImplementedError(f"sparsify: {name} of {len(vals)} operands")
        return _unary(eqn.primitive, p, vals[0], name in _LINEAR)
    if name == "dot_general":
        return bcoo_dot_general(*vals, dimension_numbers=p["dimension_numbers"],
                                preferred_element_type=p.get("preferred_element_type"))
    if name == "transpose":
        return bcoo_transpose(vals[0], permutation=p["permutation"])
    if name == "reduce_sum":
        out = bcoo_reduce_sum(vals[0], axes=p["axes"])
        return bcoo_todense(out) if out.ndim == 0 else out    # (JAX: a scalar is dense)
    if name == "reshape":
        return bcoo_reshape(vals[0], new_sizes=p["new_sizes"],
                            dimensions=p.get("dimensions"))
    if name == "squeeze":
        return bcoo_squeeze(vals[0], dimensions=p["dimensions"])
    if name == "broadcast_in_dim":
        return bcoo_broadcast_in_dim(vals[0], shape=p["shape"],
                                     broadcast_dimensions=p["broadcast_dimensions"])
    if name == "concatenate":
        return bcoo_concatenate([v if isinstance(v, BCOO) else _from_dense(v)
                                 for v in vals], dimension=p["dimension"])
    if name == "slice":
        return bcoo_slice(vals[0], start_indices=p["start_indices"],
                          limit_indices=p["limit_indices"], strides=p.get("strides"))
    if name == "dynamic_slice":
        return bcoo_dynamic_slice(vals[0], vals[1:], p["slice_sizes"])
    if name == "rev":
        return bcoo_rev(vals[0], p["dimensions"])
    if name in ("jit", "pjit", "closed_call", "core_call"):
        inner = p["jaxpr"]
        return _eval(inner.jaxpr, inner.consts, vals)
    if name in _DENSIFIED:
        return eqn.primitive.bind(*[_dense(v) for v in vals], **p)
    raise NotImplementedError(f"sparsify: no sparse rule for primitive {name!r} (mjax "
                              f"sparsifies add, sub, mul, div, dot_general, transpose, "
                              f"reduce_sum, reshape, squeeze, broadcast_in_dim, "
                              f"concatenate, slice, dynamic_slice, rev, jit, "
                              f"zero-preserving elementwise ops; while/cond/scan on the "
                              f"dense form)")


def _from_dense(x):
    x = jnp.asarray(x)
    idx = jnp.stack(jnp.unravel_index(jnp.arange(x.size), x.shape), axis=1) if x.ndim \
        else jnp.zeros((1, 0), jnp.int32)
    return BCOO((x.reshape(-1), idx.astype(jnp.int32)), shape=x.shape)


def _apply(eqn, vals):
    """One equation of a sparsified function: its sparse rule when an input is sparse."""
    if any(isinstance(v, BCOO) for v in vals):
        return _rule(eqn, vals)
    return eqn.primitive.bind(*vals, **eqn.params)


def _eval(jaxpr, consts, args):
    return eval_equations(jaxpr, consts, args, _apply)


def sparsify(f, use_tracer: bool = False):
    """`f` (written with dense ops) as a function that also takes sparse arrays; ops on
    sparse values run their sparse rules and may return sparse values. JAX:
    jax.experimental.sparse.sparsify."""
    @functools.wraps(f)
    def wrapped(*args, **kwargs):
        leaves, tree = tree_util.tree_flatten((args, kwargs), is_leaf=_is_sparse)
        values = [_to_bcoo(x) if _is_sparse(x) else x for x in leaves]
        stand_ins = [ShapeDtypeStruct(x.shape, x.dtype) if isinstance(x, BCOO) else x
                     for x in values]
        out_shape = []

        def dense_fun(*flat):
            a, k = tree_util.tree_unflatten(tree, flat)
            out = f(*a, **k)
            out_leaves, out_tree = tree_util.tree_flatten(out)
            out_shape.append(out_tree)
            return out_leaves
        closed = make_jaxpr(dense_fun)(*stand_ins)
        flat_in = [v for v in values]
        outs = _eval(closed.jaxpr, closed.consts, flat_in)
        return tree_util.tree_unflatten(out_shape[0], outs)
    return wrapped
