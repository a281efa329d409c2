"""The `jaxpr` MLIR dialect: ops, types, shape rules and the verifier.

Importing this package registers every `jaxpr.*` op class with the MLIR bindings.
"""
from mjax.dialect.context import context
from mjax.dialect.types import ShapedArray, KeyType, tensor_type, aval_of
from mjax.dialect.core import JaxprOp, OPS, op_class, InferError
from mjax.dialect import ops as _ops  # noqa: F401  (registers every op)
from mjax.dialect.builder import Builder

__all__ = ["context", "ShapedArray", "KeyType", "tensor_type", "aval_of",
           "JaxprOp", "OPS", "op_class", "InferError", "Builder"]
