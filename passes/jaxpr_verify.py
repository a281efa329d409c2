"""`--jaxpr-verify`: check every `jaxpr.*` op against its definition.

Operand count, attribute kinds, region count, and the result types the op's own `infer`
rule gives, for ops at any depth (inside regions too). Unknown `jaxpr.*` ops are errors.

    %0 = "jaxpr.sin"(%x) : (tensor<3xi32>) -> tensor<3xi32>
  ==>
    error: 'jaxpr.sin' op sin does not accept dtype i32 (operand must be ...)
"""
from __future__ import annotations

from jaxlib.mlir import ir

from mjax.dialect import attributes as A
from mjax.dialect.core import JaxprOp
from mjax.dialect.types import aval_of, tensor_type
from mjax.passes.ir_util import nested_ops
from mjax.passes.registry import Pass, PassError, op_error, register_pass


def verify_op(op: ir.Operation) -> None:
    """Raises PassError if `op` (a jaxpr.* op) breaks its definition."""
    view = op.opview
    if not isinstance(view, JaxprOp):
        raise op_error(op, "is not a known jaxpr op")
    cls = type(view)
    if cls.num_regions is not None and len(op.regions) != cls.num_regions:
        raise op_error(op, f"expects {cls.num_regions} regions, got {len(op.regions)}")
    try:
        avals = [aval_of(v.type) for v in op.operands]
        raw = {}
        for name in op.attributes:
            if name not in cls.attributes:
                if name.startswith(("mjax.", "sdy.", "mhlo.")):
                    continue  # annotations other passes own
                raise TypeError(f"has unknown attribute '{name}'")
            try:
                raw[name] = A.decode(op.attributes[name])
            except TypeError as e:
                raise TypeError(f"attribute '{name}': {e}") from None
        params = cls.check_params(raw)
        infer_at = getattr(cls, "infer_at", None)
        if infer_at is not None:
            # Ops naming functions by symbol (jaxpr.call, jaxpr.jvp, ...): result types
            # come from the callee, looked up in the enclosing module.
            cls.check_operand_count(len(avals))
            expected = tuple(infer_at(op, avals, params))
        else:
            expected = cls.infer_checked(avals, params)
    except PassError:
        raise
    except (TypeError, ValueError) as e:
        msg = str(e)
        prefix = f"'{cls.OPERATION_NAME}' op "
        raise op_error(op, msg[len(prefix):] if msg.startswith(prefix) else msg) from None
    if len(expected) != len(op.results):
        raise op_error(op, f"expects {len(expected)} results, got {len(op.results)}")
    for i, (r, aval) in enumerate(zip(op.results, expected)):
        if r.type != tensor_type(aval):
            raise op_error(op, f"result {i} has type {r.type}, but the operands give "
                               f"{tensor_type(aval)}")


@register_pass("jaxpr-verify")
class JaxprVerifyPass(Pass):
    """Check every jaxpr op against its definition (operands, attributes, inferred types)."""

    def run(self, module: ir.Module) -> None:
        for op in nested_ops(module):
            if op.name.startswith("jaxpr."):
                verify_op(op)


__all__ = ["JaxprVerifyPass", "verify_op", "PassError"]
