"""Code of JAX's page(s) docs/new_docs/501/shape-polymorphism.md (jax-ml/jax@cec06d116c05, Apache-2.0),
extracted unchanged for test_tutorials.py: one cell per code cell, ```python block, or
doctest example (prompts removed; its last expression is shown, as doctest does)."""

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
import jax

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
from jax import export

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
from jax import numpy as jnp

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
def f(x):  # f: f32[a, b]
  return jnp.concatenate([x, x], axis=1)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
# We construct symbolic dimension variables.

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
a, b = export.symbolic_shape("a, b")

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
# We can use the symbolic dimensions to construct shapes.

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
x_shape = (a, b)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
x_shape

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
# Then we export with symbolic shapes:

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp: export.Exported = export.export(jax.jit(f))(
    jax.ShapeDtypeStruct(x_shape, jnp.int32))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp.in_avals

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp.out_avals

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
# We can later call with concrete shapes (with a=3 and b=4), without re-tracing `f`.

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
res = exp.call(np.ones((3, 4), dtype=np.int32))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
res.shape

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
def f1(x, y): # x: f32[a, 1], y : f32[a, 4]
 return x + y

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
# Assuming you have some actual args with concrete shapes

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
x = np.ones((3, 1), dtype=np.int32)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
y = np.ones((3, 4), dtype=np.int32)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
args_specs = export.symbolic_args_specs((x, y), "a, ...")

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp = export.export(jax.jit(f1))(* args_specs)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp.in_avals

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
f = lambda x: jnp.reshape(x, (x.shape[0] * x.shape[1],))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
arg_spec = jax.ShapeDtypeStruct(export.symbolic_shape("b, 4"), jnp.int32)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp = export.export(jax.jit(f))(arg_spec)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp.out_avals

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp = export.export(jax.jit(lambda x: jnp.array(x.shape[0]) + x))(
    jax.ShapeDtypeStruct(export.symbolic_shape("b"), np.int32))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp.call(jnp.arange(3, dtype=np.int32))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp = export.export(jax.jit(lambda x: x.reshape(jnp.array(x.shape[0]) + 2)))(
    jax.ShapeDtypeStruct(export.symbolic_shape("b"), np.int32))  # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp = export.export(jax.jit(
    lambda x: (5. + x.shape[0],
               x.shape[0] - np.arange(5, dtype=jnp.int32),
               x + x.shape[0] + jnp.sin(x.shape[0]))))(
    jax.ShapeDtypeStruct(export.symbolic_shape("b"), jnp.int32))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp.out_avals

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp.call(jnp.ones((3,), jnp.int32))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp = export.export(jax.jit(
    lambda x: jnp.sum(x, axis=0) / x.shape[0]))(
    jax.ShapeDtypeStruct(export.symbolic_shape("b, c"), jnp.int32))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp.call(jnp.arange(12, dtype=jnp.int32).reshape((3, 4)))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
v, = export.symbolic_shape("v,")

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
export.export(jax.jit(lambda x, y: x + y))(      # doctest: +IGNORE_EXCEPTION_DETAIL
    jax.ShapeDtypeStruct((v,), dtype=np.int32),  # doctest: +IGNORE_EXCEPTION_DETAIL
    jax.ShapeDtypeStruct((4,), dtype=np.int32))  # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
export.export(jax.jit(lambda x: jnp.matmul(x, x)))(  # doctest: +IGNORE_EXCEPTION_DETAIL
    jax.ShapeDtypeStruct((v, 4), dtype=np.int32))    # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
export.export(jax.jit(lambda x: 0 if x.shape[0] + 1 >= x.shape[1] else 1))(
    jax.ShapeDtypeStruct(export.symbolic_shape("a, b"), dtype=np.int32))  # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
_ = export.export(jax.jit(lambda x: x[0:16]))(
   jax.ShapeDtypeStruct(export.symbolic_shape("b + 15"), dtype=np.int32))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
# Introduce dimension variable with constraints.

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
a, b = export.symbolic_shape("a, b",
                             constraints=("a >= b", "b >= 16"))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
_ = export.export(jax.jit(lambda x: x[:x.shape[1], :16]))(
   jax.ShapeDtypeStruct((a, b), dtype=np.int32))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
# Introduce dimension variable with equality constraints.

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
a, b, c, d = export.symbolic_shape("a, b, c, d",
                                   constraints=("a * b == c + d",))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
2 * b * a

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
a * b * b

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
b, = export.symbolic_shape("b")

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
f = lambda x: lax.slice_in_dim(x, 0, x.shape[0] % 3)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
export.export(jax.jit(f))(
    jax.ShapeDtypeStruct((b,), dtype=np.int32))  # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
b, = export.symbolic_shape("b",
                           constraints=["b >= mod(b, 3)"])

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
f = lambda x: lax.slice_in_dim(x, 0, x.shape[0] % 3)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
_ = export.export(jax.jit(f))(
    jax.ShapeDtypeStruct((b,), dtype=np.int32))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
a1, = export.symbolic_shape("a,")

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
a2, = export.symbolic_shape("a,", constraints=("a >= 8",))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
a1 + a2  # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
a, = export.symbolic_shape("a,", constraints=("a >= 8",))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
b, = export.symbolic_shape("b,", scope=a.scope)  # Reuse the scope of `a`

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
a + b  # Allowed

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
my_scope = export.SymbolicScope()

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
c, = export.symbolic_shape("c", scope=my_scope)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
d, = export.symbolic_shape("d", scope=my_scope)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
c + d  # Allowed

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
def my_top_k(k, x):  # x: i32[4, 10], k <= 10
  return lax.top_k(x, k)[0]  # : i32[4, 3]

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
x = np.arange(40, dtype=np.int32).reshape((4, 10))

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
# Export with static `k=3`. Since `k` appears in shapes it must be in `static_argnums`.

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp_static_k = export.export(jax.jit(my_top_k, static_argnums=0))(3, x)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp_static_k.in_avals[0]

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp_static_k.out_avals[0]

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
# When calling the exported function we pass only the non-static arguments

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp_static_k.call(x)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
# Now attempt to export with symbolic `k` so that we choose `k` after export.

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
k, = export.symbolic_shape("k", constraints=["k <= 10"])

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
export.export(jax.jit(my_top_k, static_argnums=0))(k, x)  # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
def my_top_k_with_dimensions(dimensions, x):  # dimensions: i32[0, k], x: i32[4, 10]
  return my_top_k(dimensions.shape[1], x)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp = export.export(jax.jit(my_top_k_with_dimensions))(
    jax.ShapeDtypeStruct((0, k), dtype=np.int32),
    x)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp.in_avals

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp.out_avals[0]

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
# When we invoke `exp` we must construct and pass an array of shape (0, k)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp.call(np.zeros((0, 3), dtype=np.int32), x)

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
a, = export.symbolic_shape("a")

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
export.export(jax.jit(lambda x: x.shape[0]))(
   jax.ShapeDtypeStruct((a * a,), dtype=np.int32))  # doctest: +IGNORE_EXCEPTION_DETAIL

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
def f(x):  # x: f32[b, b, 2*d]
  return x

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp = export.export(jax.jit(f))(
    jax.ShapeDtypeStruct(export.symbolic_shape("b, b, 2*d"), dtype=np.int32))   

# %% docs/new_docs/501/shape-polymorphism.md doctest tags=
exp.call(np.ones((3, 3, 5), dtype=np.int32))  # doctest: +IGNORE_EXCEPTION_DETAIL
