"""User-defined primitives: one generic op for every `Primitive` a user defines.

    %y = "jaxpr.custom_primitive"(%x, %y, %z) {name = "multiply_add",
           rule = "multiply_add#3", params = {axis = "0"},
           result_shapes = [array<i64: 3>], result_dtypes = [f32]}
         : (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>

`name` is the primitive's name; `rule` a handle into this process's registry of rule
sources (passes/custom_rules.py) naming the Primitive object and the Python parameters
of this bind, through which every pass reaches the user's rules (JVP, transpose,
batching, lowering: passes/user_primitives.py). `params` shows those parameters as
text (the IR never needs them), `effects` the effects its abstract-eval rule declared
(an op with effects is never removed nor merged); the result types come from the primitive's
abstract-eval rule when bound and are declared here, so parsed IR verifies without it.
JAX: a `jax.extend.core.Primitive`.
"""
from __future__ import annotations

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.ops.callbacks import _DTypes, result_avals


class _Shown(A.AttrKind):
    """Parameters shown as text: a dict of strings."""

    expected = "a dict of strings"

    def accepts(self, v):
        return isinstance(v, dict) and all(isinstance(x, str) for x in v.values())


class UserPrimitiveOp(JaxprOp, name="custom_primitive"):
    """Applies the user-defined primitive `name`; its rules are behind the handle `rule`.
    JAX: a jax.extend.core.Primitive's bind."""

    num_operands = None
    attributes = {
        "name": A.Str(),
        "rule": A.Str(default=None),
        "params": _Shown(default=None),
        "result_shapes": A.Nested(depth=2),
        "result_dtypes": _DTypes(),
        # the effects its abstract-eval rule declared, as text: DCE and CSE keep the op
        "effects": A.Str(default=None),
    }
    # (weak types come from the user's abstract-eval rule)
    weak_type_inputs = None
    # Set when this process stages one (mjax/tracing/primitive.py): until then no op can name
    # Python rules, and the passes skip looking for them.
    staged = False

    @property
    def pure(self) -> bool:
        return "effects" not in self.operation.attributes

    @classmethod
    def infer(cls, *avals, name, rule, params, result_shapes, result_dtypes, effects):
        if len(result_shapes) != len(result_dtypes):
            raise TypeError(f"has {len(result_shapes)} result_shapes but "
                            f"{len(result_dtypes)} result_dtypes")
        return result_avals(result_shapes, result_dtypes)


__all__ = ["UserPrimitiveOp"]
