"""JAX: jax.interpreters: the rule tables of JAX's transformations (ad, batching, mlir,
partial_eval) where extensions register rules for their own primitives.

mjax's transformations are passes over its jaxpr dialect with their own rule tables
(mjax.passes.rules); these modules hold what user-defined primitives register
(mjax.extend.core.Primitive), which the passes apply (mjax/tracing/primitive.py).
"""
from mjax.interpreters import ad, batching, mlir, partial_eval, pxla, xla  # noqa: F401
