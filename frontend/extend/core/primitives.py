"""JAX: jax.extend.core.primitives: JAX's built-in Primitive objects (add_p, ...).

mjax's primitives are op classes of the jaxpr dialect (mjax.dialect.ops); each has one
Primitive object (mjax/tracing/primitive.py, `primitive_of`), the same objects as `mjax.lax`'s
`*_p`, so libraries' tables keyed by them agree. The custom-derivative calls are the
Primitive objects of their ops.
"""
from mjax import lax
from mjax.dialect.ops import transforms as T
from mjax.tracing.primitive import primitive_of

globals().update({name: getattr(lax, name) for name in dir(lax) if name.endswith("_p")})
custom_jvp_call_p = primitive_of(T.CustomJvpCallOp)
custom_vjp_call_p = primitive_of(T.CustomVjpCallOp)
# (JAX's nested jit is its own jit_p, alias pjit_p; mjax's is a call of a function)
call_p = closed_call_p = jit_p = pjit_p = primitive_of(T.CallOp)
remat_p = primitive_of(T.CheckpointOp)
add_jaxvals_p = lax.add_p   # (JAX's sum of tangents; mjax's is an add)
