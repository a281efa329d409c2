"""Whether a traced function is linear in its inputs, as jax.linear_transpose checks: a
walk of its ops (calls and region bodies too) from the inputs, raising JAX's error at the
first op that has no transpose rule in them."""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect.types import aval_of
from mjax.passes.custom_rules import custom_attribute

# Primitives with no transpose rule in JAX (not linear in any operand).
_NONLINEAR = frozenset("""
    sin cos tan asin acos atan sinh cosh tanh asinh acosh atanh exp exp2 log log1p expm1
    logistic sqrt rsqrt cbrt pow integer_pow square abs sign max min erf erfc erf_inv
    lgamma digamma igamma igammac random_gamma_grad bessel_i0e bessel_i1e atan2 rem floor
    ceil round nextafter is_finite tan sort argmax argmin reduce_max reduce_min
    reduce_prod reduce_and reduce_or cumprod cummax cummin polygamma zeta custom_vjp_call
""".split())
# Linear in each operand, so not in two at once.
_BILINEAR = frozenset(("mul", "dot_general", "conv_general_dilated"))


def check_linear(module, name: str, n_inputs: int, linear_dtype) -> None:
    """Raises JAX's error (NotImplementedError) for an op of @name that is not linear in
    its first `n_inputs` arguments; values of a dtype `linear_dtype` refuses are never
    linear."""
    table = ir.SymbolTable(module.operation)
    block = table[name].regions[0].blocks[0]
    # (the block's arguments past the inputs are captured values: constants here)
    inputs = list(block.arguments)[:n_inputs]

    def can_be_linear(v) -> bool:
        return linear_dtype(aval_of(v.type).dtype)
    _walk(table, block, {a for a in inputs if can_be_linear(a)}, set(), can_be_linear)


def _is_linear_call(op) -> bool:
    """Whether a custom_vjp call is a `linear_call`'s, which JAX transposes with the
    user's transpose function (mjax.custom_derivatives.linear_call marks it)."""
    return bool(custom_attribute(op, "is_linear_call", False))


def _walk(table, block, linear: set, seen: set, can_be_linear) -> set:
    """Marks the values of `block` that depend on `linear` ones; raises JAX's error at
    the first op that is not linear in them. Returns the linear results of the block's
    terminator operands."""
    for op in block.operations:
        op = op.operation
        ins = [i for i, v in enumerate(op.operands) if v in linear]
        if not ins:
            continue
        name = op.name.split(".", 1)[-1]
        if name == "linear_transpose" or (name == "custom_vjp_call" and _is_linear_call(op)):
            # (a transpose is linear in its cotangents, and was checked when made)
            linear.update(r for r in op.results if can_be_linear(r))
            continue
        if name in _NONLINEAR or (name == "div" and 1 in ins) or (
                name in _BILINEAR and len(ins) > 1):
            raise NotImplementedError(f"Transpose rule (for reverse-mode differentiation) "
                                      f"for '{name}' not implemented")
        if "callee" in op.attributes:
            callee = ir.FlatSymbolRefAttr(op.attributes["callee"]).value
            if callee not in seen:
                body = table[callee].regions[0].blocks[0]
                _walk(table, body, {body.arguments[i] for i in ins
                                    if i < len(body.arguments)
                                    and can_be_linear(body.arguments[i])}, seen | {callee},
                      can_be_linear)
        for region in op.regions:
            for inner in region.blocks:
                # (conservatively: every block argument of a region reading a linear
                # operand is linear)
                _walk(table, inner,
                      linear | {a for a in inner.arguments if can_be_linear(a)}, seen,
                      can_be_linear)
        linear.update(r for r in op.results if can_be_linear(r))
    return linear


__all__ = ["check_linear"]
