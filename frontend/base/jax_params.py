"""JAX's equation parameters for mjax's ops: an equation read from the dialect (a
`make_jaxpr` result's `eqns`) has JAX's parameter names, in JAX's order, with the
values JAX shows for those mjax's op does not keep (`sharding=None`, `accuracy=None`);
and binding a primitive with JAX's parameters (a jaxpr interpreter's
`eqn.primitive.bind(*vals, **eqn.params)`, code written for JAX) drops those again.
Code that reads `eqn.params["out_sharding"]` or prints `eqn.params` sees what it would
see on JAX."""
from __future__ import annotations

from types import MappingProxyType

_ACCURACY = ("accuracy",)
_REDUCE_SHARDED = ("axes", "out_sharding")

# Primitive name -> JAX's parameter names, in JAX's order.
JAX_ORDER = MappingProxyType({
    "dot_general": ("dimension_numbers", "precision", "preferred_element_type",
                    "out_sharding"),
    "broadcast_in_dim": ("shape", "broadcast_dimensions", "sharding"),
    "reshape": ("new_sizes", "dimensions", "sharding"),
    "convert_element_type": ("new_dtype", "weak_type", "sharding"),
    "reduce_sum": _REDUCE_SHARDED,
    "mul": ("out_dtype",),
    "iota": ("dtype", "shape", "dimension", "sharding"),
    "slice": ("start_indices", "limit_indices", "strides"),
    "rng_bit_generator": ("shape", "dtype", "algorithm", "out_sharding"),
    "gather": ("dimension_numbers", "slice_sizes", "unique_indices", "indices_are_sorted",
               "mode", "fill_value"),
    "conv_general_dilated": ("window_strides", "padding", "lhs_dilation", "rhs_dilation",
                             "dimension_numbers", "feature_group_count",
                             "batch_group_count", "precision", "preferred_element_type",
                             "out_sharding"),
    **{name: _ACCURACY for name in ("exp", "exp2", "expm1", "log", "log1p", "tanh",
                                    "logistic", "sin", "cos", "tan", "sqrt", "rsqrt",
                                    "cbrt")},
})

# Parameters JAX has and mjax's ops may leave unset, with the value a JAX equation of the
# same program shows (None unless listed here; computed from the results' avals): jnp's
# products give dot_general their result type. Binding drops those holding None.
_SHOWN = {("dot_general", "preferred_element_type"):
          lambda outs: outs[0].dtype if outs else None}


# Primitive name -> a function of (params, out_avals) giving JAX's params where they
# are not mjax's attributes renamed (shard_map's specs and mesh: frontend/spmd, which
# fills it at import).
CONVERTED: dict = {}


def as_jax_params(name: str, params: dict, out_avals) -> dict:
    """`params` of an equation of primitive `name` as JAX's equation has them."""
    convert = CONVERTED.get(name)
    if convert is not None:
        return convert(params, out_avals)
    order = JAX_ORDER.get(name)
    if order is None:
        return params
    out = {}
    for key in order:
        value = params.get(key)
        if value is None and (name, key) in _SHOWN:
            value = _SHOWN[name, key](out_avals)
        out[key] = value
    for key, value in params.items():      # (any of mjax's own, after JAX's)
        out.setdefault(key, value)
    return out


def without_jax_only(name: str, params: dict, accepted) -> dict:
    """`params` given to bind, less JAX's parameters the op (whose attributes are
    `accepted`) does not keep, where they hold None (as JAX's equations show them).
    (convert_element_type's weak_type is bound by mjax.jaxpr.objects.)"""
    order = JAX_ORDER.get(name)
    if order is None:
        return params
    extra = [k for k in order if k in params and k not in accepted and params[k] is None]
    if not extra:
        return params
    return {k: v for k, v in params.items() if k not in extra}


__all__ = ["CONVERTED", "JAX_ORDER", "as_jax_params", "without_jax_only"]
