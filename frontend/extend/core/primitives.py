"""JAX: jax.extend.core.primitives: JAX's built-in Primitive objects (add_p, ...).

mjax's primitives are op classes of the jaxpr dialect (mjax.dialect.ops, e.g. AddOp for
add_p), bound with mjax.core.bind, so this module holds none of JAX's Primitive objects
(docs/api_coverage.md lists them).
"""
